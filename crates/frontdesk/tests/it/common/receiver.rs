//! A webhook receiver: a real HTTP server that records every request and answers as told.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::Value;
use tokio::sync::Notify;

/// How the receiver answers.
#[derive(Clone, Copy, Debug)]
pub enum Behaviour {
    Status(u16),
    /// Never answers (well, after a minute, or when [`Receiver::release`]d), like a receiver that hangs.
    Hang,
    /// Answers 200 after a while, like a receiver that does its work before answering.
    Slow(Duration),
}

#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a delivery body is JSON")
    }
}

#[derive(Default)]
struct State {
    received: Mutex<Vec<Received>>,
    behaviour: Mutex<Option<Behaviour>>,
    arrived: Notify,
    released: Notify,
}

pub struct Receiver {
    /// The receiver's base URL; any path is accepted.
    pub url: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start() -> Receiver {
        let state = Arc::new(State::default());
        let shared = state.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = shared.clone();
            async move {
                let behaviour = state.behaviour.lock().unwrap().unwrap_or(Behaviour::Status(200));
                state.received.lock().unwrap().push(Received {
                    path: uri.path().to_string(),
                    headers,
                    body,
                    at: Instant::now(),
                });
                state.arrived.notify_waiters();
                match behaviour {
                    Behaviour::Status(code) => StatusCode::from_u16(code).unwrap(),
                    Behaviour::Hang => {
                        let _ = tokio::time::timeout(Duration::from_secs(60), state.released.notified()).await;
                        StatusCode::OK
                    }
                    Behaviour::Slow(after) => {
                        tokio::time::sleep(after).await;
                        StatusCode::OK
                    }
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { url, state, task }
    }

    pub fn set(&self, behaviour: Behaviour) {
        *self.state.behaviour.lock().unwrap() = Some(behaviour);
    }

    /// Answers the requests hanging now (200).
    pub fn release(&self) {
        self.state.released.notify_waiters();
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests have arrived (panics after `within`), and answers all of them.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let arrived = self.state.arrived.notified();
            let received = self.received();
            if received.len() >= n {
                return received;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                let received = self.received();
                assert!(received.len() >= n, "expected {n} deliveries within {within:?}, got {}", received.len());
                return received;
            }
        }
    }
}
