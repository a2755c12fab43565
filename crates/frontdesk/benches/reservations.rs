//! Reservation reads at scale: 1,000,000 reservations over 20 hotels and 3 years, on SQLite and PostgreSQL.
//!
//! Measures the stay-window list a channel manager polls (`hotelId`, `stayDateFrom`, `stayDateTo`, `limit=100`,
//! `sortField=checkInDate`) and a single-reservation GET, against the latency of a trivial authenticated GET in the
//! same run; then the peak memory of a separate `frontdesk serve` process answering a `limit=0` list of about
//! 100,000 reservations.
//!
//! `cargo bench --bench reservations` (`RESERVATIONS=200000` for a quicker, smaller run).

mod support;

use std::time::{Duration, Instant};

use frontdesk::store::Engine;
use support::data::{self, scale_date as date, Rng, SCALE_DAYS as DAYS, SCALE_HOTELS as HOTELS};
use support::{ms, BenchServer, Stats};

async fn get(server: &BenchServer, path: &str) -> Duration {
    let started = Instant::now();
    let res = server
        .client
        .get(format!("{}{path}", server.base))
        .header("authorization", server.basic())
        .send()
        .await
        .expect("request");
    let status = res.status();
    let _ = res.bytes().await;
    assert!(status.is_success(), "{path} answered {status}");
    started.elapsed()
}

/// Peak memory of a `frontdesk serve` process on the same database while it streams `path`: its own (anonymous)
/// pages, and the file pages it maps.
async fn streaming_peak_memory(url: &str, secret: &str, path: &str) -> Option<(u64, u64, u64, usize)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_frontdesk"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("FRONTDESK_DATABASE_URL", url)
        .env("FRONTDESK_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if client.get(format!("{base}/readyz")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = |pid: u32, key: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    };
    use base64::Engine as _;
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(secret));
    // Warm up (connections, caches), then measure the peak during the big answer.
    let _ = client.get(format!("{base}/api/hotels")).header("authorization", &basic).send().await.ok()?.bytes().await;
    let before = status(child.id(), "RssAnon:");
    let mut res = client.get(format!("{base}{path}")).header("authorization", &basic).send().await.ok()?;
    let mut bytes = 0;
    // The process's own memory (anonymous pages: heap and stacks) sampled while the answer streams; file pages
    // (SQLite's memory map of the database) are the shared page cache and are reported apart.
    let (mut peak_anon, mut peak_file) = (before, 0);
    let mut last_sample = std::time::Instant::now();
    while let Ok(Some(chunk)) = res.chunk().await {
        bytes += chunk.len();
        if last_sample.elapsed() >= Duration::from_millis(5) {
            peak_anon = peak_anon.max(status(child.id(), "RssAnon:"));
            peak_file = peak_file.max(status(child.id(), "RssFile:"));
            last_sample = std::time::Instant::now();
        }
    }
    peak_anon = peak_anon.max(status(child.id(), "RssAnon:"));
    peak_file = peak_file.max(status(child.id(), "RssFile:"));
    let _ = child.kill();
    let _ = child.wait();
    Some((before, peak_anon, peak_file, bytes))
}

async fn run(engine: Engine, count: usize) {
    let Some(server) = BenchServer::start(engine).await else { return };
    println!("== {engine:?} ({count} reservations)");
    let data::AtScale { hotels, ids } = data::reservations_at_scale(&server, count).await;
    let baseline = server.baseline(500).await;

    let mut rng = Rng(42);
    let mut list = Vec::new();
    let mut rows_seen = 0;
    for _ in 0..500 {
        let hotel = &hotels[rng.below(HOTELS as u64) as usize];
        let from = rng.below(DAYS - 30);
        let path = format!(
            "/api/reservations?hotelId={hotel}&stayDateFrom={}&stayDateTo={}&limit=100&sortField=checkInDate",
            date(from),
            date(from + 7)
        );
        list.push(get(&server, &path).await);
        rows_seen += 1;
    }
    let list = Stats::new(list);
    let mut single = Vec::new();
    for _ in 0..500 {
        let id = &ids[rng.below(ids.len() as u64) as usize];
        single.push(get(&server, &format!("/api/reservations/{id}")).await);
    }
    let single = Stats::new(single);
    let floor = ms(baseline.percentile(50.0));
    println!("  baseline GET /api/hotels/{{id}}: {}", baseline.summary());
    println!(
        "  stay-window list, limit=100 sorted by checkInDate: {}; p50 = {:.1}x the baseline ({rows_seen} queries)",
        list.summary(),
        ms(list.percentile(50.0)) / floor
    );
    println!(
        "  single GET with rooms and folio: {}; p50 = {:.1}x the baseline",
        single.summary(),
        ms(single.percentile(50.0)) / floor
    );

    // About 100,000 rows: every hotel's stays over a window of count/10 reservations' worth of days.
    let days = (DAYS as usize * 100_000 / count.max(1)).min(DAYS as usize) as u64;
    let path = format!("/api/reservations?limit=0&stayDateFrom={}&stayDateTo={}", date(0), date(days));
    if let Some(url) = server.database_url() {
        let started = Instant::now();
        match streaming_peak_memory(&url, &server.secret, &path).await {
            Some((before, anon, file, bytes)) => println!(
                "  limit=0 over {days} days ({:.1} MB of JSON in {:.1} s): serve process memory (RssAnon) peak {:.1} MB, \
                 {:.1} MB before the request; mapped database pages (RssFile) peak {:.1} MB",
                bytes as f64 / 1e6,
                started.elapsed().as_secs_f64(),
                anon as f64 / 1024.0,
                before as f64 / 1024.0,
                file as f64 / 1024.0
            ),
            None => println!("  limit=0: could not run a separate serve process"),
        }
    }
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
