//! The public booking page, used as a guest uses it: in a real headless Chromium (chromedriver over WebDriver), on
//! SQLite and PostgreSQL. A guest searches, chooses, fills in and sends a request; the hotel finds it in the
//! dashboard's inbox and through the API, with its webhook events; double submits, back-button resubmits and
//! refreshes make one request; a stale offer keeps what the guest typed beside the offer of now; mistakes sit beside
//! their fields;
//! only the hotel's own sites may frame the page. The SQLite runs save screenshots to `docs/screenshots/`; every
//! page visited is checked with axe-core.

mod access;
mod guest_form;
mod pages;
mod requests;

use crate::common::browser::Browser;
use crate::common::{day, Org, TestServer};
use fantoccini::Locator;
use frontdesk::store::Engine;
use serde_json::{json, Value};

/// A hotel with a standard room type (4 rooms, sold under two plans) and a family suite (2 rooms), priced for
/// 60 nights: standard non-refundable 100.00, standard flexible 120.00, suite 200.00 a night.
struct Hotel {
    id: String,
    suite: String,
    saver: String,
    flexible: String,
    suite_plan: String,
}

async fn hotel(s: &TestServer, org: &Org) -> Hotel {
    let auth = org.auth();
    let id = s
        .create(
            "/api/hotels",
            &auth,
            json!({"name": "Seaside Inn", "timezone": "Europe/Lisbon", "currency": "EUR",
                   "addressLine1": "Avenida da Praia 7", "city": "Cascais", "country": "PT"}),
        )
        .await;
    let standard = s
        .create(
            "/api/roomTypes",
            &auth,
            json!({"hotelId": id, "name": "Standard Double", "maxOccupancy": 2,
                   "description": "A double bed and a balcony over the bay."}),
        )
        .await;
    let suite = s
        .create(
            "/api/roomTypes",
            &auth,
            json!({"hotelId": id, "name": "Family Suite", "maxOccupancy": 4,
                   "description": "Two rooms, four beds, a kitchenette."}),
        )
        .await;
    for (name, room_type) in [
        ("101", &standard),
        ("102", &standard),
        ("103", &standard),
        ("104", &standard),
        ("201", &suite),
        ("202", &suite),
    ] {
        s.create("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": name})).await;
    }
    let plan = |name: &str, room_type: &str| json!({"hotelId": id, "roomTypeId": room_type, "name": name});
    let saver = s.create("/api/ratePlans", &auth, plan("Non-refundable", &standard)).await;
    let flexible = s.create("/api/ratePlans", &auth, plan("Flexible", &standard)).await;
    let suite_plan = s.create("/api/ratePlans", &auth, plan("Flexible", &suite)).await;
    for (plan, price) in [(&saver, 10000), (&flexible, 12000), (&suite_plan, 20000)] {
        price_nights(s, org, plan, 0, 60, price).await;
    }
    Hotel { id, suite, saver, flexible, suite_plan }
}

/// Prices the nights `from..to` (days from today) of a plan.
async fn price_nights(s: &TestServer, org: &Org, plan: &str, from: u64, to: u64, price: i64) {
    let values: Vec<_> = (from..to).map(|n| json!({"ratePlanId": plan, "date": day(n), "price": price})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
}

fn search_path(h: &Hotel, from: u64, to: u64, adults: u32) -> String {
    format!("/book/{}?checkInDate={}&checkOutDate={}&adults={adults}", h.id, day(from), day(to))
}

/// Fills in the search form and sends it.
async fn search(b: &Browser, from: u64, to: u64, adults: &str) {
    b.set_value("#checkInDate", &day(from)).await;
    b.set_value("#checkOutDate", &day(to)).await;
    b.fill("#adults", adults).await;
    b.click(".search-submit button").await;
}

/// Clicks "Choose" on the offer of a room type and rate plan.
async fn choose(b: &Browser, room_type: &str, plan: &str) {
    let xpath = format!(
        "//li[contains(@class,'offer')][.//h3[normalize-space()='{room_type}'] and \
         .//p[@class='offer-plan'][normalize-space()='{plan}']]//a"
    );
    let link = b.client.find(Locator::XPath(&xpath)).await;
    link.unwrap_or_else(|e| panic!("no offer {room_type} / {plan}: {e}")).click().await.unwrap();
    b.wait_for_text("Who is staying").await;
}

async fn fill_guest(b: &Browser, first: &str, last: &str, email: &str) {
    b.fill("#firstName", first).await;
    b.fill("#lastName", last).await;
    b.fill("#email", email).await;
}

async fn send(b: &Browser) {
    b.click(".guest-form button[type=submit]").await;
}

/// On SQLite, a screenshot of the page from its top (nothing focused) to `docs/screenshots/<name>.png`.
async fn shot(s: &TestServer, b: &Browser, name: &str) {
    if s.engine == Engine::Sqlite {
        let top = "window.scrollTo(0, 0); if (document.activeElement) document.activeElement.blur();";
        b.client.execute(top, vec![]).await.unwrap();
        b.screenshot(name).await;
    }
}

/// The hotel's reservations from the booking page, through the API.
async fn requests(s: &TestServer, org: &Org, h: &Hotel) -> Vec<Value> {
    let all = s.get(&format!("/api/reservations?hotelId={}", h.id), &org.auth()).await.expect(200).body;
    all.as_array().unwrap().iter().filter(|r| r["source"] == json!("BOOKING_PAGE")).cloned().collect()
}
