//! The real `frontdesk` binary as a separate process, for tests of several processes and of crashes.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `frontdesk serve` process, killed when dropped.
pub struct Process {
    pub child: Child,
    pub base: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn spawn(url: &str) -> Process {
    spawn_with(url, &[]).await
}

/// Starts `frontdesk serve` on `url` with extra environment, and waits until it is ready.
pub async fn spawn_with(url: &str, env: &[(&str, &str)]) -> Process {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(env!("CARGO_BIN_EXE_frontdesk"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("FRONTDESK_DATABASE_URL", url)
        .env("FRONTDESK_LOG", "warn")
        // As in the in-process servers: tests book many requests from one address.
        .env("FRONTDESK_BOOKING_REQUESTS_PER_ADDRESS_PER_HOUR", "0")
        .env("FRONTDESK_BOOKING_REQUESTS_PER_EMAIL_PER_HOUR", "0")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..100 {
        if client.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
            return Process { child, base };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(Process { child, base });
    panic!("frontdesk serve did not come up");
}

/// The `frontdesk` binary on `database_url`, logging only warnings, with no other `FRONTDESK_*` setting taken from
/// the environment the tests run in.
pub fn command(database_url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_frontdesk"));
    for (key, _) in std::env::vars() {
        if key.starts_with("FRONTDESK_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("FRONTDESK_DATABASE_URL", database_url).env("FRONTDESK_LOG", "warn");
    cmd
}

/// Runs a command that must succeed and print one JSON object on stdout, and answers that object.
pub fn json_output(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("frontdesk runs");
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}
