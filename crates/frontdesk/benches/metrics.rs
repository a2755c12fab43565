//! What the metrics cost: a cheap GET served without metrics and with them (the request middleware recording a
//! counter and a histogram per request), in one run, rounds interleaved so that the machine's noise falls on both
//! alike. Two requests: `/healthz` (no database: the worst case for the relative overhead) and
//! `/api/hotels/{id}` with an API key (the cheap authenticated GET of the other benches). Reports requests per
//! second and the ratio; then the time of one scrape.
//!
//! `cargo bench --bench metrics`

mod support;

use std::time::{Duration, Instant};

use frontdesk::config::Config;
use frontdesk::store::Db;
use support::load::{closed_loop, repeat, Call};

const CLIENTS: usize = 32;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 3;
const TOKEN: &str = "bench-metrics-token-0123456789";

async fn serve(db: &Db, metrics: bool) -> String {
    let mut config = Config { rate_limits: false, ..Config::default() };
    if metrics {
        config.metrics_token = Some(TOKEN.into());
    }
    support::serve(db, config).await
}

/// Requests per second of `CLIENTS` clients sending the GET of `path` with `auth` to `base` for a round.
async fn round(base: &str, path: &str, auth: &str) -> f64 {
    let call = Call::get(path).header("authorization", auth);
    closed_loop(base, CLIENTS, Duration::ZERO, ROUND, repeat(call)).await.per_second
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let path = std::env::temp_dir().join(format!("frontdesk-bench-metrics-{}.db", uuid::Uuid::now_v7().simple()));
        let db = Db::connect(&format!("sqlite://{}", path.display()), 16).await.expect("db");
        db.migrate().await.expect("migrate");
        let (_, hotel, secret) = support::seed_tenant(&db).await;
        use base64::Engine as _;
        let auth = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(&secret));

        let off = serve(&db, false).await;
        let on = serve(&db, true).await;
        let client = reqwest::Client::new();
        for (name, path) in [("/healthz", "/healthz".to_string()), ("/api/hotels/{id}", format!("/api/hotels/{hotel}"))]
        {
            for base in [&off, &on] {
                round(base, &path, &auth).await;
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                a.push(round(&off, &path, &auth).await);
                b.push(round(&on, &path, &auth).await);
            }
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (a, b) = (mean(&a), mean(&b));
            println!("GET {name}, {CLIENTS} clients, {ROUNDS} interleaved rounds of {ROUND:?}:");
            println!("  without metrics: {a:.0} requests/s");
            println!("  with metrics:    {b:.0} requests/s ({:.1}% of without)", 100.0 * b / a);
        }
        // The middleware's own work, without the network: recording one request (a counter and a histogram).
        let routes = ["/healthz", "/api/hotels/{hotelId}", "/api/reservations/{reservationId}", "unmatched"];
        let calls = 400_000u32;
        let started = Instant::now();
        for n in 0..calls {
            let route = routes[n as usize % routes.len()];
            let status = axum::http::StatusCode::OK;
            frontdesk::metrics::record_request("GET", route, status, Duration::from_micros(u64::from(n % 5000)));
        }
        let per_call = started.elapsed().as_secs_f64() * 1e9 / f64::from(calls);
        println!("recording one request's metrics (counter and histogram, one thread): {per_call:.0} ns");
        let started = Instant::now();
        let scrapes = 20;
        let mut bytes = 0;
        for _ in 0..scrapes {
            let res = client.get(format!("{on}/metrics")).bearer_auth(TOKEN).send().await.expect("scrape");
            assert!(res.status().is_success());
            bytes = res.bytes().await.expect("body").len();
        }
        println!(
            "GET /metrics: {:.2} ms per scrape ({bytes} bytes)",
            started.elapsed().as_secs_f64() * 1000.0 / f64::from(scrapes)
        );
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    });
}
