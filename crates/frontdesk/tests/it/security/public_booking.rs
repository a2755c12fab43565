//! The public booking page and API: requests keep the guest as typed, the form's keys are the page's own, floods are
//! limited, and exact repeats sent at once make one request.

use crate::common::{Auth, TestServer, PASSWORD};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{behind_a_proxy, bookable, dashboard_session, form_key, no_redirects, offer};

on_both_engines_configured!(
    public_requests_keep_the_guest_as_typed,
    booking_form_keys_are_the_pages_own,
    booking_floods_are_limited,
    exact_repeats_sent_at_once_make_one_request,
);

fn booking(offer: &str, first: &str, email: &str) -> Value {
    json!({"offerId": offer, "guest": {"firstName": first, "lastName": "Doe", "email": email}})
}

/// A booking request through the API from `address`: the answer.
async fn book_api(s: &TestServer, hotel: &str, body: &Value, address: &str, auth: &Auth) -> crate::common::Answer {
    let mut request = s.client.post(format!("{}/api/hotels/{hotel}/book-reservation", s.base)).json(body);
    request = request.header("x-forwarded-for", address);
    if let Auth::Key(secret) = auth {
        request = request.header("authorization", crate::common::basic(secret));
    }
    TestServer::answer(request.send().await.unwrap()).await
}

/// Posts the booking page's guest form: (status, Location, page text).
async fn send_form(s: &TestServer, hotel: &str, fields: &[(&str, &str)], address: &str) -> (u16, String, String) {
    let answer = no_redirects()
        .post(format!("{}/book/{hotel}/request", s.base))
        .header("x-forwarded-for", address)
        .form(fields)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let location = answer.headers().get("location").map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
    (status, location, answer.text().await.unwrap())
}

/// Booking with someone else's e-mail attached the request to their guest record, and the receipt greeted the
/// booker with the stored first name, across the organization's hotels. Now the request keeps what was typed, the
/// receipt shows it, and staff see a hint of the hotel's guests with the same e-mail, never another hotel's.
async fn public_requests_keep_the_guest_as_typed(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 2).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 1).await;
    let ana = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima", "email": "ana@example.com"}),
        )
        .await;
    let elsewhere = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": other_hotel, "firstName": "Anabela", "lastName": "Costa", "email": "ana@example.com"}),
        )
        .await;

    // On the page: the receipt greets whoever typed, not the stored guest.
    let offer_id = offer(&s, &hotel, 3, 5).await;
    let key = form_key(&s, &hotel, &offer_id).await;
    let fields = [
        ("offer", offer_id.as_str()),
        ("key", key.as_str()),
        ("firstName", "Mallory"),
        ("lastName", "Evil"),
        ("email", "ANA@example.com"),
    ];
    let (status, receipt, _) = send_form(&s, &hotel, &fields, "203.0.113.20").await;
    assert_eq!(status, 303);
    let receipt_page = s.client.get(format!("{}{receipt}", s.base)).send().await.unwrap().text().await.unwrap();
    assert!(receipt_page.contains("Thank you, Mallory"), "{receipt_page}");
    assert!(!receipt_page.contains("Ana") && !receipt_page.contains("Lima"), "{receipt_page}");

    // Through the API as well: each request has a guest of its own, of the hotel, as typed.
    let api_offer = offer(&s, &hotel, 6, 7).await;
    let booked = book_api(&s, &hotel, &booking(&api_offer, "Eve", "ana@example.com"), "203.0.113.21", &Auth::None)
        .await
        .expect(201);
    let requests = s.get(&format!("/api/reservations?hotelId={hotel}"), &org.auth()).await.expect(200).body;
    assert_eq!(requests.as_array().unwrap().len(), 2);
    for request in requests.as_array().unwrap() {
        let guest_id = request["guestId"].as_str().unwrap();
        assert!(guest_id != ana && guest_id != elsewhere);
        let guest = s.get(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(200).body;
        assert_eq!(guest["hotelId"], json!(hotel));
        assert!(["Mallory", "Eve"].contains(&guest["firstName"].as_str().unwrap()), "{guest}");
    }
    let stored = s.get(&format!("/api/guests/{ana}"), &org.auth()).await.expect(200).body;
    assert_eq!((stored["firstName"].as_str(), stored["lastName"].as_str()), (Some("Ana"), Some("Lima")));

    // Staff see the hotel's guests with the same e-mail beside the request; not the other hotel's.
    let cookie = dashboard_session(&s, &org.operator_email, PASSWORD).await;
    let id = booked.body["reservationId"].as_str().unwrap();
    let page = no_redirects()
        .get(format!("{}/hotels/{hotel}/reservations/{id}", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"same-email\""), "{page}");
    assert!(page.contains(&format!("guests/{ana}")) && page.contains("Ana Lima"));
    assert!(!page.contains(&elsewhere) && !page.contains("Anabela"));
}

/// The booking form's `key` was the client's to choose and shared the API's `Idempotency-Key` namespace: posting
/// another booking's key redirected to that booking's receipt. Now the page takes only keys it issued, in a
/// namespace of its own, and answers a key with the first request only when the request is the same.
async fn booking_form_keys_are_the_pages_own(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 3).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 1).await;

    // Someone books through the API with a key...
    let api_offer = offer(&s, &hotel, 3, 4).await;
    let res = s
        .client
        .post(format!("{}/api/hotels/{hotel}/book-reservation", s.base))
        .header("idempotency-key", "retry-42")
        .json(&booking(&api_offer, "Victim", "victim@example.com"))
        .send()
        .await
        .unwrap();
    TestServer::answer(res).await.expect(201);
    // ...and the form posted with that key (or any key the page did not give out) books nothing and shows nothing.
    let page_offer = offer(&s, &hotel, 3, 4).await;
    let issued = form_key(&s, &hotel, &page_offer).await;
    let other_hotels_key = form_key(&s, &other_hotel, &offer(&s, &other_hotel, 3, 4).await).await;
    for key in ["retry-42", "bp_made-up", "", other_hotels_key.as_str()] {
        let fields =
            [("offer", page_offer.as_str()), ("key", key), ("firstName", "M"), ("lastName", "X"), ("email", "m@x.co")];
        let (status, location, page) = send_form(&s, &hotel, &fields, "203.0.113.30").await;
        assert_eq!((status, location.as_str()), (400, ""), "{key}");
        assert!(!page.contains("Victim") && !page.contains("victim@"), "{page}");
    }
    assert_eq!(s.count("reservations").await, 1);

    // The page's own key: the same form twice is one request; changed, it is refused without a trace of the first.
    let mut fields = vec![
        ("offer", page_offer.as_str()),
        ("key", issued.as_str()),
        ("firstName", "Ana"),
        ("lastName", "Silva"),
        ("email", "ana@example.com"),
    ];
    let first = send_form(&s, &hotel, &fields, "203.0.113.31").await;
    let second = send_form(&s, &hotel, &fields, "203.0.113.31").await;
    assert_eq!((first.0, second.0), (303, 303));
    assert_eq!(first.1, second.1);
    fields[2] = ("firstName", "Mallory");
    let (status, location, page) = send_form(&s, &hotel, &fields, "203.0.113.32").await;
    assert_eq!((status, location.as_str()), (409, ""));
    assert!(page.contains("This form was already sent"));
    assert!(!page.contains("Silva") && !page.contains("ana@example.com") && !page.contains("/requests/"), "{page}");
    assert_eq!(s.count("reservations").await, 2);

    // The page's key sent to the API is a key of the API's own namespace: it books anew.
    let res = s
        .client
        .post(format!("{}/api/hotels/{hotel}/book-reservation", s.base))
        .header("idempotency-key", &issued)
        .json(&booking(&offer(&s, &hotel, 5, 6).await, "Ana", "ana@example.com"))
        .send()
        .await
        .unwrap();
    let answer = TestServer::answer(res).await.expect(201);
    assert!(!first.1.contains(answer.body["reservationId"].as_str().unwrap()));
    assert_eq!(s.count("reservations").await, 3);
}

/// One address sent dozens of booking requests to a hotel in seconds. Now requests without an API key that may
/// write reservations are limited per address and per guest e-mail for each hotel, an exact repeat answers the
/// first request, and the page's form has a trap robots fill in.
async fn booking_floods_are_limited(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| {
        c.booking_requests_per_address_per_hour = 3;
        c.booking_requests_per_email_per_hour = 2;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 10).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 10).await;
    let book = |body: Value, address: &'static str| {
        let s = &s;
        let hotel = hotel.clone();
        async move { book_api(s, &hotel, &body, address, &Auth::None).await }
    };
    let first_offer = offer(&s, &hotel, 3, 4).await;
    let first = book(booking(&first_offer, "A", "a@example.com"), "203.0.113.40").await.expect(201);
    book(booking(&offer(&s, &hotel, 4, 5).await, "B", "b@example.com"), "203.0.113.40").await.expect(201);
    book(booking(&offer(&s, &hotel, 5, 6).await, "C", "c@example.com"), "203.0.113.40").await.expect(201);
    let refused = book(booking(&offer(&s, &hotel, 6, 7).await, "D", "d@example.com"), "203.0.113.40").await.expect(429);
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&retry), "until the hour is over: {retry}");
    // An exact repeat of a waiting request answers it, limits or not.
    let repeat = book(booking(&first_offer, "A", "A@example.com"), "203.0.113.40").await.expect(201);
    assert_eq!(repeat.body["reservationId"], first.body["reservationId"]);
    // The page counts with the API.
    let page_offer = offer(&s, &hotel, 7, 8).await;
    let key = form_key(&s, &hotel, &page_offer).await;
    let fields = [
        ("offer", page_offer.as_str()),
        ("key", key.as_str()),
        ("firstName", "E"),
        ("lastName", "F"),
        ("email", "e@example.com"),
    ];
    let (status, _, page) = send_form(&s, &hotel, &fields, "203.0.113.40").await;
    assert_eq!(status, 429);
    assert!(page.contains("Too many booking requests"), "{page}");
    // Another hotel counts apart.
    book_api(
        &s,
        &other_hotel,
        &booking(&offer(&s, &other_hotel, 3, 4).await, "G", "g@example.com"),
        "203.0.113.40",
        &Auth::None,
    )
    .await
    .expect(201);
    // Per e-mail, whatever the address.
    book(booking(&offer(&s, &hotel, 8, 9).await, "A", "a@example.com"), "203.0.113.41").await.expect(201);
    book(booking(&offer(&s, &hotel, 9, 10).await, "A", "a@example.com"), "203.0.113.42").await.expect(429);
    // An integration that may write reservations is not the public.
    let writer = Auth::Key(s.key(&org, &[Scope::ReservationsWrite], None).await);
    for n in 0..4 {
        let body = booking(&offer(&s, &hotel, 10 + n, 11 + n).await, "A", "a@example.com");
        book_api(&s, &hotel, &body, "203.0.113.40", &writer).await.expect(201);
    }
    let before = s.count("reservations").await;
    // The trap: a form that fills in the field people never see books nothing.
    let trap_offer = offer(&s, &hotel, 20, 21).await;
    let key = form_key(&s, &hotel, &trap_offer).await;
    let fields = [
        ("offer", trap_offer.as_str()),
        ("key", key.as_str()),
        ("website", "http://spam.example"),
        ("firstName", "Bot"),
        ("lastName", "Bot"),
        ("email", "bot@example.com"),
    ];
    assert_eq!(send_form(&s, &hotel, &fields, "203.0.113.43").await.0, 400);
    assert_eq!(s.count("reservations").await, before);
}

/// Repeats of one public request sent at once (a flood of the same request) make one request, on PostgreSQL too:
/// the request's counts are locked before the repeat is looked for, so each repeat waits for the first to commit.
async fn exact_repeats_sent_at_once_make_one_request(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| {
        c.booking_requests_per_address_per_hour = 100;
        c.booking_requests_per_email_per_hour = 100;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 3).await;
    let body = booking(&offer(&s, &hotel, 3, 5).await, "Ana", "ana@example.com");
    let s = std::sync::Arc::new(s);
    let mut calls = Vec::new();
    for n in 0..12 {
        let (s, hotel, body) = (s.clone(), hotel.clone(), body.clone());
        calls.push(tokio::spawn(async move {
            let address = format!("203.0.113.{}", 100 + n % 3);
            book_api(&s, &hotel, &body, &address, &Auth::None).await.expect(201).body["reservationId"].clone()
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for call in calls {
        ids.insert(call.await.unwrap().as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1));
}
