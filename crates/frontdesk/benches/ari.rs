//! ARI upsert benchmark: 500-entry `POST /api/dailyRates` batches over HTTP against a running service, on SQLite
//! and on PostgreSQL. Reports batch latency percentiles and entries per second, sequentially and with concurrent
//! writers of different rate plans, next to the latency of a trivial authenticated GET measured in the same run.
//!
//! `cargo bench --bench ari` (set `ARI_BATCHES` to change the number of batches per phase, default 200).

mod support;

use std::time::Instant;

use chrono::{Days, Utc};
use frontdesk::domain::{rate_plans, room_types};
use frontdesk::store::Engine;
use serde_json::{json, Value};
use support::{ms, BenchServer, Stats};

const BATCH: usize = 500;
const PLANS: usize = 8;

async fn plans(server: &BenchServer) -> Vec<String> {
    let actor = server.actor();
    let mut ids = Vec::new();
    for i in 0..PLANS {
        let room_type = room_types::create(
            &server.db,
            &actor,
            room_types::RoomTypeIn {
                hotel_id: Some(server.hotel.clone()),
                name: format!("Type {i}"),
                description: None,
                max_occupancy: 2,
                max_adults: None,
                max_children: None,
            },
        )
        .await
        .expect("room type");
        let plan = rate_plans::upsert(
            &server.db,
            &actor,
            rate_plans::RatePlanIn {
                id: None,
                hotel_id: Some(server.hotel.clone()),
                room_type_id: Some(Some(room_type.id)),
                name: format!("Plan {i}"),
                code: None,
                currency: None,
                active: None,
            },
        )
        .await
        .expect("rate plan");
        ids.push(plan.id);
    }
    ids
}

/// Batch `n`: 500 consecutive nights of one plan, with prices and, every other batch, restrictions too.
fn batch(plans: &[String], n: usize) -> Value {
    let plan = &plans[n % plans.len()];
    let start = Utc::now().date_naive() + Days::new(((n / plans.len()) % 2 * 500) as u64);
    let values: Vec<Value> = (0..BATCH)
        .map(|i| {
            let date = (start + Days::new(i as u64)).format("%Y-%m-%d").to_string();
            if n.is_multiple_of(2) {
                json!({"ratePlanId": plan, "date": date, "price": 10000 + (n * 7 + i) % 5000})
            } else {
                json!({"ratePlanId": plan, "date": date, "price": 10000 + (n * 7 + i) % 5000,
                       "availability": (i % 9) as i64, "stopSell": i % 31 == 0, "minStay": 1 + (i % 3) as i64})
            }
        })
        .collect();
    json!({ "values": values })
}

async fn post(server: &BenchServer, body: &Value) -> std::time::Duration {
    let started = Instant::now();
    let res = server
        .client
        .post(format!("{}/api/dailyRates", server.base))
        .header("authorization", server.basic())
        .json(body)
        .send()
        .await
        .expect("upsert sent");
    let status = res.status();
    let _ = res.bytes().await;
    assert!(status.is_success(), "upsert answered {status}");
    started.elapsed()
}

async fn run(engine: Engine, batches: usize) {
    let Some(server) = BenchServer::start(engine).await else { return };
    let plans = plans(&server).await;
    let bodies: Vec<Value> = (0..batches).map(|n| batch(&plans, n)).collect();
    // Warm-up: connections, statement caches, and every row inserted once, so later batches update.
    for body in bodies.iter().take(2 * PLANS) {
        post(&server, body).await;
    }

    let baseline = server.baseline(500).await;

    let started = Instant::now();
    let mut samples = Vec::with_capacity(batches);
    for body in &bodies {
        samples.push(post(&server, body).await);
    }
    let sequential = Stats::new(samples);
    let sequential_rate = (batches * BATCH) as f64 / started.elapsed().as_secs_f64();

    let writers = 4;
    let started = Instant::now();
    let mut tasks = Vec::new();
    let server = std::sync::Arc::new(server);
    let bodies = std::sync::Arc::new(bodies);
    for w in 0..writers {
        let server = server.clone();
        let bodies = bodies.clone();
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            for body in bodies.iter().skip(w).step_by(writers) {
                samples.push(post(&server, body).await);
            }
            samples
        }));
    }
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await.expect("writer"));
    }
    let concurrent = Stats::new(samples);
    let concurrent_rate = (batches * BATCH) as f64 / started.elapsed().as_secs_f64();

    let floor = ms(baseline.percentile(50.0));
    println!("== {engine:?}");
    println!("  baseline GET /api/hotels/{{id}}: {}", baseline.summary());
    println!(
        "  500-entry upsert, 1 writer:  {}; {:.0} entries/s; p50 = {:.1}x the baseline GET",
        sequential.summary(),
        sequential_rate,
        ms(sequential.percentile(50.0)) / floor
    );
    println!("  500-entry upsert, {writers} writers: {}; {:.0} entries/s", concurrent.summary(), concurrent_rate);
}

fn main() {
    let batches = std::env::var("ARI_BATCHES").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine, batches).await;
        }
    });
}
