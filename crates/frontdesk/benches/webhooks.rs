//! Webhook delivery under load: 1,000 reservation writes per second for 10 s (each a PUT through the API) with
//! three subscriptions on a local receiver. Reports the delivery latency from the write to the receipt (the
//! record's `updatedAt`, stamped inside the write's transaction just before it commits, to the receiver's clock:
//! one machine, one clock), and whether every event arrived exactly once at every subscription.
//!
//! The same load is run first with no subscription, as the baseline for what delivering costs the writes.
//!
//! `cargo bench --bench webhooks` (engines: `FRONTDESK_BENCH_ENGINES=sqlite|postgres`, both by default).

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::Uri;
use chrono::{DateTime, Utc};
use frontdesk::domain::webhooks::{self, WebhookSettings, WebhookSubscriptionIn};
use frontdesk::domain::Actor;
use frontdesk::store::Engine;
use frontdesk::worker::webhooks::{Dispatcher, DispatcherOptions};
use serde_json::{json, Value};
use support::{insert_stays, ms, BenchServer, Stats, Stay};

const WRITES_PER_SECOND: usize = 1000;
const SECONDS: usize = 10;
const SUBSCRIPTIONS: usize = 3;
const WRITERS: usize = 32;

#[derive(Default)]
struct Receipts {
    /// (subscription path, event id) → how many times it arrived.
    seen: Mutex<HashMap<(String, String), usize>>,
    latencies: Mutex<Vec<Duration>>,
    count: AtomicUsize,
}

async fn receiver() -> (String, Arc<Receipts>) {
    let receipts = Arc::new(Receipts::default());
    let shared = receipts.clone();
    let app = axum::Router::new().fallback(move |uri: Uri, body: Bytes| {
        let receipts = shared.clone();
        async move {
            let arrived: DateTime<Utc> = Utc::now();
            let body: Value = serde_json::from_slice(&body).expect("JSON body");
            let written: DateTime<Utc> = body["data"]["updatedAt"].as_str().expect("updatedAt").parse().expect("time");
            let latency = (arrived - written).to_std().unwrap_or_default();
            receipts.latencies.lock().unwrap().push(latency);
            let key = (uri.path().to_string(), body["id"].as_str().expect("id").to_string());
            *receipts.seen.lock().unwrap().entry(key).or_default() += 1;
            receipts.count.fetch_add(1, Ordering::Relaxed);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, receipts)
}

/// Sends `WRITES_PER_SECOND` reservation updates a second for `SECONDS`; answers the write latencies and the
/// achieved rate.
async fn write_load(server: &BenchServer, reservations: &[String], round: usize) -> (Stats, f64) {
    let total = WRITES_PER_SECOND * SECONDS;
    let next = Arc::new(AtomicUsize::new(0));
    let started = tokio::time::Instant::now();
    let interval = Duration::from_secs(1) / WRITES_PER_SECOND as u32;
    let reservations = Arc::new(reservations.to_vec());
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (next, reservations) = (next.clone(), reservations.clone());
        let (client, base, auth) = (server.client.clone(), server.base.clone(), server.basic());
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= total {
                    return samples;
                }
                tokio::time::sleep_until(started + interval * n as u32).await;
                let id = &reservations[n % reservations.len()];
                let sent = Instant::now();
                let res = client
                    .put(format!("{base}/api/reservations/{id}"))
                    .header("authorization", &auth)
                    .json(&json!({"notes": format!("round {round} write {n}")}))
                    .send()
                    .await
                    .expect("write");
                assert!(res.status().is_success(), "{}", res.status());
                let _ = res.bytes().await;
                samples.push(sent.elapsed());
            }
        }));
    }
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await.expect("writer"));
    }
    let rate = total as f64 / started.elapsed().as_secs_f64();
    (Stats::new(samples), rate)
}

async fn run(engine: Engine) {
    let Some(server) = BenchServer::start(engine).await else { return };
    let settings = WebhookSettings::load(&server.db, true).await.expect("settings");
    let dispatcher = Dispatcher::spawn(server.db.clone(), &settings, DispatcherOptions::default()).expect("dispatcher");
    let room_type = server
        .client
        .post(format!("{}/api/roomTypes", server.base))
        .header("authorization", server.basic())
        .json(&json!({"hotelId": server.hotel, "name": "Double", "maxOccupancy": 2}))
        .send()
        .await
        .expect("room type")
        .json::<Value>()
        .await
        .expect("room type");
    let room_type = room_type["id"].as_str().expect("room type id").to_string();
    let today = Utc::now().date_naive();
    let stays: Vec<Stay> = (0..400)
        .map(|n| Stay {
            hotel_id: server.hotel.clone(),
            room_type_id: room_type.clone(),
            check_in: today + chrono::Days::new(30 + n % 300),
            nights: 2,
        })
        .collect();
    let reservations = insert_stays(&server, &stays).await;

    // Baseline: the same writes, nobody subscribed.
    let (baseline, baseline_rate) = write_load(&server, &reservations, 0).await;

    // Subscriptions hear of changes made after they were created; let the baseline's events drain first anyway.
    while support_outbox_len(&server).await > 0 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (url, receipts) = receiver().await;
    for n in 0..SUBSCRIPTIONS {
        webhooks::create(
            &server.db,
            &settings,
            &Actor::command_line(&server.org),
            WebhookSubscriptionIn {
                hotel_id: server.hotel.clone(),
                url: format!("{url}/subscriber-{n}"),
                events: vec![frontdesk::domain::events::EventKind::ReservationUpdated],
            },
        )
        .await
        .expect("subscription");
    }
    let (loaded, loaded_rate) = write_load(&server, &reservations, 1).await;
    let expected = WRITES_PER_SECOND * SECONDS * SUBSCRIPTIONS;
    let deadline = Instant::now() + Duration::from_secs(60);
    while receipts.count.load(Ordering::Relaxed) < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    dispatcher.stop().await;

    let seen = receipts.seen.lock().unwrap();
    let duplicates = seen.values().filter(|&&n| n > 1).count();
    let distinct = seen.len();
    let latencies = Stats::new(receipts.latencies.lock().unwrap().clone());
    println!("== {engine:?}: {WRITES_PER_SECOND} reservation writes/s for {SECONDS} s, {SUBSCRIPTIONS} subscriptions");
    println!("  writes without subscriptions (baseline): {:.0}/s, {}", baseline_rate, baseline.summary());
    println!("  writes with {SUBSCRIPTIONS} subscriptions:           {:.0}/s, {}", loaded_rate, loaded.summary());
    println!(
        "  write p50 ratio to baseline: {:.2}x, p99: {:.2}x",
        ms(loaded.percentile(50.0)) / ms(baseline.percentile(50.0)),
        ms(loaded.percentile(99.0)) / ms(baseline.percentile(99.0)),
    );
    println!(
        "  delivered {distinct} distinct of {expected} expected, {duplicates} duplicated, {} arrivals",
        receipts.count.load(Ordering::Relaxed)
    );
    println!(
        "  delivery latency (write to receipt): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms (target p99 < 250 ms)",
        ms(latencies.percentile(50.0)),
        ms(latencies.percentile(95.0)),
        ms(latencies.percentile(99.0)),
        ms(latencies.percentile(100.0)),
    );
}

async fn support_outbox_len(server: &BenchServer) -> i64 {
    let mut conn = server.db.read().await.expect("connection");
    frontdesk::store::query("SELECT COUNT(*) AS n FROM outbox_events")
        .fetch_one(&mut conn)
        .await
        .expect("count")
        .get("n")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine).await;
        }
    });
}
