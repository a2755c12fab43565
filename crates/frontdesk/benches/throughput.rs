//! Throughput under 32 concurrent clients, on SQLite and PostgreSQL: a release `frontdesk serve` process driven by a
//! closed-loop generator (32 kept-alive connections, as `wrk -c32`), every figure next to `GET /healthz` measured by
//! the same generator in the same run (before and after the others; the ratio uses their mean).
//!
//! One database holds three data sets:
//! - the demo hotel (`serve --demo`): public availability of 7-night stays starting on rotating dates;
//! - the availability benchmark's hotel (20 room types x 5 plans, 10,000 stays; `support::data`): the same search,
//!   about 80 offers per answer;
//! - 1,000,000 reservations (`RESERVATIONS` to change it) over 20 hotels and 3 years: the stay-window list a channel
//!   manager polls (`hotelId`, 7-day window, `limit=50`, `sortField=checkInDate`, rotating hotels and dates), a
//!   hotel's list (`hotelId`, `limit=50`, the default order, its total from the counts; rotating hotels), the
//!   organization's list (`limit=50` alone: the first page of all 1,010,000) and a single reservation with its rooms
//!   and folio (random ids).
//!
//! Rate limits are off in the measured process: one client address sending 30,000 requests a second is exactly what
//! they exist to refuse; `benches/rate_limits.rs` measures what they cost.
//!
//! `cargo bench --bench throughput` (`FRONTDESK_BENCH_ENGINES=postgres` for one engine, `THROUGHPUT_SECONDS` for the
//! measured window of each endpoint, default 8).
//!
//! With `FRONTDESK_BENCH_POSTGRAPHILE=<dir>` (see `benches/postgraphile/README.md`), the PostgreSQL run also starts
//! PostGraphile on the same tables and measures the same list pages and single reservation through it, after checking
//! that both services answer the same rows.

mod support;

use std::sync::Arc;
use std::time::Duration;

use chrono::{Days, Utc};
use frontdesk::store::Engine;
use support::data::{self, scale_date, SCALE_DAYS, SCALE_HOTELS};
use support::load::{closed_loop, Call, Outcome};
use support::{BenchServer, ServeProcess};

const CLIENTS: usize = 32;
const WARM_UP: Duration = Duration::from_secs(2);
/// Nights of the stay windows and searches.
const NIGHTS: u64 = 7;
const LIST_LIMIT: usize = 50;

/// A number for client `c`'s `n`th request, spread so that clients do not walk in step.
fn spread(c: u64, n: u64) -> u64 {
    let mut x = (c << 32 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 16
}

fn window() -> Duration {
    let seconds = std::env::var("THROUGHPUT_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    Duration::from_secs(seconds)
}

type MakeCall = Arc<dyn Fn(u64, u64) -> Call + Send + Sync>;

async fn measure(base: &str, call: MakeCall) -> Outcome {
    closed_loop(base, CLIENTS, WARM_UP, window(), call).await
}

/// Public availability of `hotel` for 7-night stays of 2 adults checking in on one of the next `days` days.
fn searches(hotel: &str, days: u64) -> MakeCall {
    let (hotel, today) = (hotel.to_string(), Utc::now().date_naive());
    Arc::new(move |c, n| {
        let from = today + Days::new(1 + spread(c, n) % days);
        let to = from + Days::new(NIGHTS);
        Call::get(format!("/api/hotels/{hotel}/availability?checkInDate={from}&checkOutDate={to}&adults=2"))
    })
}

/// The organization's first page in the default order: `GET /api/reservations?limit=50`.
const ORGANIZATION_LIST_PATH: &str = "/api/reservations?limit=50";

/// A hotel's first page in the default order: `GET /api/reservations?limit=50` with the hotel filter.
fn hotel_list_path(hotel: &str) -> String {
    format!("/api/reservations?hotelId={hotel}&limit={LIST_LIMIT}")
}

fn list_path(hotel: &str, from: u64) -> String {
    format!(
        "/api/reservations?hotelId={hotel}&stayDateFrom={}&stayDateTo={}&limit={LIST_LIMIT}&sortField=checkInDate",
        scale_date(from),
        scale_date(from + NIGHTS)
    )
}

async fn run(engine: Engine, count: usize) {
    let Some(mut server) = BenchServer::start_empty(engine).await else { return };
    println!("== {engine:?}: {CLIENTS} clients, {} s per endpoint after {} s of warm-up", window().as_secs(), 2);
    // The demo seeds only an empty database: first.
    let demo = frontdesk::demo::seed(&server.db).await.expect("demo");
    let demo_hotel = demo.hotel_id.expect("the demo hotel");
    server.seed_tenant().await;
    data::availability_hotel(&server, &server.hotel).await;
    let scale = data::reservations_at_scale(&server, count).await;
    let url = server.database_url().expect("database url");
    // An earlier build measured in the same run, against the same data, after this one (before/after ratios that
    // the machine's noise affects alike).
    let earlier = std::env::var_os("FRONTDESK_BENCH_COMPARE_WITH").map(std::path::PathBuf::from);
    let mut measured = Vec::new();
    for binary in std::iter::once(support::binary()).chain(earlier) {
        let serve = ServeProcess::start_binary(&binary, &url, &[("FRONTDESK_RATE_LIMITS", "false")]).await;
        let figures = endpoints(&serve, &server, &demo_hotel, &scale).await;
        println!("  {}", binary.display());
        figures.report(count);
        measured.push((serve, figures));
    }
    let (serve, figures) = &measured[0];
    if let Some((_, before)) = measured.get(1) {
        println!("  this build / the earlier one, each as % of its own /healthz:");
        for (name, now, then) in figures.rows(count).iter().zip(before.rows(count)).map(|((n, a), (_, b))| (n, a, b)) {
            let (now, then) = (now.per_second / figures.floor(), then.per_second / before.floor());
            println!("    {name:<48} {:>5.1}% / {:>5.1}% = {:.2}x", 100.0 * now, 100.0 * then, now / then);
        }
    }
    if engine == Engine::Postgres {
        if let Ok(dir) = std::env::var("FRONTDESK_BENCH_POSTGRAPHILE") {
            for workers in [1, 2] {
                postgraphile(&server, serve, &dir, workers, &scale, figures).await;
            }
        }
    }
}

/// What one build answered, endpoint by endpoint.
struct Figures {
    floor_before: Outcome,
    floor_after: Outcome,
    demo_search: Outcome,
    bench_search: Outcome,
    list: Outcome,
    hotel_list: Outcome,
    organization_list: Outcome,
    single: Outcome,
}

impl Figures {
    /// Mean `/healthz` requests per second, before and after the others.
    fn floor(&self) -> f64 {
        (self.floor_before.per_second + self.floor_after.per_second) / 2.0
    }

    fn rows(&self, count: usize) -> Vec<(String, &Outcome)> {
        vec![
            ("GET /healthz (before)".into(), &self.floor_before),
            ("GET /healthz (after)".into(), &self.floor_after),
            ("availability, demo hotel, 7 nights".into(), &self.demo_search),
            ("availability, benchmark hotel, 7 nights".into(), &self.bench_search),
            (format!("reservation list, {count} reservations, limit {LIST_LIMIT}"), &self.list),
            (format!("a hotel's reservations, limit {LIST_LIMIT}"), &self.hotel_list),
            (format!("the organization's reservations, limit {LIST_LIMIT}"), &self.organization_list),
            ("one reservation with rooms and folio".into(), &self.single),
        ]
    }

    fn report(&self, count: usize) {
        for (name, outcome) in self.rows(count) {
            let share = 100.0 * outcome.per_second / self.floor();
            println!("    {name:<48} {}  = {share:>5.1}% of /healthz", outcome.summary());
        }
        let p50 = |outcome: &Outcome| support::ms(outcome.latency.percentile(50.0));
        println!(
            "    p50: stay-window list {:.2} ms, a hotel's list {:.2} ms, the organization's {:.2} ms (target under 10 ms \
             at a million reservations)",
            p50(&self.list),
            p50(&self.hotel_list),
            p50(&self.organization_list)
        );
    }
}

/// Every endpoint of the benchmark, through `serve`, with `/healthz` first and last.
async fn endpoints(serve: &ServeProcess, server: &BenchServer, demo_hotel: &str, scale: &data::AtScale) -> Figures {
    let auth = server.basic();
    // On stderr as each phase starts, so that a profiler (`perf record -p <serve's pid>`) can be aimed at one.
    let phase = |name: &str| eprintln!("  [{}] measuring {name}", chrono::Utc::now().format("%H:%M:%S"));
    let healthz: MakeCall = Arc::new(|_, _| Call::get("/healthz"));
    phase("/healthz");
    let floor_before = measure(&serve.base, healthz.clone()).await;
    phase("availability, demo hotel");
    let demo_search = measure(&serve.base, searches(demo_hotel, 60)).await;
    phase("availability, benchmark hotel");
    let bench_search = measure(&serve.base, searches(&server.hotel, 300)).await;
    let list_call: MakeCall = {
        let (hotels, auth) = (Arc::new(scale.hotels.clone()), auth.clone());
        Arc::new(move |c, n| {
            let x = spread(c, n);
            let hotel = &hotels[(x % SCALE_HOTELS as u64) as usize];
            Call::get(list_path(hotel, (x >> 8) % (SCALE_DAYS - 30))).header("authorization", auth.clone())
        })
    };
    phase("reservation list");
    let list = measure(&serve.base, list_call).await;
    let hotel_list_call: MakeCall = {
        let (hotels, auth) = (Arc::new(scale.hotels.clone()), auth.clone());
        Arc::new(move |c, n| {
            let hotel = &hotels[(spread(c, n) % SCALE_HOTELS as u64) as usize];
            Call::get(hotel_list_path(hotel)).header("authorization", auth.clone())
        })
    };
    phase("a hotel's reservations");
    let hotel_list = measure(&serve.base, hotel_list_call).await;
    let organization_list_call: MakeCall = {
        let auth = auth.clone();
        Arc::new(move |_, _| Call::get(ORGANIZATION_LIST_PATH).header("authorization", auth.clone()))
    };
    phase("the organization's reservations");
    let organization_list = measure(&serve.base, organization_list_call).await;
    let single_call: MakeCall = {
        let ids = Arc::new(scale.ids.clone());
        Arc::new(move |c, n| {
            let id = &ids[(spread(c, n) % ids.len() as u64) as usize];
            Call::get(format!("/api/reservations/{id}")).header("authorization", auth.clone())
        })
    };
    phase("one reservation");
    let single = measure(&serve.base, single_call).await;
    phase("/healthz again");
    let floor_after = measure(&serve.base, healthz).await;
    Figures { floor_before, floor_after, demo_search, bench_search, list, hotel_list, organization_list, single }
}

/// The same list page and single reservation through PostGraphile on the same tables, after checking that both
/// services answer the same rows; Frontdesk's figures are `frontdesk`, measured before in this run.
async fn postgraphile(
    server: &BenchServer,
    serve: &ServeProcess,
    dir: &str,
    workers: usize,
    scale: &data::AtScale,
    frontdesk: &Figures,
) {
    let (url, schema) = (server.database_url().expect("url"), server.postgres_schema().expect("schema"));
    let Some(graphile) = support::postgraphile::PostGraphile::start(dir, &url, schema, workers) else { return };
    // The tuned query gets what Frontdesk adds itself: the organization and each hotel's longest-stay bound.
    let mut longest = std::collections::HashMap::new();
    for hotel in &scale.hotels {
        let mut conn = server.db.read().await.expect("conn");
        let row = frontdesk::store::query("SELECT MAX(nights) AS n FROM reservations WHERE hotel_id = $1")
            .bind(hotel)
            .fetch_one(&mut conn)
            .await
            .expect("longest stay");
        longest.insert(hotel.clone(), row.get::<i64, _>("n") as u64);
    }
    let list_variables = {
        let (org, hotels, longest) = (server.org.clone(), scale.hotels.clone(), longest.clone());
        move |hotel: usize, from: u64| {
            let hotel = &hotels[hotel];
            let bound = from.saturating_sub(longest[hotel]);
            serde_json::json!({
                "organizationId": org, "hotelId": hotel, "checkInFrom": scale_date(bound),
                "from": scale_date(from), "to": scale_date(from + NIGHTS), "first": LIST_LIMIT,
            })
        }
    };

    // Both answer the same rows: 20 pages of each list (ids in order and totals), the organization's page, and 20
    // reservations (their rooms).
    let ids = |rows: &[serde_json::Value]| rows.iter().map(|r| r["id"].clone()).collect::<Vec<_>>();
    let same_page = |ours: (i64, Vec<serde_json::Value>), theirs: serde_json::Value, what: &str| {
        let theirs = &theirs["allReservations"];
        assert_eq!(theirs["totalCount"].as_i64(), Some(ours.0), "the same total: {what}");
        assert_eq!(ids(theirs["nodes"].as_array().expect("nodes")), ids(&ours.1), "the same page: {what}");
    };
    let organization_variables = serde_json::json!({ "organizationId": server.org, "first": LIST_LIMIT });
    same_page(
        our_page(server, serve, ORGANIZATION_LIST_PATH).await,
        graphile.data(&server.client, &graphile.organization_list, organization_variables.clone()).await,
        "the organization",
    );
    for n in 0..20u64 {
        let (hotel, from) = ((n % SCALE_HOTELS as u64) as usize, n * 50 % (SCALE_DAYS - 30));
        same_page(
            our_page(server, serve, &list_path(&scale.hotels[hotel], from)).await,
            graphile.data(&server.client, &graphile.stay_window, list_variables(hotel, from)).await,
            "a stay window",
        );
        let variables =
            serde_json::json!({ "organizationId": server.org, "hotelId": scale.hotels[hotel], "first": LIST_LIMIT });
        same_page(
            our_page(server, serve, &hotel_list_path(&scale.hotels[hotel])).await,
            graphile.data(&server.client, &graphile.hotel_list, variables).await,
            "a hotel",
        );

        let id = &scale.ids[(spread(7, n) % scale.ids.len() as u64) as usize];
        let ours: serde_json::Value = server
            .client
            .get(format!("{}/api/reservations/{id}", serve.base))
            .header("authorization", server.basic())
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("get json");
        let theirs = graphile.data(&server.client, &graphile.reservation, serde_json::json!({ "id": id })).await;
        let theirs = &theirs["reservationById"];
        assert_eq!(theirs["id"], ours["id"]);
        let rooms = theirs["reservationRoomsByReservationIdList"].as_array().expect("rooms");
        assert_eq!(ids(rooms), ids(ours["rooms"].as_array().expect("rooms")), "the same rooms");
        assert_eq!(theirs["folioByReservationId"].is_null(), ours["folio"].is_null(), "the same folio");
    }

    let list_call: MakeCall = {
        let (query, variables) = (graphile.stay_window.clone(), list_variables.clone());
        Arc::new(move |c, n| {
            let x = spread(c, n);
            let vars = variables((x % SCALE_HOTELS as u64) as usize, (x >> 8) % (SCALE_DAYS - 30));
            support::postgraphile::PostGraphile::call(&query, vars)
        })
    };
    let list = measure(&graphile.base, list_call).await;
    let hotel_list_call: MakeCall = {
        let (query, org, hotels) = (graphile.hotel_list.clone(), server.org.clone(), Arc::new(scale.hotels.clone()));
        Arc::new(move |c, n| {
            let hotel = &hotels[(spread(c, n) % SCALE_HOTELS as u64) as usize];
            let variables = serde_json::json!({ "organizationId": org, "hotelId": hotel, "first": LIST_LIMIT });
            support::postgraphile::PostGraphile::call(&query, variables)
        })
    };
    let hotel_list = measure(&graphile.base, hotel_list_call).await;
    let organization_list_call: MakeCall = {
        let query = graphile.organization_list.clone();
        Arc::new(move |_, _| support::postgraphile::PostGraphile::call(&query, organization_variables.clone()))
    };
    let organization_list = measure(&graphile.base, organization_list_call).await;
    let single_call: MakeCall = {
        let (query, ids) = (graphile.reservation.clone(), Arc::new(scale.ids.clone()));
        Arc::new(move |c, n| {
            let id = &ids[(spread(c, n) % ids.len() as u64) as usize];
            support::postgraphile::PostGraphile::call(&query, serde_json::json!({ "id": id }))
        })
    };
    let single = measure(&graphile.base, single_call).await;
    let label = format!("PostGraphile 4, {workers} Node process{}", if workers == 1 { "" } else { "es" });
    println!("  {label}: the same pages of each list and 20 reservations answered identically");
    for (name, theirs, ours) in [
        ("stay-window list:  ", &list, &frontdesk.list),
        ("a hotel's list:    ", &hotel_list, &frontdesk.hotel_list),
        ("organization list: ", &organization_list, &frontdesk.organization_list),
        ("single reservation:", &single, &frontdesk.single),
    ] {
        println!("    {name} {}  -> Frontdesk {:.1}x", theirs.summary(), ours.per_second / theirs.per_second);
    }
}

/// Frontdesk's answer to a list `path`: its `X-Total-Count` and its records.
async fn our_page(server: &BenchServer, serve: &ServeProcess, path: &str) -> (i64, Vec<serde_json::Value>) {
    let answer = server
        .client
        .get(format!("{}{path}", serve.base))
        .header("authorization", server.basic())
        .send()
        .await
        .expect("list");
    let total = answer.headers()["x-total-count"].to_str().expect("total").parse().expect("total");
    (total, answer.json().await.expect("list json"))
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
