//! The operator dashboard, used as a person uses it: in a real headless Chromium (chromedriver over WebDriver),
//! on SQLite and PostgreSQL, with webhooks delivered to a recording receiver. The SQLite runs save screenshots of
//! the main pages to `docs/screenshots/`, and every page visited is checked with axe-core.

use std::time::Duration;

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::receiver::Receiver;
use crate::common::{day, delivering, Auth, Org, TestServer, PASSWORD, WAIT};
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines_configured!(
    signing_in_shows_mistakes_then_the_front_office,
    a_booking_request_is_approved_in_the_inbox,
    checking_in_with_a_room_shows_on_the_rack,
    a_guest_edited_in_the_dashboard_is_delivered,
    a_reservation_made_at_the_desk_is_priced_first,
    the_dashboard_works_without_javascript,
    forged_cross_site_posts_are_refused,
    signing_out_ends_the_session,
    other_organizations_records_show_the_404_page,
    the_demo_hotel_reads_well_on_desktop_and_phone,
    sign_in_attempts_are_limited_per_email,
    an_expired_session_returns_to_the_page_after_sign_in,
    answers_are_compressed_when_the_client_asks,
    the_focus_ring_shows_on_every_background,
    every_page_has_a_favicon_and_a_description_and_htmx_only_where_used,
);

/// The password of the operators that `TestServer::org` creates.
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

async fn subscribe(s: &TestServer, org: &Org, hotel: &str, receiver: &Receiver, events: Value) {
    s.post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": receiver.url, "events": events}))
        .await
        .expect(200);
}

fn screenshots(s: &TestServer) -> bool {
    s.engine == Engine::Sqlite
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

async fn signing_in_shows_mistakes_then_the_front_office(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    stay(&s, &org, &h, &ana, 0, 2, Some(&h.rooms[0])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // A page asked for first: the sign-in page, which then leads back to it.
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    assert!(b.path().await.starts_with("/sign-in?next="), "{}", b.path().await);
    b.fill("#email", &org.operator_email).await;
    b.fill("#password", "not the password").await;
    b.click("button[type=submit]").await;
    b.wait_for_text("The e-mail or password is not right.").await;
    assert_eq!(b.find("#password").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the sign-in page").await;
    b.fill("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_for_text("Arrivals").await;
    assert_eq!(b.path().await, format!("/hotels/{}/today", h.id));
    let text = b.page_text().await;
    assert!(text.contains("Seaside Inn") && text.contains("Ana Silva"), "{text}");
    b.assert_page_ok("the Today page").await;
    b.close().await;
    // The session cookie is HttpOnly, SameSite=Lax.
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let answer = no_redirects
        .post(format!("{}/sign-in", s.base))
        .form(&[("email", org.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "x")])
        .header("cookie", "fd_signin=x")
        .send()
        .await
        .unwrap();
    let cookie = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("fd_session="))
        .unwrap_or_default()
        .to_string();
    assert!(
        cookie.starts_with("fd_session=fdt_") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
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
    let text = b.page_text().await;
    assert!(text.contains("EUR 240.00") && text.contains("Standard Double") && text.contains("2 nights"), "{text}");
    b.assert_page_ok("the booking requests").await;
    b.click_text("button", "Approve").await;
    b.wait_for_text("Approved the request of Marie Dubois").await;
    assert!(b.page_text().await.contains("No booking requests are waiting."));
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
    b.click_text("button", "Show price").await;
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
    let wanted = format!("/hotels/{other}/rack");
    for _ in 0..100 {
        if b.path().await == wanted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(b.path().await, wanted);
    b.wait_for_text("Room rack").await;
    b.close().await;
}

/// An e-mail address as long as real ones get, without a hyphen to break at: it must wrap where it is shown, not
/// push the page sideways.
const LONG_EMAIL: &str = "annika.lindqvistjohansson.reservations@harbourviewexamplehotels.com";

/// The controls a finger picks with (selects, date fields, the buttons of the rack's date navigation and the hotel
/// switcher), at least 44 px tall on a phone.
const PICKERS: &str = "select, input[type=date], .rack-nav .button, .rack-nav button, .switcher button";

/// The smallest font size of the Today page's occupancy chart as drawn, in CSS pixels (its SVG may be scaled).
async fn smallest_chart_label(b: &Browser) -> f64 {
    let script = "const sizes = [...document.querySelectorAll('.chart svg text, .chart svg tspan')]
                      .filter(t => t.getClientRects().length)
                      .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
                  return sizes.length ? Math.min(...sizes) : 0;";
    b.client.execute(script, vec![]).await.unwrap().as_f64().unwrap()
}

/// Every page of the demo hotel (`serve --demo`'s data) at desktop (1280 px) and phone (375 px) width: none scrolls
/// sideways, axe-core finds no violation on any, the actions of the front desk stay in reach and read in full, a
/// phone's pickers take a finger, the chart's labels are readable; and, on SQLite, the screenshots in
/// `docs/screenshots/` that the README shows.
async fn the_demo_hotel_reads_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    frontdesk::demo::seed(&s.db).await.unwrap();
    let hotel = first_id(&s, "SELECT id FROM hotels").await;
    let stay = first_id(&s, "SELECT id FROM reservations WHERE status = 'CHECKED_IN' ORDER BY check_in_date, id").await;
    let confirmed =
        first_id(&s, "SELECT id FROM reservations WHERE status = 'CONFIRMED' ORDER BY check_in_date, id").await;
    // The guest of a request waiting in the inbox, with a long e-mail address (shown there and on their page).
    let guest =
        first_id(&s, "SELECT guest_id AS id FROM reservations WHERE status = 'REQUESTED' ORDER BY check_in_date, id")
            .await;
    let login = json!({"email": frontdesk::demo::DEMO_EMAIL, "password": frontdesk::demo::DEMO_PASSWORD});
    let token =
        s.post("/api/auth/login", &Auth::None, login).await.expect(200).body["token"].as_str().unwrap().to_string();
    s.put(&format!("/api/guests/{guest}"), &Auth::Token(token), json!({"email": LONG_EMAIL})).await.expect(200);
    // (name, path, text to wait for, whether the README shows its screenshot)
    let pages = [
        ("today", format!("/hotels/{hotel}/today"), "Arrivals", true),
        ("room-rack", format!("/hotels/{hotel}/rack"), "Room rack", true),
        ("room-rack-30", format!("/hotels/{hotel}/rack?days=30"), "Room rack", false),
        ("booking-requests", format!("/hotels/{hotel}/requests"), "Booking requests", true),
        ("reservations", format!("/hotels/{hotel}/reservations"), "Reservations", true),
        ("reservation", format!("/hotels/{hotel}/reservations/{stay}"), "Folio", true),
        ("confirmed-reservation", format!("/hotels/{hotel}/reservations/{confirmed}"), "Folio", false),
        ("new-reservation", format!("/hotels/{hotel}/reservations/new"), "New reservation", true),
        ("guests", format!("/hotels/{hotel}/guests"), "Guests", true),
        ("guest-search", format!("/hotels/{hotel}/guests?q={LONG_EMAIL}"), "Guests matching", false),
        ("guest", format!("/hotels/{hotel}/guests/{guest}"), "Stays", true),
        ("guest-form", format!("/hotels/{hotel}/guests/{guest}/edit"), "Save changes", false),
        ("settings", format!("/hotels/{hotel}/settings"), "Embedding code", false),
        ("not-found", "/no-such-page".to_string(), "There is nothing here", false),
    ];
    for (size, suffix) in [(DESKTOP, ""), (PHONE, "-phone")] {
        let phone = size == PHONE;
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.goto("/sign-in").await;
        b.assert_page_ok("the sign-in page").await;
        if screenshots(&s) {
            b.screenshot(&format!("sign-in{suffix}")).await;
        }
        b.sign_in(frontdesk::demo::DEMO_EMAIL, frontdesk::demo::DEMO_PASSWORD).await;
        for (name, path, text, shown) in &pages {
            b.goto(path).await;
            b.wait_for_text(text).await;
            b.assert_page_ok(name).await;
            b.assert_in_reach("main button, main .button", name).await;
            if phone {
                b.assert_min_height(PICKERS, 44.0, name).await;
            }
            if screenshots(&s) && *shown {
                b.screenshot(&format!("{name}{suffix}")).await;
            }
        }
        let path_of = |name: &str| pages.iter().find(|page| page.0 == name).map(|page| page.1.clone()).unwrap();
        b.goto(&path_of("today")).await;
        b.wait_for_text("Occupancy").await;
        let smallest = smallest_chart_label(&b).await;
        assert!(smallest >= 12.0, "the chart's labels are drawn at {smallest:.1} px");
        // The confirmation a destructive action shows when the browser did not ask (as without JavaScript): its
        // button names the whole action.
        b.goto(&path_of("confirmed-reservation")).await;
        b.wait_for_text("Folio").await;
        b.client
            .execute(
                "document.querySelectorAll('[data-confirm]').forEach(f => f.removeAttribute('data-confirm'));",
                vec![],
            )
            .await
            .unwrap();
        b.click_text("button", "Cancel reservation").await;
        b.wait_for_text("This cannot be undone").await;
        b.assert_page_ok("the confirmation page").await;
        b.assert_in_reach("main button, main .button", "the confirmation page").await;
        let label = b.text("main form button[type=submit]").await;
        assert!(label.starts_with("Yes, cancel the reservation of ") && label.len() > 31, "{label}");
        b.close().await;
    }
}

/// The first value of the `id` column a query answers.
async fn first_id(s: &TestServer, sql: &str) -> String {
    use sqlx::Row;
    let mut conn = s.db.read().await.unwrap();
    sqlx::query(sql).fetch_one(&mut *conn).await.unwrap().get("id")
}

async fn forged_cross_site_posts_are_refused(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    let id = stay(&s, &org, &h, &ana, 2, 4, None).await;
    // Another site with a form that posts to the dashboard as soon as it loads.
    let target = format!("{}/hotels/{}/reservations/{id}/status", s.base, h.id);
    let html = format!(
        "<!doctype html><html><body><form id=f method=post action=\"{target}\">\
         <input name=to value=CANCELLED><input name=confirmed value=yes><input name=_csrf value=guess></form>\
         <script>document.getElementById('f').submit()</script></body></html>"
    );
    let evil = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let evil_url = format!("http://{}/", listener.local_addr().unwrap());
    let evil_task = tokio::spawn(async move { axum::serve(listener, evil).await });
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.client.goto(&evil_url).await.unwrap();
    b.wait_for_text("sent from another site").await;
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CONFIRMED"));
    // Without the origin headers a browser sends, the form's token still decides.
    let cookie = b.client.get_named_cookie("fd_session").await.unwrap();
    let cookie = format!("fd_session={}", cookie.value());
    for token in ["", "guess", "0123456789abcdef0123456789abcdef"] {
        let answer = s
            .client
            .post(&target)
            .header("cookie", &cookie)
            .form(&[("to", "CANCELLED"), ("confirmed", "yes"), ("_csrf", token)])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 403, "token {token:?}");
    }
    // Another origin, even with the right cookie, is refused before the token is looked at.
    let answer = s
        .client
        .post(&target)
        .header("cookie", &cookie)
        .header("origin", "http://evil.example")
        .form(&[("to", "CANCELLED"), ("confirmed", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CONFIRMED"));
    // The pages may not be framed by other sites.
    let page = s.client.get(format!("{}/sign-in", s.base)).send().await.unwrap();
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    evil_task.abort();
    b.close().await;
}

async fn signing_out_ends_the_session(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    let token = b.client.get_named_cookie("fd_session").await.unwrap().value().to_string();
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(200);
    b.click_text("button", "Sign out").await;
    b.wait_for_text("You are signed out.").await;
    // The token is revoked, not just forgotten by the browser.
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(401);
    let reused = s
        .client
        .get(format!("{}/hotels/{}/today", s.base, h.id))
        .header("cookie", format!("fd_session={token}"))
        .send()
        .await
        .unwrap();
    assert!(reused.url().path().starts_with("/sign-in"), "{}", reused.url());
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    assert!(b.path().await.starts_with("/sign-in"), "{}", b.path().await);
    b.close().await;
}

async fn other_organizations_records_show_the_404_page(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let rival = s.org("Rival").await;
    let rival_hotel = hotel(&s, &rival).await;
    let rival_guest = guest(&s, &rival, "Eve", "Spy").await;
    let rival_stay = stay(&s, &rival, &rival_hotel, &rival_guest, 1, 2, None).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    for path in [
        format!("/hotels/{}/reservations/{rival_stay}", h.id),
        format!("/hotels/{}/reservations/{rival_stay}", rival_hotel.id),
        format!("/hotels/{}/today", rival_hotel.id),
        format!("/hotels/{}/guests/{rival_guest}", h.id),
        "/no-such-page".to_string(),
    ] {
        b.goto(&path).await;
        b.wait_for_text("There is nothing here").await;
        assert!(!b.page_text().await.contains("Eve"), "{path}");
    }
    b.assert_page_ok("the 404 page").await;
    let answer = s
        .client
        .get(format!("{}/hotels/{}/reservations/{rival_stay}", s.base, h.id))
        .header("cookie", format!("fd_session={}", b.client.get_named_cookie("fd_session").await.unwrap().value()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 404);
    // The API's unknown paths still answer problem documents.
    let api = s.get("/api/no-such-endpoint", &Auth::None).await;
    assert_eq!(api.status.as_u16(), 404);
    assert_eq!(api.header("content-type"), Some("application/problem+json"));
    b.close().await;
}

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn sign_in_attempts_are_limited_per_email(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let client = no_redirects();
    let attempt = |password: &'static str| {
        client
            .post(format!("{}/sign-in", s.base))
            .header("cookie", "fd_signin=t0k3n")
            .form(&[("email", org.operator_email.as_str()), ("password", password), ("_csrf", "t0k3n")])
            .send()
    };
    for _ in 0..5 {
        assert_eq!(attempt("wrong password").await.unwrap().status().as_u16(), 401);
    }
    // The sixth from this address is refused before the password is looked at, even the right one, until the wait
    // it is told is over (tests/it/security.rs has the rest of the rules).
    let refused = attempt(PASSWORD).await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert!(refused.text().await.unwrap().contains("Too many failed sign-ins. Wait 1 second"));
    // Another operator's e-mail from the same address is not affected by that limit.
    let other = s.org("Other").await;
    let answer = client
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", other.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    // A sign-in form without its doubled token is refused.
    let answer = client
        .post(format!("{}/sign-in", s.base))
        .form(&[("email", other.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
}

async fn an_expired_session_returns_to_the_page_after_sign_in(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let operator = frontdesk::domain::identity::find_operator_by_email(&s.db, &org.operator_email).await.unwrap();
    let expired =
        frontdesk::domain::identity::issue_token(&s.db, operator, chrono::TimeDelta::seconds(-1)).await.unwrap();
    let page = format!("/hotels/{}/rack?days=30", h.id);
    let answer = no_redirects()
        .get(format!("{}{page}", s.base))
        .header("cookie", format!("fd_session={}", expired.token))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let location = answer.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        location,
        format!("/sign-in?next={}", url::form_urlencoded::byte_serialize(page.as_bytes()).collect::<String>())
    );
    let cookies: Vec<&str> = answer.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(cookies.iter().any(|c| c.starts_with("fd_session=;") && c.contains("Max-Age=0")), "{cookies:?}");
    // Signing in from there lands on the page asked for.
    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&location).await;
    b.fill("#email", &org.operator_email).await;
    b.fill("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_for_text("Room rack").await;
    assert_eq!(b.path().await, page);
    b.close().await;
}

/// `body` decoded from `encoding` (`gzip` or `br`).
fn decoded(body: &[u8], encoding: &str) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out).expect("gzip"),
        "br" => brotli::Decompressor::new(body, 4096).read_to_end(&mut out).expect("brotli"),
        other => panic!("no decoder for {other}"),
    };
    out
}

/// Answers are compressed (gzip or brotli) when the client says it takes them and sent as they are otherwise:
/// assets, pages, problem documents and streamed lists alike, each the same once decoded.
async fn answers_are_compressed_when_the_client_asks(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    for n in 0..30 {
        let g = guest(&s, &org, "Guest", &format!("Number{n}")).await;
        stay(&s, &org, &h, &g, 1 + n % 20, 3 + n % 20, None).await;
    }
    let token = match org.auth() {
        Auth::Token(token) => token,
        _ => unreachable!("an organization's operator signs in with a token"),
    };
    let paths = [
        frontdesk::web::assets::url("app.css"),
        frontdesk::web::assets::url("htmx.min.js"),
        "/no-such-page".to_string(),
        // A list streamed record by record (no limit), and a page.
        format!("/api/reservations?hotelId={}", h.id),
        "/api/guests?limit=10".to_string(),
    ];
    for path in &paths {
        let get = |encoding: Option<&str>| {
            let mut request =
                s.client.get(format!("{}{path}", s.base)).header("authorization", format!("Token {token}"));
            if let Some(encoding) = encoding {
                request = request.header("accept-encoding", encoding);
            }
            request.send()
        };
        let plain = get(None).await.unwrap();
        let status = plain.status();
        assert!(plain.headers().get("content-encoding").is_none(), "{path} was compressed unasked");
        let length = plain.headers().get("content-length").map(|v| v.to_str().unwrap().parse::<usize>().unwrap());
        let plain = plain.bytes().await.unwrap();
        if let Some(length) = length {
            assert_eq!(length, plain.len(), "{path}");
        }
        assert!(plain.len() > 32, "{path} is long enough to be compressed");
        for encoding in ["gzip", "br"] {
            let answer = get(Some(encoding)).await.unwrap();
            assert_eq!(answer.status(), status, "{path}");
            assert_eq!(answer.headers()["content-encoding"], encoding, "{path}");
            assert!(answer.headers()["vary"].to_str().unwrap().to_lowercase().contains("accept-encoding"), "{path}");
            let body = answer.bytes().await.unwrap();
            assert!(body.len() < plain.len(), "{path}: {} compressed bytes for {}", body.len(), plain.len());
            assert_eq!(decoded(&body, encoding), plain.to_vec(), "{path} decodes to the same answer");
        }
    }
    // A problem document is still one once decoded.
    let answer = s
        .client
        .post(format!("{}/api/guests", s.base))
        .header("authorization", format!("Token {token}"))
        .header("accept-encoding", "br")
        .json(&json!({"firstName": "", "lastName": "", "email": "x", "country": "xx", "language": "x".repeat(40)}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    assert_eq!(answer.headers()["content-type"], "application/problem+json");
    assert_eq!(answer.headers()["content-encoding"], "br");
    let problem: Value = serde_json::from_slice(&decoded(&answer.bytes().await.unwrap(), "br")).unwrap();
    assert_eq!(problem["status"], json!(400));
    assert!(problem["errors"].as_array().is_some_and(|errors| errors.len() >= 2), "{problem}");
    // An answer too short to gain is sent as it is.
    let answer = s
        .client
        .get(format!("{}/api/no-such-endpoint", s.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(answer.headers().get("content-encoding").is_none());
    assert_eq!(answer.headers()["content-type"], "application/problem+json");
}

/// The keyboard's focus shows everywhere: a ring at least 3:1 against what it is drawn on, on the light pages, on the
/// dark bars (the dashboard's top bar, the booking page's head), inside the room rack's scrolled table; and in forced
/// colours, where backgrounds and shadows are dropped.
async fn the_focus_ring_shows_on_every_background(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    stay(&s, &org, &h, &ana, 0, 2, Some(&h.rooms[0])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    for path in [format!("/hotels/{}/today", h.id), format!("/hotels/{}/rack", h.id)] {
        b.goto(&path).await;
        b.wait_for_text("Sign out").await;
        b.assert_focus_rings(24, &path).await;
    }
    b.goto(&format!("/book/{}", h.id)).await;
    b.wait_for_text("Book your stay").await;
    b.assert_focus_rings(8, "the booking page").await;
    b.emulate_forced_colors(true).await;
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    b.wait_for_text("Sign out").await;
    b.assert_focus_rings(16, "Today in forced colours").await;
    b.close().await;
}

/// Every kind of page (the dashboard's, sign-in, the 404 page, the booking page, the assistant connector's OAuth
/// pages) links the favicon under its content-digest URL and describes itself; htmx is loaded only by the page that
/// uses it (the new-reservation form's price preview).
async fn every_page_has_a_favicon_and_a_description_and_htmx_only_where_used(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let client = no_redirects();
    let signed_in = client
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", org.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    let session = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("fd_session=").map(|rest| rest.split(';').next().unwrap_or_default().to_string()))
        .expect("a session cookie");
    let favicon = frontdesk::web::assets::url("favicon.svg");
    let pages = [
        (format!("/hotels/{}/today", h.id), false),
        (format!("/hotels/{}/rack", h.id), false),
        (format!("/hotels/{}/reservations/new", h.id), true),
        ("/sign-in".to_string(), false),
        ("/no-such-page".to_string(), false),
        (format!("/book/{}", h.id), false),
        ("/oauth/authorize".to_string(), false),
    ];
    for (path, uses_htmx) in pages {
        let mut request = client.get(format!("{}{path}", s.base));
        if path.starts_with("/hotels/") {
            request = request.header("cookie", format!("fd_session={session}"));
        }
        let page = request.send().await.unwrap();
        let html_page =
            page.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/html"));
        assert!(html_page, "{path}: {} {:?}", page.status(), page.headers());
        let html = page.text().await.unwrap();
        assert!(
            html.contains(&format!("<link rel=\"icon\" href=\"{favicon}\" type=\"image/svg+xml\">")),
            "{path}: {html}"
        );
        let description = html
            .split("<meta name=\"description\" content=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        assert!(description.len() > 20, "{path} describes itself: {description:?}");
        assert_eq!(html.contains("htmx.min.js"), uses_htmx, "{path}");
    }
    // The favicon is this service's, kept for a year under its digest URL, and revalidated by its tag otherwise.
    let icon = client.get(format!("{}{favicon}", s.base)).send().await.unwrap();
    assert_eq!(icon.status().as_u16(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    assert_eq!(icon.headers()["cache-control"], "public, max-age=31536000, immutable");
    let tag = icon.headers()["etag"].to_str().unwrap().to_string();
    assert!(icon.text().await.unwrap().starts_with("<svg"));
    let again = client.get(format!("{}{favicon}", s.base)).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 304);
}
