//! Backups and restores of the SQLite database, and `frontdesk check`, as an operator runs them: the real binary
//! against a database the service is writing to.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::common::process::{command as frontdesk, json_output};
use crate::common::TestServer;
use frontdesk::store::maintenance::verify_sqlite_file;
use frontdesk::store::Engine;
use serde_json::{json, Value};
use sqlx::Connection;

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("frontdesk-{}-{name}", uuid::Uuid::now_v7().simple()))
}

/// The ids of `guests` rows in a SQLite file.
async fn guest_ids(path: &Path) -> HashSet<String> {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).read_only(true);
    let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("open the backup");
    let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM guests").fetch_all(&mut conn).await.expect("guests");
    conn.close().await.ok();
    ids.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_under_write_load_holds_every_write_acknowledged_before_it_started() {
    let s = TestServer::start(Engine::Sqlite).await.expect("server");
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for writer in 0..4 {
        let (client, base, token, hotel) = (reqwest::Client::new(), s.base.clone(), org.token.clone(), hotel.clone());
        let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let body = json!({"hotelId": hotel, "firstName": format!("W{writer}"), "lastName": format!("N{n}")});
                let answer = client
                    .post(format!("{base}/api/guests"))
                    .header("authorization", format!("Token {token}"))
                    .json(&body)
                    .send()
                    .await
                    .expect("answer");
                assert_eq!(answer.status(), 200);
                let created: Value = answer.json().await.expect("json");
                acknowledged.lock().unwrap().push(created["id"].as_str().expect("id").to_string());
            }
        }));
    }
    // Let the writers get going, then note what was acknowledged before the backup starts.
    while acknowledged.lock().unwrap().len() < 50 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    let target = temp_path("backup.db");
    let url = s.database_url().to_string();
    let target_arg = target.display().to_string();
    let report =
        tokio::task::spawn_blocking(move || json_output(frontdesk(&url).args(["backup", "--to", &target_arg])))
            .await
            .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for writer in writers {
        writer.await.expect("writer");
    }
    assert_eq!(report["integrityCheck"], "ok");
    assert_eq!(report["path"], target.display().to_string());
    let in_backup = guest_ids(&target).await;
    let missing: Vec<&String> = before.iter().filter(|id| !in_backup.contains(*id)).collect();
    assert!(missing.is_empty(), "acknowledged before the backup but missing: {missing:?}");
    assert!(report["guests"].as_i64().unwrap() >= before.len() as i64);
    assert!(verify_sqlite_file(&target).await.is_ok());

    // A backup never overwrites a file.
    let again = frontdesk(s.database_url()).args(["backup", "--to", &target.display().to_string()]).output().unwrap();
    assert!(!again.status.success() && text(&again.stderr).contains("never overwrites"), "{}", text(&again.stderr));

    // Restoring is refused while the service has the database open, and leaves it alone.
    let refused =
        frontdesk(s.database_url()).args(["restore", "--from", &target.display().to_string()]).output().unwrap();
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("in use by a running frontdesk process"), "{}", text(&refused.stderr));
    s.get("/healthz", &crate::common::Auth::None).await.expect(200);

    // Into a database nobody uses, the restore brings back exactly the backup, migrated and usable.
    let restored = temp_path("restored.db");
    let restored_url = format!("sqlite://{}", restored.display());
    let out = json_output(frontdesk(&restored_url).args(["restore", "--from", &target.display().to_string()]));
    assert_eq!(out["from"]["integrityCheck"], "ok");
    assert_eq!(guest_ids(&restored).await, in_backup);
    let orgs = json_output(frontdesk(&restored_url).args(["admin", "list-orgs"]));
    assert_eq!(orgs["organizations"][0]["name"], "Acme");
    for path in [target, restored] {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}

#[tokio::test]
async fn a_damaged_or_foreign_file_is_never_restored() {
    let target = temp_path("target.db");
    let url = format!("sqlite://{}", target.display());
    let not_sqlite = temp_path("notes.txt");
    std::fs::write(&not_sqlite, "not a database").unwrap();
    let out = frontdesk(&url).args(["restore", "--from", &not_sqlite.display().to_string()]).output().unwrap();
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(!target.exists(), "nothing was written");

    // A SQLite file that is not a Frontdesk database.
    let foreign = temp_path("foreign.db");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&foreign).create_if_missing(true);
    let mut conn = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::query("CREATE TABLE t (x)").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    let out = frontdesk(&url).args(["restore", "--from", &foreign.display().to_string()]).output().unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("not a Frontdesk database"), "{}", text(&out.stderr));
    assert!(!target.exists(), "nothing was written");

    // PostgreSQL has its own tools.
    // PostgreSQL has its own tools; the command says so before it connects (nothing listens on port 1).
    for command in [["backup", "--to"], ["restore", "--from"]] {
        let out = frontdesk("postgres://postgres@127.0.0.1:1/test").args(command).arg("x.db").output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let said = text(&out.stderr);
        assert!(said.contains("pg_dump and pg_restore") && said.contains("docs/operations.md"), "{said}");
    }
    for path in [not_sqlite, foreign] {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn check_reports_each_part_and_fails_when_the_service_could_not_work() {
    let dir = temp_path("check");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("frontdesk.db").display());
    let run =
        |extra: &[&str]| frontdesk(&url).arg("check").args(["--listen", "127.0.0.1:0"]).args(extra).output().unwrap();

    let missing = run(&[]);
    assert_eq!(missing.status.code(), Some(1));
    let report = text(&missing.stdout);
    assert!(report.contains("FAIL  database") && report.contains("no database at"), "{report}");
    assert!(!dir.join("frontdesk.db").exists(), "check creates nothing");

    let migrated = frontdesk(&url).arg("migrate").output().unwrap();
    assert!(migrated.status.success());
    let healthy = run(&["--public-url", "https://hotel.example"]);
    let report = text(&healthy.stdout);
    assert!(healthy.status.success(), "{report}\n{}", text(&healthy.stderr));
    for line in [
        "ok    configuration",
        "ok    database",
        "schema current",
        "skip  redis",
        "ok    public URL",
        "ok    listen",
        "skip  metrics",
    ] {
        assert!(report.contains(line), "{line:?} in:\n{report}");
    }
    let with_metrics = run(&["--metrics-listen", "127.0.0.1:0"]);
    assert!(text(&with_metrics.stdout).contains("ok    metrics"), "{}", text(&with_metrics.stdout));

    let warned = run(&["--public-url", "http://hotel.example"]);
    let report = text(&warned.stdout);
    assert!(warned.status.success(), "warnings do not fail: {report}");
    assert!(report.contains("warn  public URL"), "{report}");

    // Configured and unreachable, Redis fails the check (serve would start, but limit per process), naming it
    // without its password.
    let unreachable = run(&["--redis-url", "redis://:hunter2-secret@127.0.0.1:1"]);
    let report = text(&unreachable.stdout);
    assert_eq!(unreachable.status.code(), Some(1), "{report}");
    assert!(report.contains("FAIL  redis") && report.contains("127.0.0.1:1"), "{report}");
    assert!(!report.contains("hunter2-secret"), "{report}");

    // A taken listen or metrics address fails it too, saying which.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let listen_taken = frontdesk(&url).args(["check", "--listen", &address]).output().unwrap();
    let report = text(&listen_taken.stdout);
    assert_eq!(listen_taken.status.code(), Some(1), "{report}");
    assert!(report.contains("FAIL  listen") && report.contains(&format!("{address} is in use")), "{report}");
    let metrics_taken = run(&["--metrics-listen", &address]);
    let report = text(&metrics_taken.stdout);
    assert_eq!(metrics_taken.status.code(), Some(1), "{report}");
    assert!(report.contains("ok    listen") && report.contains("FAIL  metrics"), "{report}");
    assert!(report.contains(&format!("{address} is in use")), "{report}");
    drop(taken);

    let invalid = run(&["--rate-limit-per-minute", "0"]);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(text(&invalid.stdout).contains("FAIL  configuration"), "{}", text(&invalid.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}
