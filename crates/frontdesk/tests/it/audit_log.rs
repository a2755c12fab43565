//! The audit log (docs/audit-log.md): every committed write leaves its entries, written by the one door for writes
//! in the same transaction, with who made it and the fields before and after; a refused write leaves none; a bulk
//! rate change is one entry; a guest's contact details are listed as changed without their values; the tables
//! refuse UPDATE and early DELETE on both engines; entries read the same before and after they are filed (SQLite
//! writes them unindexed first); reading takes `audit:read` and keeps to the caller's hotel.

use crate::common::browser::{Browser, PHONE};
use crate::common::{day, Auth, Org, TestServer, PASSWORD};
use frontdesk::domain::Scope;
use frontdesk::model::audit::AuditEntry;
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines!(
    a_reservations_history_reads_in_order_with_who_did_each,
    a_refused_write_leaves_no_entry_and_a_committed_one_one_change,
    a_bulk_rate_change_is_one_entry,
    a_guests_contact_details_are_changed_without_their_values,
    the_log_refuses_update_and_early_delete,
    the_newest_entries_are_filed_by_the_job_and_read_the_same,
    who_may_read_the_log_and_what_they_see,
    bad_filters_are_refused_with_their_field,
);
on_both_engines_configured!(the_desk_reads_a_stays_history_and_the_hotels_log);

/// A hotel with two rooms of one type and a plan: (hotel, room type, plan, rooms).
async fn small_hotel(s: &TestServer, org: &Org) -> (String, String, String, Vec<String>) {
    let hotel = s.hotel(org, "Harbour").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut rooms = Vec::new();
    for name in ["101", "102"] {
        rooms.push(s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": name})).await);
    }
    let plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "BAR"})).await;
    (hotel, room_type, plan, rooms)
}

async fn entries(s: &TestServer, auth: &Auth, query: &str) -> Vec<AuditEntry> {
    let answer = s.get(&format!("/api/auditLog?{query}"), auth).await.expect(200);
    serde_json::from_value(answer.body).expect("audit entries")
}

fn field<'a>(entry: &'a AuditEntry, name: &str) -> Option<&'a frontdesk::model::audit::FieldChange> {
    entry.fields.iter().find(|f| f.field == name)
}

async fn a_reservations_history_reads_in_order_with_who_did_each(s: TestServer) {
    let org = s.org("Acme").await;
    let h = small_hotel(&s, &org).await;
    let key = Auth::Key(s.key(&org, &[Scope::ReservationsWrite, Scope::FoliosWrite], None).await);
    let room =
        |room_id: &str| json!({"roomTypeId": h.1, "ratePlanId": h.2, "price": 20_000, "adults": 2, "roomId": room_id});
    let body = json!({"hotelId": h.0, "checkInDate": day(0), "checkOutDate": day(2), "rooms": [room(&h.3[0])],
                      "notes": "Allergic to feathers"});
    let created = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let id = created["id"].as_str().unwrap().to_string();
    let folio = created["folio"]["id"].as_str().unwrap().to_string();
    // Moved to the other room by the channel manager's key, checked in at the desk, charged by the till, out.
    let line = created["rooms"][0]["id"].clone();
    s.put(&format!("/api/reservations/{id}"), &key, json!({"rooms": [{"id": line, "roomId": h.3[1]}]}))
        .await
        .expect(200);
    // Filed half-way (SQLite writes entries unindexed first): the history reads across both tables, in order.
    frontdesk::store::audit_log::file_recent(&s.db).await.unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    s.post(
        &format!("/api/folios/{folio}/charges"),
        &key,
        json!({"description": "Minibar", "unitPrice": 450, "quantity": 1, "category": "OTHER"}),
    )
    .await
    .expect(200);
    s.put(
        &format!("/api/reservations/{id}"),
        &org.auth(),
        json!({"status": "CHECKED_OUT", "onAccountReason": "Company pays"}),
    )
    .await
    .expect(200);

    let history = entries(&s, &org.auth(), &format!("recordId={id}")).await;
    let steps: Vec<(&str, &str, Option<&str>)> =
        history.iter().map(|e| (e.action.as_str(), e.actor.kind.as_str(), e.actor.name.as_deref())).collect();
    assert_eq!(
        steps,
        [
            ("created", "operator", Some("Test Operator")),
            ("updated", "api_key", Some("test key")),
            ("updated", "operator", Some("Test Operator")),
            ("updated", "operator", Some("Test Operator")),
        ],
        "{history:#?}"
    );
    assert!(history.windows(2).all(|w| w[0].id < w[1].id && w[0].at <= w[1].at), "in the order written");
    assert!(history.iter().all(|e| e.record_kind == "reservation" && e.hotel_id.as_deref() == Some(h.0.as_str())));
    let status = |e: &AuditEntry| field(e, "status").map(|f| (f.before.clone(), f.after.clone()));
    assert_eq!(status(&history[2]), Some((Some(json!("CONFIRMED")), Some(json!("CHECKED_IN")))));
    assert_eq!(status(&history[3]), Some((Some(json!("CHECKED_IN")), Some(json!("CHECKED_OUT")))));
    let moved: Vec<&str> = history[1].fields.iter().map(|f| f.field.as_str()).collect();
    assert!(moved.iter().any(|f| f.starts_with("rooms")), "the move names the rooms: {moved:?}");
    assert!(status(&history[1]).is_none(), "a move changes no status");
    // The notes are a guest's words: listed, never kept.
    let notes = field(&history[0], "notes").expect("notes listed");
    assert!(notes.redacted && notes.after.is_none());
    assert!(!serde_json::to_string(&history).unwrap().contains("feathers"));

    // The folio's history: the charge by the key, then what the check-out posted.
    let folio_history = entries(&s, &org.auth(), &format!("recordId={folio}")).await;
    assert!(!folio_history.is_empty());
    let charge = folio_history.iter().find(|e| e.actor.kind == "api_key").expect("the charge's entry");
    assert_eq!((charge.record_kind.as_str(), charge.action.as_str()), ("folio", "updated"));
    let added = field(charge, "addedLines").and_then(|f| f.after.clone()).expect("the added line");
    assert_eq!(added, json!(["CHARGE Minibar ×1 EUR 4.50"]));
    // One change, one change id and one time: every entry of the check-out's change says so.
    let check_out = &history[3];
    let same_change: Vec<AuditEntry> =
        entries(&s, &org.auth(), "").await.into_iter().filter(|e| e.change_id == check_out.change_id).collect();
    assert!(same_change.iter().all(|e| e.at == check_out.at && e.actor == check_out.actor), "{same_change:#?}");
    // By actor: the key's two changes.
    let key_id = history[1].actor.id.clone().unwrap();
    let by_key = entries(&s, &org.auth(), &format!("actorId={key_id}")).await;
    assert!(by_key.len() >= 2 && by_key.iter().all(|e| e.actor.kind == "api_key"));
    s.stop().await;
}

async fn a_refused_write_leaves_no_entry_and_a_committed_one_one_change(s: TestServer) {
    let org = s.org("Acme").await;
    let h = small_hotel(&s, &org).await;
    let before = s.count("audit_entries").await;
    // Refused: a stay that ends before it starts (400), a room type of no hotel (404), a room name taken (409).
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": h.0, "checkInDate": day(3), "checkOutDate": day(1),
               "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2, "price": 1, "adults": 1}]}),
    )
    .await
    .expect(400);
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": "00000000-0000-7000-8000-000000000000", "name": "9"}))
        .await
        .expect(404);
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": h.1, "name": "101"})).await.expect(409);
    assert_eq!(s.count("audit_entries").await, before, "nothing refused is logged");

    // Committed: one room, one entry, one change.
    let room = s.create("/api/rooms", &org.auth(), json!({"roomTypeId": h.1, "name": "103"})).await;
    assert_eq!(s.count("audit_entries").await, before + 1);
    let logged = entries(&s, &org.auth(), &format!("recordId={room}")).await;
    assert_eq!(logged.len(), 1);
    assert_eq!((logged[0].record_kind.as_str(), logged[0].action.as_str()), ("room", "created"));
    assert_eq!(field(&logged[0], "name").and_then(|f| f.after.clone()), Some(json!("103")));
    // A delete lists what the record held.
    s.delete(&format!("/api/rooms/{room}"), &org.auth()).await.expect(200);
    let logged = entries(&s, &org.auth(), &format!("recordId={room}")).await;
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[1].action, "deleted");
    assert_eq!(field(&logged[1], "name").and_then(|f| f.before.clone()), Some(json!("103")));
    assert!(logged[1].fields.iter().all(|f| f.after.is_none()));
    s.stop().await;
}

async fn a_bulk_rate_change_is_one_entry(s: TestServer) {
    let org = s.org("Acme").await;
    let h = small_hotel(&s, &org).await;
    let values: Vec<Value> = (0..300).map(|d| json!({"ratePlanId": h.2, "date": day(d), "price": 10_000})).collect();
    let before = s.count("audit_entries").await;
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    assert_eq!(s.count("audit_entries").await, before + 1, "300 nights, one entry");
    let logged = entries(&s, &org.auth(), &format!("recordId={}", h.2)).await;
    let bulk = logged.iter().find(|e| e.record_kind == "daily_rate").expect("the batch's entry");
    let summary = bulk.summary.as_ref().expect("a summary");
    assert_eq!((summary.count, summary.created), (300, 300));
    assert_eq!(summary.parents, std::slice::from_ref(&h.2));
    assert_eq!(summary.date_from.map(|d| d.to_string()), Some(day(0)));
    assert_eq!(summary.date_to.map(|d| d.to_string()), Some(day(299)));
    assert!(summary.fields.contains(&"price".to_string()));
    assert_eq!(bulk.hotel_id.as_deref(), Some(h.0.as_str()), "the plan's hotel");
    assert_eq!(bulk.action, "created");
    // Closing ten of them: one more entry, naming only what changed.
    let values: Vec<Value> =
        (0..10).map(|d| json!({"ratePlanId": h.2, "date": day(d), "price": 10_000, "stopSell": true})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let logged = entries(&s, &org.auth(), &format!("recordId={}", h.2)).await;
    let closing = logged.last().unwrap().summary.clone().unwrap();
    assert_eq!((closing.count, closing.created), (10, 0));
    assert_eq!(closing.fields, ["stopSell"]);
    s.stop().await;
}

async fn a_guests_contact_details_are_changed_without_their_values(s: TestServer) {
    let org = s.org("Acme").await;
    let guest = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000"}),
        )
        .await;
    s.put(
        &format!("/api/guests/{guest}"),
        &org.auth(),
        json!({"firstName": "Ada", "lastName": "King", "email": "countess@example.org"}),
    )
    .await
    .expect(200);
    let logged = entries(&s, &org.auth(), &format!("recordId={guest}")).await;
    assert_eq!(logged.len(), 2);
    let email = field(&logged[1], "email").expect("the e-mail is listed as changed");
    assert!(email.redacted && email.before.is_none() && email.after.is_none());
    let name = field(&logged[1], "lastName").expect("the name change");
    assert_eq!((name.before.clone(), name.after.clone()), (Some(json!("Lovelace")), Some(json!("King"))));
    // No contact value anywhere in the table, whatever reads it.
    let mut conn = s.db.read().await.unwrap();
    let rows = frontdesk::store::query("SELECT fields FROM audit_entries").fetch_all(&mut conn).await.unwrap();
    for row in rows {
        let text: String = row.try_get("fields").unwrap();
        assert!(!["ada@example.com", "countess@example.org", "7946"].iter().any(|v| text.contains(v)), "{text}");
    }
    drop(conn);
    s.stop().await;
}

async fn the_log_refuses_update_and_early_delete(s: TestServer) {
    let org = s.org("Acme").await;
    s.hotel(&org, "Harbour").await;
    frontdesk::store::audit_log::file_recent(&s.db).await.unwrap();
    // Entries in the log and among the newest, not yet filed: on SQLite a write leaves one there; on PostgreSQL,
    // whose writes file their own entries, one is copied there under a new id, so that both tables' triggers are
    // tried on both engines.
    match s.db.engine() {
        Engine::Sqlite => {
            s.hotel(&org, "Hill").await;
        }
        Engine::Postgres => {
            let mut tx = s.db.begin_write().await.unwrap();
            frontdesk::store::query(
                "INSERT INTO audit_log_recent SELECT gen_random_uuid(), organization_id, hotel_id, change_id, at, \
                 keep_until, actor_kind, actor_id, actor_name, actor_role, actor_address, record_kind, record_id, \
                 action, fields, summary FROM audit_log LIMIT 1",
            )
            .execute(tx.conn())
            .await
            .unwrap();
            tx.commit().await.unwrap();
        }
    }
    assert!(s.count("audit_log").await > 0 && s.count("audit_log_recent").await > 0);
    let before = s.count("audit_entries").await;
    for statement in [
        "UPDATE audit_log SET action = 'deleted'",
        "DELETE FROM audit_log",
        "UPDATE audit_log_recent SET action = 'deleted'",
        "DELETE FROM audit_log_recent",
    ] {
        let mut tx = s.db.begin_write().await.unwrap();
        let refused = frontdesk::store::query(statement).execute(tx.conn()).await;
        let message = format!("{:?}", refused.expect_err("refused by the database"));
        assert!(message.contains("append-only"), "{statement}: {message}");
        drop(tx);
    }
    assert_eq!(s.count("audit_entries").await, before);
    // An entry whose retention has ended is pruned once filed; the others stay.
    let mut entry = entries(&s, &org.auth(), "").await.remove(0);
    entry.id = frontdesk::store::new_id();
    let mut tx = s.db.begin_write().await.unwrap();
    let past = chrono::Utc::now() - chrono::TimeDelta::days(1);
    frontdesk::store::audit_log::insert(tx.conn(), &[(org.id.clone(), entry)], past).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(s.count("audit_entries").await, before + 1);
    frontdesk::store::audit_log::file_recent(&s.db).await.unwrap();
    assert_eq!(s.count("audit_log_recent").await, 0, "filing empties the newest entries");
    let pruned = frontdesk::domain::audit::retention::prune(&s.db, chrono::Utc::now()).await.unwrap();
    assert_eq!(pruned, 1);
    assert_eq!(s.count("audit_entries").await, before);
    s.stop().await;
}

async fn the_newest_entries_are_filed_by_the_job_and_read_the_same(s: TestServer) {
    let org = s.org("Acme").await;
    small_hotel(&s, &org).await;
    let read = serde_json::to_value(entries(&s, &org.auth(), "").await).unwrap();
    let total = s.count("audit_entries").await;
    assert!(total > 0);
    match s.db.engine() {
        Engine::Sqlite => assert_eq!(s.count("audit_log_recent").await, total, "SQLite's writes leave them unfiled"),
        Engine::Postgres => assert_eq!(s.count("audit_log_recent").await, 0, "PostgreSQL's writes file their own"),
    }
    let job = frontdesk::worker::audit_filing::spawn(s.db.clone(), std::time::Duration::from_millis(20));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.count("audit_log_recent").await > 0 {
        assert!(std::time::Instant::now() < deadline, "the job files the newest entries");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    job.stop().await;
    assert_eq!(s.count("audit_log").await, total);
    let after = serde_json::to_value(entries(&s, &org.auth(), "").await).unwrap();
    assert_eq!(after, read, "the same entries, in the same order");

    // A backlog of more than a batch (5,000) is filed in one call, a batch per transaction.
    let entry = entries(&s, &org.auth(), "").await.remove(0);
    let backlog: Vec<(String, AuditEntry)> =
        (0..12_000).map(|_| (org.id.clone(), AuditEntry { id: frontdesk::store::new_id(), ..entry.clone() })).collect();
    let mut tx = s.db.begin_write().await.unwrap();
    let keep_until = chrono::Utc::now() + chrono::TimeDelta::days(1);
    frontdesk::store::audit_log::insert(tx.conn(), &backlog, keep_until).await.unwrap();
    tx.commit().await.unwrap();
    let filed = frontdesk::store::audit_log::file_recent(&s.db).await.unwrap();
    assert_eq!(filed, if s.db.engine() == Engine::Sqlite { 12_000 } else { 0 });
    assert_eq!((s.count("audit_log").await, s.count("audit_log_recent").await), (total + 12_000, 0));
    s.stop().await;
}

async fn who_may_read_the_log_and_what_they_see(s: TestServer) {
    let org = s.org("Acme").await;
    let a = small_hotel(&s, &org).await;
    let b = s.hotel(&org, "Hill").await;
    let other = s.org("Rival").await;
    let theirs = s.hotel(&other, "Theirs").await;

    let reader = Auth::Key(s.key(&org, &[Scope::ReservationsRead], None).await);
    s.get("/api/auditLog", &reader).await.expect(403);
    let pinned = Auth::Key(s.key(&org, &[Scope::AuditRead], Some(&a.0)).await);
    let seen = entries(&s, &pinned, "").await;
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|e| e.hotel_id.as_deref() == Some(a.0.as_str())), "only the pinned hotel's");
    s.get(&format!("/api/auditLog?hotelId={b}"), &pinned).await.expect(403);
    // The organization's log never holds another organization's entries; naming their hotel is 404.
    let all = entries(&s, &org.auth(), "").await;
    assert!(all.iter().all(|e| e.hotel_id.as_deref() != Some(theirs.as_str())));
    assert!(all.iter().any(|e| e.hotel_id.as_deref() == Some(b.as_str())));
    s.get(&format!("/api/auditLog?hotelId={theirs}"), &org.auth()).await.expect(404);
    assert!(entries(&s, &org.auth(), &format!("recordId={theirs}")).await.is_empty());
    // Paged like the other lists, newest first when asked.
    let answer = s.get("/api/auditLog?limit=2&sortDirection=DESC", &org.auth()).await.expect(200);
    let total: usize = answer.header("x-total-count").unwrap().parse().unwrap();
    assert_eq!(total, all.len());
    let page: Vec<AuditEntry> = serde_json::from_value(answer.body).unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].id, all.last().unwrap().id);
    // Today's entries, by day.
    let today = chrono::Utc::now().date_naive();
    assert_eq!(entries(&s, &org.auth(), &format!("dateFrom={today}&dateTo={today}")).await.len(), all.len());
    let yesterday = today.pred_opt().unwrap();
    assert!(entries(&s, &org.auth(), &format!("dateTo={yesterday}")).await.is_empty());
    // No route writes the log.
    for method in [reqwest::Method::POST, reqwest::Method::PUT, reqwest::Method::DELETE] {
        let status = s.request(method, "/api/auditLog", &org.auth(), Some(json!({}))).await.status.as_u16();
        assert_eq!(status, 405);
    }
    s.stop().await;
}

async fn bad_filters_are_refused_with_their_field(s: TestServer) {
    let org = s.org("Acme").await;
    for (query, field) in [
        ("dateFrom=2026-13-01", "dateFrom"),
        ("dateTo=yesterday", "dateTo"),
        ("dateFrom=2026-05-02&dateTo=2026-05-01", "dateTo"),
        ("recordId=", "recordId"),
        ("sortField=at", "sortField"),
    ] {
        let answer = s.get(&format!("/api/auditLog?{query}"), &org.auth()).await.expect(400);
        assert!(answer.body.to_string().contains(field), "{query}: {}", answer.body);
    }
    s.stop().await;
}

async fn the_desk_reads_a_stays_history_and_the_hotels_log(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = small_hotel(&s, &org).await;
    let key = Auth::Key(s.key(&org, &[Scope::ReservationsWrite], None).await);
    let room = json!({"roomTypeId": h.1, "ratePlanId": h.2, "price": 20_000, "adults": 2, "roomId": h.3[0]});
    let body = json!({"hotelId": h.0, "checkInDate": day(0), "checkOutDate": day(2), "rooms": [room]});
    let id = s.create("/api/reservations", &org.auth(), body).await;
    s.put(&format!("/api/reservations/{id}"), &key, json!({"status": "CHECKED_IN"})).await.expect(200);
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    // The stay's page: its history, folded, says who did what.
    let stay_page = format!("/hotels/{}/reservations/{id}", h.0);
    b.goto(&stay_page).await;
    b.wait_for_text("Who changed what").await;
    b.click_text("summary", "Who changed what").await;
    b.wait_for_text("status: CONFIRMED → CHECKED_IN").await;
    let text = b.page_text().await;
    assert!(text.contains("Reservation created") && text.contains("by Test Operator (Owner)"), "{text}");
    assert!(text.contains("Reservation updated") && text.contains("by API key “test key”"), "{text}");
    b.assert_page_ok("a reservation with its history").await;
    // The hotel's log, reached from the reports, and the organization's.
    b.goto(&format!("/hotels/{}/reports", h.0)).await;
    b.click_text("a", "Audit log").await;
    b.wait_for_text("Who changed what at Harbour").await;
    let text = b.page_text().await;
    assert!(text.contains("Room created") && text.contains("Rate plan created"), "{text}");
    b.assert_page_ok("the audit log").await;
    if engine == Engine::Sqlite {
        b.screenshot("audit-log").await;
    }
    b.select("#a-scope", "organization").await;
    b.click_text("button", "Show").await;
    b.wait_for_text("in the whole organization").await;
    assert!(b.page_text().await.contains("Hotel created"));
    // A day with nothing: the filter says so; a day the wrong way round: the field says why.
    b.goto(&format!("/hotels/{}/audit-log?from=2020-01-02&to=2020-01-01", h.0)).await;
    b.wait_for_text("must not be before dateFrom").await;
    b.close().await;
    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    phone.goto(&stay_page).await;
    phone.click_text("summary", "Who changed what").await;
    phone.wait_for_text("status: CONFIRMED → CHECKED_IN").await;
    phone.assert_page_ok("a reservation's history on a phone").await;
    if engine == Engine::Sqlite {
        phone.screenshot("reservation-history-phone").await;
    }
    phone.goto(&format!("/hotels/{}/audit-log", h.0)).await;
    phone.wait_for_text("Who changed what").await;
    phone.assert_page_ok("the audit log on a phone").await;
    phone.close().await;
}
