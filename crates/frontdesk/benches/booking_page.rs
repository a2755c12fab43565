//! The public booking page, as a guest's browser asks for it, on SQLite and PostgreSQL: the hotel of the
//! availability benchmark (20 room types x 5 rate plans, 200 rooms, 10,000 stays over the next year) searched for
//! 7-night stays starting on rotating dates.
//!
//! In the same run and in interleaved rounds (so that the machine's noise falls on all alike): `GET /healthz` (the
//! floor), the JSON availability endpoint, the results page (the same search rendered as HTML) and the guest form
//! of one chosen offer (the offer rechecked against the hotel's availability). Reports p50/p95/p99 and each p50 as a
//! multiple of the floor's. Target: the results page's p50 under 10 ms.
//!
//! `cargo bench --bench booking_page` (`FRONTDESK_BENCH_ENGINES=sqlite` for one engine, `ROUNDS=…` for more).

mod support;

use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use frontdesk::store::Engine;
use support::{ms, BenchServer, Stats};

/// One GET, timed to the last byte of the body; answers the body.
async fn timed_get(server: &BenchServer, path: &str, samples: &mut Vec<Duration>) -> String {
    let started = Instant::now();
    let res = server.client.get(format!("{}{path}", server.base)).send().await.expect("request");
    let status = res.status();
    let body = res.text().await.expect("body");
    samples.push(started.elapsed());
    assert!(status.is_success(), "{path} answered {status}: {body}");
    body
}

fn report(name: &str, stats: &Stats, floor: f64) {
    println!("  {name:<42} {}  p50 = {:.1}x /healthz", stats.summary(), ms(stats.percentile(50.0)) / floor);
}

async fn run(engine: Engine, rounds: u64) {
    let Some(server) = BenchServer::start(engine).await else { return };
    println!("== {engine:?}");
    let started = Instant::now();
    support::data::availability_hotel(&server, &server.hotel).await;
    eprintln!("  seeded in {:.1} s", started.elapsed().as_secs_f64());
    let today = Utc::now().date_naive();
    let hotel = server.hotel.clone();
    let stay = |n: u64| {
        let from = today + Days::new(10 + n % 300);
        format!("checkInDate={from}&checkOutDate={}&adults=2", from + Days::new(7))
    };

    // Before timing: the page shows exactly the offers of the JSON answer, and the chosen offer opens its form.
    let json = server.client.get(format!("{}/api/hotels/{hotel}/availability?{}", server.base, stay(0))).send().await;
    let offers: Vec<serde_json::Value> = json.expect("json").json().await.expect("offers");
    let mut warm = Vec::new();
    let page = timed_get(&server, &format!("/book/{hotel}?{}", stay(0)), &mut warm).await;
    assert_eq!(page.matches("class=\"offer card\"").count(), offers.len(), "the page shows the JSON's offers");
    assert!(!offers.is_empty());
    let choose = |page: &str| {
        let start = page.find("/details?offer=").expect("a Choose link");
        format!("/book/{hotel}{}", &page[start..start + page[start..].find('"').expect("link end")])
    };

    let (mut healthz, mut api, mut results, mut details) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut shown = 0usize;
    for n in 0..rounds {
        timed_get(&server, "/healthz", &mut healthz).await;
        timed_get(&server, &format!("/api/hotels/{hotel}/availability?{}", stay(n)), &mut api).await;
        let page = timed_get(&server, &format!("/book/{hotel}?{}", stay(n)), &mut results).await;
        shown += page.matches("class=\"offer card\"").count();
        let form = timed_get(&server, &choose(&page), &mut details).await;
        assert!(form.contains("Who is staying"), "the chosen offer opens its form");
    }
    let healthz = Stats::new(healthz);
    let floor = ms(healthz.percentile(50.0));
    println!(
        "  {rounds} rounds of 7-night searches on rotating dates ({:.0} offers a page)",
        shown as f64 / rounds as f64
    );
    report("GET /healthz", &healthz, floor);
    report("GET /api/hotels/{id}/availability (JSON)", &Stats::new(api), floor);
    let results = Stats::new(results);
    report("GET /book/{id}?… (the results page)", &results, floor);
    report("GET /book/{id}/details?offer=… (guest form)", &Stats::new(details), floor);
    let p50 = ms(results.percentile(50.0));
    println!("  results page p50 {p50:.2} ms: {} the 10 ms target", if p50 < 10.0 { "under" } else { "OVER" });
}

fn main() {
    let rounds = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(300);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine, rounds).await;
        }
    });
}
