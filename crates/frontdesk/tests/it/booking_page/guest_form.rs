//! The guest form: a stale offer keeps what the guest typed beside the offer of now, mistakes are shown beside their
//! fields, and the page works without JavaScript.

use crate::common::browser::Browser;
use crate::common::{day, delivering, Org, TestServer};
use fantoccini::Locator;
use frontdesk::store::Engine;
use serde_json::json;

use super::{choose, fill_guest, hotel, price_nights, requests, search, search_path, send, shot, Hotel};

on_both_engines_configured!(
    a_stale_offer_keeps_what_the_guest_typed_beside_the_offer_of_now,
    mistakes_are_shown_beside_their_fields,
    the_booking_page_works_without_javascript,
);

/// Confirmed stays in both family suites from `from` to `to`, made at the desk.
async fn fill_suites(s: &TestServer, org: &Org, h: &Hotel, from: u64, to: u64) {
    let guest = s.create("/api/guests", &org.auth(), json!({"firstName": "Desk", "lastName": "Guest"})).await;
    for _ in 0..2 {
        let body = json!({"hotelId": h.id, "guestId": guest, "checkInDate": day(from), "checkOutDate": day(to),
                          "rooms": [{"roomTypeId": h.suite, "ratePlanId": h.suite_plan, "adults": 2}]});
        s.create("/api/reservations", &org.auth(), body).await;
    }
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
    assert_eq!(b.text("#email-error").await, "Must be an e-mail address such as ana@example.com.");
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
    let nightly = b.text("details.nightly[open] ul").await;
    assert!(nightly.contains("EUR 200.00"), "the nightly prices show: {nightly}");
    choose(&b, "Family Suite", "Flexible").await;
    fill_guest(&b, "Jack", "Taylor", "jack@example.com").await;
    b.select("#country", "AU").await;
    send(&b).await;
    b.wait_for_text("your request has been sent").await;
    assert_eq!(requests(&s, &org, &h).await.len(), 1);
    b.close().await;
}
