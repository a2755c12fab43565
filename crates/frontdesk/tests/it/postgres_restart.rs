//! PostgreSQL stopped and started under write load. The test runs a PostgreSQL server of its own (initdb into a
//! temporary directory, on a free port), so that stopping it disturbs nothing else on the machine. While it is down
//! every request that needs it is answered 503 with a problem document and `Retry-After`, `/readyz` says 503; when it
//! is back the service recovers by itself (writes, and the reservation reads of the separate hot-read pool), and no
//! acknowledged write is lost.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::process::{command, json_output, spawn_with};
use serde_json::{json, Value};

/// A PostgreSQL server of the test's own.
struct PrivateServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl PrivateServer {
    /// `None` when this machine has no PostgreSQL server binaries (a failure under `CI=true`).
    fn create() -> Option<PrivateServer> {
        let bin = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|versions| {
            let mut found: Vec<PathBuf> =
                versions.flatten().map(|v| v.path().join("bin")).filter(|b| b.join("initdb").exists()).collect();
            found.sort();
            found.pop()
        });
        let Some(bin) = bin else {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "PostgreSQL's server binaries are required in CI");
            eprintln!("skipping: no PostgreSQL server binaries under /usr/lib/postgresql");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("frontdesk-pg-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = PrivateServer { bin, dir, port };
        if is_root() {
            // PostgreSQL refuses to run as root: the directory is handed to the postgres user.
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&server.dir).status().unwrap();
            assert!(status.success());
        }
        let data = server.dir.join("data");
        let initdb = server.run("initdb", &["-D", &data.display().to_string(), "-A", "trust", "-U", "postgres"]);
        assert!(initdb, "initdb");
        Some(server)
    }

    fn run(&self, tool: &str, args: &[&str]) -> bool {
        let program = self.bin.join(tool);
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        command.args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        command.status().map(|s| s.success()).unwrap_or(false)
    }

    fn start(&self) {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.display());
        let log = self.dir.join("log").display().to_string();
        let data = self.dir.join("data").display().to_string();
        assert!(self.run("pg_ctl", &["-D", &data, "-o", &options, "-l", &log, "-w", "start"]), "pg_ctl start");
    }

    fn stop(&self) {
        let data = self.dir.join("data").display().to_string();
        assert!(self.run("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"]), "pg_ctl stop");
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let data = self.dir.join("data").display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}

fn admin(url: &str, args: &[&str]) -> Value {
    json_output(command(url).arg("admin").args(args))
}

fn migrate(url: &str) {
    succeeds(command(url).arg("migrate"));
}

/// Runs a command that prints nothing on stdout and must succeed.
fn succeeds(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Starts `server` with Frontdesk's tables, one organization and one operator: (database URL, the operator's token).
fn started_with_operator(server: &PrivateServer) -> (String, String) {
    server.start();
    let url = server.url();
    migrate(&url);
    let org = admin(&url, &["create-org", "--name", "Acme"]);
    let org_id = org["id"].as_str().unwrap();
    admin(
        &url,
        &[
            "create-operator",
            "--org",
            org_id,
            "--email",
            "ana@example.com",
            "--name",
            "Ana",
            "--password",
            "long enough",
        ],
    );
    let token = admin(&url, &["create-token", "--email", "ana@example.com"])["token"].as_str().unwrap().to_string();
    (url, token)
}

#[derive(Default)]
struct Seen {
    acknowledged: Vec<String>,
    /// Statuses other than 200, with whether the answer was a problem document carrying Retry-After.
    refused: Vec<(u16, bool)>,
    last_success: Option<Instant>,
}

/// What a reader of the hot-read pool (single reservations) was answered.
#[derive(Default)]
struct Reads {
    /// Statuses other than the expected ones, with whether the answer was a problem document carrying Retry-After.
    refused: Vec<(u16, bool)>,
    last_answer: Option<Instant>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_answers_503_while_postgres_is_down_and_recovers_by_itself() {
    let Some(server) = PrivateServer::create() else { return };
    let (url, token) = started_with_operator(&server);
    let process = spawn_with(&url, &[]).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let auth = format!("Token {token}");
    let hotel: Value = client
        .post(format!("{}/api/hotels", process.base))
        .header("authorization", &auth)
        .json(&json!({"name": "Sea", "timezone": "Europe/Lisbon", "currency": "EUR"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let hotel = hotel["id"].as_str().unwrap().to_string();

    let seen = Arc::new(Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for writer in 0..3 {
        let (client, base, auth, hotel) = (client.clone(), process.base.clone(), auth.clone(), hotel.clone());
        let (seen, stop) = (seen.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let body = json!({"hotelId": hotel, "firstName": format!("W{writer}"), "lastName": format!("N{n}")});
                let answer =
                    client.post(format!("{base}/api/guests")).header("authorization", &auth).json(&body).send().await;
                let answer = answer.expect("the service itself keeps answering");
                let status = answer.status().as_u16();
                let problem_with_retry =
                    answer.headers().get("content-type").is_some_and(|v| v.as_bytes() == b"application/problem+json")
                        && answer.headers().contains_key("retry-after");
                if status == 200 {
                    let created: Value = answer.json().await.unwrap();
                    let mut seen = seen.lock().unwrap();
                    seen.acknowledged.push(created["id"].as_str().unwrap().to_string());
                    seen.last_success = Some(Instant::now());
                } else {
                    seen.lock().unwrap().refused.push((status, problem_with_retry));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    // A reader of the hot-read pool: refused with 503 while the server is down, and answered again after.
    let reads = Arc::new(Mutex::new(Reads::default()));
    let reader = {
        let (client, base, auth) = (client.clone(), process.base.clone(), auth.clone());
        let (reads, stop) = (reads.clone(), stop.clone());
        tokio::spawn(async move {
            // A reservation that does not exist: 404 from the hot pool alone.
            let single = format!("{base}/api/reservations/{}", uuid::Uuid::now_v7());
            while !stop.load(Ordering::Relaxed) {
                let answer = client.get(&single).header("authorization", &auth).send().await;
                let answer = answer.expect("the service itself keeps answering");
                let status = answer.status().as_u16();
                let problem_with_retry =
                    answer.headers().get("content-type").is_some_and(|v| v.as_bytes() == b"application/problem+json")
                        && answer.headers().contains_key("retry-after");
                {
                    let mut reads = reads.lock().unwrap();
                    match status {
                        404 => reads.last_answer = Some(Instant::now()),
                        _ => reads.refused.push((status, problem_with_retry)),
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(reads.lock().unwrap().last_answer.is_some(), "reads were answered before the stop");

    server.stop();
    let stopped_at = Instant::now();
    // While it is down: readiness says so, and writes are refused with 503.
    let ready = client.get(format!("{}/readyz", process.base)).send().await.unwrap();
    assert_eq!(ready.status(), 503, "readyz while PostgreSQL is down");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let refused_while_down = seen.lock().unwrap().refused.len();
    assert!(refused_while_down > 0, "writes were refused while PostgreSQL was down");

    server.start();
    let restarted_at = Instant::now();
    let recovered = loop {
        let last = seen.lock().unwrap().last_success;
        if let Some(at) = last.filter(|at| *at > restarted_at) {
            break at.duration_since(restarted_at);
        }
        assert!(restarted_at.elapsed() < Duration::from_secs(60), "the service did not recover within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let reads_recovered = loop {
        let last = reads.lock().unwrap().last_answer;
        if let Some(at) = last.filter(|at| *at > restarted_at) {
            break at.duration_since(restarted_at);
        }
        assert!(restarted_at.elapsed() < Duration::from_secs(60), "reservation reads did not recover within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let ready = client.get(format!("{}/readyz", process.base)).send().await.unwrap();
    assert_eq!(ready.status(), 200, "readyz after PostgreSQL is back");
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    reader.await.unwrap();
    let reads = std::mem::take(&mut *reads.lock().unwrap());
    assert!(!reads.refused.is_empty(), "reads were refused while PostgreSQL was down");
    let read_statuses: std::collections::BTreeSet<u16> = reads.refused.iter().map(|(s, _)| *s).collect();
    assert_eq!(read_statuses, [503].into(), "read refusals were all 503");
    assert!(reads.refused.iter().all(|(_, problem)| *problem), "every refused read is a problem document");

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let statuses: std::collections::BTreeSet<u16> = seen.refused.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [503].into(), "refusals were all 503");
    assert!(seen.refused.iter().all(|(_, problem)| *problem), "every 503 is a problem document with Retry-After");
    for id in &seen.acknowledged {
        let answer = client
            .get(format!("{}/api/guests/{id}", process.base))
            .header("authorization", &auth)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "acknowledged guest {id} lost");
    }
    eprintln!(
        "PostgreSQL down {:.1} s: {} writes refused with 503; first write {} ms after it came back; {} writes \
         acknowledged, all present; {} reads refused with 503, first read {} ms after it came back",
        restarted_at.duration_since(stopped_at).as_secs_f64(),
        seen.refused.len(),
        recovered.as_millis(),
        seen.acknowledged.len(),
        reads.refused.len(),
        reads_recovered.as_millis()
    );
}

/// Connections that die while PostgreSQL stays up (terminated by an administrator, dropped by a proxy) under steady
/// reads: each one that was open fails once, with 503, and is replaced. The hot-read pool checks only connections that
/// sat idle, and a busy one never does, so a connection whose statement failed must be closed rather than reused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_terminated_under_load_are_replaced() {
    use sqlx::Connection;
    let Some(server) = PrivateServer::create() else { return };
    let (url, token) = started_with_operator(&server);
    let process = spawn_with(&url, &[]).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let auth = format!("Token {token}");
    // Single reservations that do not exist: 404 from the hot-read pool alone.
    let missing = format!("{}/api/reservations/{}", process.base, uuid::Uuid::now_v7());
    let read = |n: usize| {
        let (client, missing, auth) = (client.clone(), missing.clone(), auth.clone());
        async move {
            let mut statuses = Vec::with_capacity(n);
            for _ in 0..n {
                statuses.push(client.get(&missing).header("authorization", &auth).send().await.unwrap().status());
            }
            statuses
        }
    };
    // Eight readers at once open several hot connections.
    let warm: Vec<_> = (0..8).map(|_| tokio::spawn(read(25))).collect();
    for reader in warm {
        assert!(reader.await.unwrap().iter().all(|s| *s == 404), "answered before the connections die");
    }

    let mut admin_conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let terminated: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend') t",
    )
    .fetch_one(&mut admin_conn)
    .await
    .unwrap();
    assert!(terminated >= 2, "the service's connections were terminated ({terminated})");

    // Four readers keep every connection busy (each used far more often than once a second).
    let readers: Vec<_> = (0..4).map(|_| tokio::spawn(read(150))).collect();
    let mut statuses = Vec::new();
    for reader in readers {
        statuses.push(reader.await.unwrap());
    }
    let failed: Vec<u16> = statuses.iter().flatten().filter(|s| s.as_u16() != 404).map(|s| s.as_u16()).collect();
    assert!(failed.iter().all(|s| *s == 503), "failures are 503: {failed:?}");
    assert!(
        failed.len() as i64 <= terminated,
        "{} requests failed for {terminated} terminated connections: dead connections were reused",
        failed.len()
    );
    for reader in &statuses {
        assert!(reader[100..].iter().all(|s| *s == 404), "reads recovered: {reader:?}");
    }
    eprintln!("{terminated} connections terminated; {} of 600 reads answered 503, the rest 404", failed.len());
}
