//! The front desk's rules through the REST API and in the dashboard (headless Chromium), on both engines: a room
//! holds one stay at a time (sequential and racing check-ins), check-in on the stay's dates only, housekeeping after
//! check-out, early departures that give their nights back and take their charges off the folio, undoing a
//! check-out, and reservation references. The SQLite runs save the housekeeping page (phone) and the check-out
//! confirmation to `docs/screenshots/`.

use crate::common::browser::{Browser, PHONE};
use crate::common::{day, Auth, Org, TestServer, PASSWORD};
use frontdesk::domain::Actor;
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines!(
    a_room_holds_one_stay_at_a_time,
    racing_check_ins_for_one_room_let_one_win,
    check_in_happens_on_the_stays_dates,
    early_departures_release_their_nights_and_charges,
    a_check_out_is_undone_the_same_day_while_the_room_is_free,
    housekeeping_changes_record_who_and_when,
    references_are_short_unique_and_searchable,
    older_rows_get_references_and_phone_keys_when_migrated,
    a_retried_create_makes_one_reservation,
);

on_both_engines_configured!(
    the_desk_checks_out_after_a_confirmation_and_can_undo_it,
    housekeeping_works_from_a_phone,
    checking_in_to_a_dirty_room_asks_first,
    the_desk_finds_stays_by_reference_phone_and_name,
    a_new_guest_with_a_known_email_is_offered_instead,
    the_new_reservation_form_makes_one_reservation_however_often_it_is_sent,
);

async fn signed_in(s: &TestServer, org: &Org, size: (u32, u32)) -> Option<Browser> {
    let b = Browser::start_sized(&s.base, size).await?;
    b.sign_in(&org.operator_email, PASSWORD).await;
    Some(b)
}

/// Whether the page is no wider than the window: nothing scrolls sideways.
async fn fits_the_window(b: &Browser) -> bool {
    let widths = b
        .client
        .execute("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];", vec![])
        .await
        .unwrap();
    widths[0] == widths[1]
}

/// A hotel in UTC (so that its "today" is the tests' `day(0)`) with a room type of `rooms` rooms and a rate plan
/// priced 10,000 a night for 60 nights: (hotel, room type, rate plan, room ids).
async fn hotel(s: &TestServer, org: &Org, rooms: usize) -> (String, String, String, Vec<String>) {
    let hotel =
        s.create("/api/hotels", &org.auth(), json!({"name": "Sea", "timezone": "UTC", "currency": "EUR"})).await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut ids = Vec::new();
    for n in 0..rooms {
        ids.push(
            s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await,
        );
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..60).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type, plan, ids)
}

/// A confirmed stay of nights `[from, to)` (days from today), priced by the rate plan, optionally with a room.
async fn stay(
    s: &TestServer,
    org: &Org,
    h: &(String, String, String, Vec<String>),
    from: u64,
    to: u64,
    room: Option<&str>,
) -> Value {
    let (hotel, room_type, plan, _) = h;
    let body = json!({"hotelId": hotel, "checkInDate": day(from), "checkOutDate": day(to),
                      "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "roomId": room}]});
    s.post("/api/reservations", &org.auth(), body).await.expect(200).body
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

async fn move_to(s: &TestServer, org: &Org, reservation: &str, status: &str) -> crate::common::Answer {
    s.put(&format!("/api/reservations/{reservation}"), &org.auth(), json!({"status": status})).await
}

async fn check_in_to(s: &TestServer, org: &Org, reservation: &Value, room: &str) -> crate::common::Answer {
    let body = json!({"status": "CHECKED_IN", "rooms": [{"id": reservation["rooms"][0]["id"], "roomId": room}]});
    s.put(&format!("/api/reservations/{}", id(reservation)), &org.auth(), body).await
}

/// Moves a stay's dates by `days` (negative: into the past) behind the service's back: the only way to have a guest
/// who stays past the departure date, or a stay that never arrived, without waiting for the calendar.
async fn shift_dates(s: &TestServer, reservation: &str, from: i64, to: i64) {
    let date = |offset: i64| (chrono::Utc::now().date_naive() + chrono::TimeDelta::days(offset)).to_string();
    let mut conn = s.db.read().await.unwrap();
    for table in ["reservations", "reservation_rooms"] {
        let key = if table == "reservations" { "id" } else { "reservation_id" };
        sqlx::query(&format!("UPDATE {table} SET check_in_date = $1, check_out_date = $2 WHERE {key} = $3"))
            .bind(date(from))
            .bind(date(to))
            .bind(reservation)
            .execute(&mut *conn)
            .await
            .unwrap();
    }
}

fn detail(answer: &crate::common::Answer) -> String {
    answer.body["detail"].as_str().unwrap_or_default().to_string()
}

async fn a_room_holds_one_stay_at_a_time(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 2).await;
    let (room_101, room_102) = (h.3[0].clone(), h.3[1].clone());
    // A guest checked in to 101 who stays past the departure date: still in the room.
    let overstay = stay(&s, &org, &h, 0, 2, Some(&room_101)).await;
    move_to(&s, &org, &id(&overstay), "CHECKED_IN").await.expect(200);
    shift_dates(&s, &id(&overstay), -3, -1).await;

    // Another stay for tonight can neither be given room 101 nor checked in to it.
    let refused = s
        .post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": h.0, "checkInDate": day(0), "checkOutDate": day(2),
            "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2, "roomId": room_101}]}),
        )
        .await
        .expect(409);
    assert!(detail(&refused).contains("room 101 is occupied"), "{}", detail(&refused));
    assert!(detail(&refused).contains(overstay["reference"].as_str().unwrap()), "names the stay in the room");
    let arriving = stay(&s, &org, &h, 0, 2, None).await;
    let refused = check_in_to(&s, &org, &arriving, &room_101).await.expect(409);
    assert!(detail(&refused).contains("occupied"), "{}", detail(&refused));
    // Nothing was half-written: the arrival is still confirmed and unassigned.
    let unchanged = s.get(&format!("/api/reservations/{}", id(&arriving)), &org.auth()).await.expect(200);
    assert_eq!(
        (unchanged.body["status"].clone(), unchanged.body["rooms"][0]["roomId"].clone()),
        (json!("CONFIRMED"), Value::Null)
    );

    // A room out of order is refused by name, with 409.
    s.put(&format!("/api/rooms/{room_102}"), &org.auth(), json!({"housekeepingStatus": "OUT_OF_ORDER"}))
        .await
        .expect(200);
    let refused = check_in_to(&s, &org, &arriving, &room_102).await.expect(409);
    assert!(detail(&refused).contains("room 102 is out of order"), "{}", detail(&refused));

    // Once the overstaying guest is checked out (after the departure date: the dates stay as booked), the room is
    // free; it is DIRTY, which does not stop a check-in.
    let out = move_to(&s, &org, &id(&overstay), "CHECKED_OUT").await.expect(200);
    assert_eq!(
        out.body["checkOutDate"],
        json!((chrono::Utc::now().date_naive() - chrono::TimeDelta::days(1)).to_string())
    );
    let room = s.get(&format!("/api/rooms/{room_101}"), &org.auth()).await.expect(200);
    assert_eq!(room.body["housekeepingStatus"], json!("DIRTY"));
    let checked_in = check_in_to(&s, &org, &arriving, &room_101).await.expect(200);
    assert_eq!(checked_in.body["status"], json!("CHECKED_IN"));
    // And now 101 holds this stay: checking in anyone else is refused again.
    s.put(&format!("/api/rooms/{room_102}"), &org.auth(), json!({"housekeepingStatus": "DIRTY"})).await.expect(200);
    let second = stay(&s, &org, &h, 0, 1, None).await;
    check_in_to(&s, &org, &second, &room_101).await.expect(409);
    s.delete(&format!("/api/reservations/{}", id(&second)), &org.auth()).await.expect(200);

    // A guest due to leave today is still in room 102: tonight's arrival can be given the room in the morning,
    // but is checked in only once the room is free.
    let leaving = stay(&s, &org, &h, 0, 1, None).await;
    check_in_to(&s, &org, &leaving, &room_102).await.expect(200);
    shift_dates(&s, &id(&leaving), -2, 0).await;
    let tonight = stay(&s, &org, &h, 0, 1, Some(&room_102)).await;
    let refused = move_to(&s, &org, &id(&tonight), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains("room 102 is occupied"), "{}", detail(&refused));
    move_to(&s, &org, &id(&leaving), "CHECKED_OUT").await.expect(200);
    move_to(&s, &org, &id(&tonight), "CHECKED_IN").await.expect(200);
    move_to(&s, &org, &id(&tonight), "CHECKED_OUT").await.expect(200);
}

async fn racing_check_ins_for_one_room_let_one_win(s: TestServer) {
    let org = s.org("Acme").await;
    // Each round's loser keeps a room of the type for its nights, unassigned: two rooms a round.
    let h = hotel(&s, &org, 6).await;
    for round in 0..3 {
        let room = h.3[round].clone();
        let first = stay(&s, &org, &h, 0, 2, None).await;
        let second = stay(&s, &org, &h, 0, 2, None).await;
        let (a, b) = tokio::join!(check_in_to(&s, &org, &first, &room), check_in_to(&s, &org, &second, &room));
        let mut statuses = [a.status, b.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "round {round}: exactly one check-in wins the room");
        use sqlx::Row;
        let mut conn = s.db.read().await.unwrap();
        let in_room: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM reservation_rooms rr JOIN reservations r ON r.id = rr.reservation_id \
             WHERE rr.room_id = $1 AND r.status = 'CHECKED_IN'",
        )
        .bind(&room)
        .fetch_one(&mut *conn)
        .await
        .unwrap()
        .try_get("n")
        .unwrap();
        assert_eq!(in_room, 1, "round {round}: one stay in the room");
    }
}

async fn check_in_happens_on_the_stays_dates(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    let early = stay(&s, &org, &h, 1, 3, Some(&h.3[0])).await;
    let refused = move_to(&s, &org, &id(&early), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains(&format!("from {} to {}", day(1), day(2))), "{}", detail(&refused));
    assert_eq!(
        s.get(&format!("/api/reservations/{}", id(&early)), &org.auth()).await.body["status"],
        json!("CONFIRMED")
    );

    let never_came = stay(&s, &org, &h, 0, 2, Some(&h.3[1])).await;
    shift_dates(&s, &id(&never_came), -4, -2).await;
    let refused = move_to(&s, &org, &id(&never_came), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains("no-show"), "{}", detail(&refused));
    move_to(&s, &org, &id(&never_came), "NO_SHOW").await.expect(200);

    // The last night is the last day to arrive: a stay of [yesterday, tomorrow) can be checked in today.
    let late = stay(&s, &org, &h, 0, 2, Some(&h.3[2])).await;
    shift_dates(&s, &id(&late), -1, 1).await;
    move_to(&s, &org, &id(&late), "CHECKED_IN").await.expect(200);
}

/// Rooms of the type free on each of the nights `[from, to)` as public availability answers them (0 when none).
async fn units(s: &TestServer, hotel: &str, from: u64, to: u64) -> i64 {
    let path = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(from), day(to));
    let offers = s.get(&path, &Auth::None).await.expect(200);
    offers.body.as_array().unwrap().first().map_or(0, |offer| offer["availableUnits"].as_i64().unwrap())
}

async fn early_departures_release_their_nights_and_charges(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    let booked = stay(&s, &org, &h, 0, 3, Some(&h.3[0])).await;
    assert_eq!(booked["totalPrice"], json!(30000));
    assert_eq!(units(&s, &h.0, 1, 3).await, 0, "the only room is taken");
    move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(200);
    // Leaving on the day of arrival: the stay keeps its first night and gives back the other two.
    let out = move_to(&s, &org, &id(&booked), "CHECKED_OUT").await.expect(200);
    assert_eq!((out.body["checkInDate"].clone(), out.body["checkOutDate"].clone()), (json!(day(0)), json!(day(1))));
    assert_eq!(out.body["totalPrice"], json!(10000));
    let charges = out.body["folio"]["charges"].as_array().unwrap();
    assert_eq!(charges.len(), 1);
    assert_eq!((charges[0]["date"].clone(), charges[0]["amount"].clone()), (json!(day(0)), json!(10000)));
    assert_eq!(out.body["folio"]["total"], json!(10000));
    assert_eq!(units(&s, &h.0, 1, 3).await, 1, "the nights not stayed are for sale again");
    let read = s.get(&format!("/api/reservations/{}", id(&booked)), &org.auth()).await.expect(200);
    assert_eq!(read.body, out.body, "what was answered is what was written");
}

async fn a_check_out_is_undone_the_same_day_while_the_room_is_free(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    let room = h.3[0].clone();
    let booked = stay(&s, &org, &h, 0, 3, Some(&room)).await;
    move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(200);
    move_to(&s, &org, &id(&booked), "CHECKED_OUT").await.expect(200);
    // Undone: checked in again with the dates, charges and total it had before the early departure.
    let back = move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(200);
    assert_eq!(back.body["checkOutDate"], json!(day(3)));
    assert_eq!((back.body["totalPrice"].clone(), back.body["folio"]["total"].clone()), (json!(30000), json!(30000)));
    assert_eq!(back.body["folio"]["charges"].as_array().unwrap().len(), 3);
    assert_eq!(units(&s, &h.0, 1, 3).await, 0, "its nights are taken again");

    // Checked out again, and the released nights given to another stay in the same room: no undo.
    move_to(&s, &org, &id(&booked), "CHECKED_OUT").await.expect(200);
    let next = stay(&s, &org, &h, 1, 3, Some(&room)).await;
    let refused = move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains(&format!("free on the night of {}", day(1))), "{}", detail(&refused));
    s.delete(&format!("/api/reservations/{}", id(&next)), &org.auth()).await.expect(200);

    // Another guest checked in to the room meanwhile: no undo either.
    let other = stay(&s, &org, &h, 0, 1, None).await;
    check_in_to(&s, &org, &other, &room).await.expect(200);
    let refused = move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains("occupied"), "{}", detail(&refused));
    move_to(&s, &org, &id(&other), "CHECKED_OUT").await.expect(200);

    // A check-out of another day cannot be undone.
    let mut conn = s.db.read().await.unwrap();
    let yesterday = (chrono::Utc::now() - chrono::TimeDelta::days(1)).format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
    sqlx::query("UPDATE check_outs SET checked_out_at = $1 WHERE reservation_id = $2")
        .bind(yesterday)
        .bind(id(&booked))
        .execute(&mut *conn)
        .await
        .unwrap();
    drop(conn);
    let refused = move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(409);
    assert!(detail(&refused).contains("only on the day it was made"), "{}", detail(&refused));
}

async fn housekeeping_changes_record_who_and_when(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    let room = h.3[0].clone();
    let created = s.get(&format!("/api/rooms/{room}"), &org.auth()).await.expect(200);
    assert_eq!(
        (created.body["housekeepingStatus"].clone(), created.body["housekeepingChangedAt"].clone()),
        (json!("CLEAN"), Value::Null)
    );
    let booked = stay(&s, &org, &h, 0, 1, Some(&room)).await;
    move_to(&s, &org, &id(&booked), "CHECKED_IN").await.expect(200);
    move_to(&s, &org, &id(&booked), "CHECKED_OUT").await.expect(200);
    let dirty = s.get(&format!("/api/rooms/{room}"), &org.auth()).await.expect(200);
    assert_eq!(dirty.body["housekeepingStatus"], json!("DIRTY"));
    let by = dirty.body["housekeepingChangedBy"].as_str().unwrap();
    assert!(by.contains("Test Operator") && by.contains(booked["reference"].as_str().unwrap()), "{by}");
    assert!(dirty.body["housekeepingChangedAt"].is_string());

    // Housekeeping says the room is clean, through an API key of the housekeeping system.
    let key = Auth::Key(
        s.key(&org, &[frontdesk::domain::Scope::RoomsRead, frontdesk::domain::Scope::RoomsWrite], None).await,
    );
    let clean =
        s.put(&format!("/api/rooms/{room}"), &key, json!({"housekeepingStatus": "INSPECTED"})).await.expect(200);
    assert_eq!(
        (clean.body["housekeepingStatus"].clone(), clean.body["housekeepingChangedBy"].clone()),
        (json!("INSPECTED"), json!("API key test key"))
    );
    // Every change is kept, newest first; a PUT that does not change the status records nothing.
    s.put(&format!("/api/rooms/{room}"), &key, json!({"housekeepingStatus": "INSPECTED", "floor": 1}))
        .await
        .expect(200);
    let history = frontdesk::domain::rooms::status_history(&s.db, &Actor::system(&org.id), &room).await.unwrap();
    let statuses: Vec<&str> = history.iter().map(|(status, _, _)| status.as_str()).collect();
    assert_eq!(statuses, ["INSPECTED", "DIRTY"]);
}

async fn references_are_short_unique_and_searchable(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    let mut references = std::collections::HashSet::new();
    let mut last = Value::Null;
    for n in 0..20 {
        last = stay(&s, &org, &h, n, n + 1, None).await;
        let reference = last["reference"].as_str().unwrap().to_string();
        assert_eq!(reference.len(), 8);
        assert!(reference.chars().all(|c| "23456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)), "{reference}");
        references.insert(reference);
    }
    assert_eq!(references.len(), 20, "unique");
    let reference = last["reference"].as_str().unwrap();
    // Typed as a person would: lower case, with a hyphen in the middle.
    let typed = format!("{}-{}", reference[..4].to_lowercase(), &reference[4..]);
    let found = s.get(&format!("/api/reservations?reference={typed}"), &org.auth()).await.expect(200);
    assert_eq!(found.body.as_array().unwrap().len(), 1);
    assert_eq!(found.body[0]["id"], last["id"]);
    assert_eq!(found.header("x-total-count"), Some("1"));
    let bad = s.get("/api/reservations?reference=K0OL", &org.auth()).await.expect(400);
    assert_eq!(bad.body["errors"][0]["field"], json!("reference"));
    // Another organization's reference finds nothing.
    let other = s.org("Other").await;
    let none = s.get(&format!("/api/reservations?reference={reference}"), &other.auth()).await.expect(200);
    assert_eq!(none.body, json!([]));
}

async fn older_rows_get_references_and_phone_keys_when_migrated(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    for n in 0..3 {
        stay(&s, &org, &h, n, n + 1, None).await;
    }
    let guest = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"firstName": "Ana", "lastName": "Silva", "phone": "+351 912 345 678"}),
        )
        .await;
    // As a database written by the release before references and phone keys would hold them.
    {
        let mut conn = s.db.read().await.unwrap();
        sqlx::query("UPDATE reservations SET reference = NULL").execute(&mut *conn).await.unwrap();
        sqlx::query("UPDATE guests SET phone_digits_reversed = NULL").execute(&mut *conn).await.unwrap();
    }
    s.db.migrate().await.unwrap();
    let all = s.get("/api/reservations?limit=0", &org.auth()).await.expect(200);
    let references: std::collections::HashSet<&str> =
        all.body.as_array().unwrap().iter().map(|r| r["reference"].as_str().unwrap()).collect();
    assert_eq!(references.len(), 3);
    // The desk finds the guest by the end of the number, typed with other spacing, and by name.
    let actor = Actor::system(&org.id);
    for typed in ["912 345 678", "912345678", "(912) 345-678", "Ana Sil", "silva"] {
        let found = frontdesk::domain::front_office::find_guests(&s.db, &actor, typed, 10).await.unwrap();
        assert_eq!(found.iter().map(|g| g.id.clone()).collect::<Vec<_>>(), vec![guest.clone()], "{typed}");
    }
    let none = frontdesk::domain::front_office::find_guests(&s.db, &actor, "912 345 679", 10).await.unwrap();
    assert!(none.is_empty());
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

    let Some(b) = signed_in(&s, &org, PHONE).await else { return };
    b.goto(&format!("/hotels/{}/housekeeping", h.0)).await;
    b.wait_for_text("Floor 2").await;
    assert!(fits_the_window(&b).await, "the housekeeping page scrolls sideways on a phone");
    b.assert_accessible("the housekeeping page").await;
    if engine == Engine::Sqlite {
        b.screenshot("housekeeping-phone").await;
    }
    let text = b.page_text().await;
    assert!(text.contains("Arriving today"), "{text}");
    assert!(text.contains("check-out of"), "who made room 101 dirty: {text}");
    // The filters: dirty rooms, and the out-of-order one.
    b.click_text("a", "Dirty").await;
    b.wait_for_text("Room 101").await;
    assert!(!b.page_text().await.contains("Room 102"));
    b.click_text("a", "Out of order").await;
    b.wait_for_text("Room 103").await;
    assert!(!b.page_text().await.contains("Room 101"));
    // One tap: 101 is clean.
    b.click_text("a", "Dirty").await;
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

async fn a_retried_create_makes_one_reservation(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    let key = Auth::Key(
        s.key(&org, &[frontdesk::domain::Scope::ReservationsRead, frontdesk::domain::Scope::ReservationsWrite], None)
            .await,
    );
    let body = |nights: u64| {
        json!({"hotelId": h.0, "checkInDate": day(2), "checkOutDate": day(2 + nights),
               "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}]})
    };
    let post = |auth: &Auth, idempotency_key: &str, body: Value| {
        let request = s
            .client
            .post(format!("{}/api/reservations", s.base))
            .json(&body)
            .header("idempotency-key", idempotency_key);
        let request = match auth {
            Auth::Key(secret) => request.header("authorization", crate::common::basic(secret)),
            Auth::Token(token) => request.header("authorization", format!("Token {token}")),
            Auth::Raw(value) => request.header("authorization", value.as_str()),
            Auth::None => request,
        };
        async move { request.send().await.unwrap() }
    };
    let first = post(&key, "retry-1", body(2)).await;
    assert_eq!(first.status().as_u16(), 200);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    let again = post(&key, "retry-1", body(2)).await;
    assert_eq!(again.status().as_u16(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(s.count("reservations").await, 1);
    // The same key with another body is refused, and writes nothing.
    let changed = post(&key, "retry-1", body(3)).await;
    assert_eq!(changed.status().as_u16(), 409);
    assert_eq!(s.count("reservations").await, 1);
    // Sent five times at once: one reservation, every answer the same.
    let answers = futures::future::join_all((0..5).map(|_| post(&key, "retry-2", body(1)))).await;
    let mut ids = std::collections::HashSet::new();
    for answer in answers {
        assert_eq!(answer.status().as_u16(), 200);
        ids.insert(answer.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string());
    }
    assert_eq!((ids.len(), s.count("reservations").await), (1, 2));
    // Keys are the caller's own: an operator's "retry-1" is another key.
    let operator = post(&org.auth(), "retry-1", body(2)).await;
    assert_eq!(operator.status().as_u16(), 200);
    let operator: Value = operator.json().await.unwrap();
    assert_ne!(operator["id"], first["id"]);
    // A key is 1 to 200 visible characters; a create that is refused leaves its key unused.
    let long = "k".repeat(201);
    let refused = post(&key, &long, body(1)).await;
    assert_eq!(refused.status().as_u16(), 400);
    let full = json!({"hotelId": h.0, "checkInDate": day(2), "checkOutDate": day(3),
                      "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}, {"roomTypeId": h.1, "ratePlanId": h.2}]});
    assert_eq!(post(&key, "retry-3", full.clone()).await.status().as_u16(), 409, "the type has no two rooms left");
    for made in [&first, &operator] {
        s.delete(&format!("/api/reservations/{}", made["id"].as_str().unwrap()), &org.auth()).await.expect(200);
    }
    assert_eq!(post(&key, "retry-3", full).await.status().as_u16(), 200, "the refused create did not use the key");
    // A retry of a create whose reservation was deleted since says so.
    let gone = post(&key, "retry-1", body(2)).await;
    assert_eq!(gone.status().as_u16(), 409);
}

async fn the_new_reservation_form_makes_one_reservation_however_often_it_is_sent(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    let Some(b) = signed_in(&s, &org, crate::common::browser::DESKTOP).await else { return };
    b.goto(&format!("/hotels/{}/reservations/new", h.0)).await;
    b.fill("#firstName", "Yuki").await;
    b.fill("#lastName", "Tanaka").await;
    b.fill("#email", "yuki@example.com").await;
    b.set_value("#checkInDate", &day(3)).await;
    b.set_value("#checkOutDate", &day(5)).await;
    b.select("#roomTypeId", &h.1).await;
    b.select("#ratePlanId", &h.2).await;
    // A double click, two tabs, a reload: the same form sent three times at once, as the browser sends it.
    let statuses = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const form = document.querySelector('input[name=formToken]').form;
             const data = new URLSearchParams(new FormData(form));
             data.set('intent', 'create');
             const send = () => fetch(form.action, {method: 'POST', body: data, redirect: 'manual'})
                 .then(r => r.type === 'opaqueredirect' ? r.type : r.text().then(t => r.status + ' ' + t.slice(0, 3000)));
             Promise.all([send(), send(), send()]).then(done, e => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        statuses,
        json!(["opaqueredirect", "opaqueredirect", "opaqueredirect"]),
        "each answered with a redirect"
    );
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1), "one reservation, one guest");
    // And the form clicked once more, as a person would: the reservation it made, said so.
    b.click_text("button", "Create reservation").await;
    b.wait_for_text("This form was sent before").await;
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1));
    b.close().await;
}
