//! The operator dashboard's pages, as a signed-in operator's browser asks for them, on SQLite and PostgreSQL.
//!
//! 1. The demo hotel (`serve --demo`'s data): every page, `GET /healthz` in the same run as the floor.
//! 2. 1,000,000 reservations (`RESERVATIONS` to change it) in 25 hotels of 200 rooms over three years, each stay in a
//!    room (checked out in the past, confirmed ahead): the reservation list (first page, a status filter, a guest
//!    search, a later page) and the room rack (14 and 30 nights) of one hotel, with `/healthz` again.
//!
//! Targets on this 2-core machine: p50 under 20 ms for every page of the demo, under 50 ms for the list and the rack
//! at a million reservations.
//!
//! `cargo bench --bench dashboard` (`FRONTDESK_BENCH_ENGINES=sqlite` for one engine).

mod support;

use std::time::Instant;

use chrono::{Days, NaiveDate, TimeDelta, Utc};
use frontdesk::domain::{identity, room_types, rooms};
use frontdesk::store::sql::Conditions;
use frontdesk::store::Engine;
use support::{ms, BenchServer, Stats};

const SAMPLES: usize = 200;

async fn timed(server: &BenchServer, cookie: &str, path: &str, samples: usize) -> Stats {
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        let res =
            server.client.get(format!("{}{path}", server.base)).header("cookie", cookie).send().await.expect("request");
        let status = res.status();
        let _ = res.bytes().await;
        assert!(status.is_success(), "{path} answered {status}");
        out.push(started.elapsed());
    }
    Stats::new(out)
}

/// A session cookie for the operator with this e-mail.
async fn session(server: &BenchServer, email: &str) -> String {
    let operator = identity::find_operator_by_email(&server.db, email).await.expect("operator");
    let token = identity::issue_token(&server.db, operator, TimeDelta::days(1)).await.expect("token");
    format!("fd_session={}", token.token)
}

async fn first_id(server: &BenchServer, sql: &str) -> String {
    let mut conn = server.db.read().await.expect("conn");
    frontdesk::store::query(sql).fetch_one(&mut conn).await.expect("row").get("id")
}

fn report(name: &str, stats: &Stats, floor: f64) {
    println!("  {name:<44} {}  ({:.1}x /healthz)", stats.summary(), ms(stats.percentile(50.0)) / floor);
}

async fn demo(engine: Engine) {
    let Some(server) = BenchServer::start_empty(engine).await else { return };
    frontdesk::demo::seed(&server.db).await.expect("demo");
    let cookie = session(&server, frontdesk::demo::DEMO_EMAIL).await;
    let hotel = first_id(&server, "SELECT id FROM hotels").await;
    let stay = first_id(&server, "SELECT id FROM reservations WHERE status = 'CHECKED_IN' ORDER BY id").await;
    let guest =
        first_id(&server, "SELECT guest_id AS id FROM reservations WHERE guest_id IS NOT NULL ORDER BY id").await;
    println!("== {engine:?}: the demo hotel");
    let healthz = timed(&server, &cookie, "/healthz", SAMPLES).await;
    let floor = ms(healthz.percentile(50.0));
    report("GET /healthz", &healthz, floor);
    for (name, path) in [
        ("Today", format!("/hotels/{hotel}/today")),
        ("Room rack, 14 nights", format!("/hotels/{hotel}/rack")),
        ("Room rack, 30 nights", format!("/hotels/{hotel}/rack?days=30")),
        ("Booking requests", format!("/hotels/{hotel}/requests")),
        ("Reservations", format!("/hotels/{hotel}/reservations")),
        ("A reservation", format!("/hotels/{hotel}/reservations/{stay}")),
        ("New reservation", format!("/hotels/{hotel}/reservations/new")),
        ("Guests", format!("/hotels/{hotel}/guests")),
        ("A guest", format!("/hotels/{hotel}/guests/{guest}")),
    ] {
        report(name, &timed(&server, &cookie, &path, SAMPLES).await, floor);
    }
}

const HOTELS: usize = 25;
const ROOMS: usize = 200;
const DAYS: u64 = 3 * 365;

/// xorshift: the same data every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A stay to load: in a room, checked out when it ended before today, confirmed otherwise.
struct Loaded {
    hotel: usize,
    room: usize,
    check_in: NaiveDate,
    nights: u64,
    guest: usize,
}

/// Loads about `count` reservations: each room of each hotel booked back to back (a gap of 0 to 2 nights) from two
/// years ago to a year ahead, guests drawn from a pool of `count / 5`. Answers the first hotel's id.
async fn large(server: &BenchServer, count: usize) -> String {
    let actor = server.actor();
    let first = Utc::now().date_naive() - Days::new(2 * 365);
    let mut hotels = vec![server.hotel.clone()];
    for i in 1..HOTELS {
        let h = frontdesk::domain::hotels::create_for_organization(
            &server.db,
            &server.org,
            frontdesk::domain::hotels::HotelIn::new(format!("Hotel {i}"), "UTC", "EUR"),
        )
        .await
        .expect("hotel");
        hotels.push(h.id);
    }
    let mut types = Vec::new();
    let mut room_ids: Vec<Vec<String>> = Vec::new();
    for hotel in &hotels {
        let t = room_types::create(
            &server.db,
            &actor,
            room_types::RoomTypeIn {
                hotel_id: Some(hotel.clone()),
                name: "Double".into(),
                description: None,
                max_occupancy: 2,
                max_adults: None,
                max_children: None,
            },
        )
        .await
        .expect("room type");
        let mut ids = Vec::new();
        for n in 0..ROOMS {
            let room = rooms::create(
                &server.db,
                &actor,
                rooms::RoomIn {
                    hotel_id: None,
                    room_type_id: t.id.clone(),
                    name: format!("{}", 100 + n),
                    floor: None,
                    housekeeping_status: None,
                },
            )
            .await
            .expect("room");
            ids.push(room.id);
        }
        types.push(t.id);
        room_ids.push(ids);
    }
    let started = Instant::now();
    let guests = (count / 5).max(1);
    load_guests(server, guests).await;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let per_room = count.div_ceil(HOTELS * ROOMS);
    let span = (DAYS / per_room as u64).max(2);
    let mut batch = Vec::new();
    let mut loaded = 0;
    'rooms: for hotel in 0..HOTELS {
        for room in 0..ROOMS {
            let mut day = rng.below(3);
            while day < DAYS {
                let nights = 1 + rng.below((span - 1).clamp(1, 7));
                batch.push(Loaded {
                    hotel,
                    room,
                    check_in: first + Days::new(day),
                    nights,
                    guest: rng.below(guests as u64) as usize,
                });
                day += nights + rng.below(span.saturating_sub(nights).max(1));
                if batch.len() == support::ROWS_PER_INSERT {
                    insert(server, &hotels, &types, &room_ids, &batch).await;
                    loaded += batch.len();
                    batch.clear();
                    if loaded >= count {
                        break 'rooms;
                    }
                }
            }
        }
    }
    insert(server, &hotels, &types, &room_ids, &batch).await;
    loaded += batch.len();
    eprintln!("  loaded {loaded} reservations and {guests} guests in {:.1} s", started.elapsed().as_secs_f64());
    if server.engine == Engine::Postgres {
        frontdesk::store::query("VACUUM ANALYZE")
            .execute(&mut server.db.read().await.expect("conn"))
            .await
            .expect("vacuum");
    }
    hotels[0].clone()
}

fn guest_id(n: usize) -> String {
    format!("00000000-0000-7000-8000-{n:012}")
}

async fn load_guests(server: &BenchServer, count: usize) {
    const FIRST: [&str; 8] = ["Ana", "João", "Marie", "Lukas", "Sofia", "Liam", "Emma", "Noah"];
    const LAST: [&str; 8] = ["Silva", "Pereira", "Dubois", "Schneider", "Rossi", "Brien", "Johansson", "Williams"];
    for start in (0..count).step_by(support::ROWS_PER_INSERT) {
        let mut tx = server.db.begin_write().await.expect("tx");
        let mut c = Conditions::new(tx.engine());
        let mut rows = Vec::new();
        for n in start..(start + support::ROWS_PER_INSERT).min(count) {
            let email = format!("guest{n}@example.com");
            let v = [
                c.bind(guest_id(n)),
                c.bind(server.org.clone()),
                c.bind(FIRST[n % 8].to_string()),
                c.bind(format!("{}{}", LAST[(n / 8) % 8], n)),
                c.bind(email.clone()),
                c.bind(email),
            ];
            rows.push(format!(
                "({}, {}, NULL, {}, {}, {}, {}, NULL, NULL, NULL, NULL, '2026-01-01T00:00:00.000000Z', \
                 '2026-01-01T00:00:00.000000Z')",
                v[0], v[1], v[2], v[3], v[4], v[5]
            ));
        }
        let sql = format!(
            "INSERT INTO guests (id, organization_id, hotel_id, first_name, last_name, email, email_normalized, phone, \
             country, language, notes, created_at, updated_at) VALUES {}",
            rows.join(", ")
        );
        frontdesk::store::query_with(&sql, c).execute(tx.conn()).await.expect("guests");
        tx.commit().await.expect("commit");
    }
}

async fn insert(server: &BenchServer, hotels: &[String], types: &[String], room_ids: &[Vec<String>], stays: &[Loaded]) {
    if stays.is_empty() {
        return;
    }
    let today = Utc::now().date_naive();
    let day = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
    let mut tx = server.db.begin_write().await.expect("tx");
    let engine = tx.engine();
    let (mut r, mut rr) = (Conditions::new(engine), Conditions::new(engine));
    let (mut reservation_rows, mut room_rows) = (Vec::new(), Vec::new());
    for (i, s) in stays.iter().enumerate() {
        let id = uuid::Uuid::now_v7().to_string();
        let check_out = s.check_in + Days::new(s.nights);
        let (status, holds) = if check_out <= today { ("CHECKED_OUT", 0_i64) } else { ("CONFIRMED", 1) };
        let (cin, cout) = (day(s.check_in), day(check_out));
        let created = format!("{}T10:00:00.{:06}Z", day(s.check_in - Days::new(20)), i);
        let v = [
            r.bind(id.clone()),
            r.bind(guest_id(s.guest)),
            r.bind(server.org.clone()),
            r.bind(hotels[s.hotel].clone()),
            r.bind(status.to_string()),
            r.bind(cin.clone()),
            r.bind(cout.clone()),
            r.bind(s.nights as i64),
            r.bind(format!("{cin}T15:00:00.000000Z")),
            r.bind(format!("{cout}T11:00:00.000000Z")),
            r.bind(10000 * s.nights as i64),
            r.bind(created.clone()),
            r.bind(created),
            r.bind(support::next_reference()),
        ];
        reservation_rows.push(format!(
            "({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 2, 0, 0, {}, 'EUR', 'CHANNEL', NULL, NULL, {}, {}, {})",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]
        ));
        let w = [
            rr.bind(uuid::Uuid::now_v7().to_string()),
            rr.bind(id),
            rr.bind(hotels[s.hotel].clone()),
            rr.bind(types[s.hotel].clone()),
            rr.bind(room_ids[s.hotel][s.room].clone()),
            rr.bind(10000 * s.nights as i64),
            rr.bind(cin),
            rr.bind(cout),
            rr.bind(holds),
        ];
        room_rows.push(format!(
            "({}, {}, {}, {}, NULL, {}, 'CONFIRMED', 2, 0, 0, {}, {}, {}, {}, 0)",
            w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]
        ));
    }
    let sql = format!(
        "INSERT INTO reservations (id, guest_id, organization_id, hotel_id, status, check_in_date, check_out_date, \
         nights, start_time, end_time, adults, children, infants, total_price, currency, source, channel_reference, \
         notes, created_at, updated_at, reference) VALUES {}",
        reservation_rows.join(", ")
    );
    frontdesk::store::query_with(&sql, r).execute(tx.conn()).await.expect("reservations");
    let sql = format!(
        "INSERT INTO reservation_rooms (id, reservation_id, hotel_id, room_type_id, rate_plan_id, room_id, status, \
         adults, children, infants, price, check_in_date, check_out_date, holds_inventory, position) VALUES {}",
        room_rows.join(", ")
    );
    frontdesk::store::query_with(&sql, rr).execute(tx.conn()).await.expect("rooms");
    tx.commit().await.expect("commit");
}

async fn at_scale(engine: Engine, count: usize) {
    let Some(server) = BenchServer::start(engine).await else { return };
    println!("== {engine:?}: {count} reservations in {HOTELS} hotels of {ROOMS} rooms");
    let hotel = large(&server, count).await;
    // An operator of the benchmark's organization.
    identity::create_operator(
        &server.db,
        identity::OperatorIn {
            organization_id: &server.org,
            email: "bench@example.com",
            name: "Bench",
            password: "bench-password",
        },
    )
    .await
    .expect("operator");
    let cookie = session(&server, "bench@example.com").await;
    let healthz = timed(&server, &cookie, "/healthz", SAMPLES).await;
    let floor = ms(healthz.percentile(50.0));
    report("GET /healthz", &healthz, floor);
    let today = Utc::now().date_naive();
    let in_a_month = today + Days::new(30);
    for (name, path) in [
        ("Reservations (from today, first page)", format!("/hotels/{hotel}/reservations")),
        ("Reservations, page 20", format!("/hotels/{hotel}/reservations?from={today}&page=20")),
        (
            "Reservations, checked out, latest first",
            format!("/hotels/{hotel}/reservations?status=CHECKED_OUT&sort=checkOut&dir=desc"),
        ),
        ("Reservations, booked on, latest first", format!("/hotels/{hotel}/reservations?sort=created&dir=desc")),
        ("Reservations of a guest (e-mail)", format!("/hotels/{hotel}/reservations?guest=guest77%40example.com")),
        ("Reservations of a guest (name)", format!("/hotels/{hotel}/reservations?guest=pereira1234")),
        ("Room rack, 14 nights", format!("/hotels/{hotel}/rack")),
        ("Room rack, 30 nights from next month", format!("/hotels/{hotel}/rack?from={in_a_month}&days=30")),
        ("Today", format!("/hotels/{hotel}/today")),
    ] {
        report(name, &timed(&server, &cookie, &path, SAMPLES / 2).await, floor);
    }
}

fn main() {
    let count = std::env::var("RESERVATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            demo(engine).await;
            at_scale(engine, count).await;
        }
    });
}
