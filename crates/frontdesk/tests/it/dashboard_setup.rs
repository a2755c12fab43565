//! Hotel setup in the dashboard (issue 30), used as a person uses it: in a real headless Chromium, on SQLite and
//! PostgreSQL. Hotels, room types, rooms and rate plans made in the browser are the API's records; the domain's
//! refusals show on the page and write nothing; operators are invited, removed and change passwords with every
//! session of theirs ending; another organization's records are the 404 page. The SQLite runs save the screenshots
//! `docs/screenshots/setup-*.png`.

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::{Auth, Org, TestServer, PASSWORD};
use frontdesk::domain::{identity, Actor, Error};
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines_configured!(
    a_hotel_set_up_in_the_browser_is_the_apis,
    deleting_a_room_type_that_has_rooms_is_refused,
    invalid_input_is_shown_beside_its_field,
    operators_are_invited_removed_and_change_passwords,
    operator_rules_hold_for_the_dashboard_and_the_command_line,
    another_organizations_setup_records_are_not_found,
    setup_pages_read_well_on_desktop_and_phone,
);

async fn server(engine: Engine) -> Option<TestServer> {
    TestServer::configured(engine, |_| {}).await
}

/// A hotel with a room type of two rooms and a rate plan, made through the API.
struct Catalogue {
    hotel: String,
    room_type: String,
    rooms: Vec<String>,
    plan: String,
}

async fn catalogue(s: &TestServer, org: &Org, name: &str) -> Catalogue {
    let auth = org.auth();
    let hotel = s.hotel(org, name).await;
    let room_type = s
        .create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Standard Double", "maxOccupancy": 2}))
        .await;
    let mut rooms = Vec::new();
    for room in ["101", "102"] {
        rooms.push(s.create("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": room, "floor": 1})).await);
    }
    let plan = s
        .create("/api/ratePlans", &auth, json!({"hotelId": hotel, "name": "Best Available Rate", "code": "BAR"}))
        .await;
    Catalogue { hotel, room_type, rooms, plan }
}

/// The one record of a list answer.
fn only(list: &Value) -> &Value {
    let items = list.as_array().expect("a list");
    assert_eq!(items.len(), 1, "{list}");
    &items[0]
}

async fn a_hotel_set_up_in_the_browser_is_the_apis(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let auth = org.auth();
    let Some(b) = Browser::start(&s.base).await else { return };
    // An organization without a hotel lands on setup.
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.wait_for_text("No hotel yet").await;
    assert_eq!(b.path().await, "/setup/hotels");
    b.click_text("a", "New hotel").await;
    b.wait_for_text("Time zone").await;
    b.fill("#name", "Harbour View").await;
    b.fill("#timezone", "Europe/Lisbon").await;
    b.fill("#currency", "eur").await;
    b.set_value("#checkInTime", "14:00").await;
    b.set_value("#checkOutTime", "10:30").await;
    b.fill("#addressLine1", "Rua do Cais 12").await;
    b.fill("#city", "Porto").await;
    b.fill("#postalCode", "4050-001").await;
    b.fill("#country", "pt").await;
    b.click_text("button", "Create hotel").await;
    b.wait_for_text("Created Harbour View.").await;
    let hotel = only(&s.get("/api/hotels", &auth).await.expect(200).body).clone();
    let id = hotel["id"].as_str().unwrap().to_string();
    assert_eq!(b.path().await, format!("/setup/hotels/{id}"));
    for (field, value) in [
        ("name", json!("Harbour View")),
        ("timezone", json!("Europe/Lisbon")),
        ("currency", json!("EUR")),
        ("checkInTime", json!("14:00")),
        ("checkOutTime", json!("10:30")),
        ("addressLine1", json!("Rua do Cais 12")),
        ("city", json!("Porto")),
        ("postalCode", json!("4050-001")),
        ("country", json!("PT")),
        ("publicBooking", json!(true)),
    ] {
        assert_eq!(hotel[field], value, "{field}: {hotel}");
    }
    // The booking page's link, and its settings page.
    assert!(b.page_text().await.contains(&format!("/book/{id}")));

    // A room type.
    b.click_text("a", "Add a room type").await;
    b.wait_for_text("New room type").await;
    b.fill("#name", "Family Room").await;
    b.fill("#maxOccupancy", "4").await;
    b.fill("#maxAdults", "3").await;
    b.fill("#maxChildren", "2").await;
    b.fill("#description", "Two rooms, one door.").await;
    b.click_text("button", "Add the room type").await;
    b.wait_for_text("Added the room type Family Room.").await;
    let types = s.get(&format!("/api/roomTypes?hotelId={id}"), &auth).await.expect(200).body;
    let room_type = only(&types).clone();
    let type_id = room_type["id"].as_str().unwrap().to_string();
    assert_eq!(
        (&room_type["name"], &room_type["maxOccupancy"], &room_type["maxAdults"], &room_type["maxChildren"]),
        (&json!("Family Room"), &json!(4), &json!(3), &json!(2))
    );
    assert_eq!(room_type["description"], json!("Two rooms, one door."));

    // Two rooms, one of them out of order.
    for (name, floor, status) in [("201", "2", "CLEAN"), ("202", "2", "OUT_OF_ORDER")] {
        b.click("a[href$='/rooms/new']").await;
        b.wait_for_text("New room").await;
        b.fill("#name", name).await;
        b.select("#roomTypeId", &type_id).await;
        b.fill("#floor", floor).await;
        b.select("#housekeepingStatus", status).await;
        b.click_text("button", "Add the room").await;
        b.wait_for_text(&format!("Added room {name}.")).await;
    }
    let rooms = s.get(&format!("/api/rooms?hotelId={id}"), &auth).await.expect(200).body;
    let mut seen: Vec<(String, i64, String, String)> = rooms
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["floor"].as_i64().unwrap(),
                r["housekeepingStatus"].as_str().unwrap().to_string(),
                r["roomTypeId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("201".to_string(), 2, "CLEAN".to_string(), type_id.clone()),
            ("202".to_string(), 2, "OUT_OF_ORDER".to_string(), type_id.clone())
        ]
    );

    // A rate plan for the room type.
    b.click_text("a", "Add a rate plan").await;
    b.wait_for_text("New rate plan").await;
    assert_eq!(b.find("#currency").await.prop("value").await.unwrap().as_deref(), Some("EUR"));
    b.fill("#name", "Best Available Rate").await;
    b.fill("#code", "BAR").await;
    b.select("#roomTypeId", &type_id).await;
    b.click_text("button", "Add the rate plan").await;
    b.wait_for_text("Added the rate plan Best Available Rate.").await;
    let plans = s.get(&format!("/api/ratePlans?hotelId={id}"), &auth).await.expect(200).body;
    let plan = only(&plans).clone();
    assert_eq!(
        (&plan["name"], &plan["code"], &plan["roomTypeId"], &plan["currency"], &plan["active"]),
        (&json!("Best Available Rate"), &json!("BAR"), &json!(type_id), &json!("EUR"), &json!(true))
    );
    b.assert_page_ok("a hotel's setup page").await;

    // Edits: the hotel's check-in time and booking, a room type's name, a plan made inactive for every type.
    b.set_value("#checkInTime", "16:00").await;
    b.click("#publicBooking").await;
    b.click_text("button", "Save details").await;
    b.wait_for_text("Saved the details of Harbour View.").await;
    let hotel = s.get(&format!("/api/hotels/{id}"), &auth).await.expect(200).body;
    assert_eq!((&hotel["checkInTime"], &hotel["publicBooking"]), (&json!("16:00"), &json!(false)));
    assert_eq!(hotel["city"], json!("Porto"), "fields not changed keep their values");
    b.goto(&format!("/setup/hotels/{id}/room-types/{type_id}")).await;
    b.fill("#name", "Family Suite").await;
    b.click_text("button", "Save the room type").await;
    b.wait_for_text("Saved the room type Family Suite.").await;
    let room_type = s.get(&format!("/api/roomTypes/{type_id}"), &auth).await.expect(200).body;
    assert_eq!((&room_type["name"], &room_type["maxOccupancy"]), (&json!("Family Suite"), &json!(4)));
    let plan_id = plan["id"].as_str().unwrap();
    b.goto(&format!("/setup/hotels/{id}/rate-plans/{plan_id}")).await;
    b.select("#roomTypeId", "").await;
    b.click("#active").await;
    b.click_text("button", "Save the rate plan").await;
    b.wait_for_text("Saved the rate plan Best Available Rate.").await;
    let plan = s.get(&format!("/api/ratePlans/{plan_id}"), &auth).await.expect(200).body;
    assert_eq!((&plan["roomTypeId"], &plan["active"], &plan["code"]), (&Value::Null, &json!(false), &json!("BAR")));
    // The front desk links to setup, and setup back to the front desk.
    b.goto(&format!("/hotels/{id}/today")).await;
    b.click_text("a", "Setup").await;
    b.wait_for_text("Rate plans").await;
    assert_eq!(b.path().await, format!("/setup/hotels/{id}"));
    b.close().await;
}

async fn deleting_a_room_type_that_has_rooms_is_refused(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
    b.wait_for_text("Room types").await;
    b.click_text("button", "Delete").await;
    b.accept_dialog().await;
    b.wait_for_text("The room type Standard Double was not deleted: the room type still has rooms").await;
    b.assert_page_ok("the refused delete").await;
    s.get(&format!("/api/roomTypes/{}", c.room_type), &org.auth()).await.expect(200);
    assert_eq!((s.count("room_types").await, s.count("rooms").await, s.count("rate_plans").await), (1, 2, 1));
    // Without the rooms (and with the plan gone, which priced every type) it goes.
    for room in &c.rooms {
        b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
        b.wait_for_text("Rooms").await;
        let form = format!("form[action$='/rooms/{room}/delete'] button");
        b.click(&form).await;
        b.accept_dialog().await;
        b.wait_for_text("Deleted room").await;
    }
    b.click(&format!("form[action$='/rate-plans/{}/delete'] button", c.plan)).await;
    b.accept_dialog().await;
    b.wait_for_text("Deleted the rate plan Best Available Rate.").await;
    b.click(&format!("form[action$='/room-types/{}/delete'] button", c.room_type)).await;
    b.accept_dialog().await;
    b.wait_for_text("Deleted the room type Standard Double.").await;
    assert_eq!((s.count("room_types").await, s.count("rooms").await, s.count("rate_plans").await), (0, 0, 0));
    b.close().await;
}

/// The form's message beside `field`, and its control marked invalid.
async fn message_beside(b: &Browser, field: &str) -> String {
    assert_eq!(b.find(&format!("#{field}")).await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    let described = b.find(&format!("#{field}")).await.attr("aria-describedby").await.unwrap();
    assert_eq!(described.as_deref(), Some(format!("{field}-error").as_str()));
    b.text(&format!("#{field}-error")).await
}

async fn invalid_input_is_shown_beside_its_field(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    // A room type whose adults exceed what it sleeps: the domain's rule, beside the field.
    b.goto(&format!("/setup/hotels/{}/room-types/new", c.hotel)).await;
    b.fill("#name", "Tiny").await;
    b.fill("#maxOccupancy", "2").await;
    b.fill("#maxAdults", "5").await;
    b.click_text("button", "Add the room type").await;
    b.wait_for_text("must not exceed maxOccupancy").await;
    assert!(message_beside(&b, "maxAdults").await.contains("must not exceed maxOccupancy (2)"));
    assert_eq!(b.find("#name").await.prop("value").await.unwrap().as_deref(), Some("Tiny"), "what was typed stays");
    b.assert_page_ok("the room type form with errors").await;
    assert_eq!(s.count("room_types").await, 1);
    // A hotel with a time zone and a currency that do not exist.
    b.goto("/setup/hotels/new").await;
    b.fill("#name", "Nowhere").await;
    b.fill("#timezone", "Mars/Olympus").await;
    b.fill("#currency", "XYZ").await;
    b.click_text("button", "Create hotel").await;
    b.wait_for_text("must be an IANA time zone").await;
    assert!(message_beside(&b, "timezone").await.contains("IANA time zone"));
    assert!(message_beside(&b, "currency").await.contains("ISO 4217"));
    b.assert_page_ok("the hotel form with errors").await;
    assert_eq!(s.count("hotels").await, 1);
    // A room with a name the hotel has already: the 409 at the top of the form; and an edit that empties a name.
    b.goto(&format!("/setup/hotels/{}/rooms/new", c.hotel)).await;
    b.fill("#name", "101").await;
    b.click_text("button", "Add the room").await;
    b.wait_for_text("already has a room with this name").await;
    assert_eq!(s.count("rooms").await, 2);
    b.goto(&format!("/setup/hotels/{}/rate-plans/{}", c.hotel, c.plan)).await;
    b.fill("#name", " ").await;
    b.fill("#code", "B A R").await;
    b.click_text("button", "Save the rate plan").await;
    b.wait_for_text("without spaces").await;
    assert!(!message_beside(&b, "name").await.is_empty());
    assert!(message_beside(&b, "code").await.contains("without spaces"));
    let plan = s.get(&format!("/api/ratePlans/{}", c.plan), &org.auth()).await.expect(200).body;
    assert_eq!((&plan["name"], &plan["code"]), (&json!("Best Available Rate"), &json!("BAR")));
    b.close().await;
}

/// The session token in the browser's cookie.
async fn session_token(b: &Browser) -> String {
    b.client.get_named_cookie("fd_session").await.unwrap().value().to_string()
}

async fn operators_are_invited_removed_and_change_passwords(engine: Engine) {
    const BEA_PASSWORD: &str = "bea's own password";
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto("/setup/operators").await;
    b.wait_for_text("Add an operator").await;
    b.fill("#name", "Bea Santos").await;
    b.fill("#email", "bea@example.com").await;
    b.click_text("button", "Add the operator").await;
    b.wait_for_text("Invitation for Bea Santos").await;
    let link = b.text("#invitation-link").await;
    assert!(link.starts_with(&format!("{}/invitation?token=fdi_", s.base)), "{link}");
    b.assert_page_ok("the invitation link").await;
    // Only a digest of the link is stored, and until she chooses a password nobody can sign in as her.
    let token = link.split("token=").nth(1).unwrap().to_string();
    assert_eq!(s.count("operator_invitations").await, 1);
    let stored: String = {
        use sqlx::Row;
        let mut conn = s.db.read().await.unwrap();
        sqlx::query("SELECT token_hash FROM operator_invitations").fetch_one(&mut *conn).await.unwrap().get(0)
    };
    assert_ne!(stored, token);
    b.goto("/setup/operators").await;
    b.wait_for_text("Invited: the link works until").await;
    assert!(!b.page_text().await.contains(&token), "the link is shown once");

    // Bea opens the link in her own browser, chooses a password and is signed in.
    let Some(bea) = Browser::start(&s.base).await else { return };
    bea.client.goto(&link).await.unwrap();
    bea.wait_for_text("Welcome, Bea Santos").await;
    bea.assert_page_ok("the invitation page").await;
    bea.fill("#password", "short").await;
    bea.click_text("button", "Set my password").await;
    bea.wait_for_text("at least 8 characters").await;
    bea.fill("#password", BEA_PASSWORD).await;
    bea.click_text("button", "Set my password").await;
    bea.wait_for_text("Welcome, Bea Santos. Your password is set.").await;
    assert_eq!(bea.path().await, format!("/hotels/{}/today", c.hotel));
    let bea_api = s.post("/api/auth/login", &Auth::None, json!({"email": "bea@example.com", "password": BEA_PASSWORD}));
    let bea_api = bea_api.await.expect(200).body["token"].as_str().unwrap().to_string();
    // The link worked once.
    bea.client.goto(&link).await.unwrap();
    bea.wait_for_text("This link does not work").await;
    let again = s.client.get(&link).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 404);
    assert_eq!(s.count("operator_invitations").await, 0);

    // Removed: her browser's session and her API token stop working at once.
    b.goto("/setup/operators").await;
    b.wait_for_text("Can sign in").await;
    b.click_text("button", "Remove").await;
    b.accept_dialog().await;
    b.wait_for_text("Removed Bea Santos.").await;
    s.get("/api/auth/me", &Auth::Token(bea_api)).await.expect(401);
    let bea_cookie = session_token(&bea).await;
    s.get("/api/auth/me", &Auth::Token(bea_cookie)).await.expect(401);
    bea.goto(&format!("/hotels/{}/today", c.hotel)).await;
    bea.wait_for_text("Your session has ended").await;
    assert!(bea.path().await.starts_with("/sign-in"), "{}", bea.path().await);
    bea.close().await;

    // One's own password: refused with a wrong current password, and nothing changes.
    b.goto("/setup/password").await;
    b.fill("#currentPassword", "not my password").await;
    b.fill("#password", "a brand new password").await;
    b.click_text("button", "Change your password").await;
    b.wait_for_text("is not your current password").await;
    assert!(message_beside(&b, "currentPassword").await.contains("is not your current password"));
    b.assert_page_ok("the refused password change").await;
    s.get("/api/auth/me", &org.auth()).await.expect(200);
    let old = json!({"email": org.operator_email, "password": PASSWORD});
    s.post("/api/auth/login", &Auth::None, old.clone()).await.expect(200);
    // With the right one: every other session ends, this browser stays signed in.
    let before = session_token(&b).await;
    b.fill("#currentPassword", PASSWORD).await;
    b.fill("#password", "a brand new password").await;
    b.click_text("button", "Change your password").await;
    b.wait_for_text("Your password is changed.").await;
    s.get("/api/auth/me", &org.auth()).await.expect(401);
    s.get("/api/auth/me", &Auth::Token(before)).await.expect(401);
    s.post("/api/auth/login", &Auth::None, old).await.expect(401);
    b.goto("/setup/operators").await;
    b.wait_for_text("Add an operator").await;
    b.close().await;
}

/// The rules of managing operators, in the domain that the pages and the command line share: an operator removes
/// neither themselves nor (racing) the last operator; another organization's operators are not found; a reset ends
/// the sessions of whom it is for.
async fn operator_rules_hold_for_the_dashboard_and_the_command_line(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let rival = s.org("Rival").await;
    let me = identity::authenticate_token(&s.db, &org.token).await.unwrap();
    let my_id = identity::find_operator_by_email(&s.db, &org.operator_email).await.unwrap().id;
    let rival_id = identity::find_operator_by_email(&s.db, &rival.operator_email).await.unwrap().id;
    assert!(matches!(identity::remove_operator(&s.db, &me, &my_id).await, Err(Error::Conflict(_))));
    assert!(matches!(identity::remove_operator(&s.db, &me, &rival_id).await, Err(Error::NotFound(_))));
    assert!(matches!(
        identity::reset_password(&s.db, &me, &rival_id, "a long password").await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(identity::reset_password(&s.db, &me, &my_id, "a long password").await, Err(Error::Conflict(_))));
    s.get("/api/auth/me", &rival.auth()).await.expect(200);
    // A colleague whose password is reset loses their sessions.
    let colleague = identity::add_operator(&s.db, &me, "cole@example.com", "Cole", "first password").await.unwrap();
    let login = json!({"email": "cole@example.com", "password": "first password"});
    let cole =
        s.post("/api/auth/login", &Auth::None, login).await.expect(200).body["token"].as_str().unwrap().to_string();
    identity::reset_password(&s.db, &me, &colleague.id, "second password").await.unwrap();
    s.get("/api/auth/me", &Auth::Token(cole)).await.expect(401);
    // The e-mail is taken across organizations: the message is beside the e-mail field.
    let taken = identity::add_operator(&s.db, &me, &rival.operator_email, "Copy", "a long password").await;
    assert!(matches!(taken, Err(Error::Validation(ref errors)) if errors[0].field.as_deref() == Some("email")));
    // The command line may remove an organization's last operator (its administrator can create another).
    let system = Actor::system(&rival.id);
    identity::remove_operator(&s.db, &system, &rival_id).await.unwrap();
    s.get("/api/auth/me", &rival.auth()).await.expect(401);
    // Two operators removing each other at once: the second finds itself the last one's remover and is refused
    // (here the first removal is made by the command line, and `me` still holds its session's actor).
    identity::remove_operator(&s.db, &Actor::system(&org.id), &colleague.id).await.unwrap();
    let colleague_again =
        identity::add_operator(&s.db, &Actor::system(&org.id), "dee@example.com", "Dee", "a long password")
            .await
            .unwrap();
    let dee = identity::authenticate_token(
        &s.db,
        s.post("/api/auth/login", &Auth::None, json!({"email": "dee@example.com", "password": "a long password"}))
            .await
            .expect(200)
            .body["token"]
            .as_str()
            .unwrap(),
    )
    .await
    .unwrap();
    identity::remove_operator(&s.db, &dee, &my_id).await.unwrap();
    let alone = identity::remove_operator(&s.db, &me, &colleague_again.id).await;
    assert!(matches!(alone, Err(Error::Conflict(_))), "{alone:?}");
    assert_eq!(s.count("operators").await, 1);
}

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
    )
    .await
    .unwrap();
    let invited = identity::invite_operator(&s.db, &me, "bea@example.com", "Bea Santos").await.unwrap();
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
