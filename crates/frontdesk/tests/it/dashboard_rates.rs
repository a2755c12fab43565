//! The rates calendar of the dashboard, used as a revenue manager uses it: in a real headless Chromium, on SQLite and
//! PostgreSQL. What the calendar writes is read back through the API (`GET /api/dailyRates`) and public
//! availability (`GET /api/hotels/{id}/availability`). The SQLite runs save the calendar's screenshots.

use std::time::Duration;

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::{day, Auth, Org, TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines_configured!(
    a_price_edited_in_the_calendar_is_offered_at_once,
    a_bulk_edit_of_a_year_applies_completely_or_not_at_all,
    refused_input_is_shown_beside_its_field_and_changes_nothing,
    another_organizations_operator_gets_the_404_page,
    the_calendar_reads_well_on_desktop_and_phone,
);

async fn server(engine: Engine) -> Option<TestServer> {
    TestServer::configured(engine, |_| {}).await
}

/// A hotel with two room types (four standard rooms, two suites) and three rate plans: two of the standard type and
/// one of the whole hotel, each priced for 60 nights from today.
struct Hotel {
    id: String,
    standard: String,
    rooms: Vec<String>,
    /// Best Available Rate (standard), Non-refundable (standard), Breakfast included (every room type).
    plans: [String; 3],
}

async fn hotel(s: &TestServer, org: &Org, name: &str) -> Hotel {
    let auth = org.auth();
    let id = s.hotel(org, name).await;
    let standard =
        s.create("/api/roomTypes", &auth, json!({"hotelId": id, "name": "Standard Double", "maxOccupancy": 2})).await;
    let suite =
        s.create("/api/roomTypes", &auth, json!({"hotelId": id, "name": "Family Suite", "maxOccupancy": 4})).await;
    let mut rooms = Vec::new();
    for (room, room_type) in [("101", &standard), ("102", &standard), ("103", &standard), ("104", &standard)] {
        rooms.push(s.create("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": room})).await);
    }
    for room in ["201", "202"] {
        s.create("/api/rooms", &auth, json!({"roomTypeId": suite, "name": room})).await;
    }
    let plan = |name: &str, code: &str, room_type: Option<&str>| json!({"hotelId": id, "name": name, "code": code, "roomTypeId": room_type});
    let plans = [
        s.create("/api/ratePlans", &auth, plan("Best Available Rate", "BAR", Some(&standard))).await,
        s.create("/api/ratePlans", &auth, plan("Non-refundable", "NRF", Some(&standard))).await,
        s.create("/api/ratePlans", &auth, plan("Breakfast included", "BB", None)).await,
    ];
    for (plan, price) in plans.iter().zip([12000, 10800, 14000]) {
        let values: Vec<_> = (0..60).map(|n| json!({"ratePlanId": plan, "date": day(n), "price": price})).collect();
        s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    }
    Hotel { id, standard, rooms, plans }
}

/// The daily rates of a plan from `from` to `to` days ahead, as the API answers them.
async fn rates(s: &TestServer, org: &Org, hotel: &str, plan: &str, from: u64, to: u64) -> Vec<Value> {
    let path = format!("/api/dailyRates?hotelId={hotel}&ratePlanId={plan}&dateFrom={}&dateTo={}", day(from), day(to));
    s.get(&path, &org.auth()).await.expect(200).body.as_array().expect("array").clone()
}

/// The public offer of (room type, plan) for one night `offset` days ahead.
async fn offer(s: &TestServer, hotel: &str, room_type: &str, plan: &str, offset: u64) -> Option<Value> {
    let path = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(offset), day(offset + 1));
    let offers = s.get(&path, &Auth::None).await.expect(200).body;
    offers
        .as_array()
        .expect("offers")
        .iter()
        .find(|o| o["roomTypeId"] == json!(room_type) && o["ratePlanId"] == json!(plan))
        .cloned()
}

/// Waits until the browser shows a page whose path starts with `prefix`.
async fn wait_for_path(b: &Browser, prefix: &str) {
    for _ in 0..100 {
        if b.path().await.starts_with(prefix) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the browser stayed on {} (waited for {prefix})", b.path().await);
}

async fn a_price_edited_in_the_calendar_is_offered_at_once(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, "Seaside Inn").await;
    let [bar, _, _] = &h.plans;
    // A confirmed stay in room 101 on the night edited: one of the four standard rooms is taken.
    let guest = s.create("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let stay = json!({"hotelId": h.id, "guestId": guest, "checkInDate": day(3), "checkOutDate": day(4),
        "rooms": [{"roomTypeId": h.standard, "ratePlanId": bar, "roomId": h.rooms[0], "adults": 2}]});
    s.create("/api/reservations", &org.auth(), stay).await;
    // Public availability is asked first, so that its copy and its recent answers hold the old price.
    let before = offer(&s, &h.id, &h.standard, bar, 3).await.expect("offered");
    assert_eq!((before["totalPrice"].clone(), before["availableUnits"].clone()), (json!(12000), json!(3)));

    // Without JavaScript: the night's link opens its form, which posts and returns to the calendar.
    let Some(b) = Browser::start_without_javascript(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    b.click_text("nav.tabs a", "Rates").await;
    b.wait_for_new_page().await;
    b.wait_for_text("Rates and availability").await;
    let cell = format!("a.night[href^='rates/{bar}/{}']", day(3));
    // The calendar shows the night's price and the rooms left that public availability offers.
    let text = b.find(&cell).await.text().await.unwrap();
    assert!(text.contains("120.00") && text.contains("3 left"), "{text}");
    b.click(&cell).await;
    b.wait_for_text("Save the night").await;
    b.fill("#price", "99.50").await;
    b.fill("#minStay", "1").await;
    b.click_text("button", "Save the night").await;
    b.wait_for_text("Saved Best Available Rate").await;
    wait_for_path(&b, &format!("/hotels/{}/rates?from=", h.id)).await;
    let text = b.find(&cell).await.text().await.unwrap();
    assert!(text.contains("99.50") && text.contains("≥1"), "{text}");
    b.close().await;

    // Right after: the public offer has the new price (no stale copy or answer), and the API's record too.
    let after = offer(&s, &h.id, &h.standard, bar, 3).await.expect("still offered");
    assert_eq!(after["totalPrice"], json!(9950));
    assert_eq!(after["nightly"][0]["price"], json!(9950));
    assert_eq!(after["availableUnits"], json!(3));
    let stored = rates(&s, &org, &h.id, bar, 3, 3).await;
    assert_eq!(stored[0]["price"], json!(9950));
    assert_eq!(stored[0]["minStay"], json!(1));
    assert_eq!(stored[0]["stopSell"], json!(false));

    // With JavaScript: the night's form opens in a panel over the grid, and saving it changes the cell in place,
    // without leaving the calendar (the page's own state survives: no navigation happened).
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/rates", h.id)).await;
    b.wait_for_text("Rates and availability").await;
    b.client.execute("window.stillThisPage = true; return null;", vec![]).await.unwrap();
    let cell = format!("a.night[href^='rates/{bar}/{}']", day(5));
    b.click(&cell).await;
    b.wait_for_text("Save the night").await;
    assert!(b.text("#night-editor").await.contains("Best Available Rate"));
    let focused = b.client.execute("return document.activeElement.id;", vec![]).await.unwrap();
    assert_eq!(focused, json!("price"), "the panel's first field takes the focus");
    // A refusal is shown in the panel, beside its field, and nothing changes.
    b.fill("#price", "-3").await;
    b.click_text("#night-editor button", "Save the night").await;
    b.wait_for_text("A price cannot be negative.").await;
    assert_eq!(rates(&s, &org, &h.id, bar, 5, 5).await[0]["price"], json!(12000));
    b.fill("#price", "88").await;
    b.click_text("#night-editor button", "Save the night").await;
    b.wait_for_text("Saved Best Available Rate").await;
    for _ in 0..50 {
        if b.text(&cell).await.contains("88.00") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = b.text(&cell).await;
    assert!(text.contains("88.00") && text.contains("4 left"), "{text}");
    assert_eq!(b.text("#night-editor").await, "", "the panel closes once the night is saved");
    let kept = b.client.execute("return window.stillThisPage === true;", vec![]).await.unwrap();
    assert_eq!(kept, json!(true), "the calendar was changed in place, not loaded again");
    assert_eq!(b.path().await, format!("/hotels/{}/rates", h.id));
    // A panel that cannot show its answer (here the session is gone, and the answer is the sign-in page) gives way
    // to the page itself, as without JavaScript.
    b.client.delete_all_cookies().await.unwrap();
    b.click(&format!("a.night[href^='rates/{bar}/{}']", day(6))).await;
    wait_for_path(&b, "/sign-in").await;
    b.close().await;
    let after = offer(&s, &h.id, &h.standard, bar, 5).await.expect("offered");
    assert_eq!(after["totalPrice"], json!(8800));
}

/// Sets the bulk form's fields: dates, every weekday (as the form starts), the plans, one price change and the
/// minimum stay.
async fn fill_bulk(b: &Browser, from: &str, to: &str, plans: &[&String], price: (&str, &str), min_stay: (&str, &str)) {
    b.set_value("#from", from).await;
    b.set_value("#to", to).await;
    for plan in plans {
        let checkbox = b.find(&format!("input[name=ratePlanIds][value='{plan}']")).await;
        if !checkbox.is_selected().await.unwrap() {
            checkbox.click().await.unwrap();
        }
    }
    b.select("#priceAction", price.0).await;
    b.fill("#price", price.1).await;
    b.select("#minStayAction", min_stay.0).await;
    b.fill("#minStay", min_stay.1).await;
}

async fn a_bulk_edit_of_a_year_applies_completely_or_not_at_all(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, "Seaside Inn").await;
    let plans: Vec<&String> = h.plans.iter().collect();
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/rates", h.id)).await;
    b.click_text("a", "Change many nights").await;
    b.wait_for_text("Days of the week").await;
    // A year from tomorrow (365 nights) over the three plans: a price and a minimum stay of three nights.
    fill_bulk(&b, &day(1), &day(365), &plans, ("set", "150.00"), ("set", "3")).await;
    b.click_text("button", "Preview").await;
    b.wait_for_text("This changes 1,095 nights: 365 days of 3 rate plans.").await;
    b.assert_page_ok("the bulk edit's preview").await;

    // Meanwhile a channel manager limits one night of one plan to two nights: the minimum of three is now a bad
    // value for that night, and the edit, applied as previewed, is refused whole.
    s.post(
        "/api/dailyRates",
        &org.auth(),
        json!({"values": [{"ratePlanId": plans[2], "date": day(200), "price": 14000, "maxStay": 2}]}),
    )
    .await
    .expect(200);
    let mut before = Vec::new();
    for plan in &plans {
        before.push(rates(&s, &org, &h.id, plan, 1, 365).await);
    }
    assert_eq!(before.iter().map(Vec::len).collect::<Vec<_>>(), vec![59, 59, 60]);
    b.click_text("button", "Apply to 1,095 nights").await;
    b.wait_for_text("the minimum stay would be 3 nights and the maximum 2").await;
    let error = b.text("#minStay-error").await;
    assert!(error.contains("Breakfast included"), "{error}");
    assert_eq!(b.find("#minStay").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    for (plan, was) in plans.iter().zip(&before) {
        assert_eq!(&rates(&s, &org, &h.id, plan, 1, 365).await, was, "not one night of {plan} changed");
    }

    // Without the minimum stay: previewed, then applied, all of it.
    b.select("#minStayAction", "keep").await;
    b.click_text("button", "Preview").await;
    b.wait_for_text("This changes 1,095 nights: 365 days of 3 rate plans.").await;
    for (plan, was) in plans.iter().zip(&before) {
        assert_eq!(&rates(&s, &org, &h.id, plan, 1, 365).await, was, "a preview changes nothing");
    }
    b.click_text("button", "Apply to 1,095 nights").await;
    b.wait_for_text("Changed 1,095 nights: 365 days of 3 rate plans.").await;
    wait_for_path(&b, &format!("/hotels/{}/rates?from={}", h.id, day(1))).await;
    for plan in &plans {
        let year = rates(&s, &org, &h.id, plan, 1, 365).await;
        assert_eq!(year.len(), 365);
        assert!(year.iter().all(|r| r["price"] == json!(15000) && r["minStay"].is_null()), "every night of {plan}");
    }
    // What the edit did not touch stays: the other night's maximum stay, and tonight (before the range).
    let limited = rates(&s, &org, &h.id, plans[2], 200, 200).await;
    assert_eq!((limited[0]["price"].clone(), limited[0]["maxStay"].clone()), (json!(15000), json!(2)));
    assert_eq!(rates(&s, &org, &h.id, plans[0], 0, 0).await[0]["price"], json!(12000));
    // Public availability offers the new price at once.
    assert_eq!(offer(&s, &h.id, &h.standard, plans[0], 100).await.expect("offered")["totalPrice"], json!(15000));
    b.close().await;
}

/// Posts the bulk form straight to apply (as a form that skipped its preview would): price 150.00 and the minimum
/// stay given for the plans and nights given. Answers the status and the page's text.
async fn post_bulk(
    s: &TestServer,
    b: &Browser,
    hotel: &str,
    plans: &[&String],
    from: &str,
    to: &str,
    min_stay: &str,
) -> (u16, String) {
    let token = b.client.get_named_cookie("fd_session").await.unwrap().value().to_string();
    let mut form: Vec<(&str, String)> = vec![
        ("_csrf", frontdesk::web::session::csrf_for(&token)),
        ("from", from.to_string()),
        ("to", to.to_string()),
        ("priceAction", "set".into()),
        ("price", "150.00".into()),
        ("minStayAction", "set".into()),
        ("minStay", min_stay.into()),
        ("step", "apply".into()),
    ];
    for weekday in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] {
        form.push(("weekdays", weekday.into()));
    }
    for plan in plans {
        form.push(("ratePlanIds", plan.to_string()));
    }
    let answer = s
        .client
        .post(format!("{}/hotels/{hotel}/rates/bulk", s.base))
        .header("cookie", format!("fd_session={token}"))
        .form(&form)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

async fn refused_input_is_shown_beside_its_field_and_changes_nothing(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, "Seaside Inn").await;
    let [bar, nrf, _] = &h.plans;
    let before = rates(&s, &org, &h.id, bar, 0, 59).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;

    // A night's form: a negative price, and a minimum stay above the maximum.
    b.goto(&format!("/hotels/{}/rates/{bar}/{}", h.id, day(5))).await;
    b.fill("#price", "-10").await;
    b.click_text("button", "Save the night").await;
    b.wait_for_text("A price cannot be negative.").await;
    assert_eq!(b.find("#price").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("a night's form with a refused price").await;
    b.fill("#price", "130").await;
    b.fill("#minStay", "5").await;
    b.fill("#maxStay", "3").await;
    b.click_text("button", "Save the night").await;
    b.wait_for_text("minStay 5 exceeds maxStay 3").await;
    assert!(b.text("#minStay-error").await.contains("exceeds"));

    // The bulk form: no plan, a past range, a negative price, a minimum stay above the maximum.
    b.goto(&format!("/hotels/{}/rates/bulk", h.id)).await;
    b.wait_for_text("Days of the week").await;
    b.set_value("#from", "2020-01-01").await;
    b.set_value("#to", "2020-01-31").await;
    b.select("#priceAction", "set").await;
    b.fill("#price", "-5").await;
    b.select("#minStayAction", "set").await;
    b.fill("#minStay", "4").await;
    b.select("#maxStayAction", "set").await;
    b.fill("#maxStay", "2").await;
    b.click_text("button", "Preview").await;
    b.wait_for_text("Choose at least one rate plan.").await;
    for (field, message) in [
        ("ratePlanIds", "Choose at least one rate plan."),
        ("from", "must not start in the past"),
        ("price", "A price cannot be negative."),
        ("minStay", "The minimum stay (4) is longer than the maximum stay (2)."),
    ] {
        let shown = b.text(&format!("#{field}-error")).await;
        assert!(shown.contains(message), "{field}: {shown}");
    }
    assert_eq!(b.find("#from").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the bulk form with refused fields").await;
    // No weekday: its own message.
    b.goto(&format!("/hotels/{}/rates/bulk?ratePlanIds={nrf}", h.id)).await;
    b.wait_for_text("Days of the week").await;
    for weekday in b.find_all("input[name=weekdays]").await {
        weekday.click().await.unwrap();
    }
    b.select("#priceAction", "percent").await;
    b.fill("#price", "10").await;
    b.click_text("button", "Preview").await;
    b.wait_for_text("Choose at least one day of the week.").await;
    b.close().await;
    assert_eq!(rates(&s, &org, &h.id, bar, 0, 59).await, before);
}

async fn another_organizations_operator_gets_the_404_page(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, "Seaside Inn").await;
    let rival = s.org("Rival").await;
    let rival_hotel = s.hotel(&rival, "Rival Rooms").await;
    let [bar, _, _] = &h.plans;
    let before = rates(&s, &org, &h.id, bar, 0, 59).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&rival.operator_email, PASSWORD).await;
    for path in [
        format!("/hotels/{}/rates", h.id),
        format!("/hotels/{}/rates/bulk", h.id),
        format!("/hotels/{}/rates/{bar}/{}", h.id, day(3)),
        // Acme's plan at the rival's own hotel.
        format!("/hotels/{rival_hotel}/rates/{bar}/{}", day(3)),
    ] {
        b.goto(&path).await;
        b.wait_for_text("There is nothing here").await;
        assert!(!b.page_text().await.contains("Best Available Rate"), "{path}");
    }
    b.assert_page_ok("the 404 page").await;
    // The forms: posted with the rival's own session and CSRF token, they answer 404 and change nothing.
    let token = b.client.get_named_cookie("fd_session").await.unwrap().value().to_string();
    let csrf = frontdesk::web::session::csrf_for(&token);
    for path in
        [format!("/hotels/{}/rates/{bar}/{}", h.id, day(3)), format!("/hotels/{rival_hotel}/rates/{bar}/{}", day(3))]
    {
        let answer = s
            .client
            .post(format!("{}{path}", s.base))
            .header("cookie", format!("fd_session={token}"))
            .form(&[("_csrf", csrf.as_str()), ("price", "1.00")])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
    }
    let (status, _) = post_bulk(&s, &b, &h.id, &[bar], &day(1), &day(30), "1").await;
    assert_eq!(status, 404);
    // Acme's plan named in a bulk edit of the rival's own hotel: refused beside the plans.
    let (status, page) = post_bulk(&s, &b, &rival_hotel, &[bar], &day(1), &day(30), "1").await;
    assert_eq!(status, 422);
    assert!(page.contains("Choose rate plans of this hotel."), "{page}");
    assert_eq!(rates(&s, &org, &h.id, bar, 0, 59).await, before);
    b.close().await;
}

async fn the_calendar_reads_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, "Seaside Inn").await;
    let [bar, nrf, bb] = &h.plans;
    // Some restrictions to show: a stop-sell, arrival and departure closed, stays limited, an allotment used up.
    let restricted = json!({"values": [
        {"ratePlanId": bar, "date": day(2), "price": 12000, "stopSell": true},
        {"ratePlanId": bar, "date": day(4), "price": 13500, "closedToArrival": true, "minStay": 2},
        {"ratePlanId": nrf, "date": day(5), "price": 10800, "closedToDeparture": true, "maxStay": 7},
        {"ratePlanId": nrf, "date": day(6), "price": 10800, "availability": 0},
        {"ratePlanId": bb, "date": day(8), "price": 15500, "minStay": 3, "maxStay": 14},
    ]});
    s.post("/api/dailyRates", &org.auth(), restricted).await.expect(200);
    let path = format!("/hotels/{}/rates", h.id);
    for (size, suffix) in [(DESKTOP, ""), (PHONE, "-phone")] {
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.sign_in(&org.operator_email, PASSWORD).await;
        b.goto(&path).await;
        b.wait_for_text("Rates and availability").await;
        b.assert_page_ok("the rates calendar").await;
        b.assert_in_reach("main .page-head .button, .rates-nav .button", "the rates calendar").await;
        // Today is marked in the column heads, in the hotel's time zone.
        let head = b.text("thead th.today").await;
        assert!(head.contains("Today"), "{head}");
        // The first column stays put while the grid scrolls sideways inside its box.
        let stuck = b
            .client
            .execute(
                "const grid = document.querySelector('.rates-grid'); grid.scrollLeft = 400;
                 const plan = document.querySelector('tbody th.plan').getBoundingClientRect().left;
                 const box = grid.getBoundingClientRect().left;
                 grid.scrollLeft = 0; return Math.abs(plan - box) < 2;",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(stuck, json!(true), "the plan column is sticky");
        let text = b.page_text().await;
        assert!(text.contains("Stop") && text.contains("CTA") && text.contains("CTD") && text.contains("≥2"), "{text}");
        if engine == Engine::Sqlite {
            b.screenshot(&format!("rates-calendar{suffix}")).await;
        }
        // The 31-night view and the month ahead.
        b.goto(&format!("{path}?days=31")).await;
        b.wait_for_text("Rates and availability").await;
        assert_eq!(b.find_all("thead th").await.len(), 32);
        b.assert_page_ok("the 31-night calendar").await;
        b.click_text(".rates-nav a", "Month").await;
        b.wait_for_new_page().await;
        b.wait_for_text("Rates and availability").await;
        b.goto(&format!("/hotels/{}/rates/bulk", h.id)).await;
        b.wait_for_text("Days of the week").await;
        b.assert_page_ok("the bulk form").await;
        b.goto(&format!("/hotels/{}/rates/{bar}/{}", h.id, day(4))).await;
        b.wait_for_text("Save the night").await;
        b.assert_page_ok("a night's form").await;
        // The same form in its panel over the calendar.
        b.goto(&path).await;
        b.wait_for_text("Rates and availability").await;
        b.click(&format!("a.night[href^='rates/{bar}/{}']", day(4))).await;
        b.wait_for_text("Save the night").await;
        b.assert_page_ok("a night's form in its panel").await;
        b.assert_in_reach("#night-editor button", "the night's panel").await;
        if engine == Engine::Sqlite {
            b.screenshot(&format!("rates-night-panel{suffix}")).await;
        }
        b.client.execute("document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true})); return null;", vec![]).await.unwrap();
        assert_eq!(b.text("#night-editor").await, "", "Escape closes the panel");
        b.close().await;
    }
}
