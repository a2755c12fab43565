//! Faults that heal themselves, without restarting the service: a full disk (SQLite, on a small tmpfs the test
//! mounts), a Redis that is down at start or goes away while serving, a database file that is not SQLite, and
//! database connections cut under a streamed list.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::disk::SmallDisk;
use crate::common::process::{command as frontdesk, json_output};
use crate::common::{Auth, TestDatabase, TestServer};
use frontdesk::app::AppState;
use frontdesk::config::{Config, DatabaseSettings};
use frontdesk::router;
use frontdesk::store::{Db, Engine};
use serde_json::json;

on_both_engines_configured!(redis_going_away_is_asked_once_and_limits_hold_in_memory_until_it_is_back);

on_both_engines!(
    a_streamed_list_that_fails_at_its_first_row_is_an_error_answer_not_a_200,
    a_streamed_list_that_fails_midway_is_cut_off_never_ended_cleanly,
);

/// The `-partial` file a backup to `target` writes first.
fn partial_of(target: &std::path::Path) -> std::path::PathBuf {
    let mut name = target.as_os_str().to_owned();
    name.push("-partial");
    name.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_answers_503_and_writes_work_again_once_space_is_back() {
    let Some(disk) = SmallDisk::mount_or_skip(16 << 20) else { return };
    let database = TestDatabase::sqlite_file(disk.path().join("frontdesk.db"));
    let s = TestServer::serve_database(database).await.expect("server");
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let guest = |n: usize| json!({"hotelId": hotel, "firstName": "Ada", "lastName": format!("N{n}")});
    let mut acknowledged = Vec::new();
    for n in 0..5 {
        acknowledged.push(s.create("/api/guests", &org.auth(), guest(n)).await);
    }
    // Empty the write-ahead log into the database file, so that the next write has to grow it.
    let mut conn = s.db.read().await.expect("connection");
    frontdesk::store::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await.expect("checkpoint");
    drop(conn);
    disk.fill();
    assert!(disk.available() < 4096, "the disk is full: {} bytes free", disk.available());

    // Every write is refused the same way, not just the first one: a failed write leaves its connection clean.
    for n in 5..9 {
        let refused = s.post("/api/guests", &org.auth(), guest(n)).await.expect(503);
        assert_eq!(refused.header("retry-after"), Some("5"), "{}", refused.body);
        assert!(refused.body["detail"].as_str().unwrap().contains("disk is full"), "{}", refused.body);
    }
    s.put(&format!("/api/guests/{}", acknowledged[0]), &org.auth(), json!({"firstName": "Bea"})).await.expect(503);
    let not_ready = s.get("/readyz", &Auth::None).await.expect(503);
    assert!(not_ready.body["detail"].as_str().unwrap().contains("disk is full"), "{}", not_ready.body);
    // Reads go on meanwhile.
    let listed = s.get("/api/guests?limit=100", &org.auth()).await.expect(200);
    assert_eq!(listed.body.as_array().map(Vec::len), Some(5));

    // Space comes back: readiness and writes follow, without a restart.
    disk.free();
    s.get("/readyz", &Auth::None).await.expect(200);
    acknowledged.push(s.create("/api/guests", &org.auth(), guest(9)).await);
    s.put(&format!("/api/guests/{}", acknowledged[0]), &org.auth(), json!({"firstName": "Bea"})).await.expect(200);
    for id in &acknowledged {
        s.get(&format!("/api/guests/{id}"), &org.auth()).await.expect(200);
    }
    assert_eq!(s.count("guests").await, 6, "every acknowledged write, and none of the refused ones");
    let mut conn = s.db.read().await.expect("connection");
    let check: String =
        frontdesk::store::query("PRAGMA integrity_check").fetch_one(&mut conn).await.expect("check").get(0);
    assert_eq!(check, "ok");
    drop(conn);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_that_runs_out_of_space_leaves_no_partial_file() {
    let Some(disk) = SmallDisk::mount_or_skip(4 << 20) else { return };
    let s = TestServer::start(Engine::Sqlite).await.expect("server");
    let org = s.org("Acme").await;
    s.hotel(&org, "Sea").await;
    let target = disk.path().join("backup.db");
    disk.fill();
    let err = frontdesk::operations::backup::backup(&s.db, &target).await.expect_err("no space for the backup");
    assert!(!target.exists() && !partial_of(&target).exists(), "{err:#}");
    assert!(format!("{err:#}").contains("partial backup"), "{err:#}");

    // With space, the same backup is written (and nothing is left beside it).
    disk.free();
    let done = frontdesk::operations::backup::backup(&s.db, &target).await.expect("backup");
    assert_eq!(done.summary.hotels, 1);
    assert!(!partial_of(&target).exists());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_file_that_is_not_sqlite_is_refused_at_once_by_name() {
    let path = std::env::temp_dir().join(format!("frontdesk-{}-notes.db", uuid::Uuid::now_v7().simple()));
    std::fs::write(&path, "Shopping list: eggs, milk, a database.\n".repeat(200)).unwrap();
    let url = format!("sqlite://{}", path.display());
    // Not the pool's 30 s of retries: the first attempt's answer.
    let opened = tokio::time::timeout(std::time::Duration::from_secs(10), frontdesk::store::Db::connect(&url, 4))
        .await
        .expect("an answer well before the pool's acquire timeout");
    let said = format!("{:#}", opened.expect_err("not a database"));
    assert!(said.contains(&path.display().to_string()) && said.contains("not a database"), "{said}");

    let out = crate::common::process::command(&url).args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&path.display().to_string()) && said.contains("not a database"), "{said}");
    let _ = std::fs::remove_file(&path);
}

/// A redis-server of the test's own on a port of its own (the shared one on 6379 is never stopped).
struct RedisServer {
    port: u16,
    password: Option<&'static str>,
    child: Option<Child>,
}

impl RedisServer {
    /// A free port with no Redis on it yet; `None` (skipped, with a note) without redis-server outside CI.
    fn port_or_skip() -> Option<RedisServer> {
        if Command::new("redis-server").arg("--version").output().is_err() {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "redis-server is required under CI=true");
            eprintln!("skipping: no redis-server to start and stop");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Some(RedisServer { port, password: None, child: None })
    }

    fn url(&self) -> String {
        match self.password {
            Some(password) => format!("redis://:{password}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    async fn start(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(self.password.iter().flat_map(|password| ["--requirepass", password]))
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        for _ in 0..100 {
            if self.keys("*").await.is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("redis-server did not come up on port {}", self.port);
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops (`STOP`) or continues (`CONT`) the server process: a Redis that hangs.
    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap().success());
    }

    /// How many keys it holds that match `pattern`; `None` when it does not answer.
    async fn keys(&self, pattern: &str) -> Option<usize> {
        let client = redis::Client::open(self.url()).ok()?;
        let mut conn =
            tokio::time::timeout(Duration::from_secs(1), client.get_multiplexed_async_connection()).await.ok()?.ok()?;
        let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query_async(&mut conn).await.ok()?;
        Some(keys.len())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn redis_going_away_is_asked_once_and_limits_hold_in_memory_until_it_is_back(engine: Engine) {
    let Some(mut redis) = RedisServer::port_or_skip() else { return };
    redis.start().await;
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let config = Config {
        database: DatabaseSettings {
            database_url: database.url.clone(),
            database_max_connections: 4,
            audit_retention_days: 3650,
        },
        redis_url: Some(redis.url()),
        rate_limit_per_minute: 5,
        webhook_dispatcher: false,
        ..Config::default()
    };
    let db = Db::connect(&database.url, 4).await.expect("database");
    frontdesk::domain::migrate(&db).await.expect("migrations");
    let state = AppState::new(db.clone(), config).await.expect("state");
    let limiter = state.limiter.clone().expect("a limiter");
    let s = TestServer::serve_router(router::app(state), db, engine, database).await.expect("server");
    let org = s.org("Acme").await;
    let key = Auth::Key(s.key(&org, &[], None).await);
    let hotels = || s.get("/api/hotels", &key);

    // Shared: the bucket is in Redis.
    assert_eq!(hotels().await.expect(200).header("ratelimit-remaining"), Some("4"));
    assert_eq!(redis.keys("frontdesk:ratelimit:key:*").await, Some(1));
    assert_eq!((limiter.redis_up(), limiter.redis_failures()), (Some(true), 0));

    // Redis goes away. The request that finds it gone is the only one that asks it; the rest are decided in this
    // process's memory at once, and the limit holds there (a fresh budget of 5, then 429).
    redis.stop();
    for n in 0..5 {
        assert_eq!(hotels().await.expect(200).header("ratelimit-limit"), Some("5"), "request {n}");
    }
    let refused = hotels().await.expect(429);
    assert!(refused.header("retry-after").is_some());
    for _ in 0..10 {
        hotels().await.expect(429);
    }
    assert_eq!((limiter.redis_up(), limiter.redis_failures()), (Some(false), 1), "one call to a dead Redis");

    // It comes back (empty, as a restarted cache does): used again without a restart of the service, within the
    // breaker's longest wait.
    redis.start().await;
    let mut waited = Duration::ZERO;
    while limiter.redis_up() != Some(true) {
        assert!(waited < Duration::from_secs(15), "Redis was not used again");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    assert_eq!(hotels().await.expect(200).header("ratelimit-remaining"), Some("4"), "a fresh bucket in Redis");
    assert_eq!(redis.keys("frontdesk:ratelimit:key:*").await, Some(1));

    // Redis hangs (stopped, not gone: connections open, nothing answers). One request waits for the call's
    // timeout; after it the breaker is open and the others do not ask.
    redis.signal("STOP");
    for _ in 0..10 {
        let status = hotels().await.status.as_u16();
        assert!(status == 200 || status == 429, "{status}");
    }
    assert_eq!((limiter.redis_up(), limiter.redis_failures()), (Some(false), 2), "one call to a hanging Redis");
    redis.signal("CONT");
    let mut waited = Duration::ZERO;
    while limiter.redis_up() != Some(true) {
        assert!(waited < Duration::from_secs(15), "Redis was not used again after it hung");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }

    // Under load: eight clients keep asking while Redis is killed and started again. Only requests in flight when
    // it went away ask it in vain (at most one each), every answer is a decision (200 or 429), and Redis is used
    // again while the load goes on.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (client, url, key, stop) =
                (s.client.clone(), format!("{}/api/hotels", s.base), key.clone(), stop.clone());
            tokio::spawn(async move {
                let Auth::Key(secret) = key else { unreachable!("a key") };
                let mut answered = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let res =
                        client.get(&url).header("authorization", crate::common::basic(&secret)).send().await.unwrap();
                    answered.push(res.status().as_u16());
                }
                answered
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let failures_before = limiter.redis_failures();
    redis.stop();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(limiter.redis_up(), Some(false));
    let failures = limiter.redis_failures() - failures_before;
    assert!((1..=8).contains(&failures), "{failures} calls to a dead Redis under 8 clients");
    redis.start().await;
    let mut waited = Duration::ZERO;
    while limiter.redis_up() != Some(true) {
        assert!(waited < Duration::from_secs(15), "Redis was not used again under load");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for client in clients {
        let answered = client.await.unwrap();
        assert!(answered.iter().all(|status| matches!(status, 200 | 429)), "{answered:?}");
    }
    assert_eq!(limiter.redis_failures() - failures_before, failures, "no call failed after the breaker opened");
    s.stop().await;
}

/// Waits until `frontdesk_rate_limit_redis_up` reads `value` on the metrics address.
async fn wait_for_redis_up(client: &reqwest::Client, metrics: &str, value: &str) {
    for _ in 0..150 {
        let text = client.get(format!("{metrics}/metrics")).send().await.unwrap().text().await.unwrap();
        if text.lines().any(|line| line == format!("frontdesk_rate_limit_redis_up {value}")) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = client.get(format!("{metrics}/metrics")).send().await.unwrap().text().await.unwrap();
    let now: Vec<&str> = text.lines().filter(|line| line.contains("redis")).collect();
    panic!("frontdesk_rate_limit_redis_up never read {value}: {now:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_starts_without_redis_logs_once_per_outage_and_connects_when_it_comes_up() {
    let Some(mut redis) = RedisServer::port_or_skip() else { return };
    let database = TestDatabase::create(Engine::Sqlite).await.unwrap();
    let url = database.url.clone();
    assert!(frontdesk(&url).arg("migrate").status().unwrap().success());
    let org = json_output(frontdesk(&url).args(["admin", "create-org", "--name", "Acme"]));
    let org_id = org["id"].as_str().unwrap();
    json_output(
        frontdesk(&url).args(["admin", "create-operator", "--org", org_id, "--email", "ana@example.com"]).args([
            "--name",
            "Ana",
            "--password",
            "long enough",
        ]),
    );
    let token = json_output(frontdesk(&url).args(["admin", "create-token", "--email", "ana@example.com"]));
    let token = format!("Token {}", token["token"].as_str().unwrap());

    // Redis is configured, with a password, and nothing listens there.
    redis.password = Some("hunter2-secret");
    let redis_url = redis.url();
    let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (port, metrics_port) = (free(), free());
    let log = std::env::temp_dir().join(format!("frontdesk-{}-serve.log", uuid::Uuid::now_v7().simple()));
    let mut serve = frontdesk(&url)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
        .args(["--redis-url", &redis_url, "--operator-rate-limit-per-minute", "3"])
        .env("FRONTDESK_LOG", "warn,frontdesk::app::rate_limit=info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let metrics = format!("http://127.0.0.1:{metrics_port}");
    let client = reqwest::Client::new();
    let mut up = false;
    for _ in 0..100 {
        if let Some(status) = serve.try_wait().unwrap() {
            panic!("serve exited ({status}): {}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        if client.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(up, "serve came up");
    let hotels = || async {
        let res = client.get(format!("{base}/api/hotels")).header("authorization", &token).send().await.unwrap();
        res.status().as_u16()
    };
    // Limited in memory meanwhile.
    assert_eq!([hotels().await, hotels().await, hotels().await, hotels().await], [200, 200, 200, 429]);
    wait_for_redis_up(&client, &metrics, "0").await;

    // Redis comes up: used without a restart.
    redis.start().await;
    wait_for_redis_up(&client, &metrics, "1").await;
    hotels().await;
    assert_eq!(redis.keys("frontdesk:ratelimit:operator:*").await, Some(1), "the limiter keeps its buckets there");

    // It goes away again, under requests, and comes back.
    redis.stop();
    for _ in 0..20 {
        hotels().await;
    }
    wait_for_redis_up(&client, &metrics, "0").await;
    redis.start().await;
    wait_for_redis_up(&client, &metrics, "1").await;
    let _ = serve.kill();
    let _ = serve.wait();

    let said = std::fs::read_to_string(&log).unwrap();
    let lines = |text: &str| said.lines().filter(|line| line.contains(text)).count();
    assert!(!said.contains("hunter2-secret"), "{said}");
    assert_eq!(lines("Redis does not answer; serving anyway"), 1, "{said}");
    assert_eq!(lines("Redis stopped answering"), 1, "{said}");
    assert_eq!(lines("Redis answers again"), 2, "{said}");
    let named = format!("redis://:***@127.0.0.1:{}", redis.port);
    assert_eq!(lines(&named), 4, "every line names Redis, without the password: {said}");
    let _ = std::fs::remove_file(&log);
}

/// Writes `rows` guests of `organization_id` straight into the database (faster than the API), whose ids sort after
/// those of guests written with a smaller `place` (ids sort as bytes); `readable: false` stores a creation instant
/// that no reader can read.
async fn insert_guests(s: &TestServer, organization_id: &str, place: u8, rows: usize, readable: bool) {
    // What each engine can hold and the service cannot read: SQLite's text holds anything, PostgreSQL's
    // `timestamptz` holds infinity, which no calendar has.
    let unreadable = match s.engine {
        Engine::Sqlite => "'not an instant'",
        Engine::Postgres => "'infinity'",
    };
    let mut tx = s.db.begin_write().await.expect("write");
    for n in 0..rows {
        let id = format!("{place}0000000-0000-7000-8000-{n:012}");
        frontdesk::store::query(
            "INSERT INTO guests (id, organization_id, first_name, last_name, created_at, updated_at) \
             VALUES ($1, $2, 'Ada', 'Lovelace', $3, $3)",
        )
        .bind(&id)
        .bind(organization_id)
        .bind(GOOD_INSTANT)
        .execute(tx.conn())
        .await
        .expect("guest row");
        if !readable {
            let sql = format!("UPDATE guests SET created_at = {unreadable} WHERE id = $1");
            frontdesk::store::query(&sql).bind(&id).execute(tx.conn()).await.expect("an unreadable instant");
        }
    }
    tx.commit().await.expect("commit");
}

const GOOD_INSTANT: &str = "2026-01-01T12:00:00.000000Z";

async fn a_streamed_list_that_fails_at_its_first_row_is_an_error_answer_not_a_200(s: TestServer) {
    let org = s.org("Acme").await;
    insert_guests(&s, &org.id, 1, 3, true).await;
    // Sorted first: a row that cannot be read.
    insert_guests(&s, &org.id, 0, 1, false).await;
    // `limit` 0 (the default) streams every match.
    let answer = s.get("/api/guests", &org.auth()).await.expect(500);
    assert_eq!(answer.body["detail"], "the service could not complete the request");
    // A page is read whole, and fails whole, too.
    s.get("/api/guests?limit=10", &org.auth()).await.expect(500);
    s.stop().await;
}

async fn a_streamed_list_that_fails_midway_is_cut_off_never_ended_cleanly(s: TestServer) {
    let org = s.org("Acme").await;
    insert_guests(&s, &org.id, 1, 600, true).await;
    insert_guests(&s, &org.id, 2, 1, false).await;
    let res = s.client.get(format!("{}/api/guests", s.base)).header("authorization", format!("Token {}", org.token));
    let res = res.send().await.unwrap();
    assert_eq!(res.status(), 200, "the first row was read before the status");
    assert_eq!(res.headers()["x-total-count"], "601");
    let body = res.bytes().await;
    assert!(body.is_err(), "a list that failed midway must not end like a whole one: {:?}", body.map(|b| b.len()));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_connections_terminated_under_a_long_streamed_list_cut_it_off() {
    use sqlx::Connection;
    let Some(mut database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    // This server's connections, and no other test's, are told apart by their application name.
    let application = format!("frontdesk_faults_{}", uuid::Uuid::now_v7().simple());
    database.url.push_str(&format!("&application_name={application}"));
    let s = TestServer::serve_database(database).await.expect("server");
    let org = s.org("Acme").await;
    let mut tx = s.db.begin_write().await.expect("write");
    frontdesk::store::query(
        "INSERT INTO guests (id, organization_id, first_name, last_name, notes, created_at, updated_at) \
         SELECT gen_random_uuid(), $1, 'Ada', 'Lovelace', repeat('x', 200), $2, $2 \
         FROM generate_series(1, 100000) AS n",
    )
    .bind(&org.id)
    .bind(GOOD_INSTANT)
    .execute(tx.conn())
    .await
    .expect("guests");
    tx.commit().await.expect("commit");

    let res = s.client.get(format!("{}/api/guests", s.base)).header("authorization", format!("Token {}", org.token));
    let mut res = res.send().await.unwrap();
    assert_eq!(res.status(), 200);
    let mut received = res.chunk().await.expect("the first piece").map_or(0, |piece| piece.len());
    let mut admin = sqlx::PgConnection::connect(&crate::common::postgres_url()).await.expect("admin connection");
    let terminated: Vec<bool> =
        sqlx::query_scalar("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1")
            .bind(&application)
            .fetch_all(&mut admin)
            .await
            .expect("terminated");
    assert!(!terminated.is_empty(), "the server's connections were found");
    admin.close().await.ok();
    let ended = loop {
        match res.chunk().await {
            Ok(Some(piece)) => received += piece.len(),
            Ok(None) => break Ok(received),
            Err(err) => break Err(err),
        }
    };
    assert!(ended.is_err(), "the list ended cleanly after {received} bytes, with its connections terminated");
    assert!(received < 100_000 * 300, "the list was cut short: {received} bytes");
    // The service goes on: each terminated connection answers at most one request 503 before it is replaced (see
    // docs/operations.md, "Database connections"), then lists are whole again.
    let mut answer = s.get("/api/guests?limit=5", &org.auth()).await;
    for _ in 0..16 {
        if answer.status != 503 {
            break;
        }
        answer = s.get("/api/guests?limit=5", &org.auth()).await;
    }
    assert_eq!(answer.expect(200).header("x-total-count"), Some("100000"));
    s.stop().await;
}
