//! The operator dashboard, used as a person uses it: in a real headless Chromium (chromedriver over WebDriver),
//! on SQLite and PostgreSQL, with webhooks delivered to a recording receiver. The SQLite runs save screenshots of
//! the main pages to `docs/screenshots/`, and every page visited is checked with axe-core.

mod front_office;
mod pages;
mod sessions;

use crate::common::{day, Org, TestServer};
use serde_json::json;

/// A hotel with two room types, six rooms and a rate plan with prices for 60 nights.
struct Hotel {
    id: String,
    standard: String,
    plan: String,
    rooms: Vec<String>,
}

async fn hotel(s: &TestServer, org: &Org) -> Hotel {
    let auth = org.auth();
    let id = s.hotel(org, "Seaside Inn").await;
    let standard =
        s.create("/api/roomTypes", &auth, json!({"hotelId": id, "name": "Standard Double", "maxOccupancy": 2})).await;
    let suite =
        s.create("/api/roomTypes", &auth, json!({"hotelId": id, "name": "Family Suite", "maxOccupancy": 4})).await;
    let mut rooms = Vec::new();
    for (name, room_type) in [
        ("101", &standard),
        ("102", &standard),
        ("103", &standard),
        ("104", &standard),
        ("201", &suite),
        ("202", &suite),
    ] {
        rooms.push(s.create("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": name})).await);
    }
    let plan =
        s.create("/api/ratePlans", &auth, json!({"hotelId": id, "name": "Best Available Rate", "code": "BAR"})).await;
    let values: Vec<_> = (0..60).map(|n| json!({"ratePlanId": plan, "date": day(n), "price": 12000})).collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    Hotel { id, standard, plan, rooms }
}

async fn guest(s: &TestServer, org: &Org, first: &str, last: &str) -> String {
    let email = format!("{}.{}@example.com", first.to_lowercase(), last.to_lowercase());
    s.create("/api/guests", &org.auth(), json!({"firstName": first, "lastName": last, "email": email})).await
}

/// A confirmed stay of the standard type through the API, optionally in a room.
async fn stay(s: &TestServer, org: &Org, h: &Hotel, guest: &str, from: u64, to: u64, room: Option<&str>) -> String {
    let mut room_in = json!({"roomTypeId": h.standard, "ratePlanId": h.plan, "adults": 2});
    if let Some(room) = room {
        room_in["roomId"] = json!(room);
    }
    let body = json!({"hotelId": h.id, "guestId": guest, "checkInDate": day(from), "checkOutDate": day(to), "rooms": [room_in]});
    s.create("/api/reservations", &org.auth(), body).await
}

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}
