//! Each role against every operation of the REST API. The list of operations is the router's own (the OpenAPI
//! document is made from the same registrations, `http::api`): the test fails when an operation of the router has
//! no row here, or a row names one the router does not have, so a new route cannot go unlisted. What each role may
//! do is written by hand, from docs/roles.md: that is what the test holds the code to.
//!
//! Every role works on a hotel of its own, set up by an owner, so what one role changes or deletes cannot hide
//! what the next is asked. A role allowed an operation gets neither 403 nor 404 (nor 401, nor a 5xx): the answer may
//! still be 409 or 422 where the record's state forbids the move. A role refused it gets 403 naming the roles it
//! takes, and the audit log does not grow.

use std::collections::BTreeSet;

use super::{operator, scene, Scene};
use crate::common::{day, Org, TestServer};
use frontdesk::domain::identity::Role;
use reqwest::Method;
use serde_json::{json, Value};

on_both_engines!(each_role_against_every_operation_of_the_api);

use Role::*;
const EVERYONE: &[Role] = &[Owner, Manager, FrontDesk, Housekeeping, Revenue, Accountant];
const OWNERS: &[Role] = &[Owner];
const CONFIGURERS: &[Role] = &[Owner, Manager];
const RESERVATION_READERS: &[Role] = &[Owner, Manager, FrontDesk, Revenue, Accountant];
const FRONT_OFFICE: &[Role] = &[Owner, Manager, FrontDesk];
const GUEST_READERS: &[Role] = &[Owner, Manager, FrontDesk, Accountant];
const RATE_READERS: &[Role] = &[Owner, Manager, FrontDesk, Revenue, Accountant];
const RATE_WRITERS: &[Role] = &[Owner, Manager, Revenue];
const ROOM_STATUS: &[Role] = &[Owner, Manager, FrontDesk, Housekeeping];
const FOLIO_READERS: &[Role] = &[Owner, Manager, FrontDesk, Accountant];
const CORRECTORS: &[Role] = &[Owner, Manager, Accountant];
const INVOICERS: &[Role] = &[Owner, Manager, FrontDesk, Accountant];
const AUDITORS: &[Role] = &[Owner, Manager, Accountant];

/// One request of the table: the operation (method and path as the router names it), the path with ids, the
/// body, and the roles allowed it.
struct Row {
    method: Method,
    operation: &'static str,
    path: String,
    body: Option<Value>,
    allowed: &'static [Role],
}

fn row(method: Method, operation: &'static str, path: String, body: Option<Value>, allowed: &'static [Role]) -> Row {
    Row { method, operation, path, body, allowed }
}

/// What a role works on, beyond [`Scene`]: records to change, and spare ones to delete.
struct Estate {
    c: Scene,
    spare_room_type: String,
    spare_room: String,
    spare_plan: String,
    guest: String,
    spare_guest: String,
    forgotten_guest: String,
    spare_stay: String,
    stay: String,
    invoice: String,
    invoiced_folio: String,
    subscription: String,
    spare_subscription: String,
    key: String,
    spare_key: String,
    colleague: String,
}

async fn estate(s: &TestServer, org: &Org) -> Estate {
    let owner = org.auth();
    let c = scene(s, org).await;
    // Billing an invoice can be issued under.
    s.put(&format!("/api/hotels/{}", c.hotel), &owner, json!({"country": "DE"})).await.expect(200);
    s.put(
        &format!("/api/hotels/{}/billing", c.hotel),
        &owner,
        json!({"invoiceIssuer": {"legalName": "Harbour GmbH", "street": "Kai 1", "postalCode": "20457",
                                 "city": "Hamburg", "country": "DE", "vatId": "DE123456789"}}),
    )
    .await
    .expect(200);
    let hotel = c.hotel.clone();
    let spare_room_type =
        s.create("/api/roomTypes", &owner, json!({"hotelId": hotel, "name": "Spare", "maxOccupancy": 2})).await;
    let spare_room = s.create("/api/rooms", &owner, json!({"roomTypeId": c.room_type, "name": "999"})).await;
    let spare_plan = s.create("/api/ratePlans", &owner, json!({"hotelId": hotel, "name": "Spare"})).await;
    let guest_in = |name: &str| {
        json!({"hotelId": hotel, "firstName": "Łukasz", "lastName": name, "street": "ul. Długa 5",
               "postalCode": "00-238", "city": "Warszawa", "country": "PL", "email": "l@example.com"})
    };
    let guest = s.create("/api/guests", &owner, guest_in("Żółć")).await;
    let spare_guest = s.create("/api/guests", &owner, guest_in("Spare")).await;
    let forgotten_guest = s.create("/api/guests", &owner, guest_in("Forgotten")).await;
    let stay_in = |from: u64, to: u64, guest: &str| {
        json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(from), "checkOutDate": day(to),
               "rooms": [{"roomTypeId": c.room_type, "ratePlanId": c.plan, "price": 10_000, "adults": 1}]})
    };
    let invoiced_room = s.create("/api/rooms", &owner, json!({"roomTypeId": c.room_type, "name": "103"})).await;
    let mut invoiced_in = stay_in(0, 1, &guest);
    invoiced_in["rooms"][0]["roomId"] = json!(invoiced_room);
    let stay = s.post("/api/reservations", &owner, stay_in(30, 31, &guest)).await.expect(200).body;
    let stay = stay["id"].as_str().expect("stay").to_string();
    let spare_stay = s.post("/api/reservations", &owner, stay_in(32, 33, &guest)).await.expect(200).body;
    let spare_stay = spare_stay["id"].as_str().expect("spare stay").to_string();
    // A stay checked in and out today, left on account, and invoiced.
    let invoiced = s.post("/api/reservations", &owner, invoiced_in).await.expect(200).body;
    let (invoiced_stay, invoiced_folio) = (invoiced["id"].as_str().unwrap(), invoiced["folio"]["id"].as_str().unwrap());
    let path = format!("/api/reservations/{invoiced_stay}");
    s.put(&path, &owner, json!({"status": "CHECKED_IN"})).await.expect(200);
    s.put(&path, &owner, json!({"status": "CHECKED_OUT", "onAccountReason": "Invoice to follow"})).await.expect(200);
    let issued = s.post(&format!("/api/folios/{invoiced_folio}/invoices"), &owner, json!({})).await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let invoice = issued.body["id"].as_str().expect("invoice").to_string();
    let hook = |events: Value| json!({"hotelId": hotel, "url": "http://127.0.0.1:9/hook", "events": events});
    let subscription = s.create("/api/webhooksubscriptions", &owner, hook(json!(["guest.created"]))).await;
    let spare_subscription = s.create("/api/webhooksubscriptions", &owner, hook(json!(["guest.updated"]))).await;
    let key_in = json!({"name": "Channel manager", "scopes": ["rooms:read"]});
    let key = s.create("/api/apiKeys", &owner, key_in.clone()).await;
    let spare_key = s.create("/api/apiKeys", &owner, key_in).await;
    let colleague_token = operator(s, org, FrontDesk, Some(vec![hotel.clone()])).await;
    let me = s.get("/api/auth/me", &colleague_token).await.expect(200).body;
    let colleague = me["id"].as_str().or(me["operator"]["id"].as_str()).expect("colleague's id").to_string();
    Estate {
        c,
        spare_room_type,
        spare_room,
        spare_plan,
        guest,
        spare_guest,
        forgotten_guest,
        spare_stay,
        stay,
        invoice,
        invoiced_folio: invoiced_folio.to_string(),
        subscription,
        spare_subscription,
        key,
        spare_key,
        colleague,
    }
}

/// Every operation, with a valid body, in an order where nothing is deleted before the rows that use it: the
/// deletions come last, and signing out very last.
fn table(e: &Estate) -> Vec<Row> {
    use Method as M;
    let c = &e.c;
    let (hotel, folio) = (&c.hotel, &c.folio);
    let price = json!({"values": [{"ratePlanId": c.plan, "date": day(5), "price": 9000}]});
    let stay = json!({"hotelId": hotel, "checkInDate": day(40), "checkOutDate": day(41),
                      "rooms": [{"roomTypeId": c.room_type, "ratePlanId": c.plan, "price": 1, "adults": 1}]});
    let charge = json!({"description": "Water", "unitPrice": 300, "quantity": 1, "category": "OTHER"});
    let hook = json!({"hotelId": hotel, "url": "http://127.0.0.1:9/other", "events": ["guest.deleted"]});
    let booking = json!({"offerId": "no-such-offer", "guest": {"firstName": "Ana", "lastName": "Silva",
                                                              "email": "ana@example.com"}});
    vec![
        row(M::GET, "/healthz", "/healthz".into(), None, EVERYONE),
        row(M::GET, "/readyz", "/readyz".into(), None, EVERYONE),
        row(M::GET, "/api/auth/me", "/api/auth/me".into(), None, EVERYONE),
        row(
            M::POST,
            "/api/auth/login",
            "/api/auth/login".into(),
            Some(json!({"email": "nobody@example.com", "password": "not the password"})),
            EVERYONE,
        ),
        // The organization.
        row(M::GET, "/api/hotels", "/api/hotels".into(), None, EVERYONE),
        row(
            M::POST,
            "/api/hotels",
            "/api/hotels".into(),
            Some(json!({"name": "New", "timezone": "Europe/Lisbon", "currency": "EUR"})),
            OWNERS,
        ),
        row(M::GET, "/api/operators", "/api/operators".into(), None, OWNERS),
        row(
            M::PUT,
            "/api/operators/{operatorId}/role",
            format!("/api/operators/{}/role", e.colleague),
            Some(json!({"role": "FRONT_DESK", "hotelIds": [hotel]})),
            OWNERS,
        ),
        row(M::GET, "/api/apiKeys", "/api/apiKeys".into(), None, OWNERS),
        row(
            M::POST,
            "/api/apiKeys",
            "/api/apiKeys".into(),
            Some(json!({"name": "k", "scopes": ["rooms:read"]})),
            OWNERS,
        ),
        row(M::PUT, "/api/apiKeys/{apiKeyId}", format!("/api/apiKeys/{}", e.key), Some(json!({"name": "CM"})), OWNERS),
        row(M::GET, "/api/webhooksubscriptions", "/api/webhooksubscriptions".into(), None, OWNERS),
        row(M::POST, "/api/webhooksubscriptions", "/api/webhooksubscriptions".into(), Some(hook), OWNERS),
        row(
            M::GET,
            "/api/webhooksubscriptions/{webhookSubscriptionId}",
            format!("/api/webhooksubscriptions/{}", e.subscription),
            None,
            OWNERS,
        ),
        row(
            M::PUT,
            "/api/webhooksubscriptions/{webhookSubscriptionId}",
            format!("/api/webhooksubscriptions/{}", e.subscription),
            Some(json!({"active": true})),
            OWNERS,
        ),
        row(
            M::GET,
            "/api/webhooksubscriptions/{webhookSubscriptionId}/deliveries",
            format!("/api/webhooksubscriptions/{}/deliveries", e.subscription),
            None,
            OWNERS,
        ),
        row(M::GET, "/api/auditLog", format!("/api/auditLog?hotelId={hotel}"), None, AUDITORS),
        // The hotel and its setup.
        row(M::GET, "/api/hotels/{hotelId}", format!("/api/hotels/{hotel}"), None, EVERYONE),
        row(
            M::PUT,
            "/api/hotels/{hotelId}",
            format!("/api/hotels/{hotel}"),
            Some(json!({"checkInTime": "15:00"})),
            CONFIGURERS,
        ),
        row(M::GET, "/api/hotels/{hotelId}/billing", format!("/api/hotels/{hotel}/billing"), None, EVERYONE),
        row(
            M::PUT,
            "/api/hotels/{hotelId}/billing",
            format!("/api/hotels/{hotel}/billing"),
            Some(json!({"pricesIncludeVat": true})),
            CONFIGURERS,
        ),
        row(M::GET, "/api/roomTypes", format!("/api/roomTypes?hotelId={hotel}"), None, EVERYONE),
        row(
            M::POST,
            "/api/roomTypes",
            "/api/roomTypes".into(),
            Some(json!({"hotelId": hotel, "name": "Suite", "maxOccupancy": 2})),
            CONFIGURERS,
        ),
        row(M::GET, "/api/roomTypes/{roomTypeId}", format!("/api/roomTypes/{}", c.room_type), None, EVERYONE),
        row(
            M::PUT,
            "/api/roomTypes/{roomTypeId}",
            format!("/api/roomTypes/{}", c.room_type),
            Some(json!({"description": "Two beds"})),
            CONFIGURERS,
        ),
        row(M::GET, "/api/rooms", format!("/api/rooms?hotelId={hotel}"), None, EVERYONE),
        row(
            M::POST,
            "/api/rooms",
            "/api/rooms".into(),
            Some(json!({"roomTypeId": c.room_type, "name": "102"})),
            CONFIGURERS,
        ),
        row(M::GET, "/api/rooms/{roomId}", format!("/api/rooms/{}", c.room), None, EVERYONE),
        row(
            M::PUT,
            "/api/rooms/{roomId}",
            format!("/api/rooms/{}", c.room),
            Some(json!({"housekeepingStatus": "DIRTY"})),
            ROOM_STATUS,
        ),
        row(
            M::PUT,
            "/api/rooms/{roomId}",
            format!("/api/rooms/{}", c.room),
            Some(json!({"name": "101A"})),
            CONFIGURERS,
        ),
        // Rates.
        row(M::GET, "/api/ratePlans", format!("/api/ratePlans?hotelId={hotel}"), None, RATE_READERS),
        row(
            M::POST,
            "/api/ratePlans",
            "/api/ratePlans".into(),
            Some(json!({"hotelId": hotel, "name": "Flex"})),
            RATE_WRITERS,
        ),
        row(M::GET, "/api/ratePlans/{ratePlanId}", format!("/api/ratePlans/{}", c.plan), None, RATE_READERS),
        row(
            M::PUT,
            "/api/ratePlans/{ratePlanId}",
            format!("/api/ratePlans/{}", c.plan),
            Some(json!({"name": "Best available"})),
            RATE_WRITERS,
        ),
        row(
            M::GET,
            "/api/dailyRates",
            format!("/api/dailyRates?ratePlanId={}&dateFrom={}&dateTo={}", c.plan, day(0), day(9)),
            None,
            RATE_READERS,
        ),
        row(M::POST, "/api/dailyRates", "/api/dailyRates".into(), Some(price), RATE_WRITERS),
        // Public: the booking page's search and request, whoever sends them.
        row(
            M::GET,
            "/api/hotels/{hotelId}/availability",
            format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(5), day(6)),
            None,
            EVERYONE,
        ),
        row(
            M::POST,
            "/api/hotels/{hotelId}/book-reservation",
            format!("/api/hotels/{hotel}/book-reservation"),
            Some(booking),
            EVERYONE,
        ),
        // Guests and reservations.
        row(M::GET, "/api/guests", format!("/api/guests?hotelId={hotel}"), None, GUEST_READERS),
        row(
            M::POST,
            "/api/guests",
            "/api/guests".into(),
            Some(json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})),
            FRONT_OFFICE,
        ),
        row(M::GET, "/api/guests/{guestId}", format!("/api/guests/{}", e.guest), None, GUEST_READERS),
        row(
            M::PUT,
            "/api/guests/{guestId}",
            format!("/api/guests/{}", e.guest),
            Some(json!({"phone": "+48 22 123 45 67"})),
            FRONT_OFFICE,
        ),
        row(M::GET, "/api/reservations", format!("/api/reservations?hotelId={hotel}"), None, RESERVATION_READERS),
        row(M::POST, "/api/reservations", "/api/reservations".into(), Some(stay), FRONT_OFFICE),
        row(
            M::GET,
            "/api/reservations/{reservationId}",
            format!("/api/reservations/{}", e.stay),
            None,
            RESERVATION_READERS,
        ),
        row(
            M::PUT,
            "/api/reservations/{reservationId}",
            format!("/api/reservations/{}", e.stay),
            Some(json!({"notes": "Late arrival"})),
            FRONT_OFFICE,
        ),
        // Approving a stay that is already confirmed is 409 for whoever may approve; the rest are refused first.
        row(
            M::POST,
            "/api/reservations/{reservationId}/approve",
            format!("/api/reservations/{}/approve", e.stay),
            None,
            FRONT_OFFICE,
        ),
        // The folio.
        row(M::GET, "/api/folios/{folioId}", format!("/api/folios/{folio}"), None, FOLIO_READERS),
        row(
            M::POST,
            "/api/folios/{folioId}/charges",
            format!("/api/folios/{folio}/charges"),
            Some(charge),
            FRONT_OFFICE,
        ),
        row(
            M::POST,
            "/api/folios/{folioId}/charges/{lineId}/allowances",
            format!("/api/folios/{folio}/charges/{}/allowances", c.charge),
            Some(json!({"amount": 1, "reason": "Goodwill"})),
            CORRECTORS,
        ),
        row(
            M::POST,
            "/api/folios/{folioId}/payments",
            format!("/api/folios/{folio}/payments"),
            Some(json!({"method": "CARD", "amount": 1})),
            FRONT_OFFICE,
        ),
        row(
            M::POST,
            "/api/folios/{folioId}/payments/{lineId}/refunds",
            format!("/api/folios/{folio}/payments/{}/refunds", c.payment),
            Some(json!({"amount": 1, "reason": "Overpaid"})),
            CONFIGURERS,
        ),
        row(
            M::POST,
            "/api/folios/{folioId}/fees",
            format!("/api/folios/{folio}/fees"),
            Some(json!({"kind": "NO_SHOW", "amount": 100})),
            FRONT_OFFICE,
        ),
        row(
            M::PUT,
            "/api/folios/{folioId}/cityTaxExemption",
            format!("/api/folios/{folio}/cityTaxExemption"),
            Some(json!({"reason": "Business travel"})),
            FRONT_OFFICE,
        ),
        row(
            M::DELETE,
            "/api/folios/{folioId}/cityTaxExemption",
            format!("/api/folios/{folio}/cityTaxExemption"),
            None,
            FRONT_OFFICE,
        ),
        // Invoices and reports.
        row(
            M::GET,
            "/api/folios/{folioId}/invoice-preview",
            format!("/api/folios/{folio}/invoice-preview"),
            None,
            FOLIO_READERS,
        ),
        row(
            M::GET,
            "/api/folios/{folioId}/invoices",
            format!("/api/folios/{}/invoices", e.invoiced_folio),
            None,
            FOLIO_READERS,
        ),
        // Issuing again what is issued is 422 for whoever may issue.
        row(
            M::POST,
            "/api/folios/{folioId}/invoices",
            format!("/api/folios/{}/invoices", e.invoiced_folio),
            Some(json!({})),
            INVOICERS,
        ),
        row(M::GET, "/api/invoices", format!("/api/invoices?hotelId={hotel}"), None, FOLIO_READERS),
        row(M::GET, "/api/invoices/{invoiceId}", format!("/api/invoices/{}", e.invoice), None, FOLIO_READERS),
        row(M::GET, "/api/invoices/{invoiceId}/pdf", format!("/api/invoices/{}/pdf", e.invoice), None, FOLIO_READERS),
        row(M::POST, "/api/invoices/{invoiceId}/send", format!("/api/invoices/{}/send", e.invoice), None, INVOICERS),
        row(
            M::GET,
            "/api/reports/revenue",
            format!("/api/reports/revenue?hotelId={hotel}&dateFrom={}&dateTo={}", day(0), day(1)),
            None,
            FOLIO_READERS,
        ),
        row(
            M::GET,
            "/api/reports/invoices",
            format!("/api/reports/invoices?hotelId={hotel}&dateFrom={}&dateTo={}", day(0), day(1)),
            None,
            FOLIO_READERS,
        ),
        // What ends or removes records, last.
        row(
            M::POST,
            "/api/invoices/{invoiceId}/cancel",
            format!("/api/invoices/{}/cancel", e.invoice),
            Some(json!({"reason": "Wrong address"})),
            CORRECTORS,
        ),
        row(
            M::POST,
            "/api/guests/{guestId}/anonymise",
            format!("/api/guests/{}/anonymise", e.forgotten_guest),
            None,
            FRONT_OFFICE,
        ),
        row(M::DELETE, "/api/guests/{guestId}", format!("/api/guests/{}", e.spare_guest), None, FRONT_OFFICE),
        row(
            M::DELETE,
            "/api/reservations/{reservationId}",
            format!("/api/reservations/{}", e.spare_stay),
            None,
            FRONT_OFFICE,
        ),
        row(M::DELETE, "/api/ratePlans/{ratePlanId}", format!("/api/ratePlans/{}", e.spare_plan), None, RATE_WRITERS),
        row(M::DELETE, "/api/rooms/{roomId}", format!("/api/rooms/{}", e.spare_room), None, CONFIGURERS),
        row(
            M::DELETE,
            "/api/roomTypes/{roomTypeId}",
            format!("/api/roomTypes/{}", e.spare_room_type),
            None,
            CONFIGURERS,
        ),
        row(
            M::DELETE,
            "/api/webhooksubscriptions/{webhookSubscriptionId}",
            format!("/api/webhooksubscriptions/{}", e.spare_subscription),
            None,
            OWNERS,
        ),
        row(M::DELETE, "/api/apiKeys/{apiKeyId}", format!("/api/apiKeys/{}", e.spare_key), None, OWNERS),
        row(M::POST, "/api/auth/logout", "/api/auth/logout".into(), None, EVERYONE),
    ]
}

/// The operations of the router, as `METHOD /path/{param}`.
fn operations_of_the_router() -> BTreeSet<String> {
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).expect("document");
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in ["get", "put", "post", "delete", "patch", "head", "options", "trace"] {
            if item.get(method).is_some() {
                found.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    found
}

/// Whether `path` (with ids and a query) is an instance of `template` (`/api/rooms/{roomId}`).
fn instance_of(path: &str, template: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    let (given, named): (Vec<&str>, Vec<&str>) = (path.split('/').collect(), template.split('/').collect());
    given.len() == named.len() && given.iter().zip(&named).all(|(g, n)| (n.starts_with('{') && !g.is_empty()) || g == n)
}

async fn each_role_against_every_operation_of_the_api(s: TestServer) {
    let org = s.org("Acme").await;
    let mut checked = BTreeSet::new();
    for &role in EVERYONE {
        let estate = estate(&s, &org).await;
        let auth = operator(&s, &org, role, None).await;
        let rows = table(&estate);
        if role == Owner {
            let listed: BTreeSet<String> = rows.iter().map(|r| format!("{} {}", r.method, r.operation)).collect();
            let routed = operations_of_the_router();
            let unlisted: Vec<&String> = routed.difference(&listed).collect();
            let unrouted: Vec<&String> = listed.difference(&routed).collect();
            assert!(unlisted.is_empty(), "operations of the router without a row in the role table: {unlisted:?}");
            assert!(unrouted.is_empty(), "rows for operations the router does not have: {unrouted:?}");
        }
        for Row { method, operation, path, body, allowed } in rows {
            assert!(instance_of(&path, operation), "{path} is not an instance of {operation}");
            let what = format!("{} as {method} {path}", role.label());
            let entries = s.count("audit_entries").await;
            let answer = s.request(method.clone(), &path, &auth, body).await;
            let status = answer.status.as_u16();
            if allowed.contains(&role) {
                let unauthenticated = status == 401 && operation != "/api/auth/login";
                assert!(
                    ![403, 404].contains(&status) && !unauthenticated && status < 500,
                    "{what}: allowed, but {status} {}",
                    answer.body
                );
            } else {
                assert_eq!(status, 403, "{what}: refused, but {status} {}", answer.body);
                let detail = answer.body["detail"].as_str().unwrap_or_default();
                assert!(detail.contains("it takes the role"), "{what}: told which role it takes: {detail}");
                assert_eq!(s.count("audit_entries").await, entries, "{what}: refused, and nothing changed");
            }
            checked.insert(format!("{method} {operation}"));
        }
        // Signed out by the last row: the token is gone.
        s.get("/api/auth/me", &auth).await.expect(401);
    }
    assert_eq!(checked, operations_of_the_router(), "every operation was asked of every role");
    s.stop().await;
}
