//! The reservation list's default order is by id. A page of one hotel or of one organization reads that hotel's or
//! organization's reservations in id order from an index (migration 0023) and stops after its last row, wherever
//! their ids fall among everyone else's. Without those indexes PostgreSQL walked the primary key from the start and
//! visited every older reservation of the other hotels and organizations, and SQLite read the whole hotel to sort
//! it (docs/storage.md, "Built: lists in id order").

use crate::common::{buffers_read, TestServer};
use frontdesk::domain::listing::Page;
use frontdesk::domain::reservations::StayFilter;
use frontdesk::store::{reservations, Engine};

on_both_engines!(a_page_in_id_order_reads_its_own_rows_only);

/// The id of the `i`th reservation of `batch`: ids of a later batch sort after every earlier batch's.
fn batch_id(batch: u32, i: usize) -> String {
    format!("{batch:08x}-0000-7000-8000-{i:012}")
}

/// Reservations written straight into the table with ids that sort after every earlier batch's (`batch` leads the
/// id), as a hotel or an organization that joined later has.
async fn reservations_in_batch(s: &TestServer, batch: u32, organization: &str, hotel: &str, count: usize) {
    let at = frontdesk::store::format_ts(chrono::Utc::now());
    let mut tx = s.db.begin_write().await.expect("transaction");
    for i in 0..count {
        frontdesk::store::query(
            "INSERT INTO reservations (id, organization_id, hotel_id, status, check_in_date, check_out_date, nights, \
             start_time, end_time, adults, children, infants, total_price, currency, source, created_at, updated_at, \
             reference) VALUES ($1, $2, $3, 'CONFIRMED', '2027-03-01', '2027-03-03', 2, $4, $4, 2, 0, 0, 100, 'EUR', \
             'API', $4, $4, $5)",
        )
        .bind(batch_id(batch, i))
        .bind(organization)
        .bind(hotel)
        .bind(at.clone())
        .bind(format!("B{batch}N{i}"))
        .execute(tx.conn())
        .await
        .expect("reservation");
    }
    tx.commit().await.expect("commit");
}

fn first_page() -> Page {
    Page { limit: Some(50), skip: 0, sort_column: "id", descending: false, projection: None, ids: None }
}

/// The plan of the list's own statement for this page: its lines, and on PostgreSQL the buffers it read (it is run).
async fn plan(s: &TestServer, organization: &str, hotel: Option<&str>) -> (String, Option<i64>) {
    let filter = StayFilter { hotel_id: hotel.map(str::to_string), ..StayFilter::default() };
    let (sql, values) =
        reservations::page_statement_rendered(s.db.engine(), organization, &filter, &first_page()).expect("statement");
    let (explain, column) = match s.db.engine() {
        Engine::Postgres => (format!("EXPLAIN (ANALYZE, BUFFERS) {sql}"), "QUERY PLAN"),
        Engine::Sqlite => (format!("EXPLAIN QUERY PLAN {sql}"), "detail"),
    };
    let mut conn = s.db.read().await.expect("connection");
    let rows = frontdesk::store::query_with(&explain, values).fetch_all(&mut conn).await.expect("the plan");
    let lines: Vec<String> = rows.iter().map(|row| row.get(column)).collect();
    let plan = lines.join("\n");
    let buffers = (s.db.engine() == Engine::Postgres).then(|| buffers_read(&plan));
    (plan, buffers)
}

async fn a_page_in_id_order_reads_its_own_rows_only(s: TestServer) {
    // Organization Old: hotel A's 5,000 stays, then hotel B's 120. Organization New, later: 120.
    let old = s.org("Old").await;
    let (a, b) = (s.hotel(&old, "A").await, s.hotel(&old, "B").await);
    let new = s.org("New").await;
    let n = s.hotel(&new, "N").await;
    reservations_in_batch(&s, 1, &old.id, &a, 5000).await;
    reservations_in_batch(&s, 2, &old.id, &b, 120).await;
    reservations_in_batch(&s, 3, &new.id, &n, 120).await;
    if s.db.engine() == Engine::Postgres {
        // Statistics that know the table: the planner then expects a hotel's rows among the first it walks.
        let mut conn = s.db.read().await.expect("connection");
        frontdesk::store::query("ANALYZE reservations").execute(&mut conn).await.expect("analyse");
    }

    // What the API answers: each page holds its own rows in id order, with the exact total.
    let ids = |batch: u32, range: std::ops::Range<usize>| {
        range.map(|i| serde_json::json!(batch_id(batch, i))).collect::<Vec<_>>()
    };
    for (path, org, batch, skip) in [
        (format!("/api/reservations?hotelId={b}&limit=50"), &old, 2, 0),
        (format!("/api/reservations?hotelId={b}&limit=50&skip=50"), &old, 2, 50),
        ("/api/reservations?limit=50".to_string(), &new, 3, 0),
    ] {
        let answer = s.get(&path, &org.auth()).await.expect(200);
        assert_eq!(answer.header("x-total-count"), Some("120"), "{path}");
        let page: Vec<_> = answer.body.as_array().expect("a list").iter().map(|r| r["id"].clone()).collect();
        assert_eq!(page, ids(batch, skip..skip + 50), "{path}");
    }

    // How the list's statement reads them: through the id-order index of the hotel, or of the organization.
    for (organization, hotel, index) in
        [(&old.id, Some(b.as_str()), "reservations_hotel_ids"), (&new.id, None, "reservations_organization_ids")]
    {
        let (lines, buffers) = plan(&s, organization, hotel).await;
        assert!(lines.contains(index), "the page reads {index}:\n{lines}");
        assert!(!lines.contains("TEMP B-TREE"), "the page is read in order, not sorted:\n{lines}");
        if let Some(buffers) = buffers {
            // 50 rows written together and a few index pages (about 55); the hotel read whole and sorted, 151.
            assert!(buffers < 200, "{buffers} buffers read for a page of 50:\n{lines}");
        }
    }
    s.stop().await;
}
