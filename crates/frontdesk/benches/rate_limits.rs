//! What rate limiting costs: a cheap authenticated GET (`/api/hotels/{id}` with an API key) served without a
//! limiter, with the in-memory limiter and with the Redis limiter, in one run, rounds interleaved so that the
//! machine's noise falls on all three alike. Reports requests per second and the ratio to the unlimited server.
//!
//! `cargo bench --bench rate_limits` (Redis at `FRONTDESK_BENCH_REDIS_URL`, default `redis://127.0.0.1:6379`).

mod support;

use std::time::Duration;

use frontdesk::config::Config;
use frontdesk::store::Db;
use support::load::{closed_loop, repeat, Call};

const CLIENTS: usize = 32;
const ROUND: Duration = Duration::from_secs(3);
const ROUNDS: usize = 3;

async fn serve(db: &Db, configure: impl FnOnce(&mut Config)) -> String {
    let mut config = Config { rate_limit_per_minute: 1_000_000_000, ..Config::default() };
    configure(&mut config);
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
        let path = std::env::temp_dir().join(format!("frontdesk-bench-rl-{}.db", uuid::Uuid::now_v7().simple()));
        let db = Db::connect(&format!("sqlite://{}", path.display()), 16).await.expect("db");
        db.migrate().await.expect("migrate");
        let (_, hotel, secret) = support::seed_tenant(&db).await;
        use base64::Engine as _;
        let auth = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(&secret));
        let redis = std::env::var("FRONTDESK_BENCH_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());

        let off = serve(&db, |c| c.rate_limits = false).await;
        let memory = serve(&db, |_| {}).await;
        let with_redis = serve(&db, |c| c.redis_url = Some(redis.clone())).await;
        let hotel_path = format!("/api/hotels/{hotel}");
        // Warm up every server.
        for base in [&off, &memory, &with_redis] {
            round(base, &hotel_path, &auth).await;
        }
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(round(&off, &hotel_path, &auth).await);
            b.push(round(&memory, &hotel_path, &auth).await);
            c.push(round(&with_redis, &hotel_path, &auth).await);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (a, b, c) = (mean(&a), mean(&b), mean(&c));
        println!(
            "GET /api/hotels/{{id}} with an API key, {CLIENTS} clients, {ROUNDS} interleaved rounds of {ROUND:?}:"
        );
        println!("  no limiter:     {a:.0} requests/s");
        println!("  memory limiter: {b:.0} requests/s ({:.1}% of no limiter)", 100.0 * b / a);
        println!("  Redis limiter:  {c:.0} requests/s ({:.1}% of no limiter)", 100.0 * c / a);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    });
}
