//! The memory of a `frontdesk serve` process under a flood of sign-ins. Each password check runs argon2id, which
//! holds 19 MiB while it runs; sign-in needs no credential, so anyone can ask for as many at once as they like.
//! Two floods of `SIGN_IN_FLOOD` (default 300) parallel `POST /api/auth/login` with wrong passwords, each on a
//! fresh SQLite database:
//!
//! * one account from one address (the sign-in limits cut it off after a few attempts);
//! * every attempt a different account from a different address (`X-Forwarded-For` is trusted here), which no
//!   count stops: only the bound on concurrent password checks keeps the memory down.
//!
//! Reports the process's resident memory (VmRSS, and its anonymous part) when idle, its peak while the flood runs
//! (sampled every 10 ms), and three seconds after, with the answers by status.
//!
//! Not run by CI. `cargo bench --bench sign_in_flood`; `FRONTDESK_BENCH_BINARY=path/to/frontdesk` measures another
//! build of the service (an older one for comparison: the floods need no data, so any version serves them).

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{rss, Rss, ServeProcess};

/// KiB as MiB, for people.
fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

/// How the attempts of a flood differ.
#[derive(Clone, Copy)]
enum Flood {
    OneAccountOneAddress,
    ManyAccountsManyAddresses,
}

impl Flood {
    fn describe(self) -> &'static str {
        match self {
            Flood::OneAccountOneAddress => "one account from one address",
            Flood::ManyAccountsManyAddresses => "a different account from a different address each",
        }
    }

    /// The e-mail and client address of attempt `n`.
    fn attempt(self, n: usize) -> (String, String) {
        match self {
            Flood::OneAccountOneAddress => ("ops@flood.test".into(), "198.18.0.1".into()),
            Flood::ManyAccountsManyAddresses => {
                (format!("ops{n}@flood.test"), format!("198.18.{}.{}", n / 250, n % 250 + 1))
            }
        }
    }
}

/// Samples the resident memory of `pid` every 10 ms until `stop`; the highest seen.
fn sample_peak(pid: u32, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<Rss> {
    tokio::spawn(async move {
        let mut peak = Rss::default();
        while !stop.load(Ordering::Relaxed) {
            if let Some(now) = rss(pid) {
                if now.total > peak.total {
                    peak = now;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        peak
    })
}

async fn run(flood: Flood, parallel: usize) {
    let path = std::env::temp_dir().join(format!("frontdesk-bench-flood-{}.db", uuid::Uuid::now_v7().simple()));
    let url = format!("sqlite://{}", path.display());
    let serve = ServeProcess::start(&url, &[("FRONTDESK_TRUSTED_PROXY_HEADER", "x-forwarded-for")]).await;
    let pid = serve.child.id();
    let login = format!("{}/api/auth/login", serve.base);
    // One sign-in first: the allocator, the pools and the password hashing have started once.
    let client = reqwest::Client::new();
    let _ = client
        .post(&login)
        .header("x-forwarded-for", "192.0.2.1")
        .json(&json!({"email": "warm@flood.test", "password": "wrong password"}))
        .send()
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = rss(pid).unwrap_or_default();

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_peak(pid, stop.clone());
    let slowest = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut calls = Vec::new();
    for n in 0..parallel {
        let (email, address) = flood.attempt(n);
        // A client of its own per attempt: one connection each, all at once.
        let (login, slowest) = (login.clone(), slowest.clone());
        calls.push(tokio::spawn(async move {
            let at = Instant::now();
            let answer = reqwest::Client::new()
                .post(&login)
                .header("x-forwarded-for", address)
                .json(&json!({"email": email, "password": "wrong password"}))
                .send()
                .await;
            slowest.fetch_max(at.elapsed().as_millis() as u64, Ordering::Relaxed);
            answer.map(|a| a.status().as_u16()).unwrap_or(0)
        }));
    }
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for call in calls {
        *statuses.entry(call.await.unwrap_or(0)).or_default() += 1;
    }
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.await.unwrap_or_default();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = rss(pid).unwrap_or_default();
    drop(serve);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }

    println!("{parallel} parallel wrong sign-ins, {}:", flood.describe());
    println!(
        "  answers {statuses:?} (0: no answer) in {:.1} s, slowest {:.1} s",
        took.as_secs_f64(),
        slowest.load(Ordering::Relaxed) as f64 / 1000.0
    );
    println!(
        "  resident memory: idle {} (heap {}), peak {} (heap {}), 3 s after {} (heap {}); peak - idle {}",
        mib(idle.total),
        mib(idle.anon),
        mib(peak.total),
        mib(peak.anon),
        mib(after.total),
        mib(after.anon),
        mib(peak.total.saturating_sub(idle.total)),
    );
}

fn main() {
    let parallel: usize = std::env::var("SIGN_IN_FLOOD").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for flood in [Flood::OneAccountOneAddress, Flood::ManyAccountsManyAddresses] {
            run(flood, parallel).await;
        }
    });
}
