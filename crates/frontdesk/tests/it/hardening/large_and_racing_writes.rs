//! Writes that are large or race each other: long folios keep their order, inventory locks do not block writes that
//! only point at a locked row, a write racing a delete is a conflict, and a write abandoned midway lets go of its
//! locks at once.

use crate::common::{day, TestServer};
use serde_json::{json, Value};

use super::fixture;

on_both_engines!(
    long_folios_keep_their_order,
    inventory_locks_do_not_block_references,
    a_write_racing_a_delete_is_a_conflict,
    an_abandoned_write_lets_go_of_its_locks_at_once,
);

async fn long_folios_keep_their_order(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 8).await;
    // 8 rooms x 30 nights = 240 charges: more than one insert chunk (200 rows).
    let rooms: Vec<Value> = (0..8).map(|n| json!({"roomTypeId": f.room_type, "price": 30_000 + n})).collect();
    let created = s
        .post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": f.hotel, "checkInDate": day(32), "checkOutDate": day(62), "rooms": rooms}),
        )
        .await
        .expect(200);
    let id = created.body["id"].as_str().unwrap();
    let read = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    let charges = read.body["folio"]["charges"].as_array().expect("charges").clone();
    assert_eq!(charges.len(), 240);
    assert!(read.body["folio"]["charges"] == created.body["folio"]["charges"], "read back in the order written");
    for (i, charge) in charges.iter().enumerate() {
        let (room, night) = (i / 30 + 1, i % 30);
        let date = (chrono::Utc::now().date_naive() + chrono::Days::new(32 + night as u64)).to_string();
        assert_eq!(charge["description"], json!(format!("Room {room} of 8, night of {date}")), "charge {i}");
    }
    assert_eq!(read.body["folio"]["total"], json!((0..8).map(|n| 30_000 + n).sum::<i64>()));
}

/// The inventory locks order writers of the same room types and rooms, but do not block writes that merely point at
/// a locked row (PostgreSQL `FOR NO KEY UPDATE`, not `FOR UPDATE`): a booking holding room type B must not make a
/// room move into B wait, or the two can wait on each other (the move holds A and points a room at B, the booking
/// holds B and wants A) until PostgreSQL fails one with "deadlock detected". SQLite serializes write transactions
/// whole, so there is no such cycle to test there.
async fn inventory_locks_do_not_block_references(s: TestServer) {
    if s.engine != frontdesk::store::Engine::Postgres {
        return;
    }
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 2).await;
    let b = s.create("/api/roomTypes", &auth, json!({"hotelId": f.hotel, "name": "Single", "maxOccupancy": 2})).await;
    // Another writer holds room type B the way a booking of B does, and keeps it.
    let mut booking = s.db.begin_write().await.expect("transaction");
    frontdesk::store::reservations::lock_room_types(booking.conn(), s.engine, std::slice::from_ref(&b))
        .await
        .expect("lock");
    let moved = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        s.put(&format!("/api/rooms/{}", f.rooms[0]), &auth, json!({"roomTypeId": b})),
    )
    .await
    .expect("the move does not wait for the booking's lock on its new room type");
    moved.expect(200);
    drop(booking);
}

/// A write that names a record another request deletes while it runs fails its foreign key: that is a conflict the
/// caller can retry (409), not a failure of the service. (PostgreSQL; SQLite's exclusive write transactions cannot
/// interleave so.)
async fn a_write_racing_a_delete_is_a_conflict(s: TestServer) {
    if s.engine != frontdesk::store::Engine::Postgres {
        return;
    }
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 2).await;
    // Another request deletes the room, and has not committed yet.
    let mut deleting = s.db.begin_write().await.expect("transaction");
    frontdesk::store::query("DELETE FROM rooms WHERE id = $1")
        .bind(&f.rooms[1])
        .execute(deleting.conn())
        .await
        .expect("delete");
    let request = json!({"hotelId": f.hotel, "checkInDate": day(3), "checkOutDate": day(4), "status": "REQUESTED",
                         "rooms": [{"roomTypeId": f.room_type, "price": 100, "roomId": f.rooms[1]}]});
    let (s, auth) = (std::sync::Arc::new(s), auth);
    let booking = {
        let (s, auth) = (s.clone(), auth.clone());
        tokio::spawn(async move { s.post("/api/reservations", &auth, request).await })
    };
    // The booking has seen the room and waits on the delete's lock to insert its reference; then the delete commits.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    deleting.commit().await.expect("commit");
    let answer = booking.await.unwrap().expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains("try again"), "{}", answer.body);
    let stays = s.get("/api/reservations", &auth).await.body.as_array().unwrap().len();
    assert_eq!(stays, 2, "nothing half-written: only the fixture's two stays");
}

/// A request that fails or is cancelled midway drops its transaction. Its rollback is sent at once, not when the
/// connection is next handed out: until then PostgreSQL would keep the transaction's row locks and SQLite its write
/// lock, and every writer outside this pool (another process on the database) would wait on them.
async fn an_abandoned_write_lets_go_of_its_locks_at_once(s: TestServer) {
    use sqlx::Connection;
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let mut tx = s.db.begin_write().await.expect("a write");
    frontdesk::store::query("UPDATE hotels SET name = 'Abandoned' WHERE id = $1")
        .bind(&hotel)
        .execute(tx.conn())
        .await
        .expect("update");
    drop(tx);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // A writer of its own, which gives up at once on a lock another transaction holds.
    let update = "UPDATE hotels SET name = 'Outside' WHERE id = $1";
    match s.engine {
        frontdesk::store::Engine::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(s.database_url()).await.expect("connect");
            sqlx::query("PRAGMA busy_timeout = 0").execute(&mut conn).await.expect("pragma");
            sqlx::query(update).bind(&hotel).execute(&mut conn).await.expect("the write lock was let go");
        }
        frontdesk::store::Engine::Postgres => {
            let mut conn = sqlx::PgConnection::connect(s.database_url()).await.expect("connect");
            sqlx::query("SET lock_timeout = '100ms'").execute(&mut conn).await.expect("set");
            let id = uuid::Uuid::parse_str(&hotel).expect("a hotel id");
            sqlx::query(update).bind(id).execute(&mut conn).await.expect("the row lock was let go");
        }
    }
    let read = s.get(&format!("/api/hotels/{hotel}"), &org.auth()).await.expect(200);
    assert_eq!(read.body["name"], "Outside", "the abandoned change was rolled back");
}
