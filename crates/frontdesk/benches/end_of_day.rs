//! The end of day (the night audit) of a hotel of 300 rooms in a database of 1,000,000 reservations, on SQLite and
//! PostgreSQL: how long `end_of_day::run_due` takes to close the hotel's business date, and what it does to the API's
//! p99 while it runs (against the same API load without it, in the same run).
//!
//! The hotel under test has 4 room types of 75 rooms. Its business date D (its local today) and each of the 40 days
//! after it have 288 stays in house (made through the API, checked in, with a room-night and a city-tax line for each
//! of their 41 nights) and 12 arrivals that never come (made through the API, CONFIRMED, one night each): each close
//! posts 288 room nights and 288 city-tax lines and marks 12 no-shows (charging each its first night, a fee posted as
//! it is charged). The rest of the reservations are loaded straight into the tables: about a 21st of them in this
//! hotel (its history, and stays after those 41 days), the others over 20 hotels
//! (`support::data::reservations_at_scale`). Each loaded reservation gets a folio with a line per night (and a
//! city-tax line per night in the hotel under test), copied from lines the API made and posted when their night is
//! before D; the past stays are CHECKED_OUT, the stays over D in the other hotels CHECKED_IN. The other hotels'
//! business dates are set after the days closed here, so `run_due` closes the hotel under test only (reading every
//! hotel's row, as the job does).
//!
//! Measured: the close of D alone (the wall time of `run_due`; its `DayClosed` is checked), with the other hotels'
//! lines of D still unposted. Then, the other hotels' lines of the next days posted (as their own closes would have),
//! at each level of load in `CLIENTS` (each client alternating `GET /api/reservations/{id}` of a reservation drawn
//! from the whole database and the hotel's stay-window list of one of those days): the API's latency idle for
//! `WINDOW`, then for exactly as long as `DURING` closes of the next days run back to back (each a day of the same
//! size), then idle again.
//!
//! `cargo bench --bench end_of_day` (`RESERVATIONS=200000` for a quicker, smaller run). Target: the close finishes in
//! under 2 s, and the API's p99 while it runs is at most 1.2x its p99 without it.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{Days, NaiveDate};
use frontdesk::domain::finance::end_of_day::{self, DayClosed};
use frontdesk::domain::{hotels, room_types, rooms};
use frontdesk::store::Engine;
use serde_json::json;
use support::data::{self, Rng, SCALE_DAYS};
use support::load::{closed_loop, closed_loop_while, Call, Outcome};
use support::{ms, BenchServer, Stay};

const ROOM_TYPES: usize = 4;
const ROOMS_PER_TYPE: usize = 75;
/// Stays in house per room type on each night of the closed days.
const IN_HOUSE_PER_TYPE: usize = 72;
/// Arrivals that never come, per day (spread over the room types).
const NO_SHOWS_PER_DAY: usize = 12;
/// The days the stays in house cover: D and the days closed under load after it.
/// Closes under load at each level of load.
const DURING: u64 = 20;
/// The levels of load: clients of the API.
const CLIENTS: [usize; 2] = [8, 2];
/// The days the stays in house cover: D and the days closed under load after it.
const NIGHTS: u64 = 1 + DURING * CLIENTS.len() as u64;
const WARM_UP: Duration = Duration::from_secs(1);
const WINDOW: Duration = Duration::from_secs(5);
const TARGET: Duration = Duration::from_secs(2);

fn day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// `POST` or `PUT` of JSON through the API: the answer, which must be a success.
async fn send(s: &BenchServer, method: reqwest::Method, path: &str, body: serde_json::Value) -> serde_json::Value {
    let answer = s
        .client
        .request(method, format!("{}{path}", s.base))
        .header("authorization", s.basic())
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = answer.status();
    let text = answer.text().await.expect("body");
    assert!(status.is_success(), "{path}: {status}: {text}");
    serde_json::from_str(&text).expect("json")
}

/// The hotel under test: billing settings, room types and rooms, and the stays of the closed days through the API.
/// Answers the room types, the ids of the reservations made, and a room-night and a city-tax line of a folio.
async fn hotel_under_test(s: &BenchServer, d: NaiveDate) -> (Vec<String>, Vec<String>, String, String) {
    let actor = s.actor();
    // Billing settings are an operator's (the bench's key may not change them): set as the command line would.
    let patch: frontdesk::domain::finance::billing::BillingPatch = serde_json::from_value(json!({
        "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                     {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                     {"category": "OTHER", "rateBasisPoints": 1900}],
        "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300},
        "noShowFee": {"basis": "FIRST_NIGHT"}}))
    .expect("patch");
    frontdesk::domain::finance::billing::update(&s.db, &actor, &s.hotel, patch).await.expect("billing");
    let (mut types, mut rooms_of_type) = (Vec::new(), Vec::new());
    for t in 0..ROOM_TYPES {
        let input = room_types::RoomTypeIn {
            hotel_id: Some(s.hotel.clone()),
            name: format!("Type {t}"),
            description: None,
            max_occupancy: 2,
            max_adults: None,
            max_children: None,
        };
        let room_type = room_types::create(&s.db, &actor, input).await.expect("room type").id;
        let mut ids = Vec::new();
        for r in 0..ROOMS_PER_TYPE {
            let input = rooms::RoomIn {
                hotel_id: None,
                room_type_id: room_type.clone(),
                name: format!("{}{r:02}", t + 1),
                floor: None,
                housekeeping_status: None,
            };
            ids.push(rooms::create(&s.db, &actor, input).await.expect("room").id);
        }
        types.push(room_type);
        rooms_of_type.push(ids);
    }
    let started = Instant::now();
    let mut made = Vec::new();
    // In house: each in a room of its own from D for NIGHTS nights, checked in.
    for (t, room_type) in types.iter().enumerate() {
        for room in rooms_of_type[t].iter().take(IN_HOUSE_PER_TYPE) {
            let body = json!({"hotelId": s.hotel, "checkInDate": day(d), "checkOutDate": day(d + Days::new(NIGHTS)),
                              "rooms": [{"roomTypeId": room_type, "roomId": room, "price": 10_000 * NIGHTS}]});
            let r = send(s, reqwest::Method::POST, "/api/reservations", body).await;
            let id = r["id"].as_str().expect("id").to_string();
            let r = send(s, reqwest::Method::PUT, &format!("/api/reservations/{id}"), json!({"status": "CHECKED_IN"}))
                .await;
            assert_eq!(r["status"], "CHECKED_IN");
            made.push(id);
        }
    }
    // Arrivals that will not come: NO_SHOWS_PER_DAY on each of the closed days, one night each.
    for k in 0..NIGHTS {
        for a in 0..NO_SHOWS_PER_DAY {
            let arrival = d + Days::new(k);
            let body = json!({"hotelId": s.hotel, "checkInDate": day(arrival),
                              "checkOutDate": day(arrival + Days::new(1)),
                              "rooms": [{"roomTypeId": types[a % ROOM_TYPES], "price": 10_000}]});
            made.push(
                send(s, reqwest::Method::POST, "/api/reservations", body).await["id"].as_str().expect("id").into(),
            );
        }
    }
    eprintln!("  made {} reservations through the API in {:.1} s", made.len(), started.elapsed().as_secs_f64());
    // A line of each source the API made, for the loaded folios to copy.
    let line = |source: &'static str| async move {
        let sql = format!("SELECT CAST(id AS TEXT) FROM folio_lines WHERE source = '{source}' LIMIT 1");
        let row = frontdesk::store::query(&sql).fetch_one(&mut s.db.read().await.expect("conn")).await.expect("line");
        row.try_get::<String, _>(0).expect("id")
    };
    (types, made, line("ROOM_NIGHT").await, line("CITY_TAX").await)
}

/// The history of the hotel under test: `count` stays over the data set's days that neither overlap the closed days
/// nor come within a day of them, loaded straight into the tables.
async fn history(s: &BenchServer, types: &[String], d: NaiveDate, count: usize) -> Vec<String> {
    let (quiet_from, quiet_to) = (d - Days::new(1), d + Days::new(NIGHTS + 1));
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut ids = Vec::with_capacity(count);
    while ids.len() < count {
        let mut stays = Vec::new();
        while stays.len() < support::ROWS_PER_INSERT.min(count - ids.len()) {
            let check_in = data::scale_start() + Days::new(rng.below(SCALE_DAYS));
            let nights = 1 + rng.below(7);
            if check_in < quiet_to && check_in + Days::new(nights) > quiet_from {
                continue;
            }
            let room_type_id = types[rng.below(types.len() as u64) as usize].clone();
            stays.push(Stay { hotel_id: s.hotel.clone(), room_type_id, check_in, nights });
        }
        ids.extend(support::insert_stays(s, &stays).await);
    }
    ids
}

/// What the domain's writes would have left on the loaded reservations: the past ones CHECKED_OUT, those over D
/// in the other hotels CHECKED_IN, and a folio for each with its lines, copied from the lines the API made.
async fn folios_of_loaded(s: &BenchServer, d: NaiveDate, room_night: &str, city_tax: &str) {
    let started = Instant::now();
    let (d, hotel) = (day(d), &s.hotel);
    let mut statements = vec![
        format!(
            "UPDATE reservations SET status = 'CHECKED_OUT' WHERE status = 'CONFIRMED' AND check_out_date <= '{d}'"
        ),
        format!(
            "UPDATE reservations SET status = 'CHECKED_IN' WHERE status = 'CONFIRMED' AND check_in_date <= '{d}' \
             AND check_out_date > '{d}' AND hotel_id <> '{hotel}'"
        ),
        format!(
            "UPDATE reservation_rooms SET holds_inventory = FALSE WHERE holds_inventory AND check_out_date <= '{d}'"
        ),
    ];
    // Ids of the loaded rows: the reservation's with the UUID's version digit replaced (f: the folio; e, d: its
    // room-night and city-tax lines, the night in the last two digits). The API's ids are version 7.
    let columns = "id, folio_id, position, kind, source, service_date, description, quantity, category, vat_rate_bp, \
                   gross, net, vat, currency, made_by, created_at, posted_at";
    let lines = |template: &str, digit: char, position: u32, only_hotel: bool| -> String {
        let hotel_filter = if only_hotel { format!("AND r.hotel_id = '{hotel}'") } else { String::new() };
        match s.engine {
            Engine::Sqlite => format!(
                "WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < 29) \
                 INSERT INTO folio_lines ({columns}) \
                 SELECT substr(r.id, 1, 14) || '{digit}' || substr(r.id, 16, 19) || printf('%02x', n.k), f.id, \
                        2 * n.k + {position}, t.kind, t.source, date(r.check_in_date, '+' || n.k || ' days'), \
                        t.description, t.quantity, t.category, t.vat_rate_bp, t.gross, t.net, t.vat, t.currency, \
                        t.made_by, r.created_at, \
                        CASE WHEN date(r.check_in_date, '+' || n.k || ' days') < '{d}' \
                             THEN date(r.check_in_date, '+' || (n.k + 1) || ' days') || 'T03:00:00.000000Z' END \
                 FROM folios f JOIN reservations r ON r.id = f.reservation_id JOIN n ON n.k < r.nights \
                 JOIN folio_lines t ON t.id = '{template}' \
                 WHERE substr(f.id, 15, 1) = 'f' {hotel_filter}"
            ),
            Engine::Postgres => format!(
                "INSERT INTO folio_lines ({columns}) \
                 SELECT overlay(overlay(r.id::text placing '{digit}' from 15) placing lpad(to_hex(n.k), 2, '0') \
                                from 35)::uuid, f.id, \
                        2 * n.k + {position}, t.kind, t.source, r.check_in_date + n.k, \
                        t.description, t.quantity, t.category, t.vat_rate_bp, t.gross, t.net, t.vat, t.currency, \
                        t.made_by, r.created_at, \
                        CASE WHEN r.check_in_date + n.k < DATE '{d}' \
                             THEN (r.check_in_date + n.k + 1 + TIME '03:00') AT TIME ZONE 'UTC' END \
                 FROM folios f JOIN reservations r ON r.id = f.reservation_id \
                 CROSS JOIN LATERAL generate_series(0, r.nights::int - 1) AS n(k) \
                 JOIN folio_lines t ON t.id = '{template}' \
                 WHERE substr(f.id::text, 15, 1) = 'f' {hotel_filter}"
            ),
        }
    };
    statements.push(match s.engine {
        Engine::Sqlite => "INSERT INTO folios (id, reservation_id, currency, created_at) \
                           SELECT substr(r.id, 1, 14) || 'f' || substr(r.id, 16), r.id, r.currency, r.created_at \
                           FROM reservations r WHERE NOT EXISTS (SELECT 1 FROM folios f WHERE f.reservation_id = r.id)"
            .to_string(),
        Engine::Postgres => "INSERT INTO folios (id, reservation_id, currency, created_at) \
                             SELECT overlay(r.id::text placing 'f' from 15)::uuid, r.id, r.currency, r.created_at \
                             FROM reservations r \
                             WHERE NOT EXISTS (SELECT 1 FROM folios f WHERE f.reservation_id = r.id)"
            .to_string(),
    });
    statements.push(lines(room_night, 'e', 0, false));
    statements.push(lines(city_tax, 'd', 1, true));
    let mut tx = s.db.begin_write().await.expect("tx");
    for sql in &statements {
        frontdesk::store::query(sql).execute(tx.conn()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    tx.commit().await.expect("commit");
    // What the service's own rounds do after a burst of writes: fold the list totals' changes.
    frontdesk::store::reservation_counts::fold(&s.db).await.expect("fold");
    data::vacuum(s).await;
    let count = |sql: &'static str| async move {
        let row = frontdesk::store::query(sql).fetch_one(&mut s.db.read().await.expect("conn")).await.expect(sql);
        row.try_get::<i64, _>(0).expect("count")
    };
    eprintln!(
        "  loaded {} folios and {} folio lines ({} unposted) in {:.1} s",
        count("SELECT COUNT(*) FROM folios").await,
        count("SELECT COUNT(*) FROM folio_lines").await,
        count("SELECT COUNT(*) FROM folio_lines WHERE posted_at IS NULL").await,
        started.elapsed().as_secs_f64()
    );
}

/// The instant the business day `date` of a UTC hotel has ended (03:00, the default end of day, the next day).
fn ended(date: NaiveDate) -> chrono::DateTime<chrono::Utc> {
    (date + Days::new(1)).and_hms_opt(3, 0, 0).expect("time").and_utc()
}

/// Runs the end of day as the job does when `date` has ended: what it closed, and how long it took.
async fn close(s: &BenchServer, date: NaiveDate) -> (DayClosed, Duration) {
    let started = Instant::now();
    let mut closed = end_of_day::run_due(&s.db, ended(date)).await.expect("end of day");
    let took = started.elapsed();
    assert_eq!(closed.len(), 1, "one hotel closes: {closed:?}");
    let closed = closed.remove(0);
    assert_eq!((closed.hotel_id.as_str(), closed.closed), (s.hotel.as_str(), date));
    // Each close posts the night of every stay in house: its room night and its city tax (a no-show's fee is
    // posted as it is charged).
    assert_eq!(closed.no_shows.len(), NO_SHOWS_PER_DAY, "no-shows of {date}");
    let expected = (ROOM_TYPES * IN_HOUSE_PER_TYPE * 2) as u64;
    assert_eq!(closed.lines_posted, expected, "lines posted on {date}");
    (closed, took)
}

fn p99(o: &Outcome) -> f64 {
    ms(o.latency.percentile(99.0))
}

async fn run(engine: Engine, count: usize) {
    let Some(s) = BenchServer::start(engine).await else { return };
    println!("== {engine:?} ({count} reservations)");
    let hotel = hotels::get(&s.db, &s.actor(), &s.hotel).await.expect("hotel");
    let d = hotel.today();
    let (types, made, room_night, city_tax) = hotel_under_test(&s, d).await;
    // About as many reservations as each of the 20 other hotels has, in the hotel under test.
    let own = (count / (data::SCALE_HOTELS + 1)).saturating_sub(made.len());
    let own_ids = history(&s, &types, d, own).await;
    let others = data::reservations_at_scale(&s, count - own - made.len()).await;
    folios_of_loaded(&s, d, &room_night, &city_tax).await;
    {
        let mut tx = s.db.begin_write().await.expect("tx");
        for (_, id) in frontdesk::store::business_days::hotels(tx.conn()).await.expect("hotels") {
            let date = if id == s.hotel { d } else { d + Days::new(NIGHTS + 10) };
            frontdesk::store::business_days::ensure(tx.conn(), &id, date).await.expect("business day");
        }
        tx.commit().await.expect("commit");
    }
    println!(
        "  hotel under test: {} rooms, {} reservations ({} through the API); business date {d}",
        ROOM_TYPES * ROOMS_PER_TYPE,
        own + made.len(),
        made.len()
    );

    // The API's load: a reservation drawn from the whole database, then a day's stays of the hotel under test.
    let ids: Arc<Vec<String>> = Arc::new(others.ids.iter().chain(&own_ids).chain(&made).cloned().collect());
    let call = {
        let (auth, hotel) = (s.basic(), s.hotel.clone());
        Arc::new(move |client: u64, n: u64| {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (client << 32 | n).wrapping_add(1));
            let path = match n % 2 {
                0 => format!("/api/reservations/{}", ids[rng.below(ids.len() as u64) as usize]),
                _ => {
                    let from = d + Days::new(rng.below(NIGHTS));
                    format!(
                        "/api/reservations?hotelId={hotel}&stayDateFrom={}&stayDateTo={}&limit=50",
                        day(from),
                        day(from + Days::new(1))
                    )
                }
            };
            Call::get(path).header("authorization", auth.clone())
        })
    };
    let baseline = s.baseline(300).await;
    println!("  baseline GET /api/hotels/{{id}}, one client: {}", baseline.summary());

    // (1) The close of D, nothing else running.
    let (closed, took) = close(&s, d).await;
    println!(
        "  end of day of {d}, alone: {:.0} ms ({} lines posted, {} no-shows); target under {} ms: {}",
        ms(took),
        closed.lines_posted,
        closed.no_shows.len(),
        TARGET.as_millis(),
        if took < TARGET { "met" } else { "MISSED" }
    );

    // The other hotels' closes of the days closed under load, as their own end of day would have done them: the
    // hotel under test then finds its own lines only (outside every measured window).
    post_other_hotels(&s, d + Days::new(NIGHTS)).await;

    // (2) At each level of load: the API idle, then while closes of the next days run back to back, then idle.
    let mut next = d;
    for clients in CLIENTS {
        let idle = closed_loop(&s.base, clients, WARM_UP, WINDOW, call.clone()).await;
        let closes = async {
            let mut times = Vec::new();
            for _ in 0..DURING {
                next = next + Days::new(1);
                times.push(close(&s, next).await.1);
            }
            times
        };
        let (during, times) = closed_loop_while(&s.base, clients, WARM_UP, closes, call.clone()).await;
        let after = closed_loop(&s.base, clients, WARM_UP, WINDOW, call.clone()).await;
        let busy: Duration = times.iter().sum();
        let slowest = times.iter().max().copied().unwrap_or_default();
        println!(
            "  {clients} clients: {} closes under load, {:.0} ms each on average, slowest {:.0} ms, {:.1} s back to back",
            times.len(),
            ms(busy) / times.len().max(1) as f64,
            ms(slowest),
            busy.as_secs_f64()
        );
        println!("    API idle before:      {} ({} requests)", idle.summary(), idle.requests);
        println!("    API during the closes: {} ({} requests)", during.summary(), during.requests);
        println!("    API idle after:       {} ({} requests)", after.summary(), after.requests);
        let ratio = p99(&during) / p99(&idle).max(0.001);
        println!(
            "    p99 during / idle before: {ratio:.2}x (during / idle after: {:.2}x); target at most 1.20x: {}",
            p99(&during) / p99(&after).max(0.001),
            if ratio <= 1.2 { "met" } else { "MISSED" }
        );
    }
}

/// Posts the other hotels' lines dated through `through`.
async fn post_other_hotels(s: &BenchServer, through: NaiveDate) {
    let sql = format!(
        "UPDATE folio_lines SET posted_at = '{}' WHERE posted_at IS NULL AND service_date <= '{}' \
         AND folio_id IN (SELECT f.id FROM folios f JOIN reservations r ON r.id = f.reservation_id \
                          WHERE r.hotel_id <> '{}')",
        ended(through).format("%Y-%m-%dT%H:%M:%S%.6fZ"),
        day(through),
        s.hotel
    );
    let mut tx = s.db.begin_write().await.expect("tx");
    frontdesk::store::query(&sql).execute(tx.conn()).await.expect("other hotels' lines");
    tx.commit().await.expect("commit");
    data::vacuum(s).await;
}

fn main() {
    let count = std::env::var("RESERVATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine, count).await;
        }
    });
}
