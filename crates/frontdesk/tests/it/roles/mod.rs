//! Operators' roles (docs/roles.md): each role against every REST operation of the router (`operations.rs`) and
//! every dashboard page (below), hotels outside an operator's answering 404, the last owner keeping the role (also
//! when two owners demote each other at once), a role that does not exist (422), and the role in the audit log.

use crate::common::browser::{Browser, PHONE};
use crate::common::{day, Auth, Dashboard, Org, TestServer, PASSWORD};
use std::collections::BTreeSet;

use chrono::TimeDelta;
use frontdesk::domain::identity::{self, Role, Staffing};
use frontdesk::domain::Scope;
use frontdesk::model::changes::Writer;
use frontdesk::store::Engine;
use serde_json::{json, Value};

mod operations;

on_both_engines!(
    an_operator_limited_to_a_hotel_sees_no_other,
    the_last_owner_keeps_the_role,
    roles_are_given_by_owners_and_must_exist,
    a_token_of_anyone_but_an_owner_lasts_at_most_ninety_days,
    the_password_given_counts_for_some_minutes,
    each_role_opens_the_pages_of_its_job,
    revenue_changes_rate_plans_from_the_rates_calendar,
);
on_both_engines_configured!(housekeeping_works_its_board_and_sees_no_guest);

/// An operator of `org` in `role` (for `hotels`, or every hotel), signed in: their access token.
pub(super) async fn operator(s: &TestServer, org: &Org, role: Role, hotels: Option<Vec<String>>) -> Auth {
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
pub(super) struct Scene {
    pub(super) hotel: String,
    pub(super) room_type: String,
    pub(super) room: String,
    pub(super) plan: String,
    pub(super) folio: String,
    pub(super) charge: String,
    pub(super) payment: String,
}

pub(super) async fn scene(s: &TestServer, org: &Org) -> Scene {
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
    let everyone = vec![Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant];
    let pages: Vec<(String, Vec<Role>)> = vec![
        (format!("/hotels/{h}/today"), readers.clone()),
        (format!("/hotels/{h}/reservations"), readers.clone()),
        (format!("/hotels/{h}/reservations/{stay}"), readers.clone()),
        (format!("/hotels/{h}/rack"), readers.clone()),
        (format!("/hotels/{h}/requests"), readers.clone()),
        (format!("/hotels/{h}/rates"), readers.clone()),
        (format!("/hotels/{h}/housekeeping"), everyone.clone()),
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
        ("/setup/password".into(), everyone.clone()),
        ("/setup/operators".into(), vec![Owner]),
        (format!("/hotels/{h}/integrations/api-keys"), vec![Owner]),
        (format!("/hotels/{h}/integrations/webhooks"), vec![Owner]),
        (format!("/hotels/{h}/integrations/assistants"), vec![Owner]),
        (format!("/hotels/{h}/integrations/channels"), vec![Owner, Manager]),
        (format!("/hotels/{h}/integrations/tokens"), everyone.clone()),
        (format!("/hotels/{h}/guests/new"), vec![Owner, Manager, FrontDesk]),
        (format!("/hotels/{h}/guests/{guest}/edit"), vec![Owner, Manager, FrontDesk]),
        (format!("/hotels/{h}/reservations/new"), vec![Owner, Manager, FrontDesk]),
        (format!("/hotels/{h}/reservations/{stay}/folio/print"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/reservations/{stay}/invoice"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/reports/revenue.csv"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/reports/invoices.csv"), vec![Owner, Manager, FrontDesk, Accountant]),
        (format!("/hotels/{h}/rates/bulk"), vec![Owner, Manager, Revenue]),
        (format!("/hotels/{h}/rates/{}/{}", c.plan, day(3)), vec![Owner, Manager, Revenue]),
        (format!("/hotels/{h}/settings"), vec![Owner, Manager]),
        (format!("/hotels/{h}/messages"), vec![Owner, Manager]),
        ("/setup/hotels/new".into(), vec![Owner]),
        (format!("/setup/hotels/{h}/room-types/new"), vec![Owner, Manager]),
        (format!("/setup/hotels/{h}/room-types/{}", c.room_type), vec![Owner, Manager]),
        (format!("/setup/hotels/{h}/rate-plans/new"), vec![Owner, Manager, Revenue]),
        (format!("/setup/hotels/{h}/rate-plans/{}", c.plan), vec![Owner, Manager, Revenue]),
    ];
    // The wording of each guest e-mail, in each language.
    let mut pages = pages;
    for message in [
        "request_received",
        "request_declined",
        "stay_confirmed",
        "stay_cancelled",
        "pre_arrival_reminder",
        "invoice_issued",
    ] {
        for language in ["en", "de"] {
            pages.push((format!("/hotels/{h}/messages/{message}/{language}"), vec![Owner, Manager]));
        }
    }
    // Every page an owner reaches by following links has a row: a new page cannot go unlisted.
    let owner = Dashboard::new(&s, &org.token);
    let (linked, refused) = pages_linked(&owner, &[format!("/hotels/{h}/today"), "/setup/hotels".into()]).await;
    assert!(refused.is_empty(), "the owner is shown links that answer 403: {refused:?}");
    let listed: BTreeSet<String> = pages.iter().map(|(path, _)| page_template(path)).collect();
    let unlisted: Vec<&String> = linked.difference(&listed).collect();
    assert!(unlisted.is_empty(), "pages linked from the dashboard without a row in the role table: {unlisted:?}");
    let mut wrong = Vec::new();
    for role in [Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant] {
        let Auth::Token(token) = operator(&s, &org, role, None).await else { unreachable!() };
        let desk = Dashboard::new(&s, &token);
        // What a role is shown, it may open: no link on any page it reaches answers 403.
        let landing = if role == Housekeeping { "housekeeping" } else { "today" };
        let (_, refused) = pages_linked(&desk, &[format!("/hotels/{h}/{landing}"), "/setup/password".into()]).await;
        let refused: BTreeSet<String> = refused.iter().map(|link| page_template(link)).collect();
        for link in refused {
            wrong.push(format!("{} is shown a link to {link}, which answers 403", role.label()));
        }
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

/// Revenue changes rate plans (as `PUT /api/ratePlans/{id}` lets it) from the rates calendar, where each plan's name
/// leads to its page, and is led back there: the hotel's setup, which it does not configure, stays closed.
async fn revenue_changes_rate_plans_from_the_rates_calendar(s: TestServer) {
    let org = s.org("Acme").await;
    let c = scene(&s, &org).await;
    let h = &c.hotel;
    let Auth::Token(token) = operator(&s, &org, Role::Revenue, None).await else { unreachable!() };
    let desk = Dashboard::new(&s, &token);
    let (_, calendar) = desk.get(&format!("/hotels/{h}/rates")).await;
    let plan_page = format!("/setup/hotels/{h}/rate-plans/{}", c.plan);
    assert!(calendar.contains(&format!("href=\"{plan_page}\"")), "the plan's name links to its page");
    assert!(calendar.contains("class=\"night\" href"), "each night links to its form");
    let (status, form) = desk.get(&plan_page).await;
    assert_eq!(status, 200);
    assert!(form.contains(&format!("href=\"/hotels/{h}/rates\"")), "the page leads back to the calendar");
    let fields = [("name", "Best available"), ("code", ""), ("roomTypeId", ""), ("currency", "EUR"), ("active", "on")];
    let (status, headers, _) = desk.post(&plan_page, &fields).await;
    assert_eq!(
        (status, headers.get("location").and_then(|v| v.to_str().ok())),
        (303, Some(&*format!("/hotels/{h}/rates")))
    );
    let plan = s.get(&format!("/api/ratePlans/{}", c.plan), &org.auth()).await.expect(200).body;
    assert_eq!(plan["name"], json!("Best available"));
    assert_eq!(desk.get(&format!("/setup/hotels/{h}")).await.0, 403, "the hotel's setup is not revenue's");
    // The front desk reads the calendar, and neither a night nor a plan is a link for it.
    let Auth::Token(token) = operator(&s, &org, Role::FrontDesk, None).await else { unreachable!() };
    let (_, calendar) = Dashboard::new(&s, &token).get(&format!("/hotels/{h}/rates")).await;
    assert!(
        !calendar.contains("/rate-plans/") && !calendar.contains("class=\"night\" href"),
        "no links to change rates"
    );
    s.stop().await;
}

/// A dashboard path as a template: each id `{id}`, each date `{date}`, without the query or the fragment.
fn page_template(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let segment = |part: &str| match () {
        _ if uuid::Uuid::parse_str(part).is_ok() => "{id}".to_string(),
        _ if part.parse::<chrono::NaiveDate>().is_ok() => "{date}".to_string(),
        _ => part.to_string(),
    };
    path.split('/').map(segment).collect::<Vec<_>>().join("/")
}

/// The dashboard's pages (as [`page_template`]s) reachable from `starts` by following links, one instance of each:
/// what a person can open from the navigation and the pages it leads to; and the links that answered 403. Links out
/// of the dashboard (the API, the booking page, assets, mail) are not followed.
async fn pages_linked(desk: &Dashboard<'_>, starts: &[String]) -> (BTreeSet<String>, Vec<String>) {
    const ELSEWHERE: [&str; 8] =
        ["/api/", "/static/", "/assets/", "/book", "/oauth", "/mcp", "/.well-known", "/healthz"];
    let mut queue: std::collections::VecDeque<String> = starts.iter().cloned().collect();
    let (mut found, mut refused) = (BTreeSet::new(), Vec::new());
    while let Some(path) = queue.pop_front() {
        if !found.insert(page_template(&path)) {
            continue;
        }
        assert!(found.len() < 500, "the crawl of the dashboard does not end");
        let (status, headers, html) = desk.open(&path).await;
        if status == 303 {
            // A link that leads on (a hotel's integrations to their first page): where it leads is the page.
            found.remove(&page_template(&path));
            let to = headers.get("location").and_then(|v| v.to_str().ok()).expect("where a redirect leads");
            queue.push_back(to.to_string());
            continue;
        }
        if status == 403 {
            found.remove(&page_template(&path));
            refused.push(path);
            continue;
        }
        assert_eq!(status, 200, "a link to {path}: {status}");
        for link in html.split("href=\"").skip(1).filter_map(|rest| rest.split('"').next()) {
            let mut link = link.replace("&amp;", "&");
            let relative = !link.starts_with('/') && !link.starts_with('#') && !link.contains(':');
            if relative {
                // Relative to the page's folder, as a browser reads it (the rates calendar's nights).
                let folder = path.split('?').next().unwrap_or_default().rsplit_once('/').map_or("", |(f, _)| f);
                link = format!("{folder}/{link}");
            }
            let inside = link.starts_with('/') && !link.starts_with("//");
            let dashboard = inside && !ELSEWHERE.iter().any(|prefix| link.starts_with(prefix)) && link != "/";
            if dashboard && !found.contains(&page_template(&link)) {
                queue.push_back(link);
            }
        }
    }
    (found, refused)
}
