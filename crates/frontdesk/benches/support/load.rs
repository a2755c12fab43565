//! A closed-loop load generator: `clients` connections kept alive, each sending its next request as soon as the
//! last answer's body has arrived (as `wrk -c32` does), for a fixed time after a warm-up.
//!
//! It runs in the benchmark's process and shares the machine with the server it measures, so its numbers are only
//! meaningful as ratios against another endpoint measured by the same generator in the same run (`/healthz`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;

use super::{ms, Stats};

/// One request: method, path and query, headers, body.
#[derive(Clone)]
pub struct Call {
    pub method: hyper::Method,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

impl Call {
    pub fn get(path: impl Into<String>) -> Call {
        Call { method: hyper::Method::GET, path: path.into(), headers: Vec::new(), body: Bytes::new() }
    }

    pub fn post_json(path: impl Into<String>, body: &serde_json::Value) -> Call {
        Call {
            method: hyper::Method::POST,
            path: path.into(),
            headers: vec![("content-type", "application/json".into())],
            body: Bytes::from(body.to_string()),
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.headers.push((name, value.into()));
        self
    }
}

/// Every client sends `call` again and again.
pub fn repeat(call: Call) -> Arc<dyn Fn(u64, u64) -> Call + Send + Sync> {
    Arc::new(move |_, _| call.clone())
}

/// What `clients` clients achieved in the measured window.
pub struct Outcome {
    pub requests: u64,
    pub per_second: f64,
    pub latency: Stats,
    /// Answers that were not 2xx (none is expected: a benchmark stops at the first).
    pub bytes: u64,
}

impl Outcome {
    pub fn summary(&self) -> String {
        format!(
            "{:>8.0} req/s, p50 {:.2} ms, p99 {:.2} ms, {:.1} KB per answer",
            self.per_second,
            ms(self.latency.percentile(50.0)),
            ms(self.latency.percentile(99.0)),
            self.bytes as f64 / self.requests.max(1) as f64 / 1000.0
        )
    }
}

/// Drives `base` (`http://host:port`) with `clients` concurrent clients: client `c` sends `call(c, n)` as its `n`th
/// request. Requests answered during `warm_up` are not counted; then for `window`, every request is.
pub async fn closed_loop(
    base: &str,
    clients: usize,
    warm_up: Duration,
    window: Duration,
    call: Arc<dyn Fn(u64, u64) -> Call + Send + Sync>,
) -> Outcome {
    let start = Instant::now() + Duration::from_millis(50);
    let measure_from = start + warm_up;
    let stop = Stop { at: Some(measure_from + window), flag: Arc::default() };
    let tasks = clients_from(base, clients, start, measure_from, &stop, call);
    collect(tasks, window).await
}

/// [`closed_loop`] for as long as `work` runs: the clients warm up for `warm_up`, then `work` starts and every
/// request begun until it ends is counted. Answers what the clients achieved in that window, and what `work` did.
pub async fn closed_loop_while<T>(
    base: &str,
    clients: usize,
    warm_up: Duration,
    work: impl std::future::Future<Output = T>,
    call: Arc<dyn Fn(u64, u64) -> Call + Send + Sync>,
) -> (Outcome, T) {
    let start = Instant::now() + Duration::from_millis(50);
    let measure_from = start + warm_up;
    let stop = Stop { at: None, flag: Arc::default() };
    let tasks = clients_from(base, clients, start, measure_from, &stop, call);
    tokio::time::sleep_until(measure_from.into()).await;
    let done = work.await;
    let window = measure_from.elapsed();
    stop.flag.store(true, std::sync::atomic::Ordering::Relaxed);
    (collect(tasks, window).await, done)
}

/// When the clients stop: at an instant, or when the flag is set.
#[derive(Clone)]
struct Stop {
    at: Option<Instant>,
    flag: Arc<std::sync::atomic::AtomicBool>,
}

impl Stop {
    fn reached(&self, now: Instant) -> bool {
        self.at.is_some_and(|at| now >= at) || self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }
}

type Samples = (Vec<Duration>, u64);

/// Spawns the clients: each starts at `start` and counts what it began from `measure_from` until `stop`.
fn clients_from(
    base: &str,
    clients: usize,
    start: Instant,
    measure_from: Instant,
    stop: &Stop,
    call: Arc<dyn Fn(u64, u64) -> Call + Send + Sync>,
) -> Vec<tokio::task::JoinHandle<Samples>> {
    let address = base.trim_start_matches("http://").to_string();
    let mut tasks = Vec::new();
    for client in 0..clients as u64 {
        let (address, call, stop) = (address.clone(), call.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let (mut sender, connection) = http1::handshake(TokioIo::new(stream)).await.expect("handshake");
            tokio::spawn(connection);
            tokio::time::sleep_until(start.into()).await;
            let (mut samples, mut bytes) = (Vec::new(), 0u64);
            let mut n = 0u64;
            loop {
                let began = Instant::now();
                if stop.reached(began) {
                    break;
                }
                let c = call(client, n);
                let mut request = hyper::Request::builder().method(c.method).uri(&c.path).header("host", &address);
                for (name, value) in &c.headers {
                    request = request.header(*name, value);
                }
                let request = request.body(Full::new(c.body)).expect("request");
                sender.ready().await.expect("connection ready");
                let response = sender.send_request(request).await.expect("answer");
                let status = response.status();
                let body = response.into_body().collect().await.expect("body").to_bytes();
                assert!(status.is_success(), "{} answered {status}: {}", c.path, String::from_utf8_lossy(&body));
                if began >= measure_from {
                    samples.push(began.elapsed());
                    bytes += body.len() as u64;
                }
                n += 1;
            }
            (samples, bytes)
        }));
    }
    tasks
}

/// What the clients achieved in a measured `window`.
async fn collect(tasks: Vec<tokio::task::JoinHandle<Samples>>, window: Duration) -> Outcome {
    let (mut samples, mut bytes) = (Vec::new(), 0);
    for task in tasks {
        let (s, b) = task.await.expect("client");
        samples.extend(s);
        bytes += b;
    }
    let requests = samples.len() as u64;
    Outcome { requests, per_second: requests as f64 / window.as_secs_f64(), latency: Stats::new(samples), bytes }
}
