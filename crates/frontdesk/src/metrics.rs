//! Metrics in the Prometheus text format, served at `GET /metrics` (see `docs/operations.md`, "Metrics").
//!
//! Code records through the `metrics` facade (counters and histograms at the point where things happen: the
//! request middleware, the rate limiter, the webhook dispatcher, the availability copies, the assistant endpoint's tools);
//! the Prometheus exporter's recorder keeps them and renders the text. What is a state rather than an event (pool
//! use, the outbox backlog, the copies held, the process's memory) is read when `/metrics` is scraped.
//!
//! The recorder is installed only when metrics are served (`--metrics-token` or `--metrics-listen`); without it
//! every recording call is a no-op. Labels take values from small fixed sets or route templates only: never an id,
//! a path as sent, an address or anything a caller typed.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock, RwLock};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::availability::AvailabilityCopies;
use crate::store::{self, Db};

/// The name of every metric, as documented in `docs/operations.md` and used by `docs/grafana-dashboard.json`.
pub mod names {
    pub const HTTP_REQUESTS: &str = "frontdesk_http_requests_total";
    pub const HTTP_DURATION: &str = "frontdesk_http_request_duration_seconds";
    pub const DB_POOL_IN_USE: &str = "frontdesk_db_pool_connections_in_use";
    pub const DB_POOL_IDLE: &str = "frontdesk_db_pool_connections_idle";
    pub const DB_POOL_MAX: &str = "frontdesk_db_pool_connections_max";
    pub const DB_POOL_WAITING: &str = "frontdesk_db_pool_waiting";
    pub const OUTBOX_EVENTS: &str = "frontdesk_webhook_outbox_events";
    pub const OUTBOX_OLDEST_AGE: &str = "frontdesk_webhook_outbox_oldest_event_age_seconds";
    pub const WEBHOOK_DELIVERIES: &str = "frontdesk_webhook_deliveries_total";
    pub const WEBHOOK_DELIVERY_DURATION: &str = "frontdesk_webhook_delivery_duration_seconds";
    pub const RATE_LIMIT_REFUSALS: &str = "frontdesk_rate_limit_refusals_total";
    pub const RATE_LIMIT_REDIS_FAILURES: &str = "frontdesk_rate_limit_redis_failures_total";
    pub const RATE_LIMIT_REDIS_UP: &str = "frontdesk_rate_limit_redis_up";
    pub const AVAILABILITY_COPIES: &str = "frontdesk_availability_copies";
    pub const AVAILABILITY_LOADS: &str = "frontdesk_availability_copy_loads_total";
    pub const AVAILABILITY_RELOADS: &str = "frontdesk_availability_copy_reloads_total";
    pub const MCP_TOOL_CALLS: &str = "frontdesk_mcp_tool_calls_total";
    pub const MCP_TOOL_DURATION: &str = "frontdesk_mcp_tool_call_duration_seconds";
    pub const SCRAPE_ERRORS: &str = "frontdesk_metrics_collection_errors_total";
    pub const BUILD_INFO: &str = "frontdesk_build_info";
    pub const PROCESS_RESIDENT_MEMORY: &str = "process_resident_memory_bytes";
    pub const PROCESS_ANONYMOUS_MEMORY: &str = "frontdesk_process_anonymous_memory_bytes";
    pub const PROCESS_FILE_BACKED_MEMORY: &str = "frontdesk_process_file_backed_memory_bytes";
}

use names::*;

/// The `route` label of requests no route matched (unknown paths): never the path itself.
pub const UNMATCHED: &str = "unmatched";

/// Latency buckets, in seconds, of every histogram.
const BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use. One per process: the `metrics` facade is global.
fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new();
        // The buckets are constants; the builder refuses only an empty list.
        let builder = match builder.set_buckets(BUCKETS) {
            Ok(with_buckets) => with_buckets,
            Err(err) => {
                tracing::warn!(error = %err, "metrics: default histogram buckets in use");
                PrometheusBuilder::new()
            }
        };
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if let Err(err) = metrics::set_global_recorder(recorder) {
            tracing::warn!(error = %err, "metrics: another recorder is installed; /metrics will be empty");
        }
        describe();
        gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
        handle
    })
}

fn describe() {
    describe_counter!(HTTP_REQUESTS, "HTTP requests answered, by method, route template and status.");
    describe_histogram!(HTTP_DURATION, Unit::Seconds, "Time to answer HTTP requests (until the response headers).");
    describe_gauge!(DB_POOL_IN_USE, "Database connections in use, per pool.");
    describe_gauge!(DB_POOL_IDLE, "Database connections open and idle, per pool.");
    describe_gauge!(DB_POOL_MAX, "Most connections a pool opens.");
    describe_gauge!(DB_POOL_WAITING, "Requests of this process waiting for a database connection, per pool.");
    describe_gauge!(OUTBOX_EVENTS, "Webhook events recorded and not yet delivered to every subscription.");
    describe_gauge!(OUTBOX_OLDEST_AGE, Unit::Seconds, "Age of the oldest event in the webhook outbox (0 if empty).");
    describe_counter!(WEBHOOK_DELIVERIES, "Webhook delivery attempts, by result.");
    describe_histogram!(WEBHOOK_DELIVERY_DURATION, Unit::Seconds, "Time of webhook delivery attempts, by result.");
    describe_counter!(RATE_LIMIT_REFUSALS, "Requests refused with 429, by kind of limit.");
    describe_counter!(RATE_LIMIT_REDIS_FAILURES, "Rate-limit calls to Redis that failed (and were decided in memory).");
    describe_gauge!(RATE_LIMIT_REDIS_UP, "1 while rate limits are kept in Redis, 0 while its circuit breaker is open.");
    describe_gauge!(AVAILABILITY_COPIES, "Hotels whose availability copy this process holds.");
    describe_counter!(AVAILABILITY_LOADS, "Parts of availability copies loaded from the database, by part.");
    describe_counter!(AVAILABILITY_RELOADS, "Availability copies replaced because the hotel's data changed.");
    describe_counter!(MCP_TOOL_CALLS, "Assistant endpoint tool calls, by tool and result.");
    describe_histogram!(MCP_TOOL_DURATION, Unit::Seconds, "Time of assistant endpoint tool calls, by tool.");
    describe_counter!(SCRAPE_ERRORS, "Values /metrics could not read at a scrape, by source (the last value stays).");
    describe_gauge!(BUILD_INFO, "Always 1; the version label names the running build.");
    describe_gauge!(PROCESS_RESIDENT_MEMORY, Unit::Bytes, "Resident memory of this process (Linux).");
    describe_gauge!(
        PROCESS_ANONYMOUS_MEMORY,
        Unit::Bytes,
        "Resident anonymous memory of this process (heap, stacks; Linux): its own memory."
    );
    describe_gauge!(
        PROCESS_FILE_BACKED_MEMORY,
        Unit::Bytes,
        "Resident pages of files this process maps (its binary, SQLite's memory-mapped database) and of shared \
         memory (Linux): page cache, shared and reclaimable."
    );
}

/// How `/metrics` is served by this process, and what it reads at a scrape.
#[derive(Clone)]
pub struct Metrics {
    handle: &'static PrometheusHandle,
    /// SHA-256 of `--metrics-token`: a request's token is hashed and compared in constant time, whatever its length.
    token: Option<[u8; 32]>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("token", &self.token.is_some()).finish()
    }
}

/// Whether a request to `/metrics` on the main listener may read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Granted,
    /// No or another token: 401.
    Refused,
    /// The main listener does not serve metrics (no token configured): 404, as any unknown path.
    NotServed,
}

impl Metrics {
    /// Installs the recorder (once per process) and keeps the token; `None` when metrics are not served at all.
    pub fn new(config: &crate::config::Config) -> Option<Metrics> {
        if !config.metrics_enabled() {
            return None;
        }
        let token = config.metrics_token.as_deref().map(|t| Sha256::digest(t.as_bytes()).into());
        let metrics = Metrics { handle: handle(), token };
        // Histograms keep samples until they are drained; a scrape drains them too, this bounds memory between.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let handle = metrics.handle;
            runtime.spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(5));
                loop {
                    tick.tick().await;
                    handle.run_upkeep();
                }
            });
        }
        Some(metrics)
    }

    /// Checks `Authorization: Bearer <token>` against `--metrics-token`.
    pub fn access(&self, headers: &HeaderMap) -> Access {
        let Some(expected) = &self.token else { return Access::NotServed };
        let given = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(given) = given else { return Access::Refused };
        let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        match bool::from(digest.ct_eq(expected)) {
            true => Access::Granted,
            false => Access::Refused,
        }
    }

    /// The text of a scrape: reads the states (pools, outbox, copies, the link to Redis if one is configured,
    /// memory), then renders everything.
    pub async fn render(&self, db: &Db, copies: &AvailabilityCopies, redis_up: Option<bool>) -> String {
        for pool in db.pool_use() {
            gauge!(DB_POOL_IN_USE, "pool" => pool.pool).set(f64::from(pool.in_use));
            gauge!(DB_POOL_IDLE, "pool" => pool.pool).set(f64::from(pool.idle));
            gauge!(DB_POOL_MAX, "pool" => pool.pool).set(f64::from(pool.max));
            gauge!(DB_POOL_WAITING, "pool" => pool.pool).set(pool.waiting as f64);
        }
        // Bounded: a scrape must answer even when the database is slow or its pool exhausted.
        match tokio::time::timeout(Duration::from_secs(2), store::metrics::outbox_backlog(db)).await {
            Ok(Ok(backlog)) => {
                gauge!(OUTBOX_EVENTS).set(backlog.events as f64);
                gauge!(OUTBOX_OLDEST_AGE).set(backlog.oldest_age_seconds);
            }
            Ok(Err(err)) => {
                tracing::warn!(error = %err, "metrics: reading the webhook outbox failed");
                counter!(SCRAPE_ERRORS, "source" => "outbox").increment(1);
            }
            Err(_) => {
                tracing::warn!("metrics: reading the webhook outbox took over 2 s");
                counter!(SCRAPE_ERRORS, "source" => "outbox").increment(1);
            }
        }
        gauge!(AVAILABILITY_COPIES).set(copies.len() as f64);
        if let Some(up) = redis_up {
            gauge!(RATE_LIMIT_REDIS_UP).set(f64::from(u8::from(up)));
        }
        if let Some(memory) = resident_memory() {
            gauge!(PROCESS_RESIDENT_MEMORY).set(memory.total as f64);
            gauge!(PROCESS_ANONYMOUS_MEMORY).set(memory.anonymous as f64);
            gauge!(PROCESS_FILE_BACKED_MEMORY).set(memory.file_backed as f64);
        }
        self.handle.render()
    }
}

/// The resident memory of this process, by kind, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidentMemory {
    pub total: u64,
    /// Heap and stacks: what the process itself allocated.
    pub anonymous: u64,
    /// Pages of mapped files and of shared memory. On SQLite this is mostly the database, which is read through a
    /// memory map (up to 1 GB, see `SQLITE_PRAGMAS` in `store/pool.rs`): the OS page cache, not the process's own memory.
    pub file_backed: u64,
}

/// The resident memory of this process, from `/proc/self/status` (Linux; `None` elsewhere): `VmRSS`, split into
/// `RssAnon` and `RssFile` + `RssShmem` (which add up to it).
pub fn resident_memory() -> Option<ResidentMemory> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))?;
        let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    };
    Some(ResidentMemory {
        total: field("VmRSS")?,
        anonymous: field("RssAnon")?,
        file_backed: field("RssFile")? + field("RssShmem")?,
    })
}

/// The resident set size of this process (Linux; `None` elsewhere).
pub fn resident_memory_bytes() -> Option<u64> {
    resident_memory().map(|memory| memory.total)
}

/// The `method` label: the standard methods by name, anything else as `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Middleware: counts and times every request by method, route ([`route_label`]: `/api/reservations/{id}`, or
/// [`UNMATCHED`]) and status. Installed (outermost) only when metrics are served.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    record_request(method, route, response.status(), started.elapsed());
    response
}

/// The counter and histogram of each (method, status) and route seen, so that a request costs two small lookups
/// and two atomic updates instead of building and hashing label sets in the registry. Bounded: routes are
/// templates, methods and statuses small sets.
type RequestHandles = HashMap<(&'static str, u16), HashMap<Box<str>, (metrics::Counter, metrics::Histogram)>>;

static REQUEST_HANDLES: LazyLock<RwLock<RequestHandles>> = LazyLock::new(RwLock::default);

/// The `route` label of a route template: the template with every path parameter written `{id}`, whatever the
/// route calls it, so that one scheme names every route: the REST API's `/api/reservations/{reservationId}` and
/// the pages' `/hotels/{hotel_id}/reservations/{id}` are `/api/reservations/{id}` and
/// `/hotels/{id}/reservations/{id}` (the segment before each `{id}` says what it is).
pub fn route_label(template: &str) -> String {
    let mut label = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else { break };
        label.push_str(&rest[..open]);
        label.push_str("{id}");
        rest = &rest[open + close + 1..];
    }
    label.push_str(rest);
    label
}

/// Records one answered request (what [`track_requests`] does after each answer; public for the benchmark). `route`
/// is the route template (or [`UNMATCHED`]); it is labelled by [`route_label`].
pub fn record_request(method: &'static str, route: &str, status: axum::http::StatusCode, elapsed: Duration) {
    let key = (method, status.as_u16());
    let found =
        REQUEST_HANDLES.read().ok().and_then(|handles| handles.get(&key).and_then(|routes| routes.get(route)).cloned());
    let (requests, duration) = match found {
        Some(handles) => handles,
        None => {
            let labels = [("method", method.to_string()), ("route", route_label(route)), ("status", key.1.to_string())];
            let handles = (counter!(HTTP_REQUESTS, &labels), histogram!(HTTP_DURATION, &labels));
            if let Ok(mut cache) = REQUEST_HANDLES.write() {
                cache.entry(key).or_default().insert(route.into(), handles.clone());
            }
            handles
        }
    };
    requests.increment(1);
    duration.record(elapsed);
}

/// The kinds of rate limit, as the `kind` label names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    ApiKey,
    Operator,
    /// Per client address on the public endpoints (availability, booking page, OAuth).
    Public,
    /// A sign-in attempt refused by the sign-in counts (`domain::attempts`), whichever way it came.
    SignIn,
}

impl LimitKind {
    pub fn label(self) -> &'static str {
        match self {
            LimitKind::ApiKey => "api_key",
            LimitKind::Operator => "operator",
            LimitKind::Public => "public",
            LimitKind::SignIn => "sign_in",
        }
    }
}

/// A request refused by a rate limit.
pub fn rate_limit_refused(kind: LimitKind) {
    counter!(RATE_LIMIT_REFUSALS, "kind" => kind.label()).increment(1);
}

/// A rate-limit check Redis did not answer.
pub fn rate_limit_redis_failed() {
    counter!(RATE_LIMIT_REDIS_FAILURES).increment(1);
}

/// One webhook delivery attempt: `success` (2xx), `failure` (another status) or `error` (no answer).
pub fn webhook_delivery(success: bool, answered: bool, elapsed: Duration) {
    let result = match (success, answered) {
        (true, _) => "success",
        (false, true) => "failure",
        (false, false) => "error",
    };
    counter!(WEBHOOK_DELIVERIES, "result" => result).increment(1);
    histogram!(WEBHOOK_DELIVERY_DURATION, "result" => result).record(elapsed);
}

/// A part of an availability copy loaded from the database: `catalogue` or `page`.
pub fn availability_loaded(part: &'static str) {
    counter!(AVAILABILITY_LOADS, "part" => part).increment(1);
}

/// An availability copy replaced by a newer version of its hotel.
pub fn availability_reloaded() {
    counter!(AVAILABILITY_RELOADS).increment(1);
}

/// One assistant tool call. `tool` must be one of the assistant endpoint's own tool names (or `unknown`).
pub fn mcp_tool_call(tool: &'static str, ok: bool, elapsed: Duration) {
    let result = if ok { "ok" } else { "error" };
    counter!(MCP_TOOL_CALLS, "tool" => tool, "result" => result).increment(1);
    histogram!(MCP_TOOL_DURATION, "tool" => tool).record(elapsed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident_memory_bytes().is_some_and(|bytes| bytes > 0));
            let memory = resident_memory().expect("read on Linux");
            assert!(memory.anonymous > 0 && memory.file_backed > 0, "{memory:?}");
            assert_eq!(memory.anonymous + memory.file_backed, memory.total, "{memory:?}");
        }
    }

    #[test]
    fn route_labels_write_every_parameter_as_id() {
        assert_eq!(route_label("/api/reservations/{reservationId}"), "/api/reservations/{id}");
        assert_eq!(route_label("/hotels/{hotel_id}/reservations/{id}/rooms"), "/hotels/{id}/reservations/{id}/rooms");
        assert_eq!(route_label("/book/{hotel_id}/requests/{reservation_id}"), "/book/{id}/requests/{id}");
        assert_eq!(route_label("/api/hotels"), "/api/hotels");
        assert_eq!(route_label(UNMATCHED), UNMATCHED);
    }

    #[test]
    fn methods_outside_the_standard_ones_are_other() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
