//! Shared set-up of the HTTP benchmarks: a real server on an ephemeral port, on a fresh database of either
//! engine, and latency statistics.
#![allow(dead_code)]

pub mod data;
pub mod load;
pub mod postgraphile;

use std::time::{Duration, Instant};

use frontdesk::app::AppState;
use frontdesk::config::{Config, DatabaseSettings};
use frontdesk::domain::{api_keys, hotels, identity, Actor, Scope};
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
    /// The PostgreSQL schema the server ran in, dropped with it.
    pg_schema: Option<String>,
}

fn postgres_url() -> String {
    std::env::var("FRONTDESK_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("FRONTDESK_TEST_POSTGRES_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// An organization with one hotel and an API key with every scope: (organization id, hotel id, key secret).
pub async fn seed_tenant(db: &Db) -> (String, String, String) {
    let org = identity::create_organization(db, "Bench").await.expect("org");
    let hotel = hotels::create_for_organization(db, &org.id, hotels::HotelIn::new("Bench Hotel", "UTC", "EUR"))
        .await
        .expect("hotel");
    let key = api_keys::create_for_organization(
        db,
        &org.id,
        api_keys::ApiKeyIn {
            name: "bench".into(),
            scopes: Scope::ALL.to_vec(),
            hotel_id: None,
            rate_limit_per_minute: None,
        },
    )
    .await
    .expect("key");
    (org.id, hotel.id, key.secret)
}

/// Serves `db` with `config` in this process on a free port of the loopback address: its `http://` base URL.
pub async fn serve(db: &Db, config: Config) -> String {
    let state = AppState::new(db.clone(), config).await.expect("state");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(frontdesk::router::serve(listener, state, std::future::pending()));
    // What `frontdesk serve` runs beside the router and a write's cost depends on: on SQLite a write appends its
    // audit entry to an unindexed table that this job files into the log each second, so a benchmark of writes
    // measures the filing too. It runs as long as the benchmark does.
    std::mem::forget(frontdesk::worker::audit_filing::spawn(db.clone(), frontdesk::worker::audit_filing::EVERY));
    base
}

impl BenchServer {
    /// Starts a server on a fresh database with one organization, one hotel and a key with every scope.
    /// `None` when PostgreSQL is asked for and cannot be reached.
    pub async fn start(engine: Engine) -> Option<BenchServer> {
        Self::start_seeded(engine, true).await
    }

    /// A server on an empty database (for data of the benchmark's own, such as the demo's): `org`, `hotel` and
    /// `secret` are empty.
    pub async fn start_empty(engine: Engine) -> Option<BenchServer> {
        Self::start_seeded(engine, false).await
    }

    async fn start_seeded(engine: Engine, tenant: bool) -> Option<BenchServer> {
        let id = uuid::Uuid::now_v7().simple().to_string();
        let mut pg_schema = None;
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
                pg_schema = Some(schema.clone());
                let sep = if admin.contains('?') { '&' } else { '?' };
                (format!("{admin}{sep}options=-c%20search_path%3D{schema}"), None)
            }
        };
        // Benchmarks measure the service itself; what the rate limiter costs is measured by `benches/rate_limits.rs`.
        let config = Config {
            database: DatabaseSettings {
                database_url: url.clone(),
                database_max_connections: 16,
                audit_retention_days: 3650,
            },
            rate_limits: false,
            booking_requests_per_address_per_hour: 0,
            booking_requests_per_email_per_hour: 0,
            ..Config::default()
        };
        let db = Db::connect(&url, config.database.database_max_connections).await.expect("database");
        db.migrate().await.expect("migrations");
        if let (Ok(sql), Engine::Sqlite) = (std::env::var("FRONTDESK_BENCH_SQLITE_SQL"), engine) {
            // An experiment on the schema (another index layout, say), measured with the same build: statements run
            // on the SQLite database after its migrations (docs/audit-log-measurements.md measures the log's indexes so).
            use sqlx::{Connection, Executor};
            let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("the benchmark's database");
            conn.execute(sql.as_str()).await.expect("FRONTDESK_BENCH_SQLITE_SQL");
        }
        let (org, hotel, secret) = match tenant {
            true => seed_tenant(&db).await,
            false => Default::default(),
        };
        let base = serve(&db, config).await;
        Some(BenchServer {
            base,
            url,
            db,
            engine,
            org,
            hotel,
            secret,
            client: reqwest::Client::builder().pool_max_idle_per_host(64).build().expect("client"),
            cleanup: cleanup.or(Some(String::new())).filter(|s| !s.is_empty()),
            pg_schema,
        })
    }

    /// Seeds one organization, hotel and key with every scope into a server started empty (after data that must
    /// come first, such as the demo's).
    pub async fn seed_tenant(&mut self) {
        (self.org, self.hotel, self.secret) = seed_tenant(&self.db).await;
    }

    /// The PostgreSQL schema the server's tables are in.
    pub fn postgres_schema(&self) -> Option<&str> {
        self.pg_schema.as_deref()
    }

    /// The database URL, for another process to open.
    pub fn database_url(&self) -> Option<String> {
        Some(self.url.clone())
    }

    pub fn actor(&self) -> Actor {
        Actor::command_line(&self.org)
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
            if std::env::var_os("FRONTDESK_BENCH_KEEP_DB").is_some() {
                eprintln!("  kept the SQLite database {path} (FRONTDESK_BENCH_KEEP_DB)");
                return;
            }
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
        // The schema goes with the server; a thread of its own because `drop` may run inside the benchmark's runtime.
        if let Some(schema) = self.pg_schema.take() {
            if std::env::var_os("FRONTDESK_BENCH_KEEP_DB").is_some() {
                eprintln!("  kept the PostgreSQL schema {schema} (FRONTDESK_BENCH_KEEP_DB)");
                return;
            }
            let admin = postgres_url();
            let _ = std::thread::spawn(move || {
                use sqlx::Connection;
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
                runtime.block_on(async {
                    let mut conn = sqlx::PgConnection::connect(&admin).await.ok()?;
                    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE")).execute(&mut conn).await.ok()
                })
            })
            .join();
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

/// Rows per multi-row INSERT when loading data.
pub const ROWS_PER_INSERT: usize = 400;

/// A confirmed one-room stay to load.
pub struct Stay {
    pub hotel_id: String,
    pub room_type_id: String,
    pub check_in: chrono::NaiveDate,
    pub nights: u64,
}

/// A reservation reference no other row loaded by this process has: a counter written with the references' own
/// alphabet (the service draws them at random; a loader of a million rows cannot afford to check each draw).
pub fn next_reference() -> String {
    use frontdesk::domain::reservations::reference::{ALPHABET, LENGTH};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut code = vec![ALPHABET[0]; LENGTH];
    for place in code.iter_mut().rev() {
        *place = ALPHABET[(n % ALPHABET.len() as u64) as usize];
        n /= ALPHABET.len() as u64;
    }
    String::from_utf8(code).expect("ASCII")
}

/// Inserts confirmed one-room reservations straight into the tables (at most [`ROWS_PER_INSERT`] per call), for
/// loading benchmark data quickly; answers their ids.
pub async fn insert_stays(server: &BenchServer, stays: &[Stay]) -> Vec<String> {
    use frontdesk::store::sql::Conditions;
    let day = |d: chrono::NaiveDate| d.format("%Y-%m-%d").to_string();
    let mut tx = server.db.begin_write().await.expect("tx");
    let engine = tx.engine();
    let mut reservations = Conditions::new(engine);
    let mut rooms = Conditions::new(engine);
    let (mut reservation_rows, mut room_rows, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for stay in stays {
        let id = uuid::Uuid::now_v7().to_string();
        let cin = day(stay.check_in);
        let cout = day(stay.check_in + chrono::Days::new(stay.nights));
        // Placeholders must appear in the order their values were bound (SQLite binds them by position).
        let v = [
            reservations.bind(id.clone()),
            reservations.bind(server.org.clone()),
            reservations.bind(stay.hotel_id.clone()),
            reservations.bind("CONFIRMED".to_string()),
            reservations.bind(cin.clone()),
            reservations.bind(cout.clone()),
            reservations.bind(stay.nights as i64),
            reservations.bind(format!("{cin}T15:00:00.000000Z")),
            reservations.bind(format!("{cout}T11:00:00.000000Z")),
            reservations.bind(2_i64),
            reservations.bind(10000 * stay.nights as i64),
            reservations.bind("2026-01-01T00:00:00.000000Z".to_string()),
            reservations.bind("2026-01-01T00:00:00.000000Z".to_string()),
            reservations.bind(next_reference()),
        ];
        reservation_rows.push(format!(
            "({}, NULL, {}, {}, {}, {}, {}, {}, {}, {}, {}, 0, 0, {}, 'EUR', 'API', NULL, NULL, {}, {}, {})",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]
        ));
        let r = [
            rooms.bind(uuid::Uuid::now_v7().to_string()),
            rooms.bind(id.clone()),
            rooms.bind(stay.hotel_id.clone()),
            rooms.bind(stay.room_type_id.clone()),
            rooms.bind(10000 * stay.nights as i64),
            rooms.bind(cin),
            rooms.bind(cout),
        ];
        room_rows.push(format!(
            "({}, {}, {}, {}, NULL, NULL, 'CONFIRMED', 2, 0, 0, {}, {}, {}, TRUE, 0)",
            r[0], r[1], r[2], r[3], r[4], r[5], r[6]
        ));
        ids.push(id);
    }
    let sql = format!(
        "INSERT INTO reservations (id, guest_id, organization_id, hotel_id, status, check_in_date, check_out_date, \
         nights, start_time, end_time, adults, children, infants, total_price, currency, source, channel_reference, \
         notes, created_at, updated_at, reference) VALUES {}",
        reservation_rows.join(", ")
    );
    frontdesk::store::query_with(&sql, reservations).execute(tx.conn()).await.expect("reservations");
    let sql = format!(
        "INSERT INTO reservation_rooms (id, reservation_id, hotel_id, room_type_id, rate_plan_id, room_id, status, \
         adults, children, infants, price, check_in_date, check_out_date, holds_inventory, position) VALUES {}",
        room_rows.join(", ")
    );
    frontdesk::store::query_with(&sql, rooms).execute(tx.conn()).await.expect("rooms");
    tx.commit().await.expect("commit");
    ids
}

/// The engines to measure: `FRONTDESK_BENCH_ENGINES=sqlite` (or `postgres`) runs one; both by default.
pub fn engines() -> Vec<Engine> {
    match std::env::var("FRONTDESK_BENCH_ENGINES").as_deref() {
        Ok("sqlite") => vec![Engine::Sqlite],
        Ok("postgres") => vec![Engine::Postgres],
        _ => vec![Engine::Sqlite, Engine::Postgres],
    }
}

/// The `frontdesk` binary the benchmark runs as a process: the one built with it, or `FRONTDESK_BENCH_BINARY` (an
/// earlier build, to compare before and after with the same benchmark).
pub fn binary() -> std::path::PathBuf {
    std::env::var_os("FRONTDESK_BENCH_BINARY").map_or_else(|| env!("CARGO_BIN_EXE_frontdesk").into(), Into::into)
}

/// A `frontdesk serve` process of its own (the binary built with the benchmark), killed and reaped when dropped.
pub struct ServeProcess {
    pub child: std::process::Child,
    pub base: String,
}

impl ServeProcess {
    /// Starts `frontdesk serve` on a free port of the loopback address against `database_url`, with `env` added
    /// (logging only warnings), and waits until `/readyz` answers.
    pub async fn start(database_url: &str, env: &[(&str, &str)]) -> ServeProcess {
        Self::start_binary(&binary(), database_url, env).await
    }

    /// [`ServeProcess::start`] with another `frontdesk` binary.
    pub async fn start_binary(binary: &std::path::Path, database_url: &str, env: &[(&str, &str)]) -> ServeProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("address").port();
        let child = std::process::Command::new(binary)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("FRONTDESK_DATABASE_URL", database_url)
            .env("FRONTDESK_LOG", "warn")
            // Every client of a benchmark comes from one address and books as fast as it can.
            .env("FRONTDESK_BOOKING_REQUESTS_PER_ADDRESS_PER_HOUR", "0")
            .env("FRONTDESK_BOOKING_REQUESTS_PER_EMAIL_PER_HOUR", "0")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("frontdesk serve");
        // Owned at once, so that the process is killed and reaped however this ends.
        let serve = ServeProcess { child, base: format!("http://127.0.0.1:{port}") };
        let client = reqwest::Client::new();
        for _ in 0..200 {
            if client.get(format!("{}/readyz", serve.base)).send().await.is_ok_and(|r| r.status().is_success()) {
                return serve;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("frontdesk serve did not come up");
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory of a process, in KiB: `VmRSS` (all of it), and of that `RssAnon` (the heap: what the process
/// holds) and `RssFile` (file pages mapped, such as SQLite's memory-mapped database file, which the kernel reclaims
/// at will).
#[derive(Clone, Copy, Default)]
pub struct Rss {
    pub total: u64,
    pub anon: u64,
    pub file: u64,
}

/// The resident memory of process `pid` (Linux), `None` where `/proc` does not tell.
pub fn rss(pid: u32) -> Option<Rss> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some(Rss { total: field("VmRSS:")?, anon: field("RssAnon:")?, file: field("RssFile:")? })
}
