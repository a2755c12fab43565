//! Migration 0021 moves a PostgreSQL database from text and integers to native types (`uuid`, `date`,
//! `timestamptz`, `boolean`) in place. The fixture (`tests/fixtures/before_native_types`, and `make.py` there for
//! how it was made) is a database written by the release before it (3d0d70b: the demo hotel and more, through its
//! API) with every record as that release's API answered. Here the records are loaded into a database migrated up
//! to 0020, the service upgrades it, and every record must answer as it did.
//!
//! Migration 0021's ANALYZE also recorded every table of a new, empty database as analysed and empty, and PostgreSQL
//! then kept plans that read such a table whole once it had rows; migration 0022 returns those tables to never
//! analysed, which the last test holds.

use std::io::Read;

use serde_json::{json, Value};

use crate::common::{Auth, TestDatabase, TestServer};
use frontdesk::store::{Db, Engine};
use sqlx::{Connection, Row};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/before_native_types");

fn gunzip(name: &str) -> String {
    let file = std::fs::File::open(format!("{FIXTURE}/{name}")).expect(name);
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).expect(name);
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_written_before_native_types_answers_the_same_after_its_upgrade() {
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let path = format!("{}/migrations/postgres", env!("CARGO_MANIFEST_DIR"));
    let mut before = sqlx::migrate::Migrator::new(std::path::Path::new(&path)).await.expect("migrations");
    before.migrations = before.migrations.iter().filter(|m| m.version < 21).cloned().collect::<Vec<_>>().into();
    let db = Db::connect(&database.url, 4).await.expect("open");
    db.migrate_with(&before).await.expect("migrations up to 0020");
    db.close().await;
    let mut conn = sqlx::PgConnection::connect(&database.url).await.expect("connect");
    sqlx::raw_sql(&gunzip("data.sql.gz")).execute(&mut conn).await.expect("the earlier release's records");
    conn.close().await.expect("close");

    let s = TestServer::serve_database(database).await.expect("the server, after migration 0021");
    for (table, column, native) in [
        ("reservations", "id", "uuid"),
        ("reservations", "check_in_date", "date"),
        ("reservations", "created_at", "timestamp with time zone"),
        ("reservation_rooms", "holds_inventory", "boolean"),
        ("daily_rates", "stop_sell", "boolean"),
        ("guest_messages", "claimed_until", "timestamp with time zone"),
    ] {
        assert_eq!(column_type(&s.db, table, column).await, native, "{table}.{column}");
    }

    let fixture: Value = serde_json::from_str(&gunzip("answers.json.gz")).expect("answers");
    let key = Auth::Key(fixture["apiKey"].as_str().expect("the demo key").to_string());
    let login = json!({"email": frontdesk::demo::DEMO_EMAIL, "password": frontdesk::demo::DEMO_PASSWORD});
    let signed_in = s.post("/api/auth/login", &Auth::None, login).await.expect(200);
    let operator = Auth::Token(signed_in.body["token"].as_str().expect("a token").to_string());
    let answers = fixture["answers"].as_array().expect("answers");
    assert!(answers.len() > 250, "the fixture has the demo's records");
    for answer in answers {
        let path = answer["path"].as_str().expect("a path");
        let operator_only = path.starts_with("/api/webhooksubscriptions") || path.starts_with("/api/apiKeys");
        let auth = if operator_only { &operator } else { &key };
        let (mut then, mut now) = (answer["body"].clone(), s.get(path, auth).await.expect(200).body);
        if path.starts_with("/api/apiKeys") {
            // Each use of a key records when; the reads here use it.
            for keys in [&mut then, &mut now] {
                keys.as_array_mut().expect("keys").iter_mut().for_each(|k| k["lastUsedAt"] = Value::Null);
            }
        }
        if let Some(folio) = now.get_mut("folio").and_then(Value::as_object_mut) {
            // The folio's balance came later (the ledger), after the fixture was written: a record from before it
            // owes its whole total, and the rest answers as it did.
            let balance = folio.remove("balance").expect("a folio carries its balance");
            assert_eq!(Some(&balance), folio.get("total"), "{path}: a folio from before payments owes its total");
        }
        if path.starts_with("/api/guests") {
            // A guest's postal address came later (invoices), after the fixture was written: a guest from before it
            // has none, and the rest answers as it did.
            let guests = match &mut now {
                Value::Array(guests) => guests.iter_mut().collect::<Vec<_>>(),
                guest => vec![guest],
            };
            for guest in guests.into_iter().filter_map(Value::as_object_mut) {
                for field in ["street", "postalCode", "city"] {
                    assert_eq!(guest.remove(field), Some(Value::Null), "{path}: a guest from before has no {field}");
                }
            }
        }
        assert_eq!(now, then, "{path} answers differently after the upgrade");
    }

    // The upgraded database takes writes, and its counts and inventory still hold.
    let hotel = answers[0]["body"][0]["id"].as_str().expect("the demo hotel").to_string();
    let room_types = s.get(&format!("/api/roomTypes?hotelId={hotel}"), &key).await.expect(200);
    let room_type = room_types.body[0]["id"].as_str().expect("a room type").to_string();
    let guest = s.create("/api/guests", &key, json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await;
    let stay = json!({"hotelId": hotel, "guestId": guest, "status": "CONFIRMED", "checkInDate": "2027-04-01",
        "checkOutDate": "2027-04-03", "rooms": [{"roomTypeId": room_type, "price": 10000}]});
    let before_total = s.get("/api/reservations?limit=1", &key).await.expect(200);
    s.post("/api/reservations", &key, stay).await.expect(200);
    let after_total = s.get("/api/reservations?limit=1", &key).await.expect(200);
    let total = |a: &crate::common::Answer| a.header("x-total-count").and_then(|t| t.parse::<i64>().ok());
    assert_eq!(total(&after_total), total(&before_total).map(|t| t + 1));
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

/// A new database plans its foreign keys' look-ups with their indexes. Before migration 0022 every table of a new
/// database was recorded as analysed and empty, and the plan PostgreSQL keeps for the cascade of
/// `webhook_queue_event_id_fkey` (run for every outbox event deleted) read all of `webhook_queue`. A database of its
/// own, not a schema of the shared one: migration 0021's ANALYZE, which every other test's migration runs, covers
/// every schema of its database and would record this one's empty tables again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_database_is_planned_with_its_indexes() {
    let Some(database) = TestDatabase::postgres_of_its_own_or_skip().await else { return };
    let url = database.url.clone();

    let db = Db::connect(&url, 2).await.expect("open");
    db.migrate().await.expect("migrations");
    db.close().await;
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    let analysed_empty: Vec<String> = sqlx::query(
        "SELECT relname::text AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace \
         AND relkind = 'r' AND reltuples = 0 ORDER BY relname",
    )
    .fetch_all(&mut conn)
    .await
    .expect("the tables' statistics")
    .iter()
    .map(|row| row.get("name"))
    .collect();

    // The statement the cascade runs, planned as PostgreSQL keeps it (a generic plan), on the queue still empty.
    sqlx::raw_sql(
        "PREPARE cascade(uuid) AS DELETE FROM ONLY webhook_queue WHERE $1 = event_id; \
         SET plan_cache_mode = force_generic_plan;",
    )
    .execute(&mut conn)
    .await
    .expect("prepare");
    let plan: Vec<String> = sqlx::query("EXPLAIN EXECUTE cascade('00000000-0000-7000-8000-000000000001')")
        .fetch_all(&mut conn)
        .await
        .expect("the plan")
        .iter()
        .map(|row| row.get(0))
        .collect();
    conn.close().await.expect("close");
    drop(database);

    assert!(analysed_empty.is_empty(), "tables recorded as analysed and empty: {analysed_empty:?}");
    let plan = plan.join("\n");
    assert!(plan.contains("webhook_queue_event") && !plan.contains("Seq Scan"), "{plan}");
}
