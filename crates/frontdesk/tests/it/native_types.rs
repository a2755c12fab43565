//! Migration 0021 moves a PostgreSQL database from text and integers to native types (`uuid`, `date`,
//! `timestamptz`, `boolean`) in place. A database written before it (its migrations up to 0020 applied, then the
//! demo hotel and more written through the service) is read through the API, migrated, and read again: every record
//! must answer the same.

use chrono::{Duration, Utc};
use serde_json::{json, Value};

use crate::common::{Auth, TestDatabase, TestServer};
use frontdesk::store::{Db, Engine};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_written_before_native_types_reads_the_same_after_its_upgrade() {
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let path = format!("{}/migrations/postgres", env!("CARGO_MANIFEST_DIR"));
    let mut before = sqlx::migrate::Migrator::new(std::path::Path::new(&path)).await.expect("migrations");
    before.migrations = before.migrations.iter().filter(|m| m.version < 21).cloned().collect::<Vec<_>>().into();
    let db = Db::connect(&database.url, 4).await.expect("open");
    db.migrate_with(&before).await.expect("migrations up to 0020");
    assert_eq!(column_type(&db, "reservations", "id").await, "text");
    let seeded = frontdesk::demo::seed(&db).await.expect("the demo hotel");
    db.close().await;
    let auth = Auth::Key(seeded.api_key_secret.expect("the demo key"));
    let hotel = seeded.hotel_id.expect("the demo hotel");

    let s = TestServer::serve_database_unmigrated(database).await.expect("the server, on the old schema");
    write_more(&s, &auth, &hotel).await;
    let old = read_everything(&s, &auth, &hotel).await;
    let database = s.stop_keeping_database().await;

    let s = TestServer::serve_database(database).await.expect("the server, after migration 0021");
    for (table, column, native) in [
        ("reservations", "id", "uuid"),
        ("reservations", "check_in_date", "date"),
        ("reservations", "created_at", "timestamp with time zone"),
        ("reservation_rooms", "holds_inventory", "boolean"),
        ("daily_rates", "stop_sell", "boolean"),
    ] {
        assert_eq!(column_type(&s.db, table, column).await, native, "{table}.{column}");
    }
    let new = read_everything(&s, &auth, &hotel).await;
    assert_eq!(old.len(), new.len());
    for ((path, before), (_, after)) in old.iter().zip(&new) {
        assert_eq!(before, after, "{path} reads differently after the upgrade");
    }
    // The upgraded database takes writes as before, and reads them back.
    write_more(&s, &auth, &hotel).await;
    s.stop().await;
}

async fn column_type(db: &Db, table: &str, column: &str) -> String {
    let mut conn = db.read().await.expect("a connection");
    let row = frontdesk::store::query(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() \
         AND table_name = $1 AND column_name = $2",
    )
    .bind(table)
    .bind(column)
    .fetch_one(&mut conn)
    .await
    .expect("the column");
    row.get("data_type")
}

/// Records of every kind the demo does not write: a guest with every field, a webhook subscription, and a
/// reservation moved through the desk's states.
async fn write_more(s: &TestServer, auth: &Auth, hotel: &str) {
    let guest = s
        .create(
            "/api/guests",
            auth,
            json!({"hotelId": hotel, "firstName": "Inês", "lastName": "Moreira", "email": "ines@example.com",
                   "phone": "+351 912 345 678", "country": "PT", "language": "pt", "notes": "Quiet room"}),
        )
        .await;
    s.post(
        "/api/webhooksubscriptions",
        auth,
        json!({"url": "https://example.com/hooks", "events": ["reservation.created"], "hotelId": hotel}),
    )
    .await
    .expect(200);
    let room_types = s.get(&format!("/api/roomTypes?hotelId={hotel}"), auth).await.expect(200);
    let room_type = room_types.body[0]["id"].as_str().expect("a room type").to_string();
    let check_in = (Utc::now() + Duration::days(200)).date_naive();
    let body = json!({"hotelId": hotel, "guestId": guest, "status": "CONFIRMED", "checkInDate": check_in.to_string(),
        "checkOutDate": (check_in + Duration::days(3)).to_string(), "notes": "Late arrival",
        "rooms": [{"roomTypeId": room_type, "price": 12345, "adults": 2}]});
    let created = s.post("/api/reservations", auth, body).await.expect(200);
    let id = created.body["id"].as_str().expect("an id");
    s.put(&format!("/api/reservations/{id}"), auth, json!({"status": "CANCELLED"})).await.expect(200);
}

/// Every record the API shows of the organization, as (path, answer), in a fixed order.
async fn read_everything(s: &TestServer, auth: &Auth, hotel: &str) -> Vec<(String, Value)> {
    let mut paths = vec![
        "/api/hotels".to_string(),
        format!("/api/hotels/{hotel}"),
        format!("/api/roomTypes?hotelId={hotel}"),
        format!("/api/rooms?hotelId={hotel}"),
        format!("/api/ratePlans?hotelId={hotel}"),
        "/api/guests".to_string(),
        "/api/reservations".to_string(),
        "/api/webhooksubscriptions".to_string(),
        "/api/apiKeys".to_string(),
    ];
    let today = Utc::now().date_naive();
    let plans = s.get(&format!("/api/ratePlans?hotelId={hotel}"), auth).await.expect(200);
    for plan in plans.body.as_array().expect("rate plans") {
        paths.push(format!(
            "/api/dailyRates?hotelId={hotel}&ratePlanId={}&dateFrom={}&dateTo={}",
            plan["id"].as_str().expect("an id"),
            today - Duration::days(400),
            today + Duration::days(400)
        ));
    }
    let reservations = s.get("/api/reservations", auth).await.expect(200);
    for r in reservations.body.as_array().expect("reservations") {
        paths.push(format!("/api/reservations/{}", r["id"].as_str().expect("an id")));
    }
    for nights in [(0, 2), (5, 12), (30, 31)] {
        paths.push(format!(
            "/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}",
            today + Duration::days(nights.0),
            today + Duration::days(nights.1)
        ));
    }
    let mut answers = Vec::new();
    for path in paths {
        let answer = s.get(&path, auth).await.expect(200);
        let body = answer.body;
        if let Some(list) = body.as_array() {
            assert!(!list.is_empty() || path.starts_with("/api/webhooksubscriptions"), "{path} is empty");
        }
        answers.push((path, body));
    }
    let reservations = answers.iter().find(|(p, _)| p == "/api/reservations").map(|(_, b)| b.clone());
    let rooms_held = reservations
        .as_ref()
        .and_then(Value::as_array)
        .map(|list| list.iter().filter(|r| r["status"] == "CHECKED_IN").count())
        .unwrap_or(0);
    assert!(rooms_held > 0, "the demo has guests in house, whose rooms hold inventory");
    answers
}
