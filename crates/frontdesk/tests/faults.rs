//! Faults that heal themselves, without restarting the service: a full disk (SQLite, on a small tmpfs the test
//! mounts), a Redis that is down at start or goes away while serving, a database file that is not SQLite, and
//! database connections cut under a streamed list.

mod common;

use common::disk::SmallDisk;
use common::{Auth, TestDatabase, TestServer};
use frontdesk::store::Engine;
use serde_json::json;

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
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *conn).await.expect("checkpoint");
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
    let check: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut *conn).await.expect("check");
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

    let out = common::process::command(&url).args(["serve", "--listen", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&path.display().to_string()) && said.contains("not a database"), "{said}");
    let _ = std::fs::remove_file(&path);
}
