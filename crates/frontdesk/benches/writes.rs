//! Single-record writes through the API, as a channel manager or a CRM makes them one at a time: what one write
//! costs when the server is not queueing (one writer, closed loop), and how many writes a second it keeps up with
//! (8 writers, closed loop). Each figure is reported next to a single-reservation `GET` measured in the same rounds,
//! so a slower machine or a noisy neighbour moves both.
//!
//! The webhooks benchmark writes at a fixed 1,000 a second, which on a small machine sits at the edge of what the
//! server keeps up with: there, a little more work per write turns into a queue and its p50 measures the queue.
//! This one measures the work. To compare two builds, build this benchmark from each and run them alternately.
//!
//! Operations, each in rounds interleaved with the others (`WRITES_ROUNDS`, default 5, of `WRITES_PER_ROUND`,
//! default 200):
//! - `GET /api/reservations/{id}` (the floor);
//! - `PUT /api/reservations/{id}` changing the notes (the webhooks benchmark's write);
//! - `POST /api/guests` (a new guest with an e-mail address);
//! - `PUT /api/guests/{id}` changing the phone number;
//! - then `PUT /api/reservations/{id}` from 8 writers for `WRITES_SECONDS` (default 5): writes a second.
//!
//! `cargo bench --bench writes` (engines: `FRONTDESK_BENCH_ENGINES=sqlite|postgres`, both by default). To measure a
//! schema experiment with the same build, `FRONTDESK_BENCH_SQLITE_SQL` runs statements on the SQLite database after
//! its migrations (e.g. `DROP INDEX audit_log_keep_until`; docs/audit-log-measurements.md lists the variants measured).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use frontdesk::store::Engine;
use serde_json::{json, Value};
use support::{insert_stays, ms, BenchServer, Stats, Stay};

const CONCURRENT_WRITERS: usize = 8;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Operation {
    ReadReservation,
    UpdateReservation,
    CreateGuest,
    UpdateGuest,
}

impl Operation {
    const ALL: [Operation; 4] =
        [Operation::ReadReservation, Operation::UpdateReservation, Operation::CreateGuest, Operation::UpdateGuest];

    fn label(self) -> &'static str {
        match self {
            Operation::ReadReservation => "GET a reservation (floor)",
            Operation::UpdateReservation => "PUT a reservation's notes",
            Operation::CreateGuest => "POST a guest",
            Operation::UpdateGuest => "PUT a guest's phone",
        }
    }
}

struct Target<'a> {
    server: &'a BenchServer,
    reservations: &'a [String],
    guests: &'a [String],
}

impl Target<'_> {
    /// One request of `operation`, its `n`th: answers its latency.
    async fn once(&self, operation: Operation, n: usize) -> Duration {
        let (server, base, auth) = (self.server, &self.server.base, self.server.basic());
        let reservation = &self.reservations[n % self.reservations.len()];
        let guest = &self.guests[n % self.guests.len()];
        let request = match operation {
            Operation::ReadReservation => server.client.get(format!("{base}/api/reservations/{reservation}")),
            Operation::UpdateReservation => server
                .client
                .put(format!("{base}/api/reservations/{reservation}"))
                .json(&json!({"notes": format!("write {n} at {}", Utc::now())})),
            Operation::CreateGuest => server.client.post(format!("{base}/api/guests")).json(&json!({
                "hotelId": server.hotel,
                "firstName": "Ana",
                "lastName": format!("Silva {n}"),
                "email": format!("ana.{n}.{}@example.test", Utc::now().timestamp_micros()),
            })),
            Operation::UpdateGuest => server
                .client
                .put(format!("{base}/api/guests/{guest}"))
                .json(&json!({"phone": format!("+49 30 {n:07}")})),
        };
        let started = Instant::now();
        let res = request.header("authorization", auth).send().await.expect("request");
        let status = res.status();
        let body = res.bytes().await.expect("body");
        let took = started.elapsed();
        assert!(status.is_success(), "{operation:?}: {status} {}", String::from_utf8_lossy(&body));
        took
    }
}

async fn setup(server: &BenchServer) -> (Vec<String>, Vec<String>) {
    let created = |path: &'static str, body: Value| async move {
        let res = server
            .client
            .post(format!("{}{path}", server.base))
            .header("authorization", server.basic())
            .json(&body)
            .send()
            .await
            .expect("create");
        assert!(res.status().is_success(), "{path}: {}", res.status());
        let body: Value = res.json().await.expect("JSON");
        body["id"].as_str().expect("id").to_string()
    };
    let room_type =
        created("/api/roomTypes", json!({"hotelId": server.hotel, "name": "Double", "maxOccupancy": 2})).await;
    let today = Utc::now().date_naive();
    let stays: Vec<Stay> = (0..400)
        .map(|n| Stay {
            hotel_id: server.hotel.clone(),
            room_type_id: room_type.clone(),
            check_in: today + chrono::Days::new(30 + n % 300),
            nights: 2,
        })
        .collect();
    let reservations = insert_stays(server, &stays).await;
    let mut guests = Vec::new();
    for n in 0..200 {
        let body = json!({"hotelId": server.hotel, "firstName": "Jo", "lastName": format!("Guest {n}"),
            "email": format!("jo.{n}@example.test")});
        guests.push(created("/api/guests", body).await);
    }
    (reservations, guests)
}

async fn run(engine: Engine) {
    let Some(server) = BenchServer::start(engine).await else { return };
    let (reservations, guests) = setup(&server).await;
    let target = Target { server: &server, reservations: &reservations, guests: &guests };
    let (rounds, per_round) = (setting("WRITES_ROUNDS", 5), setting("WRITES_PER_ROUND", 200));

    // Warm-up: connections, prepared statements, the page cache.
    for operation in Operation::ALL {
        for n in 0..50 {
            target.once(operation, n).await;
        }
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); Operation::ALL.len()];
    let mut n = 1_000;
    for _ in 0..rounds {
        for (at, operation) in Operation::ALL.into_iter().enumerate() {
            for _ in 0..per_round {
                n += 1;
                samples[at].push(target.once(operation, n).await);
            }
        }
    }
    let stats: Vec<Stats> = samples.into_iter().map(Stats::new).collect();
    let floor = ms(stats[0].percentile(50.0));

    // Throughput: 8 writers, closed loop.
    let seconds = setting("WRITES_SECONDS", 5);
    let next = Arc::new(AtomicUsize::new(100_000));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds as u64);
    let target = Arc::new((reservations.clone(), guests.clone()));
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENT_WRITERS {
        let (next, target) = (next.clone(), target.clone());
        let (client, base, auth) = (server.client.clone(), server.base.clone(), server.basic());
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let id = &target.0[n % target.0.len()];
                let sent = Instant::now();
                let res = client
                    .put(format!("{base}/api/reservations/{id}"))
                    .header("authorization", &auth)
                    .json(&json!({"notes": format!("concurrent write {n}")}))
                    .send()
                    .await
                    .expect("write");
                assert!(res.status().is_success(), "{}", res.status());
                let _ = res.bytes().await;
                samples.push(sent.elapsed());
            }
            samples
        }));
    }
    let mut concurrent = Vec::new();
    for task in tasks {
        concurrent.extend(task.await.expect("writer"));
    }
    let rate = concurrent.len() as f64 / started.elapsed().as_secs_f64();
    let concurrent = Stats::new(concurrent);

    println!("== {engine:?}: single-record writes, one writer, {rounds} rounds of {per_round} each");
    for (operation, stats) in Operation::ALL.into_iter().zip(&stats) {
        println!(
            "  {:<28} {}  p50/floor {:.2}",
            operation.label(),
            stats.summary(),
            ms(stats.percentile(50.0)) / floor
        );
    }
    println!(
        "  {CONCURRENT_WRITERS} writers, PUT a reservation's notes for {seconds} s: {rate:.0} writes/s, {}",
        concurrent.summary()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine).await;
        }
    });
}
