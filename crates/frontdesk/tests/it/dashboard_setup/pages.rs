//! The setup pages: another organization's records are not found, and every page reads well on desktop and phone.

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::{TestServer, PASSWORD};
use frontdesk::domain::identity;
use frontdesk::store::Engine;
use serde_json::json;

use super::{catalogue, server, session_token};

on_both_engines_configured!(
    another_organizations_setup_records_are_not_found,
    setup_pages_read_well_on_desktop_and_phone,
);

/// Fetches a page with the session of a signed-in browser (no redirects followed) and answers its status.
async fn status_with_session(s: &TestServer, cookie: &str, method: reqwest::Method, path: &str) -> u16 {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let csrf = frontdesk::web::session::csrf_for(cookie);
    let mut request =
        client.request(method.clone(), format!("{}{path}", s.base)).header("cookie", format!("fd_session={cookie}"));
    if method == reqwest::Method::POST {
        request = request.form(&[
            ("_csrf", csrf.as_str()),
            ("confirmed", "yes"),
            ("name", "Taken over"),
            ("maxOccupancy", "2"),
            ("maxAdults", "2"),
            ("maxChildren", "1"),
            ("housekeepingStatus", "CLEAN"),
            ("password", "a long password"),
            ("timezone", "UTC"),
            ("currency", "EUR"),
            ("checkInTime", "15:00"),
            ("checkOutTime", "11:00"),
        ]);
    }
    request.send().await.unwrap().status().as_u16()
}

async fn another_organizations_setup_records_are_not_found(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let mine = catalogue(&s, &org, "Seaside Inn").await;
    let second = catalogue(&s, &org, "Mountain Lodge").await;
    let rival = s.org("Rival").await;
    let theirs = catalogue(&s, &rival, "Rival Resort").await;
    let rival_operator = identity::find_operator_by_email(&s.db, &rival.operator_email).await.unwrap().id;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    let (h, t) = (&mine.hotel, &theirs);
    let pages = [
        format!("/setup/hotels/{}", t.hotel),
        format!("/setup/hotels/{}/room-types/new", t.hotel),
        format!("/setup/hotels/{}/rooms/new", t.hotel),
        format!("/setup/hotels/{}/rate-plans/new", t.hotel),
        format!("/setup/hotels/{}/room-types/{}", t.hotel, t.room_type),
        format!("/setup/hotels/{h}/room-types/{}", t.room_type),
        format!("/setup/hotels/{h}/rooms/{}", t.rooms[0]),
        format!("/setup/hotels/{h}/rate-plans/{}", t.plan),
        format!("/setup/operators/{rival_operator}/password"),
        // A record of the organization's other hotel is not found under this one either.
        format!("/setup/hotels/{h}/room-types/{}", second.room_type),
        format!("/setup/hotels/{h}/rooms/{}", second.rooms[0]),
    ];
    for path in &pages {
        b.goto(path).await;
        b.wait_for_text("There is nothing here").await;
        assert!(!b.page_text().await.contains("Rival"), "{path}");
    }
    b.assert_page_ok("the 404 page").await;
    // Every form of those records answers 404 and changes nothing.
    let cookie = session_token(&b).await;
    let posts = [
        format!("/setup/hotels/{}", t.hotel),
        format!("/setup/hotels/{}/room-types", t.hotel),
        format!("/setup/hotels/{}/rooms", t.hotel),
        format!("/setup/hotels/{}/rate-plans", t.hotel),
        format!("/setup/hotels/{h}/room-types/{}", t.room_type),
        format!("/setup/hotels/{h}/room-types/{}/delete", t.room_type),
        format!("/setup/hotels/{h}/rooms/{}", t.rooms[0]),
        format!("/setup/hotels/{h}/rooms/{}/delete", t.rooms[0]),
        format!("/setup/hotels/{h}/rate-plans/{}", t.plan),
        format!("/setup/hotels/{h}/rate-plans/{}/delete", t.plan),
        format!("/setup/hotels/{h}/room-types/{}/delete", second.room_type),
        format!("/setup/operators/{rival_operator}/password"),
        format!("/setup/operators/{rival_operator}/invitation"),
        format!("/setup/operators/{rival_operator}/remove"),
    ];
    for path in &posts {
        assert_eq!(status_with_session(&s, &cookie, reqwest::Method::POST, path).await, 404, "POST {path}");
    }
    for path in &pages {
        assert_eq!(status_with_session(&s, &cookie, reqwest::Method::GET, path).await, 404, "GET {path}");
    }
    let rival_hotel = s.get(&format!("/api/hotels/{}", t.hotel), &rival.auth()).await.expect(200).body;
    assert_eq!(rival_hotel["name"], json!("Rival Resort"));
    assert_eq!(
        s.get(&format!("/api/roomTypes/{}", t.room_type), &rival.auth()).await.expect(200).body["name"],
        json!("Standard Double")
    );
    assert_eq!(
        s.get(&format!("/api/rooms?hotelId={}", t.hotel), &rival.auth())
            .await
            .expect(200)
            .body
            .as_array()
            .unwrap()
            .len(),
        2
    );
    s.get(&format!("/api/ratePlans/{}", t.plan), &rival.auth()).await.expect(200);
    s.get("/api/auth/me", &rival.auth()).await.expect(200);
    // The rival's list of hotels and operators is not shown either.
    b.goto("/setup/hotels").await;
    b.wait_for_text("Mountain Lodge").await;
    assert!(!b.page_text().await.contains("Rival"));
    b.goto("/setup/operators").await;
    b.wait_for_text("Add an operator").await;
    assert!(!b.page_text().await.contains(&rival.operator_email));
    b.close().await;
}

/// Every setup page at desktop (1280 px) and phone (375 px) width: none scrolls sideways, axe-core finds no
/// violation, its buttons are in reach; on SQLite, the screenshots `docs/screenshots/setup-*.png`.
async fn setup_pages_read_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let auth = org.auth();
    let suite =
        s.create("/api/roomTypes", &auth, json!({"hotelId": c.hotel, "name": "Family Suite", "maxOccupancy": 4})).await;
    s.create(
        "/api/rooms",
        &auth,
        json!({"roomTypeId": suite, "name": "201", "floor": 2, "housekeepingStatus": "OUT_OF_ORDER"}),
    )
    .await;
    s.create(
        "/api/ratePlans",
        &auth,
        json!({"hotelId": c.hotel, "name": "Non-refundable", "code": "NRF", "roomTypeId": suite}),
    )
    .await;
    s.hotel(&org, "Mountain Lodge").await;
    let me = identity::authenticate_token(&s.db, &org.token).await.unwrap();
    identity::add_operator(
        &s.db,
        &me,
        "annika.lindqvistjohansson@harbourviewexamplehotels.com",
        "Annika Lindqvist",
        "a long password",
        &identity::Staffing::OWNER,
    )
    .await
    .unwrap();
    let invited = identity::invite_operator(&s.db, &me, "bea@example.com", "Bea Santos", &identity::Staffing::OWNER)
        .await
        .unwrap();
    let pages = [
        ("setup-hotels", "/setup/hotels".to_string(), "Mountain Lodge"),
        ("setup-hotel", format!("/setup/hotels/{}", c.hotel), "Rate plans"),
        ("setup-new-hotel", "/setup/hotels/new".to_string(), "Create hotel"),
        ("setup-room-type", format!("/setup/hotels/{}/room-types/{}", c.hotel, c.room_type), "Save the room type"),
        ("setup-room", format!("/setup/hotels/{}/rooms/{}", c.hotel, c.rooms[0]), "Save the room"),
        ("setup-rate-plan", format!("/setup/hotels/{}/rate-plans/{}", c.hotel, c.plan), "Save the rate plan"),
        ("setup-operators", "/setup/operators".to_string(), "Add an operator"),
        ("setup-password", "/setup/password".to_string(), "Current password"),
    ];
    for (size, suffix) in [(DESKTOP, ""), (PHONE, "-phone")] {
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.sign_in(&org.operator_email, PASSWORD).await;
        for (name, path, text) in &pages {
            b.goto(path).await;
            b.wait_for_text(text).await;
            b.assert_page_ok(name).await;
            b.assert_in_reach("main button, main .button", name).await;
            if s.engine == Engine::Sqlite {
                b.screenshot(&format!("{name}{suffix}")).await;
            }
        }
        // The hotel's room types, rooms and rate plans, below its details.
        b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
        b.wait_for_text("Rate plans").await;
        b.client.execute("document.getElementById('types-title').scrollIntoView();", vec![]).await.unwrap();
        if s.engine == Engine::Sqlite {
            b.screenshot(&format!("setup-hotel-catalogue{suffix}")).await;
        }
        // The confirmation page of a delete (as without JavaScript) and the page of a new invitation link.
        b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
        b.wait_for_text("Rate plans").await;
        b.client
            .execute(
                "document.querySelectorAll('[data-confirm]').forEach(f => f.removeAttribute('data-confirm'));",
                vec![],
            )
            .await
            .unwrap();
        b.click(&format!("form[action$='/room-types/{}/delete'] button", c.room_type)).await;
        b.wait_for_text("Yes, delete the room type Standard Double").await;
        b.assert_page_ok("the delete confirmation").await;
        b.goto("/setup/operators").await;
        b.click_text("button", "New invitation link").await;
        b.wait_for_text("Invitation for Bea Santos").await;
        b.assert_page_ok("the invitation link").await;
        if s.engine == Engine::Sqlite {
            b.screenshot(&format!("setup-invitation-link{suffix}")).await;
        }
        b.close().await;
    }
    // The invitation's own page, before its operator has a session (the renewed link replaced the first).
    let Some(b) = Browser::start_sized(&s.base, PHONE).await else { return };
    b.goto(&format!("/invitation?token={}", invited.token)).await;
    b.wait_for_text("This link does not work").await;
    b.assert_page_ok("a replaced invitation link").await;
    let renewed = identity::renew_invitation(&s.db, &me, &invited.operator.id).await.unwrap();
    b.goto(&format!("/invitation?token={}", renewed.token)).await;
    b.wait_for_text("Welcome, Bea Santos").await;
    b.assert_page_ok("the invitation page").await;
    if s.engine == Engine::Sqlite {
        b.screenshot("setup-invitation-phone").await;
    }
    b.close().await;
}
