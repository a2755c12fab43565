//! Webhook dispatcher memory with a hanging receiver and a large backlog: 100,000 events waiting for a
//! subscription whose receiver never answers (every attempt runs into the 5 s timeout), and a healthy subscription
//! on a local receiver that gets 50 reservation writes a second for 30 s (each a PUT through the API; the hanging
//! subscription wants those too). A real `frontdesk serve` process delivers; the benchmark reports its resident
//! memory over time (`VmRSS` of `/proc/<pid>/status`, once a second) and the healthy subscription's delivery latency
//! (the record's `updatedAt`, stamped inside the write's transaction, to the receiver's clock: one machine, one
//! clock).
//!
//! The baseline is the same run without the backlog (the same two subscriptions, the same writes), in the same
//! process, on a fresh database. How many of the hanging subscription's queue rows are claimed (held by a lane) is
//! sampled from the database alongside.
//!
//! `cargo bench --bench webhook_backlog` (engines: `FRONTDESK_BENCH_ENGINES=sqlite|postgres`, both by default;
//! `FRONTDESK_BENCH_BACKLOG=n` changes the backlog).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use chrono::{DateTime, Utc};
use frontdesk::domain::events::EventKind;
use frontdesk::domain::webhooks::{self, WebhookSettings, WebhookSubscriptionIn};
use frontdesk::domain::Actor;
use frontdesk::store::sql::Conditions;
use frontdesk::store::Engine;
use serde_json::{json, Value};
use support::{insert_stays, ms, rss, BenchServer, Rss, ServeProcess, Stats, Stay};

const WRITES_PER_SECOND: usize = 50;
const SECONDS: usize = 30;

fn backlog_size() -> usize {
    std::env::var("FRONTDESK_BENCH_BACKLOG").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000)
}

/// A receiver that answers at once and notes each delivery's latency.
async fn healthy_receiver() -> (String, Arc<Mutex<Vec<Duration>>>, Arc<AtomicUsize>) {
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let (shared, counter) = (latencies.clone(), count.clone());
    let app = axum::Router::new().fallback(move |body: Bytes| {
        let (latencies, count) = (shared.clone(), counter.clone());
        async move {
            let arrived: DateTime<Utc> = Utc::now();
            let body: Value = serde_json::from_slice(&body).expect("JSON body");
            let written: DateTime<Utc> = body["data"]["updatedAt"].as_str().expect("updatedAt").parse().expect("time");
            latencies.lock().expect("latencies").push((arrived - written).to_std().unwrap_or_default());
            count.fetch_add(1, Ordering::Relaxed);
            "ok"
        }
    });
    (serve(app).await, latencies, count)
}

/// A receiver that never answers (within the dispatcher's timeout).
async fn hanging_receiver() -> (String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let app = axum::Router::new().fallback(move || {
        let count = counter.clone();
        async move {
            count.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_secs(600)).await;
            "late"
        }
    });
    (serve(app).await, count)
}

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

async fn spawn_serve(database_url: &str) -> ServeProcess {
    ServeProcess::start(
        database_url,
        &[("FRONTDESK_RATE_LIMITS", "false"), ("FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true")],
    )
    .await
}

/// Writes `n` guest events for `hotel` straight into the outbox, 400 a statement.
async fn insert_backlog(server: &BenchServer, n: usize) {
    let now = frontdesk::store::format_ts(Utc::now());
    let mut written = 0;
    while written < n {
        let chunk = (n - written).min(400);
        let mut tx = server.db.begin_write().await.expect("tx");
        let mut values = Conditions::new(tx.engine());
        let rows: Vec<String> = (0..chunk)
            .map(|i| {
                let id = uuid::Uuid::now_v7().to_string();
                let payload = json!({
                    "id": uuid::Uuid::now_v7().to_string(), "hotelId": server.hotel, "firstName": "Back",
                    "lastName": format!("Log {}", written + i), "email": "back.log@example.com",
                    "phone": "+351 900 000 000", "notes": "n".repeat(700),
                    "createdAt": now, "updatedAt": now,
                });
                let v = [
                    values.bind(id),
                    values.bind(server.org.clone()),
                    values.bind(server.hotel.clone()),
                    values.bind("guest.updated".to_string()),
                    values.bind(payload.to_string()),
                    values.bind(now.clone()),
                ];
                format!("({})", v.join(", "))
            })
            .collect();
        let sql = format!(
            "INSERT INTO outbox_events (id, organization_id, hotel_id, kind, payload, created_at) VALUES {}",
            rows.join(", ")
        );
        frontdesk::store::query_with(&sql, values).execute(tx.conn()).await.expect("backlog");
        tx.commit().await.expect("commit");
        written += chunk;
    }
}

/// `SELECT COUNT(*) AS n …` with an optional parameter; -1 when the query fails (run against a version of the
/// service before the webhook queue, for comparison, the queue's tables are not there).
async fn count(db: &frontdesk::store::Db, sql: &str, bind: Option<&str>) -> i64 {
    let mut conn = db.read().await.expect("connection");
    let mut query = frontdesk::store::query(sql);
    if let Some(value) = bind {
        query = query.bind(value);
    }
    query.fetch_one(&mut conn).await.ok().and_then(|row| row.try_get("n").ok()).unwrap_or(-1)
}

struct Outcome {
    /// (seconds since the serve process started, memory, hanging subscription's claimed rows)
    samples: Vec<(f64, Rss, i64)>,
    hand_out: Duration,
    latencies: Stats,
    delivered: usize,
    expected: usize,
    hanging_attempts: usize,
    queued_at_end: i64,
}

// One case as one script in the order it happens (the two receivers and subscriptions, the backlog handed out, the
// writes, memory and latency sampled, the report); past 100 lines on purpose, as the integration scenarios are
// (tests/it/main.rs).
async fn run_case(engine: Engine, backlog: usize) -> Option<Outcome> {
    let server = BenchServer::start(engine).await?;
    let settings = WebhookSettings::load(&server.db, true).await.expect("settings");
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
    let stays: Vec<Stay> = (0..200)
        .map(|n| Stay {
            hotel_id: server.hotel.clone(),
            room_type_id: room_type.clone(),
            check_in: today + chrono::Days::new(30 + n % 300),
            nights: 2,
        })
        .collect();
    let reservations = insert_stays(&server, &stays).await;

    let (healthy_url, latencies, delivered) = healthy_receiver().await;
    let (hanging_url, hanging_attempts) = hanging_receiver().await;
    let subscribe = |url: String, events: Vec<EventKind>| {
        let (server, settings) = (&server, &settings);
        async move {
            webhooks::create(
                &server.db,
                settings,
                &Actor::command_line(&server.org),
                WebhookSubscriptionIn { hotel_id: server.hotel.clone(), url, events },
            )
            .await
            .expect("subscription")
            .subscription
            .id
        }
    };
    // The hanging subscription wants everything (the backlog and the writes), the healthy one the writes.
    let hanging_id = subscribe(format!("{hanging_url}/hanging"), vec![]).await;
    subscribe(format!("{healthy_url}/healthy"), vec![EventKind::ReservationUpdated]).await;
    insert_backlog(&server, backlog).await;

    let database_url = server.database_url().expect("database url");
    let started = Instant::now();
    let serve = spawn_serve(&database_url).await;
    let pid = serve.child.id();
    let samples = Arc::new(Mutex::new(Vec::new()));
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (samples, sampling) = (samples.clone(), sampling.clone());
        let db = server.db.clone();
        let hanging_id = hanging_id.clone();
        tokio::spawn(async move {
            while sampling.load(Ordering::Relaxed) {
                let claimed = count(
                    &db,
                    "SELECT COUNT(*) AS n FROM webhook_queue WHERE subscription_id = $1 AND claimed_until IS NOT NULL",
                    Some(&hanging_id),
                )
                .await;
                if let Some(rss) = rss(pid) {
                    samples.lock().expect("samples").push((started.elapsed().as_secs_f64(), rss, claimed));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    };

    // The backlog is handed out to the hanging subscription's queue before the writes start.
    let hand_out_started = Instant::now();
    while count(&server.db, "SELECT COUNT(*) AS n FROM outbox_events WHERE handed_out = FALSE", None).await > 0 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hand_out = hand_out_started.elapsed();

    // WRITES_PER_SECOND reservation updates a second for SECONDS, through the serve process's API.
    let total = WRITES_PER_SECOND * SECONDS;
    let interval = Duration::from_secs(1) / WRITES_PER_SECOND as u32;
    let load_started = tokio::time::Instant::now();
    let mut writes = Vec::new();
    for n in 0..total {
        tokio::time::sleep_until(load_started + interval * n as u32).await;
        let (client, auth) = (server.client.clone(), server.basic());
        let url = format!("{}/api/reservations/{}", serve.base, reservations[n % reservations.len()]);
        writes.push(tokio::spawn(async move {
            let res = client
                .put(url)
                .header("authorization", auth)
                .json(&json!({"notes": format!("write {n}")}))
                .send()
                .await;
            let res = res.expect("write");
            assert!(res.status().is_success(), "{}", res.status());
        }));
    }
    for write in writes {
        write.await.expect("writer");
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while delivered.load(Ordering::Relaxed) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    sampling.store(false, Ordering::Relaxed);
    let _ = sampler.await;
    let queued_at_end =
        count(&server.db, "SELECT COUNT(*) AS n FROM webhook_queue WHERE subscription_id = $1", Some(&hanging_id))
            .await;
    drop(serve);
    let samples = samples.lock().expect("samples").clone();
    let latencies = Stats::new(latencies.lock().expect("latencies").clone());
    Some(Outcome {
        samples,
        hand_out,
        latencies,
        delivered: delivered.load(Ordering::Relaxed),
        expected: total,
        hanging_attempts: hanging_attempts.load(Ordering::Relaxed),
        queued_at_end,
    })
}

fn report(label: &str, outcome: &Outcome) {
    println!("  {label}:");
    let mib = |kib: u64| kib as f64 / 1024.0;
    type Field = fn(&Rss) -> u64;
    let fields: [(&str, Field); 3] = [("VmRSS", |r| r.total), ("RssAnon", |r| r.anon), ("RssFile", |r| r.file)];
    for (name, of) in fields {
        let over_time: Vec<String> =
            outcome.samples.iter().map(|(t, rss, _)| format!("{t:.0}s {:.1}", mib(of(rss)))).collect();
        let max = outcome.samples.iter().map(|(_, rss, _)| of(rss)).max().unwrap_or(0);
        let last = outcome.samples.last().map_or(0, |(_, rss, _)| of(rss));
        println!(
            "    serve {name} (MiB) max {:.1}, at the end {:.1}; over time: {}",
            mib(max),
            mib(last),
            over_time.join(", ")
        );
    }
    let claimed: Vec<i64> = outcome.samples.iter().map(|(_, _, c)| *c).collect();
    println!(
        "    hanging subscription's rows claimed (held by a lane): max {}, samples {:?}",
        claimed.iter().max().unwrap_or(&0),
        claimed
    );
    println!("    backlog handed out to the queue in {:.1} s", outcome.hand_out.as_secs_f64());
    println!(
        "    healthy deliveries {} of {}; latency (write to receipt): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        outcome.delivered,
        outcome.expected,
        ms(outcome.latencies.percentile(50.0)),
        ms(outcome.latencies.percentile(95.0)),
        ms(outcome.latencies.percentile(99.0)),
        ms(outcome.latencies.percentile(100.0)),
    );
    println!(
        "    hanging receiver attempts {}; still queued for it at the end {}",
        outcome.hanging_attempts, outcome.queued_at_end
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let backlog = backlog_size();
        for engine in support::engines() {
            let Some(baseline) = run_case(engine, 0).await else { continue };
            let Some(loaded) = run_case(engine, backlog).await else { continue };
            println!(
                "== {engine:?}: a hanging subscription, a healthy one, {WRITES_PER_SECOND} writes/s for {SECONDS} s"
            );
            report("baseline (no backlog)", &baseline);
            report(&format!("with {backlog} backlog events for the hanging subscription"), &loaded);
        }
    });
}
