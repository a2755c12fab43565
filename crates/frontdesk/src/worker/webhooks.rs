//! The webhook dispatcher: delivers the outbox's events to the subscriptions that want them.
//!
//! * **Claiming.** Events are claimed in batches with a lease (`claimed_until`); on PostgreSQL with
//!   `FOR UPDATE SKIP LOCKED`, so several processes share the outbox and each event is claimed by one of them.
//!   A claim that runs out (its process died between the write and the delivery) is taken over, so no event is
//!   lost; the claims of events still being delivered are extended.
//! * **Delivery.** One attempt per (event, subscription), 5 s timeout, no retry, any 2xx is success. Each
//!   subscription has its own lane: a slow or dead receiver holds up only its own events, never API requests nor
//!   other subscribers. A healthy lane has up to [`LANE_CONCURRENCY`] deliveries under way, never two about the
//!   same record, so the events of one record arrive in the order they were written (one at a time, a local
//!   receiver could take no more than about a thousand a second per subscription). A lane counts failures in the
//!   database (the authority when several processes deliver); while its subscription is failing it sends one
//!   event at a time, so that the 20th failure in a row, which turns the subscription off, is the last attempt,
//!   and the lane drops the rest of what it held.
//! * **Recording.** Attempts and finished events are written by one recorder in batches (the log entries, the
//!   removal of delivered events), so delivering a thousand events a second costs a few transactions.
//!
//! Delivery is at least once: a process that dies after sending and before recording sends again when the claim is
//! taken over. The body's `id` lets receivers drop duplicates.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{TimeDelta, Utc};
use futures::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::domain::events::EventKind;
use crate::domain::new_id;
use crate::domain::secrets::SecretBox;
use crate::domain::webhooks::{signature, url_policy, WebhookDelivery, WebhookSettings};
use crate::store::outbox::{self, PendingEvent};
use crate::store::webhooks::{NewDelivery, Target};
use crate::store::{self, format_ts, Db};

/// Tuning of the dispatcher; the defaults are what the service runs with.
#[derive(Debug, Clone)]
pub struct DispatcherOptions {
    /// How often the outbox is checked for events written by other processes (this process's own writes wake the
    /// dispatcher at once).
    pub poll_interval: Duration,
    /// How long a claim holds before another dispatcher may take the event over.
    pub lease: Duration,
    /// Most events claimed at once.
    pub batch_size: i64,
    /// Longest a delivery may take.
    pub timeout: Duration,
    /// How long a wake-up by a write waits for more writes before claiming, so that a burst of writes is claimed
    /// in one batch rather than one transaction each.
    pub batch_window: Duration,
}

impl Default for DispatcherOptions {
    fn default() -> Self {
        DispatcherOptions {
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(60),
            batch_size: 500,
            timeout: Duration::from_secs(5),
            batch_window: Duration::from_millis(5),
        }
    }
}

/// A running dispatcher.
pub struct Dispatcher {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Dispatcher {
    /// Starts delivering in the background.
    pub fn spawn(db: Db, settings: &WebhookSettings, options: DispatcherOptions) -> anyhow::Result<Dispatcher> {
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(url_policy::PolicyResolver { allow_private: settings.allow_private_addresses }))
            .user_agent(concat!("Frontdesk-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let (results, results_rx) = mpsc::unbounded_channel();
        let in_flight = InFlight::default();
        let shared = Arc::new(Shared {
            db: db.clone(),
            secret_box: settings.secret_box.clone(),
            allow_private: settings.allow_private_addresses,
            client,
            in_flight: in_flight.clone(),
            results,
            stopping: AtomicBool::new(false),
        });
        let (stop, stop_rx) = watch::channel(false);
        let recorder = tokio::spawn(record(db.clone(), in_flight.clone(), results_rx));
        let task = tokio::spawn(async move {
            claim_loop(shared, options, stop_rx).await;
            // The lanes hold the last senders of the results channel; once they finish, the recorder writes what is
            // left and ends.
            let _ = recorder.await;
            // Events claimed but not sent are released for the next dispatcher instead of waiting out the lease.
            let left: Vec<String> = in_flight.lock().drain().collect();
            if !left.is_empty() {
                if let Err(err) = release_claims(&db, &left).await {
                    tracing::warn!(error = %err, "releasing unsent webhook events failed; they go out when their claim runs out");
                }
            }
        });
        Ok(Dispatcher { stop, task })
    }

    /// Stops claiming, lets the deliveries under way finish (at most one timeout), records them, and releases the
    /// events not sent yet to the next dispatcher.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// What the claim loop and the lanes share. The recorder does not hold it: it ends when the last sender of
/// results (this) is gone.
struct Shared {
    db: Db,
    secret_box: SecretBox,
    allow_private: bool,
    client: reqwest::Client,
    in_flight: InFlight,
    results: mpsc::UnboundedSender<Outcome>,
    /// Set when the dispatcher stops: lanes send nothing more.
    stopping: AtomicBool,
}

/// Events claimed by this process and not yet recorded as delivered.
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<HashSet<String>>>);

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

enum Outcome {
    Attempt(NewDelivery),
    /// Every subscription of the event has had its attempt (or was turned off): the event can go.
    Done(String),
}

/// An event ready to send: its body is built once and shared by every subscription.
struct Prepared {
    id: String,
    kind: EventKind,
    /// The id of the record the event is about: a lane never has two deliveries of one record under way.
    record_id: String,
    body: Bytes,
}

/// Most deliveries a healthy subscription has under way at once. Below the 20 failures that turn a subscription
/// off, so that a receiver that starts failing is not sent more than 20 attempts.
const LANE_CONCURRENCY: usize = 8;

struct Job {
    event: Arc<Prepared>,
    target: Arc<Target>,
    /// When the subscription was read as active; a lane that turned it off later drops the job.
    loaded_at: Instant,
    remaining: Arc<AtomicUsize>,
}

#[derive(Serialize)]
struct Body<'a> {
    id: &'a str,
    event: &'a str,
    /// When the change happened, Unix seconds.
    timestamp: i64,
    data: &'a serde_json::value::RawValue,
}

#[derive(Deserialize)]
struct RecordId {
    id: String,
}

fn prepare(event: &PendingEvent, kind: EventKind) -> anyhow::Result<Prepared> {
    let record_id = serde_json::from_str::<RecordId>(&event.payload)?.id;
    let data = serde_json::value::RawValue::from_string(event.payload.clone())?;
    let body = serde_json::to_vec(&Body {
        id: &event.id,
        event: kind.as_str(),
        timestamp: event.created_at.timestamp(),
        data: &data,
    })?;
    Ok(Prepared { id: event.id.clone(), kind, record_id, body: Bytes::from(body) })
}

async fn claim_loop(shared: Arc<Shared>, options: DispatcherOptions, mut stop: watch::Receiver<bool>) {
    let mut lanes: HashMap<String, mpsc::UnboundedSender<Job>> = HashMap::new();
    let mut last_extension = Instant::now();
    loop {
        loop {
            match claim_batch(&shared, &options, &mut lanes).await {
                Ok(claimed) if claimed as i64 >= options.batch_size => continue,
                Ok(_) => break,
                Err(err) => {
                    tracing::warn!(error = %format!("{err:#}"), "claiming webhook events failed; retrying");
                    break;
                }
            }
        }
        if last_extension.elapsed() >= options.lease / 3 {
            last_extension = Instant::now();
            if let Err(err) = extend_claims(&shared, &options).await {
                tracing::warn!(error = %format!("{err:#}"), "extending webhook event claims failed");
            }
        }
        tokio::select! {
            _ = shared.db.outbox_written() => tokio::time::sleep(options.batch_window).await,
            _ = tokio::time::sleep(options.poll_interval) => {}
            _ = stop.changed() => break,
        }
    }
    shared.stopping.store(true, Ordering::Release);
}

/// Claims a batch and hands each (event, subscription) to the subscription's lane. Answers how many events were
/// claimed.
async fn claim_batch(
    shared: &Arc<Shared>,
    options: &DispatcherOptions,
    lanes: &mut HashMap<String, mpsc::UnboundedSender<Job>>,
) -> anyhow::Result<usize> {
    let now = Utc::now();
    let until = now + TimeDelta::from_std(options.lease)?;
    let mut tx = shared.db.begin_write().await?;
    let events = outbox::claim(tx.conn(), &format_ts(now), &format_ts(until), options.batch_size).await?;
    tx.commit().await?;
    let claimed = events.len();
    // An event this process is still delivering comes back when its claim ran out; claiming it again extended
    // the claim, and it must not be sent twice.
    let events: Vec<PendingEvent> = {
        let mut in_flight = shared.in_flight.lock();
        events.into_iter().filter(|e| in_flight.insert(e.id.clone())).collect()
    };
    if events.is_empty() {
        return Ok(claimed);
    }
    let mut targets: HashMap<String, Vec<Arc<Target>>> = HashMap::new();
    {
        let mut conn = shared.db.read().await?;
        for event in &events {
            if !targets.contains_key(&event.organization_id) {
                let active = store::webhooks::active_targets(&mut conn, &event.organization_id).await?;
                targets.insert(event.organization_id.clone(), active.into_iter().map(Arc::new).collect());
            }
        }
    }
    let loaded_at = Instant::now();
    for event in events {
        let Some(kind) = EventKind::parse(&event.kind) else {
            tracing::error!(event_id = %event.id, kind = %event.kind, "an outbox event of unknown kind is dropped");
            let _ = shared.results.send(Outcome::Done(event.id));
            continue;
        };
        let wanted: Vec<Arc<Target>> = targets[&event.organization_id]
            .iter()
            .filter(|t| t.wants(&event.organization_id, event.hotel_id.as_deref(), kind, event.created_at))
            .cloned()
            .collect();
        if wanted.is_empty() {
            let _ = shared.results.send(Outcome::Done(event.id));
            continue;
        }
        let prepared = match prepare(&event, kind) {
            Ok(prepared) => Arc::new(prepared),
            Err(err) => {
                tracing::error!(event_id = %event.id, error = %err, "an outbox event with an unreadable payload is dropped");
                let _ = shared.results.send(Outcome::Done(event.id));
                continue;
            }
        };
        let remaining = Arc::new(AtomicUsize::new(wanted.len()));
        for target in wanted {
            let mut job =
                Job { event: prepared.clone(), target: target.clone(), loaded_at, remaining: remaining.clone() };
            // A lane whose task ended (it cannot, short of a panic) is replaced.
            if let Some(lane) = lanes.get(&target.id) {
                match lane.send(job) {
                    Ok(()) => continue,
                    Err(mpsc::error::SendError(returned)) => job = returned,
                }
            }
            let (sender, receiver) = mpsc::unbounded_channel();
            tokio::spawn(lane(shared.clone(), receiver));
            let _ = sender.send(job);
            lanes.insert(target.id.clone(), sender);
        }
    }
    Ok(claimed)
}

async fn extend_claims(shared: &Shared, options: &DispatcherOptions) -> anyhow::Result<()> {
    let ids: Vec<String> = shared.in_flight.lock().iter().cloned().collect();
    if ids.is_empty() {
        return Ok(());
    }
    let until = Utc::now() + TimeDelta::from_std(options.lease)?;
    let mut tx = shared.db.begin_write().await?;
    outbox::extend_claims(tx.conn(), &ids, &format_ts(until)).await?;
    tx.commit().await?;
    Ok(())
}

/// A lane's waiting events, by record: the next event of a record waits until the one before it was sent.
#[derive(Default)]
struct LaneQueue {
    waiting: HashMap<String, VecDeque<Job>>,
    /// Records with waiting events and none under way, in the order their turn came.
    ready: VecDeque<String>,
    under_way: HashSet<String>,
}

impl LaneQueue {
    fn push(&mut self, job: Job) {
        let record = job.event.record_id.clone();
        let queue = self.waiting.entry(record.clone()).or_default();
        queue.push_back(job);
        if queue.len() == 1 && !self.under_way.contains(&record) {
            self.ready.push_back(record);
        }
    }

    /// The next event that may be sent now; its record counts as under way until [`LaneQueue::finish`].
    fn next(&mut self) -> Option<Job> {
        let record = self.ready.pop_front()?;
        let queue = self.waiting.get_mut(&record)?;
        let job = queue.pop_front()?;
        if queue.is_empty() {
            self.waiting.remove(&record);
        }
        self.under_way.insert(record);
        Some(job)
    }

    fn finish(&mut self, record: &str) {
        self.under_way.remove(record);
        if self.waiting.contains_key(record) {
            self.ready.push_back(record.to_string());
        }
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// Delivers one subscription's events.
async fn lane(shared: Arc<Shared>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut queue = LaneQueue::default();
    let mut sending = FuturesUnordered::new();
    let mut turned_off_at: Option<Instant> = None;
    // The consecutive failures as this lane last saw them; the database's count is the authority.
    let mut failures: Option<i64> = None;
    let mut open = true;
    loop {
        let limit = if failures.unwrap_or(0) > 0 { 1 } else { LANE_CONCURRENCY };
        while sending.len() < limit {
            let Some(job) = queue.next() else { break };
            let stopping = shared.stopping.load(Ordering::Acquire);
            if !stopping && turned_off_at.is_some_and(|at| job.loaded_at <= at) {
                // Claimed while the subscription was still on: dropped, and done as far as this subscription goes.
                queue.finish(&job.event.record_id);
                finish_job(&shared, &job);
                continue;
            }
            if stopping {
                // Neither sent nor done: released when the dispatcher stops.
                queue.finish(&job.event.record_id);
                continue;
            }
            turned_off_at = None;
            failures.get_or_insert(job.target.consecutive_failures);
            let shared = shared.clone();
            sending.push(async move {
                let delivery = deliver(&shared, &job).await;
                (job, delivery)
            });
        }
        if !open && sending.is_empty() && queue.is_empty() {
            return;
        }
        tokio::select! {
            job = jobs.recv(), if open => match job {
                Some(job) => queue.push(job),
                None => open = false,
            },
            Some((job, delivery)) = sending.next(), if !sending.is_empty() => {
                queue.finish(&job.event.record_id);
                if delivery.success {
                    if failures.unwrap_or(job.target.consecutive_failures) > 0 {
                        if let Err(err) = count_success(&shared.db, &job.target.id).await {
                            tracing::warn!(error = %err, "clearing a subscription's failure count failed");
                        }
                    }
                    failures = Some(0);
                } else {
                    match count_failure(&shared.db, &job.target.id).await {
                        Ok(Some((count, true))) => failures = Some(count),
                        Ok(Some((count, false))) => {
                            tracing::warn!(subscription_id = %job.target.id, failures = count,
                                "webhook subscription turned off after consecutive failed deliveries");
                            failures = Some(count);
                            turned_off_at = Some(Instant::now());
                        }
                        // Deleted meanwhile.
                        Ok(None) => turned_off_at = Some(Instant::now()),
                        Err(err) => tracing::warn!(error = %err, "counting a failed delivery failed"),
                    }
                }
                let _ = shared
                    .results
                    .send(Outcome::Attempt(NewDelivery { subscription_id: job.target.id.clone(), delivery }));
                finish_job(&shared, &job);
            }
        }
    }
}

/// This subscription is done with the event; the last subscription to finish it lets it go.
fn finish_job(shared: &Shared, job: &Job) {
    if job.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
        let _ = shared.results.send(Outcome::Done(job.event.id.clone()));
    }
}

async fn release_claims(db: &Db, ids: &[String]) -> Result<(), sqlx::Error> {
    let mut tx = db.begin_write().await?;
    outbox::release_claims(tx.conn(), ids).await?;
    tx.commit().await
}

async fn count_failure(db: &Db, id: &str) -> Result<Option<(i64, bool)>, sqlx::Error> {
    let mut tx = db.begin_write().await?;
    let counted = store::webhooks::record_failure(tx.conn(), id, &format_ts(Utc::now())).await?;
    tx.commit().await?;
    Ok(counted)
}

async fn count_success(db: &Db, id: &str) -> Result<(), sqlx::Error> {
    let mut tx = db.begin_write().await?;
    store::webhooks::record_success(tx.conn(), id).await?;
    tx.commit().await
}

/// Bytes of a receiver's answer read (and dropped) so that its connection can be reused.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// One attempt: sign, send, wait for the answer.
async fn deliver(shared: &Shared, job: &Job) -> WebhookDelivery {
    let attempted_at = Utc::now();
    let started = Instant::now();
    let id = new_id();
    let outcome = send(shared, job, &id).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let (success, status_code, error) = match outcome {
        Ok(status) => (status.is_success(), Some(i64::from(status.as_u16())), None),
        Err(error) => (false, None, Some(error)),
    };
    WebhookDelivery {
        id,
        event_id: job.event.id.clone(),
        event: job.event.kind,
        attempted_at,
        success,
        status_code,
        error,
        duration_ms,
    }
}

async fn send(shared: &Shared, job: &Job, delivery_id: &str) -> Result<reqwest::StatusCode, String> {
    let url = reqwest::Url::parse(&job.target.url).map_err(|_| "the subscription URL is not valid".to_string())?;
    // A literal address needs no DNS, so the resolver's policy does not see it: check it here.
    if !shared.allow_private {
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            _ => None,
        };
        if literal.is_some_and(url_policy::is_forbidden) {
            return Err("the URL points at an address webhooks may not reach".into());
        }
    }
    let secret = shared
        .secret_box
        .open(&job.target.secret_sealed)
        .map_err(|_| "the subscription's signing secret could not be read".to_string())?;
    let signature = signature::header(&secret, Utc::now().timestamp(), &job.event.body);
    let response = shared
        .client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("X-Service-Event", job.event.kind.as_str())
        .header("X-Service-Signature", signature)
        .header("X-Service-Delivery", delivery_id)
        .body(job.event.body.clone())
        .send()
        .await
        .map_err(describe)?;
    let status = response.status();
    let mut response = response;
    let mut read = 0;
    while let Ok(Some(chunk)) = response.chunk().await {
        read += chunk.len();
        if read >= MAX_ANSWER_BYTES {
            break;
        }
    }
    Ok(status)
}

fn describe(err: reqwest::Error) -> String {
    if err.is_timeout() {
        return "timed out".into();
    }
    // The innermost cause says what happened (refused, reset, policy); reqwest's own text adds the URL.
    let mut cause: &dyn std::error::Error = &err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if err.is_connect() {
        format!("could not connect: {cause}")
    } else {
        format!("request failed: {cause}")
    }
}

/// Writes attempts and finished events in batches: whatever arrived while the previous batch was being written.
async fn record(db: Db, in_flight: InFlight, mut results: mpsc::UnboundedReceiver<Outcome>) {
    let mut pruned: HashMap<String, Instant> = HashMap::new();
    let mut batch: Vec<Outcome> = Vec::new();
    loop {
        if batch.is_empty() {
            match results.recv().await {
                Some(outcome) => batch.push(outcome),
                None => return,
            }
        }
        while batch.len() < 2000 {
            match results.try_recv() {
                Ok(outcome) => batch.push(outcome),
                Err(_) => break,
            }
        }
        match write_batch(&db, &batch, &mut pruned).await {
            Ok(done) => {
                let mut in_flight = in_flight.lock();
                for id in done {
                    in_flight.remove(&id);
                }
                batch.clear();
            }
            Err(err) => {
                // Kept and written again: losing it would only resend events, but the log would miss attempts.
                tracing::warn!(error = %err, "recording webhook deliveries failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// How often a subscription's delivery log is trimmed to its last 100 entries.
const PRUNE_INTERVAL: Duration = Duration::from_secs(10);

async fn write_batch(
    db: &Db,
    batch: &[Outcome],
    pruned: &mut HashMap<String, Instant>,
) -> Result<Vec<String>, sqlx::Error> {
    let mut attempts = Vec::new();
    let mut done = Vec::new();
    for outcome in batch {
        match outcome {
            Outcome::Attempt(attempt) => attempts.push(attempt),
            Outcome::Done(id) => done.push(id.clone()),
        }
    }
    let mut tx = db.begin_write().await?;
    store::webhooks::insert_deliveries(tx.conn(), &attempts).await?;
    outbox::remove(tx.conn(), &done).await?;
    let touched: HashSet<&str> = attempts.iter().map(|a| a.subscription_id.as_str()).collect();
    for id in touched {
        if pruned.get(id).is_none_or(|at| at.elapsed() >= PRUNE_INTERVAL) {
            store::webhooks::prune_deliveries(tx.conn(), id).await?;
            pruned.insert(id.to_string(), Instant::now());
        }
    }
    tx.commit().await?;
    Ok(done)
}
