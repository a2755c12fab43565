//! The front desk's rules through the REST API and in the dashboard (headless Chromium), on both engines: a room
//! holds one stay at a time (sequential and racing check-ins), check-in on the stay's dates only, housekeeping after
//! check-out, early departures that give their nights back and take their charges off the folio, undoing a
//! check-out, and reservation references. The SQLite runs save the housekeeping page (phone) and the check-out
//! confirmation to `docs/screenshots/`.

mod desk_pages;
mod references;
mod retries;
mod stays;

use crate::common::browser::Browser;
use crate::common::{day, Org, TestServer, PASSWORD};
use serde_json::{json, Value};

async fn signed_in(s: &TestServer, org: &Org, size: (u32, u32)) -> Option<Browser> {
    let b = Browser::start_sized(&s.base, size).await?;
    b.sign_in(&org.operator_email, PASSWORD).await;
    Some(b)
}

/// A hotel in UTC (so that its "today" is the tests' `day(0)`) with a room type of `rooms` rooms and a rate plan
/// priced 10,000 a night for 60 nights: (hotel, room type, rate plan, room ids).
async fn hotel(s: &TestServer, org: &Org, rooms: usize) -> (String, String, String, Vec<String>) {
    let hotel =
        s.create("/api/hotels", &org.auth(), json!({"name": "Sea", "timezone": "UTC", "currency": "EUR"})).await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut ids = Vec::new();
    for n in 0..rooms {
        ids.push(
            s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await,
        );
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..60).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type, plan, ids)
}

/// A confirmed stay of nights `[from, to)` (days from today), priced by the rate plan, optionally with a room.
async fn stay(
    s: &TestServer,
    org: &Org,
    h: &(String, String, String, Vec<String>),
    from: u64,
    to: u64,
    room: Option<&str>,
) -> Value {
    let (hotel, room_type, plan, _) = h;
    let body = json!({"hotelId": hotel, "checkInDate": day(from), "checkOutDate": day(to),
                      "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "roomId": room}]});
    s.post("/api/reservations", &org.auth(), body).await.expect(200).body
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// Moves a reservation to `status`. A check-out leaves the folio's balance on account: these tests are about the
/// stay (the money's rules are `tests/it/money.rs`'s).
async fn move_to(s: &TestServer, org: &Org, reservation: &str, status: &str) -> crate::common::Answer {
    let mut body = json!({"status": status});
    if status == "CHECKED_OUT" {
        body["onAccountReason"] = json!("Settled outside this test");
    }
    s.put(&format!("/api/reservations/{reservation}"), &org.auth(), body).await
}
