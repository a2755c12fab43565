//! Shared set-up of the HTTP benchmarks: a real server on an ephemeral port, on a fresh database of either
//! engine, and latency statistics.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use frontdesk::config::Config;
use frontdesk::domain::{api_keys, hotels, identity, Actor, Scope};
use frontdesk::http::{self, AppState};
use frontdesk::store::{Db, Engine};

pub struct BenchServer {
    pub base: String,
    url: String,
    pub db: Db,
    pub engine: Engine,
    pub org: String,
    pub hotel: String,
    pub secret: String,
    pub client: reqwest::Client,
    cleanup: Option<String>,
}

fn postgres_url() -> String {
    std::env::var("FRONTDESK_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("FRONTDESK_TEST_POSTGRES_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

impl BenchServer {
    /// Starts a server on a fresh database with one organization, one hotel and a key with every scope.
    /// `None` when PostgreSQL is asked for and cannot be reached.
    pub async fn start(engine: Engine) -> Option<BenchServer> {
        let id = uuid::Uuid::now_v7().simple().to_string();
        let (url, cleanup) = match engine {
            Engine::Sqlite => {
                let path = std::env::temp_dir().join(format!("frontdesk-bench-{id}.db"));
                (format!("sqlite://{}", path.display()), Some(path.display().to_string()))
            }
            Engine::Postgres => {
                use sqlx::Connection;
                let admin = postgres_url();
                let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await else {
                    eprintln!("PostgreSQL at {admin} is unreachable: skipping its half");
                    return None;
                };
                let schema = format!("fdbench_{id}");
                sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&mut conn).await.ok()?;
                let sep = if admin.contains('?') { '&' } else { '?' };
                (format!("{admin}{sep}options=-c%20search_path%3D{schema}"), None)
            }
        };
        let config = Config { database_url: url.clone(), database_max_connections: 16, ..Config::default() };
        let db = Db::connect(&url, config.database_max_connections).await.expect("database");
        db.migrate().await.expect("migrations");
        let org = identity::create_organization(&db, "Bench").await.expect("org");
        let hotel = hotels::create_for_organization(
            &db,
            &org.id,
            hotels::HotelIn {
                name: "Bench Hotel".into(),
                timezone: "UTC".into(),
                currency: "EUR".into(),
                check_in_time: None,
                check_out_time: None,
                address_line1: None,
                address_line2: None,
                city: None,
                postal_code: None,
                region: None,
                country: None,
                public_booking: None,
            },
        )
        .await
        .expect("hotel");
        let key = api_keys::create_for_organization(
            &db,
            &org.id,
            api_keys::ApiKeyIn { name: "bench".into(), scopes: Scope::ALL.to_vec(), hotel_id: None },
        )
        .await
        .expect("key");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
        let addr = listener.local_addr().expect("address");
        let state = AppState::new(db.clone(), config).await.expect("state");
        tokio::spawn(async move {
            let _ = http::serve(listener, state, std::future::pending()).await;
        });
        Some(BenchServer {
            base: format!("http://{addr}"),
            url,
            db,
            engine,
            org: org.id,
            hotel: hotel.id,
            secret: key.secret,
            client: reqwest::Client::builder().pool_max_idle_per_host(64).build().expect("client"),
            cleanup: cleanup.or(Some(String::new())).filter(|s| !s.is_empty()),
        })
    }

    /// The database URL, for another process to open.
    pub fn database_url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    pub fn actor(&self) -> Actor {
        Actor::system(&self.org)
    }

    pub fn basic(&self) -> String {
        use base64::Engine as _;
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(&self.secret))
    }

    /// Median latency of a trivial authenticated GET: the floor every other number is compared to.
    pub async fn baseline(&self, requests: usize) -> Stats {
        let url = format!("{}/api/hotels/{}", self.base, self.hotel);
        let mut samples = Vec::with_capacity(requests);
        for _ in 0..requests {
            let started = Instant::now();
            let res = self.client.get(&url).header("authorization", self.basic()).send().await.expect("baseline");
            assert!(res.status().is_success());
            let _ = res.bytes().await;
            samples.push(started.elapsed());
        }
        Stats::new(samples)
    }
}

impl Drop for BenchServer {
    fn drop(&mut self) {
        if let Some(path) = self.cleanup.take() {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
    }
}

pub struct Stats {
    pub samples: Vec<Duration>,
}

impl Stats {
    pub fn new(mut samples: Vec<Duration>) -> Stats {
        samples.sort_unstable();
        Stats { samples }
    }

    pub fn percentile(&self, p: f64) -> Duration {
        if self.samples.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * (self.samples.len() - 1) as f64).round() as usize;
        self.samples[rank.min(self.samples.len() - 1)]
    }

    pub fn summary(&self) -> String {
        format!(
            "p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms (n={})",
            ms(self.percentile(50.0)),
            ms(self.percentile(95.0)),
            ms(self.percentile(99.0)),
            self.samples.len()
        )
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
