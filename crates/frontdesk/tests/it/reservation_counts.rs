//! The reservation list's exact total, read from counts kept by triggers (migration 0020, docs/storage.md "The
//! list's total") instead of counted: after a random mix of creates, status moves and deletions by concurrent
//! writers, with folds running among them, every total equals a real `COUNT(*)`, on both engines.

use std::sync::Arc;

use crate::common::{buffers_read, day, Org, TestDatabase, TestServer};
use frontdesk::domain::listing::Page;
use frontdesk::domain::reservations::{ReservationStatus, StayFilter};
use frontdesk::store::{reservation_counts, reservations, Db, Engine};
use serde_json::{json, Value};

on_both_engines!(totals_equal_a_real_count_after_concurrent_random_writes);
on_both_engines_configured!(an_upgraded_database_starts_with_the_counts_of_its_reservations);

/// A small deterministic generator (the test must fail the same way twice), one per writer.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

struct Hotel {
    id: String,
    room_type: String,
}

async fn hotel(s: &TestServer, org: &Org, name: &str) -> Hotel {
    let id = s.hotel(org, name).await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": id, "name": "Double", "maxOccupancy": 2})).await;
    for n in 0..4 {
        s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await;
    }
    Hotel { id, room_type }
}

/// One writer: `steps` random writes in `hotels`, each create, move or deletion answered as the API answers it (a
/// refusal, such as a move the state machine forbids or a stay with no room left, changes nothing and is fine).
async fn writer(s: Arc<TestServer>, org: Arc<Org>, hotels: Arc<Vec<Hotel>>, seed: u64, steps: usize) {
    let mut draw = Draw(seed);
    let mut mine: Vec<String> = Vec::new();
    for _ in 0..steps {
        let choice = draw.below(10);
        if choice < 5 || mine.is_empty() {
            let h = &hotels[draw.below(hotels.len() as u64) as usize];
            let from = 1 + draw.below(60);
            let status = if draw.below(2) == 0 { "REQUESTED" } else { "CONFIRMED" };
            let body = json!({"hotelId": h.id, "status": status, "checkInDate": day(from),
                "checkOutDate": day(from + 1 + draw.below(3)), "rooms": [{"roomTypeId": h.room_type, "price": 10000}]});
            let answer = s.post("/api/reservations", &org.auth(), body).await;
            if answer.status == 200 {
                mine.push(answer.body["id"].as_str().expect("id").to_string());
            }
        } else if choice < 8 {
            let id = &mine[draw.below(mine.len() as u64) as usize];
            let status = ["CONFIRMED", "CANCELLED", "NO_SHOW"][draw.below(3) as usize];
            s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": status})).await;
        } else {
            let id = mine.swap_remove(draw.below(mine.len() as u64) as usize);
            s.delete(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
        }
    }
}

/// `COUNT(*)` of an organization's reservations, of one hotel and one status if given.
async fn real_count(s: &TestServer, org: &str, hotel: Option<&str>, status: Option<ReservationStatus>) -> i64 {
    let mut conn = s.db.read().await.expect("connection");
    let mut c = frontdesk::store::sql::Conditions::new(s.engine);
    c.push("organization_id = ?", org);
    if let Some(hotel) = hotel {
        c.push("hotel_id = ?", hotel);
    }
    if let Some(status) = status {
        c.push("status = ?", status.as_str());
    }
    let sql = format!("SELECT COUNT(*) AS n FROM reservations{}", c.where_clause());
    frontdesk::store::query_with(&sql, c).fetch_one(&mut conn).await.expect("count").try_get("n").expect("n")
}

/// The API's total (`X-Total-Count` of a one-row page), of one hotel if given.
async fn api_total(s: &TestServer, org: &Org, hotel: Option<&str>) -> i64 {
    let path = match hotel {
        Some(hotel) => format!("/api/reservations?limit=1&hotelId={hotel}"),
        None => "/api/reservations?limit=1".to_string(),
    };
    let answer = s.get(&path, &org.auth()).await.expect(200);
    answer.header("x-total-count").expect("total").parse().expect("a number")
}

/// Every total the counts answer, against a real count: per organization, per hotel, and per hotel and status
/// (the dashboard's status filters, through the store's `count` and a full page's total).
async fn check_totals(s: &TestServer, orgs: &[(&Org, &[Hotel])], when: &str) {
    for (org, hotels) in orgs {
        assert_eq!(api_total(s, org, None).await, real_count(s, &org.id, None, None).await, "{when}: organization");
        for h in hotels.iter() {
            let real = real_count(s, &org.id, Some(&h.id), None).await;
            assert_eq!(api_total(s, org, Some(&h.id)).await, real, "{when}: hotel");
            for status in ReservationStatus::ALL {
                let filter =
                    StayFilter { hotel_id: Some(h.id.clone()), statuses: vec![status], ..StayFilter::default() };
                let page =
                    Page { limit: None, skip: 0, sort_column: "id", descending: false, projection: None, ids: None };
                assert!(reservation_counts::answers(&filter, &page));
                let counted = reservations::count(&s.db, &org.id, &filter, &page).await.expect("count");
                let real = real_count(s, &org.id, Some(&h.id), Some(status)).await;
                assert_eq!(counted, real, "{when}: {status:?}");
                let paged = Page { limit: Some(5), ..page };
                let (_, total) = reservations::page_with_total(&s.db, &org.id, &filter, &paged).await.expect("page");
                assert_eq!(total.unwrap_or(real), real, "{when}: {status:?}, with a page");
            }
        }
    }
}

async fn totals_equal_a_real_count_after_concurrent_random_writes(s: TestServer) {
    let s = Arc::new(s);
    let acme = Arc::new(s.org("Acme").await);
    let other = Arc::new(s.org("Other").await);
    let acme_hotels = Arc::new(vec![hotel(&s, &acme, "Sea").await, hotel(&s, &acme, "Hill").await]);
    let other_hotels = Arc::new(vec![hotel(&s, &other, "Lake").await]);

    // Four writers in two organizations, and folds among them.
    let mut tasks = Vec::new();
    for seed in 1..=3 {
        tasks.push(tokio::spawn(writer(s.clone(), acme.clone(), acme_hotels.clone(), seed, 40)));
    }
    tasks.push(tokio::spawn(writer(s.clone(), other.clone(), other_hotels.clone(), 4, 40)));
    let folder = {
        let s = s.clone();
        tokio::spawn(async move {
            for _ in 0..20 {
                reservation_counts::fold(&s.db).await.expect("fold");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
    };
    for task in tasks {
        task.await.expect("writer");
    }
    folder.await.expect("folder");
    assert!(real_count(&s, &acme.id, None, None).await > 0, "the writers wrote");
    let orgs: [(&Org, &[Hotel]); 2] = [(&acme, &acme_hotels), (&other, &other_hotels)];

    // With changes not folded yet, and again once they all are.
    let unfolded = s.count("reservation_count_changes").await;
    check_totals(&s, &orgs, &format!("{unfolded} changes unfolded")).await;
    reservation_counts::fold(&s.db).await.expect("fold");
    assert_eq!(s.count("reservation_count_changes").await, 0, "a fold leaves no change behind");
    check_totals(&s, &orgs, "all folded").await;

    // A stored counter equals its group's count: nothing is counted twice or left behind by a fold.
    let mut conn = s.db.read().await.expect("connection");
    let rows = frontdesk::store::query(
        "SELECT c.n, (SELECT COUNT(*) FROM reservations r WHERE r.organization_id = c.organization_id \
         AND r.hotel_id = c.hotel_id AND r.status = c.status) AS real FROM reservation_counts c",
    )
    .fetch_all(&mut conn)
    .await
    .expect("counters");
    assert!(!rows.is_empty());
    for row in rows {
        let (n, real): (i64, i64) = (row.try_get("n").expect("n"), row.try_get("real").expect("real"));
        assert_eq!(n, real);
    }
    drop(conn);

    // A filter the counts do not answer is still counted.
    let guest = s.create("/api/guests", &acme.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let h = &acme_hotels[0];
    let body: Value = json!({"hotelId": h.id, "guestId": guest, "status": "REQUESTED", "checkInDate": day(3),
        "checkOutDate": day(4), "rooms": [{"roomTypeId": h.room_type, "price": 10000}]});
    s.post("/api/reservations", &acme.auth(), body).await.expect(200);
    let answer = s.get(&format!("/api/reservations?limit=1&guestId={guest}"), &acme.auth()).await.expect(200);
    assert_eq!(answer.header("x-total-count"), Some("1"));
}

/// A database written before migration 0020 (its migrations up to 0019 applied, reservations in it) upgrades with
/// counters equal to its reservations, per organization, hotel and status.
async fn an_upgraded_database_starts_with_the_counts_of_its_reservations(engine: Engine) {
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let directory = match engine {
        Engine::Sqlite => "sqlite",
        Engine::Postgres => "postgres",
    };
    let path = format!("{}/migrations/{directory}", env!("CARGO_MANIFEST_DIR"));
    let mut before = sqlx::migrate::Migrator::new(std::path::Path::new(&path)).await.expect("migrations");
    before.migrations = before.migrations.iter().filter(|m| m.version < 20).cloned().collect::<Vec<_>>().into();
    let db = Db::connect(&database.url, 4).await.expect("open");
    db.migrate_with(&before).await.expect("migrations up to 0019");
    let mut tx = db.begin_write().await.expect("a transaction");
    let at = "2026-01-01T00:00:00.000000Z";
    // Ids as the service draws them (UUIDs), which a later migration (0021) converts to PostgreSQL's `uuid`.
    let (org_1, org_2) = ("00000000-0000-7000-8000-0000000000a1", "00000000-0000-7000-8000-0000000000a2");
    let hotels = [
        ("00000000-0000-7000-8000-0000000000b1", org_1),
        ("00000000-0000-7000-8000-0000000000b2", org_1),
        ("00000000-0000-7000-8000-0000000000b3", org_2),
    ];
    frontdesk::store::query("INSERT INTO organizations (id, name, created_at) VALUES ($1, 'One', $3), ($2, 'Two', $3)")
        .bind(org_1)
        .bind(org_2)
        .bind(at)
        .execute(tx.conn())
        .await
        .expect("organizations");
    for (hotel, org) in hotels {
        frontdesk::store::query(
            "INSERT INTO hotels (id, organization_id, name, timezone, currency, check_in_time, check_out_time, \
             public_booking, created_at, updated_at) VALUES ($1, $2, $1, 'UTC', 'EUR', '15:00', '11:00', 0, $3, $3)",
        )
        .bind(hotel)
        .bind(org)
        .bind(at)
        .execute(tx.conn())
        .await
        .expect("hotel");
    }
    let statuses = ["CONFIRMED", "REQUESTED", "CANCELLED", "CHECKED_OUT"];
    for i in 0..37_usize {
        let (hotel, org) = hotels[i % 3];
        frontdesk::store::query(
            "INSERT INTO reservations (id, organization_id, hotel_id, status, check_in_date, check_out_date, nights, \
             start_time, end_time, adults, children, infants, total_price, currency, source, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, '2026-03-01', '2026-03-02', 1, $5, $5, 2, 0, 0, 100, 'EUR', 'DIRECT', $5, $5)",
        )
        .bind(format!("00000000-0000-7000-8000-{i:012}"))
        .bind(org)
        .bind(hotel)
        .bind(statuses[i * 7 % 4])
        .bind(at)
        .execute(tx.conn())
        .await
        .expect("reservation");
    }
    tx.commit().await.expect("commit");
    db.close().await;

    let db = Db::connect(&database.url, 4).await.expect("open");
    db.migrate().await.expect("the upgrade");
    let mut conn = db.read().await.expect("connection");
    let grouped = "SELECT organization_id, hotel_id, status, COUNT(*) AS n FROM reservations \
                   GROUP BY organization_id, hotel_id, status ORDER BY organization_id, hotel_id, status";
    let counted = "SELECT organization_id, hotel_id, status, n FROM reservation_counts WHERE n <> 0 \
                   ORDER BY organization_id, hotel_id, status";
    let read = |rows: Vec<frontdesk::store::Row>| -> Vec<(String, String, String, i64)> {
        rows.iter()
            .map(|r| {
                (r.try_get(0).expect("o"), r.try_get(1).expect("h"), r.try_get(2).expect("s"), r.try_get(3).expect("n"))
            })
            .collect()
    };
    let real = read(frontdesk::store::query(grouped).fetch_all(&mut conn).await.expect("grouped"));
    let stored = read(frontdesk::store::query(counted).fetch_all(&mut conn).await.expect("counters"));
    assert_eq!(real.len(), 12, "three hotels, four statuses each");
    assert_eq!(stored, real);
    let changes: i64 = frontdesk::store::query("SELECT COUNT(*) FROM reservation_count_changes")
        .fetch_one(&mut conn)
        .await
        .expect("changes")
        .get(0);
    assert_eq!(changes, 0, "the upgrade counts once, in the counters");
}

/// A fold of many changes leaves none of them for a total to read past (PostgreSQL keeps deleted rows until a
/// vacuum; `reservation_counts::fold` vacuums after a large one). Without it a hotel's total read every page the
/// folded changes had filled. A database of its own: in the shared one, another test's open transaction keeps
/// `VACUUM` from removing rows deleted after its snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_fold_leaves_no_dead_changes_to_read() {
    let Some(database) = TestDatabase::postgres_of_its_own_or_skip().await else { return };
    let s = TestServer::serve_database(database).await.expect("server");
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let changes = reservation_counts::VACUUM_AFTER_FOLDING * 2;
    frontdesk::store::query(
        "INSERT INTO reservations (id, organization_id, hotel_id, status, check_in_date, check_out_date, nights, \
         start_time, end_time, adults, children, infants, total_price, currency, source, created_at, updated_at, \
         reference) \
         SELECT gen_random_uuid(), $1, $2, 'CONFIRMED', current_date + n % 300, current_date + n % 300 + 2, 2, \
         now(), now(), 2, 0, 0, 10000, 'EUR', 'API', now(), now(), 'FOLD-' || n FROM generate_series(1, $3) AS n",
    )
    .bind(org.id.as_str())
    .bind(hotel.as_str())
    .bind(changes)
    .execute(&mut s.db.read().await.expect("connection"))
    .await
    .expect("reservations");
    assert_eq!(s.count("reservation_count_changes").await, changes, "one change a reservation");

    reservation_counts::fold(&s.db).await.expect("fold");

    let mut conn = s.db.read().await.expect("connection");
    let plan: Vec<String> = frontdesk::store::query(
        "EXPLAIN (ANALYZE, BUFFERS) SELECT delta FROM reservation_count_changes \
         WHERE organization_id = $1 AND hotel_id = $2",
    )
    .bind(org.id.as_str())
    .bind(hotel.as_str())
    .fetch_all(&mut conn)
    .await
    .expect("the plan")
    .iter()
    .map(|row| row.get("QUERY PLAN"))
    .collect();
    let plan = plan.join("\n");
    let buffers = buffers_read(&plan);
    assert!(buffers < 10, "{buffers} pages read for no change left:\n{plan}");
    drop(conn);
    s.stop().await;
}
