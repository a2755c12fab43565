//! Every step of the booking page reads well on desktop and phone.

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::{day, delivering, Auth};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{fill_guest, send, shot};

on_both_engines_configured!(the_booking_page_reads_well_on_desktop_and_phone);

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
