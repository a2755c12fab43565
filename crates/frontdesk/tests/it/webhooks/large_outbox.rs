//! A hand-out reads the events it takes through their index, however many events the outbox holds (those handed
//! out wait there for their deliveries, so a receiver that is down makes it grow). PostgreSQL planned the former
//! `UPDATE … WHERE id IN (SELECT … LIMIT 500 FOR UPDATE SKIP LOCKED)` as a join that read the whole table;
//! `store::statement::in_taken` looks the taken ids up by their index (docs/storage.md, "Built: claims by index").

use sqlx::Connection;

use crate::common::{TestDatabase, TestServer};
use frontdesk::store::{outbox, Engine};

/// The sequential scans of `outbox_events` in the connection's transaction so far.
async fn whole_reads(conn: &mut frontdesk::store::Conn) -> i64 {
    frontdesk::store::query("SELECT pg_stat_get_xact_numscans('outbox_events'::regclass) AS n")
        .fetch_one(conn)
        .await
        .expect("this transaction's sequential scans")
        .get("n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_out_from_a_large_outbox_reads_no_table_whole() {
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let url = database.url.clone();
    let s = TestServer::serve_database_with(database, |c| c.webhook_dispatcher = false).await.expect("server");
    let org = s.org("Acme").await;

    // 20,000 events handed out and waiting for their deliveries, 100 new ones; statistics that say so.
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    sqlx::query(
        "INSERT INTO outbox_events (id, organization_id, kind, payload, created_at, handed_out) \
         SELECT gen_random_uuid(), $1::uuid, 'guest.updated', '{}', now(), n > 100 FROM generate_series(1, 20100) AS n",
    )
    .bind(&org.id)
    .execute(&mut conn)
    .await
    .expect("events");
    sqlx::query("ANALYZE outbox_events").execute(&mut conn).await.expect("analyse");
    conn.close().await.expect("close");

    // A dispatcher's batch, as `DispatcherOptions::default()` takes it.
    let mut tx = s.db.begin_write().await.expect("a write");
    let before = whole_reads(tx.conn()).await;
    let taken = outbox::take_new(tx.conn(), 500).await.expect("the hand-out");
    let whole_reads = whole_reads(tx.conn()).await - before;
    drop(tx);

    assert_eq!(taken.len(), 100, "every new event, and only those");
    assert_eq!(whole_reads, 0, "the hand-out read the outbox whole");
}
