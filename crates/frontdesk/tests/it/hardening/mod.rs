//! Hostile and careless input, on both engines: control characters, overbooking through room moves, money
//! bounds, pinned keys on the public endpoints, long folios, nulls in partial updates, missing parameters, field
//! relations and date ranges, and a sweep of hostile requests over every endpoint.

mod connections;
mod control_characters;
mod field_rules;
mod hostile_sweep;
mod large_and_racing_writes;
mod overselling;

use crate::common::{day, Org, TestServer};
use serde_json::{json, Value};

/// A hotel open to public booking with everything a request can name: (hotel, room type, room, rate plan, guest,
/// reservation). The room type has `rooms` rooms; the plan is priced for the next 40 nights.
pub struct Fixture {
    pub hotel: String,
    pub room_type: String,
    pub rooms: Vec<String>,
    pub plan: String,
    pub guest: String,
    pub reservation: String,
    /// The reservation's folio, and its first line (a room night).
    pub folio: String,
    pub folio_line: String,
    /// An invoice issued from a cancelled stay's cancellation fee.
    pub invoice: String,
}

async fn fixture(s: &TestServer, org: &Org, rooms: usize) -> Fixture {
    let hotel = s
        .post(
            "/api/hotels",
            &org.auth(),
            json!({"name": "Sea", "timezone": "Europe/Lisbon", "currency": "EUR", "publicBooking": true}),
        )
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("hotel id")
        .to_string();
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut room_ids = Vec::new();
    for n in 0..rooms {
        room_ids.push(
            s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await,
        );
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let values: Vec<Value> = (0..40).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima"})).await;
    let reservation = s
        .create(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(30), "checkOutDate": day(31),
                   "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
        )
        .await;
    let folio = s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body["folio"].clone();
    let folio_line = folio["charges"][0]["id"].as_str().expect("a room night").to_string();
    let folio = folio["id"].as_str().expect("a folio").to_string();
    let invoice = invoiced_fee(s, org, &hotel, &room_type, &guest).await;
    Fixture { hotel, room_type, rooms: room_ids, plan, guest, reservation, folio, folio_line, invoice }
}

/// An invoice of a stay cancelled with a fee (posted at once, so it can be invoiced at once).
async fn invoiced_fee(s: &TestServer, org: &Org, hotel: &str, room_type: &str, guest: &str) -> String {
    let issuer = json!({"legalName": "Sea Hotels Lda", "street": "Rua 1", "postalCode": "1000-001", "city": "Lisboa",
                        "country": "PT", "vatId": "PT123456789"});
    s.put(&format!("/api/hotels/{hotel}/billing"), &org.auth(), json!({"invoiceIssuer": issuer})).await.expect(200);
    let stay = s
        .create(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(35), "checkOutDate": day(36),
                   "rooms": [{"roomTypeId": room_type, "price": 10000}]}),
        )
        .await;
    let folio = s.get(&format!("/api/reservations/{stay}"), &org.auth()).await.expect(200).body["folio"]["id"].clone();
    let folio = folio.as_str().expect("a folio");
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    s.post(&format!("/api/folios/{folio}/fees"), &org.auth(), json!({"kind": "CANCELLATION", "amount": 5000}))
        .await
        .expect(200);
    let invoice = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(201).body;
    invoice["id"].as_str().expect("an invoice").to_string()
}

/// Every path of the REST document with its parameters filled in by `fill` (parameter name -> value).
fn paths(s: &TestServer, fill: impl Fn(&str) -> String) -> Vec<(reqwest::Method, String)> {
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).expect("document");
    let _ = s;
    let mut out = Vec::new();
    for (path, operations) in doc["paths"].as_object().expect("paths") {
        for method in operations.as_object().expect("operations").keys() {
            let mut filled = path.clone();
            while let Some(start) = filled.find('{') {
                let end = filled[start..].find('}').expect("closing brace") + start;
                let name = filled[start + 1..end].to_string();
                filled.replace_range(start..=end, &fill(&name));
            }
            out.push((method.to_uppercase().parse().expect("method"), filled));
        }
    }
    out
}
