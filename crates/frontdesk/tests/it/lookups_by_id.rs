//! A record the caller names by id is found by its primary key on PostgreSQL, whatever the planner's statistics
//! say about its organization.
//!
//! For an organization whose records were written since the table was last analysed, PostgreSQL estimates one row
//! for `organization_id = …`; with that estimate a small index leading with the organization (the reservations'
//! `(organization_id, nights)` is a few pages, its entries deduplicated) looked cheaper than the primary key, and
//! every read or write of one reservation read all of its organization's (docs/storage.md, "Built: lookups by
//! id"). The store writes every such condition through `store::statement::one_of_organization`, which leaves only
//! the id to the indexes; the first test holds that through the API, the second that no statement of the store goes
//! back to `organization_id = … AND id = …`.

use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::{Connection, Row};

use crate::common::{TestDatabase, TestServer};
use frontdesk::store::Engine;

/// Writes `count` reservations of the organization's hotel straight into the table (no index is read doing so),
/// and answers their ids.
async fn reservations(conn: &mut sqlx::PgConnection, organization: &str, hotel: &str, count: i32) -> Vec<String> {
    sqlx::query(
        "INSERT INTO reservations (id, organization_id, hotel_id, status, check_in_date, check_out_date, nights, \
         start_time, end_time, adults, children, infants, total_price, currency, source, created_at, updated_at, \
         reference) \
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'CONFIRMED', current_date + n, current_date + n + 2, 2, \
         now(), now(), 2, 0, 0, 10000, 'EUR', 'API', now(), now(), 'LOOKUP-' || n \
         FROM generate_series(1, $3) AS n RETURNING id::text",
    )
    .bind(organization)
    .bind(hotel)
    .bind(count)
    .fetch_all(conn)
    .await
    .expect("reservations")
    .iter()
    .map(|row| row.get(0))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reservation_of_an_organization_new_to_the_statistics_is_found_by_its_primary_key() {
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let url = database.url.clone();
    let s = TestServer::serve_database(database).await.expect("server");
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");

    // One organization the statistics know, and one they do not: written after the ANALYZE.
    let known = s.org("Known").await;
    let known_hotel = s.hotel(&known, "Sea").await;
    let known_ids = reservations(&mut conn, &known.id, &known_hotel, 400).await;
    sqlx::query("ANALYZE reservations").execute(&mut conn).await.expect("analyse");
    let new = s.org("New").await;
    let new_hotel = s.hotel(&new, "Hill").await;
    let new_ids = reservations(&mut conn, &new.id, &new_hotel, 400).await;

    // Read and written by id through the API, as an integrator does.
    let asked = &new_ids[..20];
    for id in asked {
        let read = s.get(&format!("/api/reservations/{id}"), &new.auth()).await.expect(200);
        assert_eq!(read.body["id"], json!(id));
        s.put(&format!("/api/reservations/{id}"), &new.auth(), json!({"notes": "late arrival"})).await.expect(200);
    }
    // The organization is still part of every such condition.
    s.get(&format!("/api/reservations/{}", known_ids[0]), &new.auth()).await.expect(404);

    // A backend reports its index scans when it ends: close the service's connections, then read them.
    s.db.close().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let scans = loop {
        let scans: Vec<(String, i64)> = sqlx::query(
            "SELECT indexrelname::text, idx_scan FROM pg_stat_user_indexes \
             WHERE schemaname = current_schema() AND relname = 'reservations' ORDER BY indexrelname",
        )
        .fetch_all(&mut conn)
        .await
        .expect("index statistics")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
        let by_key = scans.iter().find(|(name, _)| name == "reservations_pkey").map_or(0, |(_, n)| *n);
        // Each id is read once by the GET, then read and updated by the PUT; plus the refused read.
        if by_key > asked.len() as i64 * 3 || Instant::now() > deadline {
            break scans;
        }
        sqlx::query("SELECT pg_stat_clear_snapshot()").execute(&mut conn).await.expect("a fresh snapshot");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    conn.close().await.expect("close");

    let by_key = scans.iter().find(|(name, _)| name == "reservations_pkey").map_or(0, |(_, n)| *n);
    assert!(by_key > asked.len() as i64 * 3, "every lookup went through the primary key: {scans:?}");
    // The other indexes are read by the service's start (its search for reservations without a reference), not
    // once per lookup: each of the 60 lookups used one of them before (`reservations_organization_nights`).
    let others: i64 = scans.iter().filter(|(name, _)| name != "reservations_pkey").map(|(_, n)| n).sum();
    assert!(others < asked.len() as i64, "indexes of the organization read to find one reservation: {scans:?}");
}

/// The store's statements, read as text: a condition on a record's organization followed by one on its id, each
/// with `=`, is the shape `one_of_organization` replaces.
#[test]
fn no_statement_of_the_store_finds_a_record_by_organization_and_id_with_equals() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut files = vec![root];
    let mut found = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).expect("store/").map(|entry| entry.expect("entry").path()));
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let lines: Vec<&str> = text.lines().collect();
        for (n, pair) in lines.windows(2).enumerate() {
            let on_organization = pair[0].contains("OrganizationId).eq(") || pair[0].contains("OrganizationId)).eq(");
            let on_id = pair[1].contains("::Id).eq(") || pair[1].contains("::Id)).eq(");
            let reversed = pair[0].contains("::Id).eq(") && pair[1].contains("OrganizationId).eq(");
            if (on_organization && on_id) || reversed {
                found.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "write these with store::statement::one_of_organization: {found:?}");
}
