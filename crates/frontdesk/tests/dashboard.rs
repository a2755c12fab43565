//! The operator dashboard, used as a person uses it: in a real headless Chromium, on SQLite and PostgreSQL.

mod common;

use common::browser::Browser;
use common::{day, Org, TestServer};
use serde_json::json;

on_both_engines!(signing_in_shows_mistakes_then_the_front_office,);

/// The password of the operators that `TestServer::org` creates.
const PASSWORD: &str = "correct horse battery";

/// A hotel with two room types, six rooms, a rate plan with prices for 60 nights, and a few stays.
struct Hotel {
    id: String,
    standard: String,
    suite: String,
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
    Hotel { id, standard, suite, plan, rooms }
}

async fn sign_in(b: &Browser, email: &str, password: &str) {
    b.goto("/sign-in").await;
    b.fill("#email", email).await;
    b.fill("#password", password).await;
    b.click("button[type=submit]").await;
}

async fn signing_in_shows_mistakes_then_the_front_office(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // Asking for a page first: the sign-in page, which then goes back to it.
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    assert!(b.path().await.starts_with("/sign-in?next="), "{}", b.path().await);
    b.fill("#email", &org.operator_email).await;
    b.fill("#password", "not the password").await;
    b.click("button[type=submit]").await;
    b.wait_for_text("The e-mail or password is not right.").await;
    if s.engine == frontdesk::store::Engine::Sqlite {
        b.screenshot("sign-in").await;
    }
    b.assert_accessible("the sign-in page").await;
    b.fill("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_for_text("Arrivals").await;
    assert_eq!(b.path().await, format!("/hotels/{}/today", h.id));
    assert!(b.page_text().await.contains("Seaside Inn"));
    b.assert_accessible("the Today page").await;
    let _ = (&h.standard, &h.suite, &h.plan, &h.rooms, &sign_in);
    b.close().await;
}
