//! Operators' roles (docs/roles.md): each role against a table of REST operations (allowed, or 403 naming the role it
//! takes, with nothing changed), hotels outside an operator's answering 404, the last owner keeping the role (also
//! when two owners demote each other at once), a role that does not exist (422), and the role in the audit log.

use crate::common::browser::{Browser, PHONE};
use crate::common::{day, Auth, Dashboard, Org, TestServer, PASSWORD};
use chrono::TimeDelta;
use frontdesk::domain::identity::{self, Role, Staffing};
use frontdesk::domain::Scope;
use frontdesk::model::changes::Writer;
use frontdesk::store::Engine;
use reqwest::Method;
use serde_json::{json, Value};

on_both_engines!(
    each_role_may_do_its_job_and_nothing_else,
    an_operator_limited_to_a_hotel_sees_no_other,
    the_last_owner_keeps_the_role,
    roles_are_given_by_owners_and_must_exist,
    a_token_of_anyone_but_an_owner_lasts_at_most_ninety_days,
    the_password_given_counts_for_some_minutes,
    each_role_opens_the_pages_of_its_job,
);
on_both_engines_configured!(housekeeping_works_its_board_and_sees_no_guest);

/// An operator of `org` in `role` (for `hotels`, or every hotel), signed in: their access token.
async fn operator(s: &TestServer, org: &Org, role: Role, hotels: Option<Vec<String>>) -> Auth {
    operator_with_email(s, org, role, hotels).await.1
}

/// Like [`operator`], with the e-mail they sign in with (the password is [`PASSWORD`]).
async fn operator_with_email(s: &TestServer, org: &Org, role: Role, hotels: Option<Vec<String>>) -> (String, Auth) {
    let email = format!("{}@example.com", uuid::Uuid::now_v7().simple());
    let input =
        identity::OperatorIn { organization_id: &org.id, email: &email, name: role.label(), password: PASSWORD };
    let staffing = Staffing { role, hotel_ids: hotels };
    let op = identity::create_operator_as(&s.db, Writer::CommandLine, input, &staffing).await.expect("operator");
    let session = identity::issue_token(&s.db, op, TimeDelta::days(1)).await.expect("token");
    (email, Auth::Token(session.token))
}

/// A hotel with a room, a plan, and a checked-in stay whose folio has a posted charge and a payment:
/// (hotel, room type, room, plan, folio, charge line, payment line).
struct Scene {
    hotel: String,
    room_type: String,
    room: String,
    plan: String,
    folio: String,
    charge: String,
    payment: String,
}

async fn scene(s: &TestServer, org: &Org) -> Scene {
    let hotel = s.hotel(org, "Harbour").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let room = s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await;
    let plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "BAR"})).await;
    let body = json!({"hotelId": hotel, "checkInDate": day(0), "checkOutDate": day(2),
                      "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "price": 20_000, "adults": 2}]});
    let r = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let folio = r["folio"]["id"].as_str().unwrap().to_string();
    let charge = json!({"description": "Minibar", "unitPrice": 450, "quantity": 1, "category": "OTHER"});
    let after = s.post(&format!("/api/folios/{folio}/charges"), &org.auth(), charge).await.expect(200).body;
    let line = |kind: &str, body: &Value| {
        body["lines"].as_array().unwrap().iter().rev().find(|l| l["kind"] == json!(kind)).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let charge = line("CHARGE", &after);
    let paid = s
        .post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "CARD", "amount": 1000}))
        .await
        .expect(200)
        .body;
    let payment = line("PAYMENT", &paid);
    Scene { hotel, room_type, room, plan, folio, charge, payment }
}

/// An operation of the API: what it is, method, path, body, and the roles allowed it.
type Operation = (&'static str, Method, String, Option<Value>, Vec<Role>);

async fn each_role_may_do_its_job_and_nothing_else(s: TestServer) {
    use Role::*;
    let org = s.org("Acme").await;
    let c = scene(&s, &org).await;
    let everyone = [Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant];
    let table: Vec<Operation> = vec![
        (
            "list reservations",
            Method::GET,
            format!("/api/reservations?hotelId={}", c.hotel),
            None,
            vec![Owner, Manager, FrontDesk, Revenue, Accountant],
        ),
        (
            "book",
            Method::POST,
            "/api/reservations".into(),
            Some(json!({"hotelId": c.hotel, "checkInDate": day(40),
            "checkOutDate": day(41), "rooms": [{"roomTypeId": c.room_type, "ratePlanId": c.plan, "price": 1, "adults": 1}]})),
            vec![Owner, Manager, FrontDesk],
        ),
        (
            "list guests",
            Method::GET,
            format!("/api/guests?hotelId={}", c.hotel),
            None,
            vec![Owner, Manager, FrontDesk, Accountant],
        ),
        (
            "price a night",
            Method::POST,
            "/api/dailyRates".into(),
            Some(json!({"values": [{"ratePlanId": c.plan, "date": day(5), "price": 9000}]})),
            vec![Owner, Manager, Revenue],
        ),
        (
            "add a room type",
            Method::POST,
            "/api/roomTypes".into(),
            Some(json!({"hotelId": c.hotel, "name": "Suite", "maxOccupancy": 2})),
            vec![Owner, Manager],
        ),
        (
            "mark a room dirty",
            Method::PUT,
            format!("/api/rooms/{}", c.room),
            Some(json!({"housekeepingStatus": "DIRTY"})),
            vec![Owner, Manager, FrontDesk, Housekeeping],
        ),
        (
            "rename a room",
            Method::PUT,
            format!("/api/rooms/{}", c.room),
            Some(json!({"name": "101A"})),
            vec![Owner, Manager],
        ),
        (
            "charge",
            Method::POST,
            format!("/api/folios/{}/charges", c.folio),
            Some(json!({"description": "Water", "unitPrice": 300, "quantity": 1, "category": "OTHER"})),
            vec![Owner, Manager, FrontDesk],
        ),
        (
            "correct a line",
            Method::POST,
            format!("/api/folios/{}/charges/{}/allowances", c.folio, c.charge),
            Some(json!({"amount": 1, "reason": "Goodwill"})),
            vec![Owner, Manager, Accountant],
        ),
        (
            "take a payment",
            Method::POST,
            format!("/api/folios/{}/payments", c.folio),
            Some(json!({"method": "CARD", "amount": 1})),
            vec![Owner, Manager, FrontDesk],
        ),
        (
            "refund",
            Method::POST,
            format!("/api/folios/{}/payments/{}/refunds", c.folio, c.payment),
            Some(json!({"amount": 1, "reason": "Overpaid"})),
            vec![Owner, Manager],
        ),
        (
            "read the folio",
            Method::GET,
            format!("/api/folios/{}", c.folio),
            None,
            vec![Owner, Manager, FrontDesk, Accountant],
        ),
        ("read the audit log", Method::GET, "/api/auditLog".into(), None, vec![Owner, Manager, Accountant]),
        (
            "change billing",
            Method::PUT,
            format!("/api/hotels/{}/billing", c.hotel),
            Some(json!({"pricesIncludeVat": true})),
            vec![Owner, Manager],
        ),
        (
            "open a hotel",
            Method::POST,
            "/api/hotels".into(),
            Some(json!({"name": "New", "timezone": "Europe/Lisbon", "currency": "EUR"})),
            vec![Owner],
        ),
        (
            "mint an API key",
            Method::POST,
            "/api/apiKeys".into(),
            Some(json!({"name": "k", "scopes": ["rooms:read"]})),
            vec![Owner],
        ),
        ("list operators", Method::GET, "/api/operators".into(), None, vec![Owner]),
    ];
    for role in everyone {
        let auth = operator(&s, &org, role, None).await;
        for (what, method, path, body, allowed) in &table {
            let entries = s.count("audit_log").await;
            let answer = s.request(method.clone(), path, &auth, body.clone()).await;
            let status = answer.status.as_u16();
            if allowed.contains(&role) {
                assert_ne!(status, 403, "{} may {what}: {}", role.label(), answer.body);
                assert!(status < 500, "{what} as {}: {status} {}", role.label(), answer.body);
            } else {
                let answer = answer.expect(403);
                let detail = answer.body["detail"].as_str().unwrap_or_default();
                assert!(
                    detail.contains("it takes the role"),
                    "{} may not {what}, and is told why: {detail}",
                    role.label()
                );
                assert_eq!(s.count("audit_log").await, entries, "{} refused to {what}: nothing changed", role.label());
            }
        }
    }
    s.stop().await;
}

async fn an_operator_limited_to_a_hotel_sees_no_other(s: TestServer) {
    let org = s.org("Acme").await;
    let a = scene(&s, &org).await;
    let b = scene(&s, &org).await;
    let manager = operator(&s, &org, Role::Manager, Some(vec![a.hotel.clone()])).await;
    let hotels = s.get("/api/hotels", &manager).await.expect(200).body;
    let ids: Vec<&str> = hotels.as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [a.hotel.as_str()]);
    s.get(&format!("/api/hotels/{}", b.hotel), &manager).await.expect(404);
    s.get(&format!("/api/folios/{}", b.folio), &manager).await.expect(404);
    s.get(&format!("/api/reservations?hotelId={}", b.hotel), &manager).await.expect(404);
    s.put(&format!("/api/rooms/{}", b.room), &manager, json!({"housekeepingStatus": "DIRTY"})).await.expect(404);
    // Without a hotel named, a list is of their one hotel.
    let stays = s.get("/api/reservations", &manager).await.expect(200).body;
    assert!(stays.as_array().unwrap().iter().all(|r| r["hotelId"] == json!(a.hotel)));
    assert!(!stays.as_array().unwrap().is_empty());
    s.get(&format!("/api/folios/{}", a.folio), &manager).await.expect(200);
    // With two hotels, a list names one.
    let both = operator(&s, &org, Role::FrontDesk, Some(vec![a.hotel.clone(), b.hotel.clone()])).await;
    s.get("/api/reservations", &both).await.expect(400);
    s.get(&format!("/api/reservations?hotelId={}", b.hotel), &both).await.expect(200);
    s.stop().await;
}

async fn the_last_owner_keeps_the_role(s: TestServer) {
    let org = s.org("Acme").await;
    let me = s.get("/api/auth/me", &org.auth()).await.expect(200).body;
    let my_id = me["id"].as_str().or(me["operator"]["id"].as_str()).expect("my id").to_string();
    let refused = s.put(&format!("/api/operators/{my_id}/role"), &org.auth(), json!({"role": "MANAGER"})).await;
    let refused = refused.expect(409);
    assert!(refused.body["detail"].as_str().unwrap().contains("last owner"));
    // A second owner: then one may step down, and the role shows in the log.
    let second = operator(&s, &org, Role::Owner, None).await;
    let operators = s.get("/api/operators", &org.auth()).await.expect(200).body;
    let second_id = operators.as_array().unwrap().iter().find(|o| o["id"] != json!(my_id)).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Two owners demoting each other at once: one of them remains an owner.
    let (first_path, second_path, owner) =
        (format!("/api/operators/{second_id}/role"), format!("/api/operators/{my_id}/role"), org.auth());
    let (one, two) = tokio::join!(
        s.put(&first_path, &owner, json!({"role": "MANAGER"})),
        s.put(&second_path, &second, json!({"role": "MANAGER"})),
    );
    let statuses = [one.status.as_u16(), two.status.as_u16()];
    // The second is refused: 409 when it ran beside the first (one owner must remain), 403 when it came after (its
    // sender is no longer an owner).
    let refused = statuses.iter().filter(|s| **s == 409 || **s == 403).count();
    assert!(statuses.contains(&200) && refused == 1, "{statuses:?}: {} {}", one.body, two.body);
    let operators = s.get("/api/operators", &if one.status == 200 { org.auth() } else { second.clone() }).await;
    let owners = operators.expect(200).body.as_array().unwrap().iter().filter(|o| o["role"] == json!("OWNER")).count();
    assert_eq!(owners, 1);
    let entries =
        s.get("/api/auditLog?sortDirection=DESC&limit=1", &if one.status == 200 { org.auth() } else { second }).await;
    let entry = &entries.expect(200).body[0];
    assert_eq!((entry["recordKind"].clone(), entry["actor"]["role"].clone()), (json!("operator"), json!("OWNER")));
    let role = entry["fields"].as_array().unwrap().iter().find(|f| f["field"] == json!("role")).unwrap();
    assert_eq!((role["before"].clone(), role["after"].clone()), (json!("OWNER"), json!("MANAGER")));
    s.stop().await;
}

async fn roles_are_given_by_owners_and_must_exist(s: TestServer) {
    let org = s.org("Acme").await;
    let c = scene(&s, &org).await;
    let manager = operator(&s, &org, Role::Manager, None).await;
    let operators = s.get("/api/operators", &org.auth()).await.expect(200).body;
    let manager_id = operators.as_array().unwrap().iter().find(|o| o["role"] == json!("MANAGER")).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/operators/{manager_id}/role");
    // A manager cannot promote themselves; an API key cannot either, whatever its scopes.
    s.put(&path, &manager, json!({"role": "OWNER"})).await.expect(403);
    let key = Auth::Key(s.key(&org, &Scope::ALL, None).await);
    s.put(&path, &key, json!({"role": "OWNER"})).await.expect(403);
    // A role that does not exist, no hotel: 422 with the field; another organization's hotel: 404.
    let answer = s.put(&path, &org.auth(), json!({"role": "NIGHT_PORTER"})).await.expect(422);
    assert!(answer.body.to_string().contains("role"));
    let other = s.org("Other").await;
    let theirs = s.hotel(&other, "Theirs").await;
    s.put(&path, &org.auth(), json!({"role": "FRONT_DESK", "hotelIds": [theirs]})).await.expect(404);
    s.put(&path, &org.auth(), json!({"role": "FRONT_DESK", "hotelIds": []})).await.expect(422);
    // Another organization's operator does not exist here.
    let their_ops = s.get("/api/operators", &other.auth()).await.expect(200).body;
    let their_id = their_ops[0]["id"].as_str().unwrap();
    s.put(&format!("/api/operators/{their_id}/role"), &org.auth(), json!({"role": "MANAGER"})).await.expect(404);
    // Given: the manager is front desk at one hotel, and the answer and the list say so.
    let given = s.put(&path, &org.auth(), json!({"role": "FRONT_DESK", "hotelIds": [c.hotel]})).await.expect(200).body;
    assert_eq!((given["role"].clone(), given["hotelIds"].clone()), (json!("FRONT_DESK"), json!([c.hotel])));
    // Their next request is a front desk's: no refunds.
    s.post(
        &format!("/api/folios/{}/payments/{}/refunds", c.folio, c.payment),
        &manager,
        json!({"amount": 1, "reason": "r"}),
    )
    .await
    .expect(403);
    s.stop().await;
}

async fn housekeeping_works_its_board_and_sees_no_guest(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let c = scene(&s, &org).await;
    // The scene's stay, in room 101 with a guest whose name housekeeping must not see, checked in.
    let guest = s
        .create("/api/guests", &org.auth(), json!({"hotelId": c.hotel, "firstName": "Zelda", "lastName": "Quirinus"}))
        .await;
    let stays = s.get(&format!("/api/reservations?hotelId={}", c.hotel), &org.auth()).await.expect(200).body;
    let id = stays[0]["id"].as_str().unwrap().to_string();
    let r = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200).body;
    let line = r["rooms"][0]["id"].clone();
    let assigned = json!({"guestId": guest, "rooms": [{"id": line, "roomId": c.room}]});
    s.put(&format!("/api/reservations/{id}"), &org.auth(), assigned).await.expect(200);
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    let (email, _) = operator_with_email(&s, &org, Role::Housekeeping, None).await;
    let Some(b) = Browser::start_sized(&s.base, PHONE).await else { return };
    b.sign_in(&email, PASSWORD).await;
    // Signed in, housekeeping lands on its board: the room, a guest in house, and no name.
    b.wait_for_text("In house: a guest").await;
    let text = b.page_text().await;
    assert!(text.contains("101"), "{text}");
    assert!(!text.contains("Zelda") && !text.contains("Quirinus"), "no guest name on the board: {text}");
    b.assert_page_ok("the housekeeping board of a housekeeper on a phone").await;
    if engine == Engine::Sqlite {
        b.screenshot("housekeeping-role-phone").await;
    }
    // Pages of other jobs answer 403 and say which role they take; none shows the guest's name.
    let pages = [
        format!("/hotels/{}/guests", c.hotel),
        format!("/hotels/{}/reservations/{id}", c.hotel),
        "/setup/operators".into(),
    ];
    for path in pages {
        b.goto(&path).await;
        b.wait_for_text("it takes the role").await;
        let text = b.page_text().await;
        assert!(!text.contains("Zelda"), "{path}: {text}");
    }
    b.close().await;
    s.stop().await;
}

async fn a_token_of_anyone_but_an_owner_lasts_at_most_ninety_days(s: TestServer) {
    use frontdesk::domain::{operator_tokens, Error};
    let org = s.org("Acme").await;
    let today = chrono::Utc::now().date_naive();
    let days = |n: u64| Some(today + chrono::Days::new(n));
    let refused = |result: Result<operator_tokens::CreatedToken, Error>, what: &str| match result {
        Err(Error::Validation(fields)) => {
            assert_eq!(fields.len(), 1, "{what}: {fields:?}");
            let said = format!("{fields:?}");
            assert!(said.contains("expiresOn") && said.contains("90 days"), "{what}: {said}");
        }
        other => panic!("{what}: refused, not {other:?}"),
    };
    for role in [Role::Manager, Role::FrontDesk, Role::Accountant] {
        let Auth::Token(token) = operator(&s, &org, role, None).await else { unreachable!() };
        let actor = identity::authenticate_token(&s.db, &token).await.expect("actor");
        let before = s.count("access_tokens").await;
        refused(operator_tokens::create(&s.db, &actor, "Script", None).await, "no expiry");
        refused(operator_tokens::create(&s.db, &actor, "Script", days(91)).await, "91 days");
        assert_eq!(s.count("access_tokens").await, before, "a refused token is not made");
        let made = operator_tokens::create(&s.db, &actor, "Script", days(90)).await.expect("90 days");
        assert!(made.token.expires_at.is_some());
    }
    // An owner chooses: three years, or until revoked.
    let actor = identity::authenticate_token(&s.db, &org.token).await.expect("owner");
    let forever = operator_tokens::create(&s.db, &actor, "Nightly export", None).await.expect("until revoked");
    assert_eq!(forever.token.expires_at, None);
    operator_tokens::create(&s.db, &actor, "Yearly", days(365)).await.expect("a year");
    s.stop().await;
}

async fn the_password_given_counts_for_some_minutes(s: TestServer) {
    use frontdesk::domain::identity::step_up;
    use frontdesk::domain::{access::Credential, Error};
    let org = s.org("Acme").await;
    let window = TimeDelta::minutes(10);
    let actor = identity::authenticate_token(&s.db, &org.token).await.expect("owner");
    let Credential::Operator { token_id, .. } = &actor.credential else { unreachable!() };
    // Signing in gave it: fresh for the window, never for a window of 0.
    assert!(step_up::password_fresh(&s.db, &actor, window).await.unwrap());
    assert!(!step_up::password_fresh(&s.db, &actor, TimeDelta::zero()).await.unwrap());
    // Eleven minutes on, it is asked again.
    let mut tx = s.db.begin_write().await.unwrap();
    let then = chrono::Utc::now() - TimeDelta::minutes(11);
    frontdesk::store::identity::set_password_given_at(tx.conn(), token_id, then).await.unwrap();
    tx.commit().await.unwrap();
    assert!(!step_up::password_fresh(&s.db, &actor, window).await.unwrap());
    // A wrong password is refused and changes nothing; the right one counts from now.
    let wrong = step_up::give_password(&s.db, &actor, "not the password".into(), "203.0.113.9").await;
    assert!(matches!(wrong, Err(Error::Unauthorized(_))), "{wrong:?}");
    assert!(!step_up::password_fresh(&s.db, &actor, window).await.unwrap());
    step_up::give_password(&s.db, &actor, PASSWORD.into(), "203.0.113.9").await.expect("the right password");
    assert!(step_up::password_fresh(&s.db, &actor, window).await.unwrap());
    // An API key has no password to give.
    let key = s.key(&org, &[Scope::ReservationsRead], None).await;
    let keyed = identity::authenticate_api_key(&s.db, &key).await.expect("key");
    assert!(matches!(step_up::password_fresh(&s.db, &keyed, window).await, Err(Error::Forbidden(_))));
    s.stop().await;
}

async fn each_role_opens_the_pages_of_its_job(s: TestServer) {
    use Role::*;
    let org = s.org("Acme").await;
    let c = scene(&s, &org).await;
    let guest = json!({"hotelId": c.hotel, "firstName": "Zelda", "lastName": "Quirinus",
                       "email": "zelda@example.com", "phone": "+49 30 1234567"});
    let guest = s.create("/api/guests", &org.auth(), guest).await;
    let stays = s.get(&format!("/api/reservations?hotelId={}", c.hotel), &org.auth()).await.expect(200).body;
    let stay = stays[0]["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"guestId": guest})).await.expect(200);
    let h = &c.hotel;
    let readers = vec![Owner, Manager, FrontDesk, Revenue, Accountant];
    let pages: Vec<(String, Vec<Role>)> = vec![
        (format!("/hotels/{h}/today"), readers.clone()),
        (format!("/hotels/{h}/reservations"), readers.clone()),
        (format!("/hotels/{h}/reservations/{stay}"), readers.clone()),
        (format!("/hotels/{h}/rack"), readers.clone()),
        (format!("/hotels/{h}/requests"), readers.clone()),
        (format!("/hotels/{h}/rates"), readers.clone()),
        (format!("/hotels/{h}/housekeeping"), vec![Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant]),
        (format!("/hotels/{h}/guests"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/guests/{guest}"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/reports"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/invoices"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/audit-log"), vec![Owner, Manager, Accountant]),
        (format!("/setup/hotels/{h}"), vec![Owner, Manager]),
        (format!("/setup/hotels/{h}/billing"), vec![Owner, Manager]),
        (format!("/setup/hotels/{h}/rooms/new"), vec![Owner, Manager]),
        (format!("/setup/hotels/{h}/rooms/{}", c.room), vec![Owner, Manager]),
        ("/setup/hotels".into(), vec![Owner, Manager]),
        ("/setup/password".into(), vec![Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant]),
        ("/setup/operators".into(), vec![Owner]),
        (format!("/hotels/{h}/integrations/api-keys"), vec![Owner]),
        (format!("/hotels/{h}/integrations/webhooks"), vec![Owner]),
    ];
    let mut wrong = Vec::new();
    for role in [Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant] {
        let Auth::Token(token) = operator(&s, &org, role, None).await else { unreachable!() };
        let desk = Dashboard::new(&s, &token);
        for (path, allowed) in &pages {
            let (status, html) = desk.get(path).await;
            let expected = if allowed.contains(&role) { 200 } else { 403 };
            if status != expected {
                wrong.push(format!("{} {path}: {status}, not {expected}", role.label()));
                continue;
            }
            if status == 403 {
                assert!(html.contains("it takes the role"), "{} {path} says which role it takes", role.label());
            }
            // Nobody without guests:read sees a guest's contact details; housekeeping not even the name.
            if !role.holds(Scope::GuestsRead) {
                assert!(!html.contains("zelda@example.com") && !html.contains("1234567"), "{} {path}", role.label());
            }
            if role == Housekeeping {
                assert!(!html.contains("Quirinus"), "housekeeping sees no guest name on {path}");
            }
        }
        // A stay's page offers each role the actions it may take, and no other: the front desk charges and takes
        // payments but neither corrects nor refunds; the accountant corrects but neither charges nor checks in;
        // revenue reads the stay with the guest's name, without contact details, folio or history.
        if role != Housekeeping {
            let (_, html) = desk.get(&format!("/hotels/{h}/reservations/{stay}")).await;
            let offers = |action: &str| html.contains(action);
            let label = role.label();
            assert_eq!(offers("/folio/charges\""), matches!(role, Owner | Manager | FrontDesk), "{label}: charges");
            assert_eq!(offers("/folio/payments\""), matches!(role, Owner | Manager | FrontDesk), "{label}: payments");
            assert_eq!(offers("/folio/refunds\""), matches!(role, Owner | Manager), "{label}: refunds");
            assert_eq!(
                offers("/folio/allowances\""),
                matches!(role, Owner | Manager | Accountant),
                "{label}: corrections"
            );
            assert_eq!(offers("id=\"folio-title\""), role != Revenue, "{label}: the folio");
            assert_eq!(
                offers("id=\"history-title\""),
                matches!(role, Owner | Manager | Accountant),
                "{label}: history"
            );
            assert_eq!(offers("Check in</button>"), matches!(role, Owner | Manager | FrontDesk), "{label}: check-in");
            assert!(html.contains("Quirinus"), "{label} sees the guest's name on the stay");
        }
    }
    assert!(wrong.is_empty(), "pages answered otherwise than each role's job:\n{}", wrong.join("\n"));
    s.stop().await;
}
