//! The rules of a stay through the REST API: a room holds one stay at a time (sequential and racing check-ins),
//! check-in on the stay's dates only, early departures give their nights and charges back, a check-out is undone the
//! same day while the room is free, and housekeeping changes record who and when.

use crate::common::{day, Auth, Org, TestServer};
use frontdesk::domain::Actor;
use serde_json::{json, Value};

use super::{hotel, id, move_to, stay};

on_both_engines!(
    a_room_holds_one_stay_at_a_time,
    racing_check_ins_for_one_room_let_one_win,
    check_in_happens_on_the_stays_dates,
    early_departures_release_their_nights_and_charges,
    a_check_out_is_undone_the_same_day_while_the_room_is_free,
    housekeeping_changes_record_who_and_when,
);

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
        frontdesk::store::query(&format!(
            "UPDATE {table} SET check_in_date = $1, check_out_date = $2 WHERE {key} = $3"
        ))
        .bind(date(from))
        .bind(date(to))
        .bind(reservation)
        .execute(&mut conn)
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
        let mut conn = s.db.read().await.unwrap();
        let in_room: i64 = frontdesk::store::query(
            "SELECT COUNT(*) AS n FROM reservation_rooms rr JOIN reservations r ON r.id = rr.reservation_id \
             WHERE rr.room_id = $1 AND r.status = 'CHECKED_IN'",
        )
        .bind(&room)
        .fetch_one(&mut conn)
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
    frontdesk::store::query("UPDATE check_outs SET checked_out_at = $1 WHERE reservation_id = $2")
        .bind(yesterday)
        .bind(id(&booked))
        .execute(&mut conn)
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
    let history = frontdesk::domain::rooms::status_history(&s.db, &Actor::command_line(&org.id), &room).await.unwrap();
    let statuses: Vec<&str> = history.iter().map(|(status, _, _)| status.as_str()).collect();
    assert_eq!(statuses, ["INSPECTED", "DIRTY"]);
}
