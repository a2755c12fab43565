//! Availability benchmark: a hotel with 20 room types, 5 rate plans each, 200 rooms and 10,000 reservations over
//! the next year; a 7-night availability search. Reports p50 latency (sequential) and requests per second with 32
//! concurrent clients, next to the throughput of a trivial static endpoint (`/healthz`) of the same server measured
//! in the same run, on SQLite and PostgreSQL.
//!
//! `cargo bench --bench availability`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use frontdesk::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use frontdesk::store::Engine;
use support::load::{closed_loop, repeat, Call};
use support::{ms, BenchServer, Stats};

async fn run(engine: Engine) {
    let Some(server) = BenchServer::start(engine).await else { return };
    println!("== {engine:?}");
    let started = Instant::now();
    support::data::availability_hotel(&server, &server.hotel).await;
    eprintln!("  seeded in {:.1} s", started.elapsed().as_secs_f64());
    let today = Utc::now().date_naive();
    let hotel = server.hotel.clone();
    let search = move |offset: u64| {
        format!(
            "/api/hotels/{}/availability?checkInDate={}&checkOutDate={}&adults=2",
            hotel,
            today + Days::new(offset),
            today + Days::new(offset + 7)
        )
    };
    let mut offers = 0;
    let mut samples = Vec::new();
    for i in 0..300u64 {
        let started = Instant::now();
        let res = server.client.get(format!("{}{}", server.base, search(10 + i % 300))).send().await.expect("search");
        assert!(res.status().is_success());
        let body: serde_json::Value = res.json().await.expect("offers");
        offers += body.as_array().map_or(0, |a| a.len());
        samples.push(started.elapsed());
    }
    let latency = Stats::new(samples);
    let server = Arc::new(server);
    let window = Duration::from_secs(5);
    let floor = closed_loop(&server.base, 32, Duration::ZERO, window, repeat(Call::get("/healthz"))).await.per_second;
    // Every client searches other check-in dates (a week's stay starting any day of the next 300).
    let rotating = search.clone();
    let searching = Arc::new(move |c: u64, n: u64| Call::get(rotating(10 + (c + n) % 300)));
    let searches = closed_loop(&server.base, 32, Duration::ZERO, window, searching).await.per_second;
    // Searches are answered from a copy of the hotel's rates and inventory that any change replaces: the first
    // search after a change pays for reloading the catalogue and the pages it needs.
    let plan: String = {
        let mut conn = server.db.read().await.expect("connection");
        frontdesk::store::query("SELECT id FROM rate_plans ORDER BY id LIMIT 1")
            .fetch_one(&mut conn)
            .await
            .expect("plan")
            .get("id")
    };
    let mut after_change = Vec::new();
    for n in 0..50 {
        let values = vec![DailyRateIn {
            rate_plan_id: plan.clone(),
            date: (today + Days::new(60)).to_string(),
            price: 20000 + n,
            availability: None,
            stop_sell: None,
            closed_to_arrival: None,
            closed_to_departure: None,
            min_stay: None,
            max_stay: None,
        }];
        daily_rates::upsert(&server.db, &server.actor(), DailyRatesIn { values }).await.expect("rate");
        let started = Instant::now();
        let res = server.client.get(format!("{}{}", server.base, search(60))).send().await.expect("search");
        assert!(res.status().is_success());
        let _ = res.bytes().await;
        after_change.push(started.elapsed());
    }
    let after_change = Stats::new(after_change);
    println!("  7-night search, sequential: {} ({:.0} offers per answer)", latency.summary(), offers as f64 / 300.0);
    println!("  p50 {:.2} ms", ms(latency.percentile(50.0)));
    println!(
        "  32 clients: {searches:.0} searches/s; GET /healthz {floor:.0} requests/s in the same run (searches = {:.1}% of the floor)",
        100.0 * searches / floor
    );
    println!("  first search after a change of the hotel's rates (copy reloaded): {}", after_change.summary());
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine).await;
        }
    });
}
