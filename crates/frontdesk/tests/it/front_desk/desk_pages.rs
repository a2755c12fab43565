//! The front desk in the dashboard (headless Chromium): checking out after a confirmation and undoing it, housekeeping
//! from a phone, checking in to a dirty room, finding stays by reference, phone and name, and a known e-mail offered
//! instead of a new guest.

use crate::common::browser::{Browser, PHONE};
use crate::common::{day, TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::json;

use super::{hotel, id, move_to, signed_in, stay};

on_both_engines_configured!(
    the_desk_checks_out_after_a_confirmation_and_can_undo_it,
    housekeeping_works_from_a_phone,
    checking_in_to_a_dirty_room_asks_first,
    the_desk_finds_stays_by_reference_phone_and_name,
    a_new_guest_with_a_known_email_is_offered_instead,
);

/// Whether the page is no wider than the window: nothing scrolls sideways.
async fn fits_the_window(b: &Browser) -> bool {
    let widths = b
        .client
        .execute("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];", vec![])
        .await
        .unwrap();
    widths[0] == widths[1]
}

async fn the_desk_checks_out_after_a_confirmation_and_can_undo_it(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 2).await;
    let guest = s.create("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let body = json!({"hotelId": h.0, "guestId": guest, "checkInDate": day(0), "checkOutDate": day(3),
                      "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2, "roomId": h.3[0]}]});
    let booked = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(200);
    let Some(b) = signed_in(&s, &org, crate::common::browser::DESKTOP).await else { return };
    // Today's departures do not list her (she leaves in three days): check out from her page.
    b.goto(&format!("/hotels/{}/reservations/{}", h.0, id(&booked))).await;
    b.wait_for_text(booked["reference"].as_str().unwrap()).await;
    b.click_text("a", "Check out").await;
    // Never one click: the confirmation says what an early departure gives back and takes off the folio.
    b.wait_for_text("Check out Ana Silva?").await;
    let text = b.page_text().await;
    assert!(text.contains("Early departure"), "{text}");
    assert!(text.contains("EUR 200.00"), "the two nights' charges: {text}");
    assert!(text.contains("EUR 100.00"), "the folio total after: {text}");
    assert!(text.contains("EUR 100.00 is still to pay"), "the balance, and how it is settled: {text}");
    assert_eq!(b.find("#settle-amount").await.prop("value").await.unwrap().as_deref(), Some("100.00"));
    assert_eq!(
        s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.body["status"],
        json!("CHECKED_IN")
    );
    b.assert_accessible("the check-out confirmation").await;
    if engine == Engine::Sqlite {
        b.screenshot("check-out").await;
    }
    b.click_text("button", "Yes, check out").await;
    b.wait_for_text("Checked out Ana Silva.").await;
    let out = s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.expect(200);
    assert_eq!((out.body["status"].clone(), out.body["checkOutDate"].clone()), (json!("CHECKED_OUT"), json!(day(1))));
    // Paid at the desk by card, as the form offered: the folio is settled.
    let folio = out.body["folio"]["id"].as_str().unwrap();
    let folio = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((folio["payments"].clone(), folio["balance"].clone()), (json!(10_000), json!(0)));
    assert_eq!(folio["lines"].as_array().unwrap().last().unwrap()["method"], json!("CARD"));
    // The wrong guest? Undo, the same day.
    b.click_text("button", "Undo check-out").await;
    b.accept_dialog().await;
    b.wait_for_text("Checked in Ana Silva.").await;
    let back = s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.expect(200);
    assert_eq!((back.body["status"].clone(), back.body["checkOutDate"].clone()), (json!("CHECKED_IN"), json!(day(3))));
    b.close().await;
}

async fn housekeeping_works_from_a_phone(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    for (room, floor) in h.3.iter().zip([1, 1, 2]) {
        s.put(&format!("/api/rooms/{room}"), &org.auth(), json!({"floor": floor})).await.expect(200);
    }
    // Room 101: its guest just left. Room 102: a guest arrives today. Room 103: out of order.
    let left = stay(&s, &org, &h, 0, 1, Some(&h.3[0])).await;
    move_to(&s, &org, &id(&left), "CHECKED_IN").await.expect(200);
    move_to(&s, &org, &id(&left), "CHECKED_OUT").await.expect(200);
    stay(&s, &org, &h, 0, 2, Some(&h.3[1])).await;
    s.put(&format!("/api/rooms/{}", h.3[2]), &org.auth(), json!({"housekeepingStatus": "OUT_OF_ORDER"}))
        .await
        .expect(200);

    // A hotel's whole name shows in the switcher of a phone's header.
    s.put(&format!("/api/hotels/{}", h.0), &org.auth(), json!({"name": "Harbour View Hotel Lisboa"})).await.expect(200);

    let Some(b) = signed_in(&s, &org, PHONE).await else { return };
    b.goto(&format!("/hotels/{}/housekeeping", h.0)).await;
    b.wait_for_text("Floor 2").await;
    assert!(fits_the_window(&b).await, "the housekeeping page scrolls sideways on a phone");
    b.assert_choice_shown(".switcher select", "the hotel switcher").await;
    b.assert_accessible("the housekeeping page").await;
    if engine == Engine::Sqlite {
        b.screenshot("housekeeping-phone").await;
    }
    let text = b.page_text().await;
    assert!(text.contains("Arriving today"), "{text}");
    assert!(text.contains("check-out of"), "who made room 101 dirty: {text}");
    // The filters: dirty rooms, and the out-of-order one.
    b.click_text("a", "Dirty").await;
    b.wait_for_new_page().await;
    b.wait_for_text("Room 101").await;
    assert!(!b.page_text().await.contains("Room 102"));
    b.click_text("a", "Out of order").await;
    b.wait_for_new_page().await;
    b.wait_for_text("Room 103").await;
    assert!(!b.page_text().await.contains("Room 101"));
    // One tap: 101 is clean.
    b.click_text("a", "Dirty").await;
    b.wait_for_new_page().await;
    b.wait_for_text("Room 101").await;
    b.click_text(&format!("#room-{} button", h.3[0]), "Clean").await;
    b.wait_for_text("Room 101 is now clean.").await;
    assert!(b.path().await.contains("show=dirty"), "back to the same filter: {}", b.path().await);
    let room = s.get(&format!("/api/rooms/{}", h.3[0]), &org.auth()).await.expect(200);
    assert_eq!(
        (room.body["housekeepingStatus"].clone(), room.body["housekeepingChangedBy"].clone()),
        (json!("CLEAN"), json!("Test Operator"))
    );
    // A room that a stay holds cannot go out of order: the page says why and nothing changes.
    b.goto(&format!("/hotels/{}/housekeeping", h.0)).await;
    b.click_text(&format!("#room-{} button", h.3[1]), "Out of order").await;
    b.wait_for_text("cannot go out of order").await;
    let room = s.get(&format!("/api/rooms/{}", h.3[1]), &org.auth()).await.expect(200);
    assert_eq!(room.body["housekeepingStatus"], json!("CLEAN"));
    b.close().await;
}

async fn checking_in_to_a_dirty_room_asks_first(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 2).await;
    s.put(&format!("/api/rooms/{}", h.3[1]), &org.auth(), json!({"housekeepingStatus": "DIRTY"})).await.expect(200);
    let guest = s.create("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let body = json!({"hotelId": h.0, "guestId": guest, "checkInDate": day(0), "checkOutDate": day(2),
                      "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}]});
    let booked = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let Some(b) = Browser::start_without_javascript(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/reservations/{}", h.0, id(&booked))).await;
    // The picker says what each room is like now.
    let select = format!("select[name='room:{}']", booked["rooms"][0]["id"].as_str().unwrap());
    let options = b.text(&select).await;
    assert!(options.contains("101 · clean · free") && options.contains("102 · dirty · free"), "{options}");
    b.select(&select, &h.3[1]).await;
    b.click_text("button", "Check in").await;
    b.wait_for_text("Check Ana Silva in to a dirty room?").await;
    assert!(b.page_text().await.contains("room 102"));
    assert_eq!(
        s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.body["status"],
        json!("CONFIRMED")
    );
    b.click_text("button", "Yes, check in").await;
    b.wait_for_text("Checked in Ana Silva.").await;
    let r = s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.expect(200);
    assert_eq!((r.body["status"].clone(), r.body["rooms"][0]["roomId"].clone()), (json!("CHECKED_IN"), json!(h.3[1])));
    b.close().await;
}

async fn the_desk_finds_stays_by_reference_phone_and_name(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 2).await;
    let mut references = Vec::new();
    for (first, last, phone, from) in [("Ana", "Silva", "+351 912 345 678", 2), ("Bob", "Stone", "+44 20 7946 0958", 3)]
    {
        let guest =
            s.create("/api/guests", &org.auth(), json!({"firstName": first, "lastName": last, "phone": phone})).await;
        let body = json!({"hotelId": h.0, "guestId": guest, "checkInDate": day(from), "checkOutDate": day(from + 1),
                          "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}]});
        references.push(s.post("/api/reservations", &org.auth(), body).await.expect(200).body["reference"].clone());
    }
    let Some(b) = signed_in(&s, &org, crate::common::browser::DESKTOP).await else { return };
    let search = |typed: &str| {
        format!("/hotels/{}/reservations?{}", h.0, serde_urlencoded::to_string([("guest", typed)]).unwrap())
    };
    let bob = references[1].as_str().unwrap();
    for (typed, found, not_found) in [
        ("912 345 678", "Ana Silva", "Bob Stone"),
        (&bob.to_lowercase()[..], "Bob Stone", "Ana Silva"),
        ("sil", "Ana Silva", "Bob Stone"),
        ("7946 0958", "Bob Stone", "Ana Silva"),
    ] {
        b.goto(&search(typed)).await;
        b.wait_for_text("Reservations").await;
        let text = b.page_text().await;
        assert!(text.contains(found) && !text.contains(not_found), "{typed}: {text}");
    }
    assert!(b.page_text().await.contains(bob), "the list shows each stay's reference");
    b.close().await;
}

async fn a_new_guest_with_a_known_email_is_offered_instead(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 2).await;
    let ana = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"}),
        )
        .await;
    let Some(b) = signed_in(&s, &org, crate::common::browser::DESKTOP).await else { return };
    let fill = |first: &'static str| {
        let b = &b;
        let h = &h;
        async move {
            b.goto(&format!("/hotels/{}/reservations/new", h.0)).await;
            b.fill("#firstName", first).await;
            b.fill("#lastName", "Silva").await;
            b.fill("#email", "ANA@example.com").await;
            b.set_value("#checkInDate", &day(3)).await;
            b.set_value("#checkOutDate", &day(5)).await;
            b.select("#roomTypeId", &h.1).await;
            b.select("#ratePlanId", &h.2).await;
            b.click_text("button", "Create reservation").await;
            b.wait_for_text("is already a guest's e-mail").await;
        }
    };
    fill("Ana").await;
    assert_eq!(
        (s.count("guests").await, s.count("reservations").await),
        (1, 0),
        "nothing written before the desk says"
    );
    b.assert_accessible("the offer of the known guest").await;
    b.click_text("button", "Book for Ana Silva").await;
    b.wait_for_text("Reservation created").await;
    assert_eq!(s.count("guests").await, 1, "no second guest");
    let listed = s.get(&format!("/api/reservations?guestId={ana}"), &org.auth()).await.expect(200);
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    // Someone else who shares the address: the desk says so and gets a new guest.
    fill("Anabela").await;
    b.click_text("button", "Create a new guest anyway").await;
    b.wait_for_text("Reservation created").await;
    assert_eq!((s.count("guests").await, s.count("reservations").await), (2, 2));
    b.close().await;
}
