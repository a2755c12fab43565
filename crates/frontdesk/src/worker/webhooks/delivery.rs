//! Delivery: a lane per subscription, its deliveries under way (never two about one record), and the signed
//! request of one attempt.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;

use super::{by_subscription, Job, LaneState, Outcome, Shared, LANE_CONCURRENCY};
use crate::domain::change::{self, Change, Writer};
use crate::domain::new_id;
use crate::domain::webhooks::{self, signature, url_policy, WebhookDelivery};
use crate::store::outbox::{self};
use crate::store::webhooks::NewDelivery;
use crate::store::{self, Db};

/// A lane's waiting events, by record: the next event of a record waits until the one before it was sent.
#[derive(Default)]
pub(super) struct LaneQueue {
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
pub(super) async fn lane(shared: Arc<Shared>, state: Arc<LaneState>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut queue = LaneQueue::default();
    let mut sending = FuturesUnordered::new();
    let mut turned_off_at: Option<Instant> = None;
    // The consecutive failures as this lane last saw them; the database's count is the authority.
    let mut failures: Option<i64> = None;
    let mut open = true;
    // One job is finished: the lane has room for another.
    let finished = |state: &LaneState| {
        if state.finish_one() {
            shared.room.notify_one();
        }
    };
    loop {
        let limit = if failures.unwrap_or(0) > 0 { 1 } else { LANE_CONCURRENCY };
        while sending.len() < limit {
            let Some(job) = queue.next() else { break };
            let stopping = shared.stopping.load(Ordering::Acquire);
            if !stopping && turned_off_at.is_some_and(|at| job.loaded_at <= at) {
                // Claimed while the subscription was still on: dropped (its queue row went when it was turned off).
                queue.finish(&job.event.record_id);
                finish_job(&shared, &job);
                finished(&state);
                continue;
            }
            if stopping {
                // Neither sent nor done: released when the dispatcher stops.
                queue.finish(&job.event.record_id);
                finished(&state);
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
                    match webhooks::record_failed_delivery(&shared.db, &job.target.id).await {
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
                state.failing.store(failures.unwrap_or(0) > 0, Ordering::Release);
                let _ = shared
                    .results
                    .send(Outcome::Attempt(NewDelivery { subscription_id: job.target.id.clone(), delivery }));
                finish_job(&shared, &job);
                finished(&state);
            }
        }
    }
}

/// This subscription is done with the event.
pub(super) fn finish_job(shared: &Shared, job: &Job) {
    let _ =
        shared.results.send(Outcome::Done { subscription_id: job.target.id.clone(), event_id: job.event.id.clone() });
}

pub(super) async fn release_claims(db: &Db, pairs: &[(String, String)]) -> crate::domain::Result<()> {
    let mut tx = Change::begin_as(db, Writer::Job(change::Job::WebhookDispatcher)).await?;
    for (subscription, events) in by_subscription(pairs) {
        outbox::release_queued(tx.conn(), subscription, &events).await?;
    }
    tx.commit().await
}

pub(super) async fn count_success(db: &Db, id: &str) -> crate::domain::Result<()> {
    let mut tx = Change::begin_as(db, Writer::Job(change::Job::WebhookDispatcher)).await?;
    store::webhooks::record_success(tx.conn(), id).await?;
    tx.commit().await
}

/// Bytes of a receiver's answer read (and dropped) so that its connection can be reused.
pub(super) const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// One attempt: sign, send, wait for the answer.
pub(super) async fn deliver(shared: &Shared, job: &Job) -> WebhookDelivery {
    let attempted_at = Utc::now();
    let started = Instant::now();
    let id = new_id();
    let outcome = send(shared, job, &id).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let (success, status_code, error) = match outcome {
        Ok(status) => (status.is_success(), Some(i64::from(status.as_u16())), None),
        Err(error) => (false, None, Some(error)),
    };
    crate::metrics::webhook_delivery(success, status_code.is_some(), started.elapsed());
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

pub(super) async fn send(shared: &Shared, job: &Job, delivery_id: &str) -> Result<reqwest::StatusCode, String> {
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

pub(super) fn describe(err: reqwest::Error) -> String {
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
