//! Hotel setup in the dashboard, used as a person uses it: in a real headless Chromium, on SQLite and
//! PostgreSQL. Hotels, room types, rooms and rate plans made in the browser are the API's records; the domain's
//! refusals show on the page and write nothing; operators are invited, removed and change passwords with every
//! session of theirs ending; another organization's records are the 404 page. The SQLite runs save the screenshots
//! `docs/screenshots/setup-*.png`.

mod catalogue;
mod operators;
mod pages;

use crate::common::browser::Browser;
use crate::common::{Org, TestServer};
use frontdesk::store::Engine;
use serde_json::json;

async fn server(engine: Engine) -> Option<TestServer> {
    TestServer::configured(engine, |_| {}).await
}

/// A hotel with a room type of two rooms and a rate plan, made through the API.
struct Catalogue {
    hotel: String,
    room_type: String,
    rooms: Vec<String>,
    plan: String,
}

async fn catalogue(s: &TestServer, org: &Org, name: &str) -> Catalogue {
    let auth = org.auth();
    let hotel = s.hotel(org, name).await;
    let room_type = s
        .create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Standard Double", "maxOccupancy": 2}))
        .await;
    let mut rooms = Vec::new();
    for room in ["101", "102"] {
        rooms.push(s.create("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": room, "floor": 1})).await);
    }
    let plan = s
        .create("/api/ratePlans", &auth, json!({"hotelId": hotel, "name": "Best Available Rate", "code": "BAR"}))
        .await;
    Catalogue { hotel, room_type, rooms, plan }
}

/// The form's message beside `field`, and its control marked invalid.
async fn message_beside(b: &Browser, field: &str) -> String {
    assert_eq!(b.find(&format!("#{field}")).await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    let described = b.find(&format!("#{field}")).await.attr("aria-describedby").await.unwrap();
    assert_eq!(described.as_deref(), Some(format!("{field}-error").as_str()));
    b.text(&format!("#{field}-error")).await
}

/// The session token in the browser's cookie.
async fn session_token(b: &Browser) -> String {
    b.client.get_named_cookie("fd_session").await.unwrap().value().to_string()
}
