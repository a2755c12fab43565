//! Rate limiting: per API key, per operator, and per client address on the public endpoints.
//!
//! The algorithm is GCRA (a token bucket in disguise): a limit of `L` requests per minute allows a burst of `L`,
//! then one request every `60 s / L`. With one process the state lives in memory (`governor`). With several
//! processes it lives in Redis (`FRONTDESK_REDIS_URL`), one atomic script call per request, so the limit holds
//! for the sum of their traffic. When Redis cannot be reached, requests are still served (fail open): this process
//! decides in its own memory, without asking Redis, until Redis answers again ([`redis_link`]: connected in the
//! background, with a circuit breaker).

mod redis_link;

pub use redis_link::without_password;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::{Quota, RateLimiter as Governor};

use crate::metrics::LimitKind;

type KeyedLimiter =
    Governor<String, governor::state::keyed::DefaultKeyedStateStore<String>, DefaultClock, StateInformationMiddleware>;

/// The outcome of one request against its bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset: u64,
    /// Seconds until a refused request may be retried.
    pub retry_after: u64,
}

/// GCRA in Redis: one atomic call per request. KEYS[1] = bucket, ARGV[1] = emission interval (µs),
/// ARGV[2] = burst. Answers {allowed, remaining, reset µs, retry µs}. The clock is Redis's own, so every process
/// agrees on it.
const GCRA: &str = r"
local t = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + t
local allow_at = new_tat - t * burst
if allow_at > now then
  return {0, 0, tat - now, allow_at - now}
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, math.floor((t * burst - (new_tat - now)) / t), new_tat - now, 0}
";

#[derive(Clone)]
pub struct RateLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    memory: Mutex<HashMap<u32, Arc<KeyedLimiter>>>,
    redis: Option<redis_link::RedisLink>,
    script: redis::Script,
    redis_failures: AtomicU64,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter").field("redis_up", &self.redis_up()).finish()
    }
}

fn secs_ceil(micros: i64) -> u64 {
    (micros.max(0) as u64).div_ceil(1_000_000)
}

impl RateLimiter {
    /// A limiter in memory, or in Redis when `redis_url` is given (whether Redis answers yet or not; only a
    /// malformed URL fails).
    pub async fn new(redis_url: Option<&str>) -> anyhow::Result<RateLimiter> {
        let redis = match redis_url {
            Some(url) => Some(redis_link::RedisLink::open(url).await?),
            None => None,
        };
        let limiter = RateLimiter {
            inner: Arc::new(Inner {
                memory: Mutex::new(HashMap::new()),
                redis,
                script: redis::Script::new(GCRA),
                redis_failures: AtomicU64::new(0),
            }),
        };
        // Forget buckets that are full again, so memory follows the active callers, not every caller ever seen.
        let weak = Arc::downgrade(&limiter.inner);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                let limiters: Vec<Arc<KeyedLimiter>> =
                    inner.memory.lock().map(|m| m.values().cloned().collect()).unwrap_or_default();
                for limiter in limiters {
                    limiter.retain_recent();
                }
            }
        });
        Ok(limiter)
    }

    /// How many calls to Redis failed (each decided in this process's memory).
    pub fn redis_failures(&self) -> u64 {
        self.inner.redis_failures.load(Ordering::Relaxed)
    }

    /// `None` without Redis; else whether Redis is in use (`false` while its circuit breaker is open).
    pub fn redis_up(&self) -> Option<bool> {
        self.inner.redis.as_ref().map(redis_link::RedisLink::is_up)
    }

    /// Counts one request against `bucket`, limited to `per_minute`; a refusal is counted in the metrics by the
    /// kind of the bucket.
    pub async fn check(&self, bucket: &str, per_minute: u32) -> Decision {
        let decision = self.decide(bucket, per_minute).await;
        if !decision.allowed {
            crate::metrics::rate_limit_refused(kind_of(bucket));
        }
        decision
    }

    async fn decide(&self, bucket: &str, per_minute: u32) -> Decision {
        let per_minute = per_minute.max(1);
        // No lease without Redis, or while its circuit breaker is open: then this process decides alone.
        let leased = self.inner.redis.as_ref().and_then(|redis| Some((redis, redis.lease()?)));
        if let Some((redis, mut lease)) = leased {
            let interval = 60_000_000 / i64::from(per_minute);
            let answer: redis::RedisResult<(i64, i64, i64, i64)> = self
                .inner
                .script
                .key(format!("frontdesk:ratelimit:{bucket}"))
                .arg(interval)
                .arg(per_minute)
                .invoke_async(&mut lease.connection)
                .await;
            match answer {
                Ok((allowed, remaining, reset, retry)) => {
                    return Decision {
                        allowed: allowed == 1,
                        limit: per_minute,
                        remaining: remaining.clamp(0, i64::from(per_minute)) as u32,
                        reset: secs_ceil(reset),
                        retry_after: secs_ceil(retry).max(u64::from(allowed != 1)),
                    };
                }
                Err(err) => {
                    self.inner.redis_failures.fetch_add(1, Ordering::Relaxed);
                    crate::metrics::rate_limit_redis_failed();
                    redis.failed(lease, &err);
                }
            }
        }
        self.check_memory(bucket, per_minute)
    }

    fn check_memory(&self, bucket: &str, per_minute: u32) -> Decision {
        let limit = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        let limiter = {
            let mut memory = match self.inner.memory.lock() {
                Ok(memory) => memory,
                Err(poisoned) => poisoned.into_inner(),
            };
            memory
                .entry(per_minute)
                .or_insert_with(|| Arc::new(Governor::keyed(Quota::per_minute(limit)).with_middleware()))
                .clone()
        };
        let interval = 60.0 / f64::from(per_minute);
        match limiter.check_key(&bucket.to_string()) {
            Ok(state) => {
                let remaining = state.remaining_burst_capacity();
                Decision {
                    allowed: true,
                    limit: per_minute,
                    remaining,
                    reset: (f64::from(per_minute - remaining.min(per_minute)) * interval).ceil() as u64,
                    retry_after: 0,
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                Decision {
                    allowed: false,
                    limit: per_minute,
                    remaining: 0,
                    reset: (f64::from(per_minute) * interval).ceil() as u64,
                    retry_after: wait.as_secs_f64().ceil().max(1.0) as u64,
                }
            }
        }
    }
}

/// The kind of limit a bucket belongs to, from its prefix (`key:`, `operator:`, `address:`, `sign-in-…:`).
fn kind_of(bucket: &str) -> LimitKind {
    if bucket.starts_with("key:") {
        LimitKind::ApiKey
    } else if bucket.starts_with("operator:") {
        LimitKind::Operator
    } else if bucket.starts_with("sign-in-") {
        LimitKind::SignIn
    } else {
        LimitKind::Public
    }
}

/// Where the extractors leave the decision of a request, for [`headers`] to put on the answer.
#[derive(Clone, Default)]
pub struct DecisionSlot(Arc<Mutex<Option<Decision>>>);

impl DecisionSlot {
    /// Keeps the tighter of two decisions (a public request counts against its address and its key).
    pub fn record(&self, decision: Decision) {
        if let Ok(mut slot) = self.0.lock() {
            let keep = match *slot {
                Some(current) => !current.allowed || (decision.allowed && current.remaining <= decision.remaining),
                None => false,
            };
            if !keep {
                *slot = Some(decision);
            }
        }
    }
}

const LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
const REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
const RESET: HeaderName = HeaderName::from_static("ratelimit-reset");

/// Middleware: gives each request a [`DecisionSlot`] and puts `RateLimit-*` (and on 429 `Retry-After`) headers on
/// answers to rate-limited requests.
pub async fn headers(mut request: Request, next: Next) -> Response {
    let slot = DecisionSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    let decision = slot.0.lock().ok().and_then(|d| *d);
    if let Some(d) = decision {
        let h = response.headers_mut();
        h.insert(LIMIT, HeaderValue::from(d.limit));
        h.insert(REMAINING, HeaderValue::from(d.remaining));
        h.insert(RESET, HeaderValue::from(d.reset));
        if !d.allowed {
            h.insert(axum::http::header::RETRY_AFTER, HeaderValue::from(d.retry_after));
        }
    }
    response
}
