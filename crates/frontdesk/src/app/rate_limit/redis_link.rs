//! The rate limiter's link to Redis: connected in the background, and cut by a circuit breaker while Redis fails.
//!
//! Redis makes the limits one budget across processes; it is never a condition of serving. `serve` starts whether
//! Redis answers or not and connects when it does. While it does not, the limiter decides in this process's memory
//! without asking it: the first call that fails opens the breaker, and from then on only a background probe (a new
//! connection and one write, as the limiter's own calls write) tries Redis again, after [`FIRST_RETRY`], then twice
//! as long each time up to [`LONGEST_RETRY`]. So an outage costs the requests that were asking Redis when it went
//! away (each at most [`TIMEOUT`], when Redis hangs rather than refusing), not every request after them. Each outage
//! is logged once when it begins and once when it ends, naming Redis by its URL without the password; whether the
//! link is up is the gauge `frontdesk_rate_limit_redis_up`.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use tokio::sync::watch;

/// Longest a connection attempt or a call may take. A rate-limit call answers in well under a millisecond; one
/// that takes this long is an outage.
pub(super) const TIMEOUT: Duration = Duration::from_millis(500);

/// The wait before the first probe after a failure, doubled after each probe that fails ...
pub(super) const FIRST_RETRY: Duration = Duration::from_millis(250);

/// ... up to this. Redis is back in use at most this long after it answers again.
pub(super) const LONGEST_RETRY: Duration = Duration::from_secs(5);

/// The key the probe writes.
const PROBE_KEY: &str = "frontdesk:ratelimit-probe";

pub(super) struct RedisLink {
    shared: Arc<Shared>,
}

struct Shared {
    client: redis::Client,
    /// The URL without its password, for the log.
    shown: String,
    state: Mutex<State>,
    /// Counts outages; the reconnecting task waits for the next one.
    outages: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    /// `None` while the breaker is open.
    connection: Option<MultiplexedConnection>,
    /// Which connection the callers hold: a failure of an older one does not cut a newer one.
    generation: u64,
}

/// A connection to call Redis on, and which one it is (for [`RedisLink::failed`]).
pub(super) struct Lease {
    pub connection: MultiplexedConnection,
    generation: u64,
}

impl RedisLink {
    /// Connects to Redis at `url`, or starts without it (logging why, once) and connects in the background when it
    /// answers. Only a URL that is not one fails.
    pub(super) async fn open(url: &str) -> anyhow::Result<RedisLink> {
        let client = redis::Client::open(url).map_err(|err| anyhow::anyhow!("the Redis URL is invalid: {err}"))?;
        let (outages, waiting) = watch::channel(0);
        let shared = Arc::new(Shared { client, shown: without_password(url), state: Mutex::default(), outages });
        tokio::spawn(reconnect(Arc::downgrade(&shared), waiting));
        match shared.connect().await {
            Ok(connection) => shared.restore(connection, false),
            Err(err) => {
                tracing::warn!(
                    redis = %shared.shown,
                    error = %err,
                    "rate limiting: Redis does not answer; serving anyway, with limits kept in this process until \
                     it does (checked again in the background)"
                );
                shared.outages.send_modify(|n| *n += 1);
            }
        }
        Ok(RedisLink { shared })
    }

    /// A connection to ask Redis on, or `None` while the breaker is open.
    pub(super) fn lease(&self) -> Option<Lease> {
        let state = self.shared.lock();
        let connection = state.connection.clone()?;
        Some(Lease { connection, generation: state.generation })
    }

    /// Reports that a call on `lease` failed: opens the breaker (unless it is open already, or a newer connection
    /// replaced that one meanwhile).
    pub(super) fn failed(&self, lease: Lease, err: &redis::RedisError) {
        let mut state = self.shared.lock();
        if state.generation != lease.generation || state.connection.is_none() {
            return;
        }
        state.connection = None;
        drop(state);
        tracing::warn!(
            redis = %self.shared.shown,
            error = %err,
            "rate limiting: Redis stopped answering; limits are kept in this process until it answers again"
        );
        self.shared.outages.send_modify(|n| *n += 1);
    }

    /// Whether the breaker is closed (Redis in use).
    pub(super) fn is_up(&self) -> bool {
        self.shared.lock().connection.is_some()
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is replaced whole under the lock: a panic elsewhere cannot leave it half-changed.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new connection, proven by one write with an expiry (what the limiter's own calls do: a Redis that answers
    /// PING but refuses writes, full or still loading, is not back).
    async fn connect(&self) -> redis::RedisResult<MultiplexedConnection> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT));
        let mut connection = self.client.get_multiplexed_async_connection_with_config(&config).await?;
        redis::cmd("SET").arg(PROBE_KEY).arg(1).arg("PX").arg(1000).query_async::<()>(&mut connection).await?;
        Ok(connection)
    }

    fn restore(&self, connection: MultiplexedConnection, after_outage: bool) {
        let mut state = self.lock();
        state.connection = Some(connection);
        state.generation += 1;
        drop(state);
        if after_outage {
            tracing::info!(redis = %self.shown, "rate limiting: Redis answers again; limits are shared through it");
        }
    }
}

/// Waits for each outage, then probes Redis with a growing interval until it answers. Ends with the link.
async fn reconnect(link: Weak<Shared>, mut outages: watch::Receiver<u64>) {
    while outages.changed().await.is_ok() {
        let mut wait = FIRST_RETRY;
        loop {
            tokio::time::sleep(wait).await;
            let Some(shared) = link.upgrade() else { return };
            match shared.connect().await {
                Ok(connection) => {
                    shared.restore(connection, true);
                    break;
                }
                Err(_) => wait = (wait * 2).min(LONGEST_RETRY),
            }
        }
    }
}

/// A URL without its password.
pub fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "the configured Redis URL".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(without_password("redis://:s3cret@cache.internal:6380/2"), "redis://:***@cache.internal:6380/2");
        assert_eq!(without_password("redis://user:s3cret@cache.internal"), "redis://user:***@cache.internal");
        assert_eq!(without_password("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
