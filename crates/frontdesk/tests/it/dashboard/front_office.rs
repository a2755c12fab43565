//! The front office's work in the browser, with its webhook deliveries: a booking request approved in the inbox, a
//! check-in shown on the rack, a guest edited, a reservation made at the desk priced first, and every page working
//! without JavaScript.

use std::time::Duration;

use crate::common::browser::Browser;
use crate::common::receiver::Receiver;
use crate::common::{day, delivering, Auth, Org, TestServer, PASSWORD, WAIT};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{guest, hotel, stay};

on_both_engines_configured!(
    a_booking_request_is_approved_in_the_inbox,
    checking_in_with_a_room_shows_on_the_rack,
    a_guest_edited_in_the_dashboard_is_delivered,
    a_reservation_made_at_the_desk_is_priced_first,
    the_dashboard_works_without_javascript,
);

async fn subscribe(s: &TestServer, org: &Org, hotel: &str, receiver: &Receiver, events: Value) {
    s.post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": receiver.url, "events": events}))
        .await
        .expect(200);
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
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {event} delivery; received: {:?}",
            receiver.received().iter().map(|r| r.json()["event"].clone()).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn a_booking_request_is_approved_in_the_inbox(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &h.id, &receiver, json!(["reservation.updated"])).await;
    // A guest asks for a stay through the public endpoints.
    let search = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", h.id, day(3), day(5));
    let offers = s.get(&search, &Auth::None).await.expect(200).body;
    let offer = offers.as_array().unwrap().iter().find(|o| o["roomTypeId"] == json!(h.standard)).unwrap().clone();
    let booking = json!({"offerId": offer["offerId"], "guest": {"firstName": "Marie", "lastName": "Dubois", "email": "marie@example.com"}});
    let booked = s.post(&format!("/api/hotels/{}/book-reservation", h.id), &Auth::None, booking).await.expect(201);
    let id = booked.body["reservationId"].as_str().unwrap().to_string();

    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/requests", h.id)).await;
    b.wait_for_text("Marie Dubois").await;
    // The tab's badge counts the requests waiting (from the reservation counts).
    let badge = b.find("nav.tabs .badge").await.attr("aria-label").await.unwrap();
    assert_eq!(badge.as_deref(), Some("1 waiting"));
    let text = b.page_text().await;
    assert!(text.contains("EUR 240.00") && text.contains("Standard Double") && text.contains("2 nights"), "{text}");
    b.assert_page_ok("the booking requests").await;
    b.click_text("button", "Approve").await;
    b.wait_for_text("Approved the request of Marie Dubois").await;
    assert!(b.page_text().await.contains("No booking requests are waiting."));
    assert!(b.find_all("nav.tabs .badge").await.is_empty(), "no badge once nothing waits");
    let approved = delivered(&receiver, "reservation.updated", |d| d["id"] == json!(id)).await;
    assert_eq!(approved["data"]["status"], json!("CONFIRMED"));
    // The folio is on the reservation's page.
    b.goto(&format!("/hotels/{}/reservations/{id}", h.id)).await;
    b.wait_for_text("Folio").await;
    let text = b.page_text().await;
    assert!(text.contains("Confirmed") && text.contains("Total") && text.contains("EUR 120.00"), "{text}");
    b.assert_page_ok("a reservation").await;
    let r = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    assert_eq!(r.body["folio"]["total"], json!(24000));

    // A request that can no longer be had: approving says so, and it stays waiting.
    let second_booking = json!({"offerId": offer["offerId"], "guest": {"firstName": "Lukas", "lastName": "Weber", "email": "lukas@example.com"}});
    for n in 0..3 {
        let ana = guest(&s, &org, "Ana", &format!("Filler{n}")).await;
        stay(&s, &org, &h, &ana, 3, 5, None).await;
    }
    let refused = s.post(&format!("/api/hotels/{}/book-reservation", h.id), &Auth::None, second_booking).await;
    assert_eq!(refused.status.as_u16(), 409, "every standard room is taken now: {}", refused.body);
    b.close().await;
}

async fn checking_in_with_a_room_shows_on_the_rack(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    let joao = guest(&s, &org, "Joao", "Pereira").await;
    let arriving = stay(&s, &org, &h, &ana, 0, 3, None).await;
    stay(&s, &org, &h, &joao, 1, 4, Some(&h.rooms[1])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    // Today lists the arrival without a room: it goes to its page to assign one.
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    b.click_text("a", "Assign & check in").await;
    b.wait_for_text("Check in").await;
    // Room 102 is João's from tomorrow: the overlap rule refuses it, and says so.
    let select = format!("select[name='room:{}']", first_room(&s, &org, &arriving).await);
    b.select(&select, &h.rooms[1]).await;
    b.click_text("button", "Check in").await;
    b.wait_for_text("already assigned to another stay").await;
    let r = s.get(&format!("/api/reservations/{arriving}"), &org.auth()).await.expect(200);
    assert_eq!(r.body["status"], json!("CONFIRMED"), "nothing changed");
    // Room 101 is free.
    b.goto(&format!("/hotels/{}/reservations/{arriving}", h.id)).await;
    b.select(&select, &h.rooms[0]).await;
    b.click_text("button", "Check in").await;
    b.wait_for_text("Checked in Ana Silva.").await;
    let r = s.get(&format!("/api/reservations/{arriving}"), &org.auth()).await.expect(200);
    assert_eq!(r.body["status"], json!("CHECKED_IN"));
    assert_eq!(r.body["rooms"][0]["roomId"], json!(h.rooms[0]));
    // The rack shows the stay in room 101, as checked in.
    b.goto(&format!("/hotels/{}/rack", h.id)).await;
    b.wait_for_text("Room rack").await;
    let bar = b.find(&format!("a.bar.checked-in[href$='{arriving}']")).await;
    assert!(bar.text().await.unwrap().contains("Ana Silva"));
    let row = b.find("tbody tr:has(a.bar.checked-in) th").await.text().await.unwrap();
    assert!(row.starts_with("101"), "{row}");
    b.assert_page_ok("the room rack").await;
    b.assert_legible(".rack .bar, .rack thead th", "the room rack").await;
    // 30 days across, and the next window.
    b.click_text("a", "30 days").await;
    assert_eq!(b.find_all("thead th").await.len(), 31);
    b.click_text("a", "Later").await;
    assert!(b.path().await.contains(&format!("from={}", day(30))), "{}", b.path().await);
    b.close().await;
}

/// The id of a reservation's first room.
async fn first_room(s: &TestServer, org: &Org, reservation: &str) -> String {
    let r = s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200);
    r.body["rooms"][0]["id"].as_str().unwrap().to_string()
}

async fn a_guest_edited_in_the_dashboard_is_delivered(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &h.id, &receiver, json!(["guest.updated"])).await;
    let emma = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": h.id, "firstName": "Emma", "lastName": "Johansson", "email": "emma@example.com"}),
        )
        .await;
    stay(&s, &org, &h, &emma, 5, 6, None).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/guests", h.id)).await;
    b.fill("#q", "johan").await;
    b.click_text("button", "Search").await;
    b.wait_for_new_page().await;
    b.wait_for_text("emma@example.com").await;
    b.assert_page_ok("the guest search").await;
    b.click_text("a", "Emma Johansson").await;
    b.wait_for_text("Stays").await;
    b.assert_page_ok("a guest").await;
    b.click_text("a", "Edit").await;
    // A mistake first: the message sits beside its field, and nothing is saved.
    b.fill("#email", "not an address").await;
    b.click_text("button", "Save changes").await;
    b.wait_for_text("must be an e-mail address").await;
    assert_eq!(b.find("#email").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the guest form with errors").await;
    b.fill("#email", "emma.j@example.com").await;
    b.fill("#phone", "+46 70 123 45 67").await;
    b.click_text("button", "Save changes").await;
    b.wait_for_text("Saved Emma Johansson.").await;
    let update = delivered(&receiver, "guest.updated", |d| d["id"] == json!(emma)).await;
    assert_eq!(update["data"]["phone"], json!("+46 70 123 45 67"));
    assert_eq!(update["data"]["email"], json!("emma.j@example.com"));
    assert_eq!(receiver.received().len(), 1, "the refused save sent nothing");
    // A guest with a stay is not deleted: the browser asks, then the page says why.
    b.click_text("button", "Delete").await;
    b.accept_dialog().await;
    b.wait_for_text("has reservations, so the guest cannot be deleted").await;
    s.get(&format!("/api/guests/{emma}"), &org.auth()).await.expect(200);
    b.close().await;
}

async fn a_reservation_made_at_the_desk_is_priced_first(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &h.id, &receiver, json!([])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/reservations/new", h.id)).await;
    // Nothing chosen: every message beside its field, nothing written.
    b.click_text("button", "Create reservation").await;
    b.wait_for_text("Choose a room type.").await;
    assert!(b.page_text().await.contains("must not be empty") || b.page_text().await.contains("Choose a rate plan"));
    b.assert_page_ok("the reservation form with errors").await;
    assert_eq!(s.count("reservations").await, 0);
    assert_eq!(s.count("guests").await, 0);
    b.fill("#firstName", "Yuki").await;
    b.fill("#lastName", "Tanaka").await;
    b.fill("#email", "yuki@example.com").await;
    b.set_value("#checkInDate", &day(7)).await;
    b.set_value("#checkOutDate", &day(10)).await;
    b.select("#roomTypeId", &h.standard).await;
    b.select("#ratePlanId", &h.plan).await;
    // (With JavaScript, choosing the rate plan showed the price already; the button asks again, with a new page.)
    b.click_text("button", "Show price").await;
    b.wait_for_new_page().await;
    b.wait_for_text("EUR 360.00 for 3 nights").await;
    b.assert_page_ok("the reservation form").await;
    b.click_text("button", "Create reservation").await;
    b.wait_for_text("Reservation created").await;
    let created = delivered(&receiver, "reservation.created", |d| d["source"] == json!("DASHBOARD")).await;
    assert_eq!(created["data"]["totalPrice"], json!(36000));
    assert_eq!(created["data"]["status"], json!("CONFIRMED"));
    delivered(&receiver, "guest.created", |d| d["email"] == json!("yuki@example.com")).await;
    // The list finds it by the guest's name.
    b.goto(&format!("/hotels/{}/reservations?guest=tanaka", h.id)).await;
    b.wait_for_text("Yuki Tanaka").await;
    b.assert_page_ok("the reservation list").await;
    // Too many adults for the room type: the domain's message, beside the field.
    b.goto(&format!("/hotels/{}/reservations/new", h.id)).await;
    b.click("input[name=guestMode][value=existing]").await;
    b.fill("#guestQuery", "yuki@example.com").await;
    b.set_value("#checkInDate", &day(12)).await;
    b.set_value("#checkOutDate", &day(13)).await;
    b.select("#roomTypeId", &h.standard).await;
    b.select("#ratePlanId", &h.plan).await;
    b.fill("#adults", "5").await;
    b.click_text("button", "Create reservation").await;
    b.wait_for_text("the party does not fit").await;
    assert_eq!(s.count("reservations").await, 1);
    b.close().await;
}

/// With JavaScript off every page still works: forms post and redirect, destructive actions confirm on a page.
async fn the_dashboard_works_without_javascript(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    let id = stay(&s, &org, &h, &ana, 2, 4, None).await;
    // (At desktop width: with a phone's emulated touch and JavaScript off, chromedriver's clicks never return. The
    // confirmation page at phone width is checked in `the_demo_hotel_reads_well_on_desktop_and_phone`.)
    let Some(b) = Browser::start_without_javascript(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/reservations/{id}", h.id)).await;
    b.click_text("button", "Cancel reservation").await;
    b.wait_for_text("Cancel the reservation of Ana Silva?").await;
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CONFIRMED"));
    // The button says in full what it does.
    let button = b.find("main form button[type=submit]").await;
    assert_eq!(button.text().await.unwrap(), "Yes, cancel the reservation of Ana Silva");
    b.click_text("button", "Yes, cancel").await;
    b.wait_for_text("Cancelled the reservation of Ana Silva.").await;
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CANCELLED"));
    // The hotel switcher's button takes over from the script.
    let other = s.hotel(&org, "Mountain Lodge").await;
    b.goto(&format!("/hotels/{}/rack", h.id)).await;
    b.select("#hotel-switcher", &other).await;
    b.click_text("button", "Go").await;
    // The switcher lists "Mountain Lodge" already: wait for the other hotel's page, not for its name.
    b.wait_for_new_page().await;
    assert_eq!(b.path().await, format!("/hotels/{other}/rack"));
    b.wait_for_text("Room rack").await;
    b.close().await;
}
