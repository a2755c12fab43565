//! A guest's request from search to approval, and sent more than once: double submits, back-button resubmits and
//! refreshes make one request.

use std::time::Duration;

use crate::common::browser::Browser;
use crate::common::receiver::Receiver;
use crate::common::{day, delivering, Auth, TestServer, PASSWORD, WAIT};
use fantoccini::Locator;
use frontdesk::domain::money;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{choose, fill_guest, hotel, requests, search, search_path, send};

on_both_engines_configured!(
    a_guest_requests_a_stay_that_the_hotel_approves,
    double_submits_back_button_resubmits_and_refreshes_make_one_request,
);

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
