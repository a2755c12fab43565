//! The public booking page, used as a guest uses it: in a real headless Chromium (chromedriver over WebDriver), on
//! SQLite and PostgreSQL. A guest searches, chooses, fills in and sends a request; the hotel finds it in the
//! dashboard's inbox and through the API, with its webhook events; double submits, back-button resubmits and
//! refreshes make one request; a stale offer keeps what the guest typed beside the offer of now; mistakes sit beside
//! their fields;
//! only the hotel's own sites may frame the page. The SQLite runs save screenshots to `docs/screenshots/`; every
//! page visited is checked with axe-core.

use std::time::Duration;

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::receiver::Receiver;
use crate::common::{day, delivering, Auth, Org, TestServer, PASSWORD, WAIT};
use fantoccini::Locator;
use frontdesk::domain::money;
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines_configured!(
    a_guest_requests_a_stay_that_the_hotel_approves,
    double_submits_back_button_resubmits_and_refreshes_make_one_request,
    a_stale_offer_keeps_what_the_guest_typed_beside_the_offer_of_now,
    mistakes_are_shown_beside_their_fields,
    the_booking_page_works_without_javascript,
    a_hotel_without_public_booking_answers_404_and_nothing_leaks,
    only_the_hotels_own_sites_may_frame_the_booking_page,
    visitors_are_rate_limited_per_address_like_the_public_api,
    the_booking_page_reads_well_on_desktop_and_phone,
);

/// The password of the operators that `TestServer::org` creates.
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

/// Confirmed stays in both family suites from `from` to `to`, made at the desk.
async fn fill_suites(s: &TestServer, org: &Org, h: &Hotel, from: u64, to: u64) {
    let guest = s.create("/api/guests", &org.auth(), json!({"firstName": "Desk", "lastName": "Guest"})).await;
    for _ in 0..2 {
        let body = json!({"hotelId": h.id, "guestId": guest, "checkInDate": day(from), "checkOutDate": day(to),
                          "rooms": [{"roomTypeId": h.suite, "ratePlanId": h.suite_plan, "adults": 2}]});
        s.create("/api/reservations", &org.auth(), body).await;
    }
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

/// The offers on the page, in order: (room type, rate plan, total).
async fn offers_shown(b: &Browser) -> Vec<(String, String, String)> {
    let mut shown = Vec::new();
    for offer in b.find_all("li.offer").await {
        let mut texts = Vec::new();
        for css in ["h3", ".offer-plan", ".total"] {
            texts.push(offer.find(Locator::Css(css)).await.unwrap().text().await.unwrap());
        }
        shown.push((texts[0].clone(), texts[1].clone(), texts[2].clone()));
    }
    shown
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

/// Waits for a delivery of `event` whose data satisfies `matches`.
async fn delivered(receiver: &Receiver, event: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let found = receiver
            .received()
            .into_iter()
            .map(|r| r.json())
            .find(|b| b["event"] == json!(event) && matches(&b["data"]));
        if let Some(body) = found {
            return body;
        }
        assert!(tokio::time::Instant::now() < deadline, "no {event} delivery");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The hotel's reservations from the booking page, through the API.
async fn requests(s: &TestServer, org: &Org, h: &Hotel) -> Vec<Value> {
    let all = s.get(&format!("/api/reservations?hotelId={}", h.id), &org.auth()).await.expect(200).body;
    all.as_array().unwrap().iter().filter(|r| r["source"] == json!("BOOKING_PAGE")).cloned().collect()
}

async fn a_guest_requests_a_stay_that_the_hotel_approves(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let receiver = Receiver::start().await;
    s.post(
        "/api/webhooksubscriptions",
        &org.auth(),
        json!({"hotelId": h.id, "url": receiver.url, "events": ["reservation.created", "guest.created"]}),
    )
    .await
    .expect(200);
    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&format!("/book/{}", h.id)).await;
    b.wait_for_text("Book your stay").await;
    let text = b.page_text().await;
    assert!(text.contains("Seaside Inn") && text.contains("Avenida da Praia 7, Cascais, Portugal"), "{text}");
    b.assert_page_ok("the booking page").await;
    search(&b, 3, 5, "2").await;
    b.wait_for_text("3 offers for 2 adults").await;
    b.assert_page_ok("the results").await;
    // The same offers as the JSON endpoint, computed by the same domain code, cheapest first.
    let path = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}&adults=2", h.id, day(3), day(5));
    let api = s.get(&path, &Auth::None).await.expect(200).body;
    let expected: Vec<(String, String, String)> = api
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["roomTypeName"].as_str().unwrap().to_string(),
                o["ratePlanName"].as_str().unwrap().to_string(),
                money::format(o["totalPrice"].as_i64().unwrap(), "EUR"),
            )
        })
        .collect();
    let shown = offers_shown(&b).await;
    assert_eq!(shown, expected);
    let totals: Vec<&str> = shown.iter().map(|o| o.2.as_str()).collect();
    assert_eq!(totals, ["EUR 200.00", "EUR 240.00", "EUR 400.00"], "sorted by price");
    let text = b.page_text().await;
    assert!(text.contains("Only 2 rooms left"), "the suite has two rooms: {text}");
    assert!(text.contains("EUR 120.00 a night") && text.contains("Two rooms, four beds"), "{text}");
    choose(&b, "Standard Double", "Flexible").await;
    let summary = b.text(".summary").await;
    assert!(summary.contains("Standard Double") && summary.contains("EUR 240.00") && summary.contains("2 nights"));
    b.assert_page_ok("the guest form").await;
    fill_guest(&b, "Marie", "Dubois", "marie@example.com").await;
    b.fill("#phone", "+33 6 12 34 56 78").await;
    b.select("#country", "FR").await;
    b.select("#arrivalTime", "18:30").await;
    b.fill("#notes", "A quiet room, please.").await;
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    b.assert_page_ok("the confirmation").await;
    let text = b.page_text().await;
    assert!(text.contains("Thank you, Marie") && text.contains("Once the hotel confirms it"), "{text}");
    assert!(
        text.contains("marie@example.com") && text.contains("around 18:30") && text.contains("EUR 240.00"),
        "{text}"
    );
    // The receipt quotes the reservation's short reference, which finds it through the API.
    let reference = b.text(".reference").await;
    assert_eq!(reference.len(), 8, "{reference}");

    // The hotel sees it through the API: a REQUESTED reservation from the booking page, at the offer's price.
    let listed = requests(&s, &org, &h).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["reference"], json!(reference));
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let found = s.get(&format!("/api/reservations?reference={reference}"), &org.auth()).await.expect(200).body;
    assert_eq!(found[0]["id"], json!(id));
    let r = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(r["status"], json!("REQUESTED"));
    assert_eq!(r["totalPrice"], json!(24000));
    assert_eq!(r["notes"], json!("A quiet room, please."));
    assert_eq!(r["rooms"][0]["ratePlanId"], json!(h.flexible));
    assert_eq!(r["rooms"][0]["roomId"], Value::Null);
    // The arrival time is the stay's start: 18:30 at the hotel (Lisbon) on the check-in date.
    let arrival = {
        use chrono::TimeZone;
        let local = chrono::NaiveDate::parse_from_str(&day(3), "%Y-%m-%d").unwrap().and_hms_opt(18, 30, 0).unwrap();
        chrono_tz::Europe::Lisbon.from_local_datetime(&local).unwrap().with_timezone(&chrono::Utc)
    };
    let start: chrono::DateTime<chrono::Utc> = r["startTime"].as_str().unwrap().parse().unwrap();
    assert_eq!(start, arrival);
    let guest = s.get(&format!("/api/guests/{}", r["guestId"].as_str().unwrap()), &org.auth()).await.expect(200).body;
    assert_eq!(guest["country"], json!("FR"));
    assert_eq!(guest["phone"], json!("+33 6 12 34 56 78"));
    // Every writer's webhook events.
    let created = delivered(&receiver, "reservation.created", |d| d["id"] == json!(id)).await;
    assert_eq!(created["data"]["source"], json!("BOOKING_PAGE"));
    delivered(&receiver, "guest.created", |d| d["email"] == json!("marie@example.com")).await;

    // And in the dashboard's inbox, where it is approved; the guest's receipt then says so.
    let receipt = b.path().await;
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/requests", h.id)).await;
    b.wait_for_text("Marie Dubois").await;
    assert!(b.page_text().await.contains("EUR 240.00"));
    b.click_text("button", "Approve").await;
    b.wait_for_text("Approved the request of Marie Dubois").await;
    b.goto(&receipt).await;
    b.wait_for_text("Your stay is confirmed, Marie").await;
    // A second request with the same e-mail (written otherwise) brings a guest of its own, as typed: matching it
    // to the guest the hotel knows is for staff, who see the hint on the request.
    b.goto(&search_path(&h, 10, 11, 2)).await;
    choose(&b, "Standard Double", "Non-refundable").await;
    fill_guest(&b, "Marie", "Dubois", "MARIE@example.com").await;
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    assert_eq!(s.count("guests").await, 2);
    b.close().await;
}

/// The hidden fields of the guest form at `details_path`, as a browser gets them: (offer, idempotency key).
async fn form_of(s: &TestServer, details_path: &str) -> (String, String) {
    let html = s.client.get(format!("{}{details_path}", s.base)).send().await.unwrap().text().await.unwrap();
    let value = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} in {html}")) + marker.len();
        html[start..start + html[start..].find('"').unwrap()].to_string()
    };
    (value("offer"), value("key"))
}

/// Two clicks of the mouse in quick succession on an element, as a person double-clicks.
async fn double_click(b: &Browser, css: &str) {
    use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
    let element = b.find(css).await;
    let mut mouse = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element,
        duration: None,
        x: 0.0,
        y: 0.0,
    });
    for n in 0..2 {
        if n == 1 {
            mouse = mouse.then(PointerAction::Pause { duration: Duration::from_millis(60) });
        }
        mouse = mouse
            .then(PointerAction::Down { button: MOUSE_BUTTON_LEFT })
            .then(PointerAction::Up { button: MOUSE_BUTTON_LEFT });
    }
    b.client.perform_actions(mouse).await.unwrap();
}

async fn double_submits_back_button_resubmits_and_refreshes_make_one_request(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;

    // Two identical posts at once (a double click without JavaScript): one request, and both answers lead to it.
    let html = s.client.get(format!("{}{}", s.base, search_path(&h, 3, 4, 2))).send().await.unwrap();
    let html = html.text().await.unwrap();
    let start = html.find("/details?offer=").unwrap();
    let details = format!("/book/{}{}", h.id, &html[start..start + html[start..].find('"').unwrap()]);
    let (offer, key) = form_of(&s, &details).await;
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = || {
        no_redirects.post(format!("{}/book/{}/request", s.base, h.id)).form(&[
            ("offer", offer.as_str()),
            ("key", key.as_str()),
            ("firstName", "Lukas"),
            ("lastName", "Weber"),
            ("email", "lukas@example.com"),
        ])
    };
    let (first, second) = tokio::join!(post().send(), post().send());
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(first.status().as_u16(), 303);
    assert_eq!(second.status().as_u16(), 303);
    assert_eq!(first.headers()["location"], second.headers()["location"]);
    assert_eq!(requests(&s, &org, &h).await.len(), 1);

    // In the browser: a double click, the back button and the form sent again, a refresh.
    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&search_path(&h, 5, 7, 2)).await;
    choose(&b, "Standard Double", "Flexible").await;
    fill_guest(&b, "Ana", "Silva", "ana@example.com").await;
    double_click(&b, ".guest-form button[type=submit]").await;
    b.wait_for_text("your request has been sent").await;
    let receipt = b.path().await;
    assert_eq!(requests(&s, &org, &h).await.len(), 2);
    b.client.back().await.unwrap();
    b.wait_for_text("Who is staying").await;
    assert_eq!(b.find("#email").await.prop("value").await.unwrap().as_deref(), Some("ana@example.com"));
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    assert_eq!(b.path().await, receipt, "the form sent again answers the request it made");
    b.client.refresh().await.unwrap();
    b.wait_for_text("your request has been sent").await;
    assert_eq!(requests(&s, &org, &h).await.len(), 2);
    // Back again, changed and sent: the first request stands, and the page says so without showing it (a form
    // kept by a browser is no pass to the request it made).
    b.client.back().await.unwrap();
    b.wait_for_text("Who is staying").await;
    b.fill("#notes", "Late arrival").await;
    send(&b).await;
    b.wait_for_text("This form was already sent").await;
    assert!(!b.page_text().await.contains("Silva"));
    b.assert_accessible("a changed form sent again").await;
    assert_eq!(requests(&s, &org, &h).await.len(), 2);
    b.close().await;
}

/// The values of the guest form's fields, in the order of `GUEST_FIELDS`.
const GUEST_FIELDS: [&str; 7] = ["#firstName", "#lastName", "#email", "#phone", "#country", "#arrivalTime", "#notes"];

async fn guest_fields(b: &Browser) -> Vec<String> {
    let mut values = Vec::new();
    for css in GUEST_FIELDS {
        values.push(b.find(css).await.prop("value").await.unwrap().unwrap_or_default());
    }
    values
}

async fn a_stale_offer_keeps_what_the_guest_typed_beside_the_offer_of_now(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // Repriced between the choice and the request: the form again with everything typed, the new price beside it.
    b.goto(&search_path(&h, 3, 5, 2)).await;
    choose(&b, "Standard Double", "Flexible").await;
    fill_guest(&b, "Sofia", "Rossi", "sofia@example.com").await;
    b.fill("#phone", "+39 333 123 4567").await;
    b.select("#country", "IT").await;
    b.select("#arrivalTime", "20:00").await;
    b.fill("#notes", "A cot for our baby, please.").await;
    let typed = guest_fields(&b).await;
    let stale_offer = b.find("input[name=offer]").await.attr("value").await.unwrap().unwrap();
    let key = b.find("input[name=key]").await.attr("value").await.unwrap().unwrap();
    price_nights(&s, &org, &h.flexible, 3, 5, 13000).await;
    send(&b).await;
    b.wait_for_text("has changed from EUR 240.00 to EUR 260.00").await;
    assert_eq!(guest_fields(&b).await, typed, "everything typed is kept");
    let summary = b.text(".summary").await;
    assert!(summary.contains("Standard Double") && summary.contains("Flexible") && summary.contains("EUR 260.00"));
    assert!(!summary.contains("EUR 240.00"), "{summary}");
    assert_eq!(b.find(".stale").await.attr("role").await.unwrap().as_deref(), Some("alert"));
    b.assert_page_ok("the stale offer beside the form").await;
    shot(&s, &b, "booking-stale-offer").await;
    assert_eq!(s.count("reservations").await, 0);
    // A reload sends the stale form again, as it was: refused again, nothing booked.
    let resent = s
        .client
        .post(format!("{}/book/{}/request", s.base, h.id))
        .form(&[
            ("offer", stale_offer.as_str()),
            ("key", key.as_str()),
            ("firstName", "Sofia"),
            ("lastName", "Rossi"),
            ("email", "sofia@example.com"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resent.status().as_u16(), 409);
    assert!(resent.text().await.unwrap().contains("has changed from EUR 240.00 to EUR 260.00"));
    assert_eq!(s.count("reservations").await, 0);
    // Sent as shown: booked at the new price, with everything typed.
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    let booked = &requests(&s, &org, &h).await[0];
    assert_eq!(booked["totalPrice"], json!(26000));
    assert_eq!(booked["notes"], json!("A cot for our baby, please."));
    let guest = s.get(&format!("/api/guests/{}", booked["guestId"].as_str().unwrap()), &org.auth()).await.expect(200);
    assert_eq!(guest.body["phone"], json!("+39 333 123 4567"));
    assert_eq!(guest.body["country"], json!("IT"));

    // Sold out between the choice and the request, other rooms still free: the form kept, each of them sends it.
    b.goto(&search_path(&h, 8, 9, 2)).await;
    choose(&b, "Family Suite", "Flexible").await;
    fill_guest(&b, "Lea", "Fischer", "lea@example.com").await;
    b.fill("#notes", "Two beds for the children").await;
    let typed = guest_fields(&b).await;
    fill_suites(&s, &org, &h, 8, 9).await;
    send(&b).await;
    b.wait_for_text("has just been booked by someone else").await;
    assert_eq!(guest_fields(&b).await, typed, "everything typed is kept");
    assert_eq!(b.find_all(".alternatives button").await.len(), 2, "both standard plans are free");
    b.assert_page_ok("the stale form with the rooms still free").await;
    let xpath = "//ul[@class='alternatives']/li[.//p[@class='offer-plan'][normalize-space()='Flexible']]//button";
    b.client.find(Locator::XPath(xpath)).await.unwrap().click().await.unwrap();
    b.wait_for_text("your request has been sent").await;
    let listed = requests(&s, &org, &h).await;
    let lea = listed.iter().find(|r| r["notes"] == json!("Two beds for the children")).expect("Lea's request");
    let lea = s.get(&format!("/api/reservations/{}", lea["id"].as_str().unwrap()), &org.auth()).await.expect(200).body;
    assert_eq!(lea["rooms"][0]["ratePlanId"], json!(h.flexible));
    assert_eq!(lea["totalPrice"], json!(12000));

    // Sold out with no other room for the party (only the suites take three): the search of the stay, at its GET URL.
    b.goto(&search_path(&h, 10, 11, 3)).await;
    choose(&b, "Family Suite", "Flexible").await;
    fill_guest(&b, "Lea", "Fischer", "lea@example.com").await;
    fill_suites(&s, &org, &h, 10, 11).await;
    send(&b).await;
    b.wait_for_text("has just been booked by someone else").await;
    assert!(b.page_text().await.contains("No room is free for all of these nights"));
    assert!(b.path().await.starts_with(&format!("/book/{}?checkInDate=", h.id)), "{}", b.path().await);
    b.assert_page_ok("the search after a sold-out request").await;
    assert_eq!(requests(&s, &org, &h).await.len(), 2);
    // An offer opened after it went stale says so before the form is filled in.
    b.goto(&search_path(&h, 20, 22, 2)).await;
    let details = b.find("li.offer a").await.attr("href").await.unwrap().unwrap();
    price_nights(&s, &org, &h.saver, 20, 22, 9000).await;
    b.goto(&details).await;
    b.wait_for_text("has changed from EUR 200.00 to EUR 180.00").await;
    b.close().await;
}

async fn mistakes_are_shown_beside_their_fields(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    let invalid = |css: &'static str| {
        let b = &b;
        async move { b.find(css).await.attr("aria-invalid").await.unwrap().unwrap_or_default() }
    };
    b.goto(&format!("/book/{}", h.id)).await;
    // Check-out before check-in.
    search(&b, 5, 3, "2").await;
    b.wait_for_text("Must be after the check-in date.").await;
    assert_eq!(invalid("#checkOutDate").await, "true");
    assert_eq!(b.text("#checkOutDate-error").await, "Must be after the check-in date.");
    b.assert_page_ok("the search with a mistake").await;
    shot(&s, &b, "booking-mistakes").await;
    // A check-in in the past.
    b.goto(&format!("/book/{}?checkInDate=2020-01-01&checkOutDate=2020-01-03", h.id)).await;
    b.wait_for_text("Must not be in the past.").await;
    assert_eq!(invalid("#checkInDate").await, "true");
    // Too long a stay.
    search(&b, 3, 40, "2").await;
    b.wait_for_text("A stay may span at most 30 nights.").await;
    // Too many guests for any room.
    search(&b, 3, 5, "5").await;
    b.wait_for_text("Our rooms take at most 4 guests").await;
    assert_eq!(invalid("#adults").await, "true");
    assert!(b.text("#adults-error").await.contains("send a request for each room"));
    // Not a number (a link can say anything; the browser's number field sends numbers only).
    b.goto(&format!("/book/{}?checkInDate={}&checkOutDate={}&adults=two", h.id, day(3), day(5))).await;
    b.wait_for_text("Enter a number.").await;
    assert_eq!(b.find("#adults").await.prop("value").await.unwrap().as_deref(), Some(""));
    // Nothing free: said plainly, not as a mistake.
    fill_suites(&s, &org, &h, 12, 13).await;
    search(&b, 12, 13, "3").await;
    b.wait_for_text("No room is free for all of these nights").await;
    // The guest form: names and e-mail are required, the e-mail must be one; nothing is written until they are.
    b.goto(&search_path(&h, 3, 4, 2)).await;
    choose(&b, "Standard Double", "Flexible").await;
    b.fill("#email", "not an address").await;
    send(&b).await;
    b.wait_for_text("Please check the fields marked below.").await;
    assert_eq!(b.text("#firstName-error").await, "Must not be empty.");
    assert_eq!(b.text("#email-error").await, "Must be an e-mail address.");
    assert_eq!(invalid("#lastName").await, "true");
    assert_eq!(b.find("#email").await.prop("value").await.unwrap().as_deref(), Some("not an address"));
    b.assert_page_ok("the guest form with mistakes").await;
    assert_eq!(s.count("reservations").await, 2, "only the desk's");
    assert_eq!(s.count("guests").await, 1, "only the desk's");
    fill_guest(&b, "Ines", "Costa", "ines@example.com").await;
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    b.close().await;
}

async fn the_booking_page_works_without_javascript(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start_without_javascript(&s.base).await else { return };
    // A link from the hotel's site prefills the form.
    b.goto(&format!("/book/{}?adults=3", h.id)).await;
    b.wait_for_text("Book your stay").await;
    assert_eq!(b.find("#adults").await.prop("value").await.unwrap().as_deref(), Some("3"));
    b.click(".search-submit button").await;
    b.wait_for_text("offer for 3 adults").await;
    b.goto(&search_path(&h, 4, 6, 3)).await;
    b.wait_for_text("1 offer for 3 adults").await;
    // The nightly prices open without a script.
    b.click("details.nightly summary").await;
    b.wait_for_text("EUR 200.00").await;
    choose(&b, "Family Suite", "Flexible").await;
    fill_guest(&b, "Jack", "Taylor", "jack@example.com").await;
    b.select("#country", "AU").await;
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    assert_eq!(requests(&s, &org, &h).await.len(), 1);
    b.close().await;
}

async fn a_hotel_without_public_booking_answers_404_and_nothing_leaks(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let rival = s.org("Rival").await;
    let rival_hotel = hotel(&s, &rival).await;
    // A request at the rival hotel.
    let path = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", rival_hotel.id, day(2), day(3));
    let offers = s.get(&path, &Auth::None).await.expect(200).body;
    let booking = json!({"offerId": offers[0]["offerId"],
                         "guest": {"firstName": "Eve", "lastName": "Spy", "email": "eve@example.com"}});
    let booked = s.post(&format!("/api/hotels/{}/book-reservation", rival_hotel.id), &Auth::None, booking).await;
    let rival_reservation = booked.expect(201).body["reservationId"].as_str().unwrap().to_string();

    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&search_path(&h, 2, 3, 2)).await;
    b.wait_for_text("offers for 2 adults").await;
    assert!(!b.page_text().await.contains("Eve"));
    for path in [
        // Another hotel's request under our hotel, without its token, with a forged one; an unknown hotel.
        format!("/book/{}/requests/{rival_reservation}", h.id),
        format!("/book/{}/requests/{rival_reservation}", rival_hotel.id),
        format!("/book/{}/requests/{rival_reservation}?token=AAAAAAAAAAAAAAAAAAAAAA", rival_hotel.id),
        "/book/00000000-0000-0000-0000-000000000000".to_string(),
    ] {
        let answer = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
        let html = answer.text().await.unwrap();
        assert!(html.contains("Page not found") && !html.contains("Eve"), "{path}: {html}");
    }
    // A forged offer is refused, not booked.
    let forged = s
        .client
        .post(format!("{}/book/{}/request", s.base, h.id))
        .form(&[
            ("offer", "eyJ4Ijo5fQ.c2lnbmF0dXJl"),
            ("firstName", "A"),
            ("lastName", "B"),
            ("email", "a@example.com"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 400);
    assert_eq!(requests(&s, &org, &h).await.len(), 0);
    // Public booking turned off in the dashboard's settings: every page of the hotel's booking page answers 404.
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/settings", h.id)).await;
    b.wait_for_text("Guests can book online").await;
    b.click("#publicBooking").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("Saved the booking page settings.").await;
    assert!(b.page_text().await.contains("The booking page is turned off"));
    let hotel = s.get(&format!("/api/hotels/{}", h.id), &org.auth()).await.expect(200).body;
    assert_eq!(hotel["publicBooking"], json!(false));
    b.goto(&search_path(&h, 2, 3, 2)).await;
    b.wait_for_text("Page not found").await;
    b.assert_page_ok("the booking page's 404 page").await;
    for path in [format!("/book/{}", h.id), format!("/book/{}/details?offer=x", h.id)] {
        let answer = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
    }
    b.close().await;
}

/// A page of another site (another port of this machine) that frames `target`: its origin and its server.
async fn site_framing(target: String) -> (String, tokio::task::JoinHandle<()>) {
    let html = format!(
        "<!doctype html><html><head><title>Our hotel</title></head><body><h1>Welcome to our hotel</h1>\
         <iframe src=\"{target}\" title=\"Book\" style=\"width:100%;height:600px\"></iframe></body></html>"
    );
    let app = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (origin, task)
}

/// The text shown in the frame of `site`'s page (empty when the browser refused to show the framed page).
async fn framed_text(b: &Browser, site: &str) -> String {
    b.client.goto(&format!("{site}/")).await.unwrap();
    b.wait_for_text("Welcome to our hotel").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    b.client.enter_frame(0).await.unwrap();
    let text = match b.client.execute("return document.body ? document.body.innerText : '';", vec![]).await {
        Ok(Value::String(text)) => text,
        _ => String::new(),
    };
    b.client.enter_parent_frame().await.unwrap();
    text
}

async fn only_the_hotels_own_sites_may_frame_the_booking_page(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let booking = format!("{}/book/{}", s.base, h.id);
    let (own_site, own_task) = site_framing(booking.clone()).await;
    let (other_site, other_task) = site_framing(booking.clone()).await;
    let (dashboard_site, dashboard_task) = site_framing(format!("{}/hotels/{}/settings", s.base, h.id)).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // No site may frame it until the hotel names its own.
    assert!(!framed_text(&b, &own_site).await.contains("Book your stay"));
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.click_text("nav a", "Booking page").await;
    b.wait_for_text("Embedding code").await;
    assert!(b
        .find("#snippet")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap()
        .contains(&format!("<iframe src=\"{booking}\"")));
    b.fill("#embedOrigins", "https://www.seaside-inn.example/booking").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("is not an origin").await;
    assert_eq!(b.find("#embedOrigins").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the settings with a mistake").await;
    b.fill("#embedOrigins", &format!("{own_site}/\nhttps://www.seaside-inn.example")).await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("Saved the booking page settings.").await;
    b.assert_page_ok("the booking page settings").await;
    shot(&s, &b, "booking-settings").await;
    let hotel = s.get(&format!("/api/hotels/{}", h.id), &org.auth()).await.expect(200).body;
    assert_eq!(hotel["bookingEmbedOrigins"], json!([own_site, "https://www.seaside-inn.example"]));
    // The named site shows it; another site does not; no site shows the dashboard.
    let framed = framed_text(&b, &own_site).await;
    assert!(framed.contains("Book your stay") && framed.contains("Seaside Inn"), "{framed}");
    assert!(!framed_text(&b, &other_site).await.contains("Book your stay"));
    assert!(!framed_text(&b, &dashboard_site).await.contains("Embedding code"));
    // The headers behind it.
    let page = s.client.get(&booking).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.ends_with(&format!("frame-ancestors {own_site} https://www.seaside-inn.example")), "{csp}");
    assert!(page.headers().get("x-frame-options").is_none());
    for path in ["/sign-in".to_string(), format!("/hotels/{}/settings", h.id)] {
        let page = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(page.headers()["x-frame-options"], "DENY", "{path}");
        assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    }
    for task in [own_task, other_task, dashboard_task] {
        task.abort();
    }
    b.close().await;
}

async fn visitors_are_rate_limited_per_address_like_the_public_api(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.public_rate_limit_per_minute = 5).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    for _ in 0..5 {
        let page = s.client.get(format!("{}/book/{}", s.base, h.id)).send().await.unwrap();
        assert_eq!(page.status().as_u16(), 200);
    }
    let refused = s.client.get(format!("{}{}", s.base, search_path(&h, 2, 3, 2))).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(refused.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(refused.text().await.unwrap().contains("Too many requests"));
    // One bucket per address, shared with the public API.
    let path = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", h.id, day(2), day(3));
    assert_eq!(s.get(&path, &Auth::None).await.status.as_u16(), 429);
    let posted = s.client.post(format!("{}/book/{}/request", s.base, h.id)).form(&[("offer", "x")]).send().await;
    assert_eq!(posted.unwrap().status().as_u16(), 429);
}

/// Every step of the demo hotel's booking page at desktop (1280 px) and phone (375 px) width, the guest form with
/// mistakes and with a stale offer, and the 404 page: none scrolls sideways, axe-core finds no violation, a phone's
/// pickers take a finger; and on SQLite the screenshots in `docs/screenshots/` that the README shows.
async fn the_booking_page_reads_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let seeded = frontdesk::demo::seed(&s.db).await.unwrap();
    let hotel = seeded.hotel_id.unwrap();
    let login = json!({"email": frontdesk::demo::DEMO_EMAIL, "password": frontdesk::demo::DEMO_PASSWORD});
    let token =
        s.post("/api/auth/login", &Auth::None, login).await.expect(200).body["token"].as_str().unwrap().to_string();
    for (round, (size, suffix)) in [(DESKTOP, ""), (PHONE, "-phone")].into_iter().enumerate() {
        let phone = size == PHONE;
        // The demo hotel is busy this month; six weeks ahead every room type is free.
        let (from, to) = (42 + 7 * round as u64, 45 + 7 * round as u64);
        let results = format!("/book/{hotel}?checkInDate={}&checkOutDate={}&adults=2", day(from), day(to));
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        let pickers = "select, input[type=date], input[type=number], button";
        b.goto(&format!("/book/{hotel}")).await;
        b.wait_for_text("Book your stay").await;
        b.assert_page_ok("the booking page").await;
        if phone {
            b.assert_min_height(pickers, 44.0, "the booking page").await;
        }
        shot(&s, &b, &format!("booking-search{suffix}")).await;
        b.goto(&results).await;
        b.wait_for_text("offers for 2 adults").await;
        b.assert_page_ok("the results").await;
        shot(&s, &b, &format!("booking-results{suffix}")).await;
        b.click("li.offer a").await;
        b.wait_for_text("Who is staying").await;
        b.assert_page_ok("the guest form").await;
        send(&b).await;
        b.wait_for_text("Please check the fields marked below.").await;
        b.assert_page_ok("the guest form with mistakes").await;
        // A long e-mail address (without a hyphen to break at), which the confirmation repeats.
        let email = format!("emma.johanssonlindqvist.bookings{round}@harbourviewexamplehotels.com");
        fill_guest(&b, "Emma", "Johansson", &email).await;
        b.select("#country", "SE").await;
        b.select("#arrivalTime", "17:00").await;
        if phone {
            b.assert_min_height(pickers, 44.0, "the guest form").await;
        }
        shot(&s, &b, &format!("booking-details{suffix}")).await;
        // Repriced while the form was filled in: the form again, with the price of now beside it.
        let search =
            format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}&adults=2", day(from), day(to));
        let cheapest = s.get(&search, &Auth::None).await.expect(200).body[0].clone();
        let values: Vec<Value> = cheapest["nightly"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| json!({"ratePlanId": cheapest["ratePlanId"], "date": n["date"], "price": n["price"].as_i64().unwrap() + 1500}))
            .collect();
        s.post("/api/dailyRates", &Auth::Token(token.clone()), json!({"values": values})).await.expect(200);
        send(&b).await;
        b.wait_for_text("has changed from").await;
        b.assert_page_ok("the guest form with a stale offer").await;
        if phone {
            shot(&s, &b, "booking-stale-offer-phone").await;
        }
        send(&b).await;
        b.wait_for_text("your request has been sent").await;
        b.assert_page_ok("the confirmation").await;
        shot(&s, &b, &format!("booking-confirmation{suffix}")).await;
        b.goto("/book/00000000-0000-0000-0000-000000000000").await;
        b.wait_for_text("Page not found").await;
        b.assert_page_ok("the booking page's 404 page").await;
        b.close().await;
    }
}
