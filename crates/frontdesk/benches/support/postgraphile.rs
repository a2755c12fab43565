//! PostGraphile 4 over the benchmark's PostgreSQL schema (the optional comparison of `benches/throughput.rs`; the kit
//! and its documents are in `benches/postgraphile/`).

use std::io::{BufRead, BufReader};
use std::time::Duration;

use super::load::Call;

/// A PostGraphile process, killed and reaped when dropped.
pub struct PostGraphile {
    child: std::process::Child,
    pub base: String,
    /// The GraphQL documents of `queries.json`: the stay-window list, a hotel's list, the organization's list and the
    /// single reservation.
    pub stay_window: String,
    pub hotel_list: String,
    pub organization_list: String,
    pub reservation: String,
}

impl PostGraphile {
    /// Starts `node <dir>/server.js` with `workers` Node processes on `database_url`'s `schema`; `None` (said why)
    /// when it cannot.
    pub fn start(dir: &str, database_url: &str, schema: &str, workers: usize) -> Option<PostGraphile> {
        let queries: serde_json::Value = match std::fs::read_to_string(format!("{dir}/queries.json")) {
            Ok(text) => serde_json::from_str(&text).expect("queries.json"),
            Err(err) => {
                eprintln!("  PostGraphile: no {dir}/queries.json ({err}); skipped");
                return None;
            }
        };
        let document = |name: &str| queries[name]["query"].as_str().expect("a query").to_string();
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let spawned = std::process::Command::new("node")
            .arg(format!("{dir}/server.js"))
            .args(["--port", &port.to_string(), "--database-url", database_url, "--schema", schema])
            .args(["--workers", &workers.to_string()])
            .stdout(std::process::Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) => {
                eprintln!("  PostGraphile: cannot run node ({err}); skipped");
                return None;
            }
        };
        // server.js says `ready …` once its schema is built and the port listens, or exits.
        let stdout = child.stdout.take()?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = lines.by_ref().map_while(Result::ok).any(|line| line.starts_with("ready "));
        // Whatever it prints later is read (and dropped), so that it never writes into a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let server = PostGraphile {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stay_window: document("stayWindow"),
            hotel_list: document("hotelList"),
            organization_list: document("organizationList"),
            reservation: document("reservation"),
        };
        if !ready {
            eprintln!("  PostGraphile did not start (see its output above); skipped");
            return None;
        }
        Some(server)
    }

    /// `POST /graphql` of `query` with `variables`.
    pub fn call(query: &str, variables: serde_json::Value) -> Call {
        Call::post_json("/graphql", &serde_json::json!({ "query": query, "variables": variables }))
    }

    /// The answer's `data`; panics on a GraphQL error (answered with status 200).
    pub async fn data(&self, client: &reqwest::Client, query: &str, variables: serde_json::Value) -> serde_json::Value {
        let body: serde_json::Value = client
            .post(format!("{}/graphql", self.base))
            .json(&serde_json::json!({ "query": query, "variables": variables }))
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .expect("PostGraphile")
            .json()
            .await
            .expect("PostGraphile's JSON");
        assert!(body.get("errors").is_none(), "PostGraphile answered errors: {body}");
        body["data"].clone()
    }
}

impl Drop for PostGraphile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
