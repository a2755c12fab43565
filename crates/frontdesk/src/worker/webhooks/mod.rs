//! The webhook dispatcher: delivers the outbox's events to the subscriptions that want them.
//!
//! * **Handing out.** New outbox events are handed to the subscriptions that want them ([`webhooks::wants`](crate::domain::webhooks::wants)) in one
//!   transaction that writes a queue row per (subscription, event) (`webhook_queue`) and marks the events handed
//!   out; on PostgreSQL with `FOR UPDATE SKIP LOCKED`, so several processes share the outbox and each event is handed
//!   out once. Events nobody wants are removed there and then.
//! * **Claiming.** Each subscription has its own lane, and a lane holds at most [`LANE_CAPACITY`] events
//!   ([`FAILING_LANE_CAPACITY`] while its subscription is failing). The dispatcher claims a subscription's queued
//!   events with a lease (`claimed_until`), oldest first, only as many as its lane has room for: the backlog of a
//!   receiver that hangs stays in the database, not in this process's memory, and the other subscriptions' events
//!   keep flowing. New events for a lane that has room and nothing older waiting are claimed as they are handed
//!   out, in the same transaction. A claim that runs out (its process died between the claim and the delivery) is taken over, so no
//!   event is lost; the claims of events still being delivered are extended. A lane that has held nothing for
//!   [`DispatcherOptions::lane_idle`] is dropped.
//! * **Delivery.** One attempt per (event, subscription), 5 s timeout, no retry, any 2xx is success. A slow or dead
//!   receiver holds up only its own lane, never API requests nor other subscribers. A healthy lane has up to
//!   [`LANE_CONCURRENCY`] deliveries under way, never two about the same record, so the events of one record arrive
//!   in the order they were written (one at a time, a local receiver could take no more than about a thousand a
//!   second per subscription). A lane counts failures in the database (the authority when several processes
//!   deliver); while its subscription is failing it sends one event at a time, so that the 20th failure in a row,
//!   which turns the subscription off (and drops its queue), is the last attempt, and the lane drops the rest of
//!   what it held.
//! * **Recording.** Attempts and finished (subscription, event) pairs are written by one recorder in batches (the
//!   log entries, the removal of queue rows, and of events no subscription waits for any more), so delivering a
//!   thousand events a second costs a few transactions.
//!
//! Delivery is at least once: a process that dies after sending and before recording sends again when the claim is
//! taken over. The body's `id` lets receivers drop duplicates.
//!
//! One file per phase: [`handing_out`], [`claiming`], [`delivery`], [`recording`]; what they share is here.

mod claiming;
mod delivery;
mod handing_out;
mod recording;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;

use crate::domain::events::EventKind;
use crate::domain::secrets::SecretBox;
use crate::domain::webhooks::{url_policy, Target, WebhookSettings};
use crate::store::outbox::PendingEvent;
use crate::store::webhooks::NewDelivery;
use crate::store::Db;

use claiming::*;
use delivery::*;
use handing_out::*;
use recording::*;

/// Tuning of the dispatcher; the defaults are what the service runs with.
#[derive(Debug, Clone)]
pub struct DispatcherOptions {
    /// How often the queue is checked for events handed out by other processes or released (this process's own
    /// writes wake the dispatcher at once).
    pub poll_interval: Duration,
    /// How long a claim holds before another dispatcher may take the event over.
    pub lease: Duration,
    /// Most events handed out at once.
    pub batch_size: i64,
    /// Longest a delivery may take.
    pub timeout: Duration,
    /// How long a wake-up by a write waits for more writes before claiming, so that a burst of writes is claimed
    /// in one batch rather than one transaction each.
    pub batch_window: Duration,
    /// How long a lane that holds nothing is kept before it is dropped.
    pub lane_idle: Duration,
}

impl Default for DispatcherOptions {
    fn default() -> Self {
        DispatcherOptions {
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(60),
            batch_size: 500,
            timeout: Duration::from_secs(5),
            batch_window: Duration::from_millis(5),
            lane_idle: Duration::from_secs(60),
        }
    }
}

/// A running dispatcher.
pub struct Dispatcher {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    lanes: LaneRegistry,
}

/// What a lane holds, as [`Dispatcher::lanes`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneStats {
    pub subscription_id: String,
    /// Events claimed for the subscription and held in memory now (waiting or being sent).
    pub held: usize,
    /// The most it ever held at once.
    pub peak: usize,
    /// Whether the subscription is failing (the lane then sends one at a time and holds less).
    pub failing: bool,
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
        let lanes = LaneRegistry::default();
        let shared = Arc::new(Shared {
            db: db.clone(),
            secret_box: settings.secret_box.clone(),
            allow_private: settings.allow_private_addresses,
            client,
            in_flight: in_flight.clone(),
            results,
            stopping: AtomicBool::new(false),
            room: Notify::new(),
        });
        let (stop, stop_rx) = watch::channel(false);
        let recorder = tokio::spawn(record(db.clone(), in_flight.clone(), results_rx));
        let registry = lanes.clone();
        let task = tokio::spawn(async move {
            claim_loop(shared, options, registry, stop_rx).await;
            // The lanes hold the last senders of the results channel; once they finish, the recorder writes what is
            // left and ends.
            let _ = recorder.await;
            // Events claimed but not sent are released for the next dispatcher instead of waiting out the lease.
            let left: Vec<(String, String)> = in_flight.lock().drain().collect();
            if !left.is_empty() {
                if let Err(err) = release_claims(&db, &left).await {
                    tracing::warn!(error = %err, "releasing unsent webhook events failed; they go out when their claim runs out");
                }
            }
        });
        Ok(Dispatcher { stop, task, lanes })
    }

    /// What each lane holds now: the memory a dispatcher spends on a subscription is bounded by
    /// [`LANE_CAPACITY`] events, whatever its backlog.
    pub fn lanes(&self) -> Vec<LaneStats> {
        let mut stats: Vec<LaneStats> = self
            .lanes
            .lock()
            .iter()
            .map(|(id, lane)| LaneStats {
                subscription_id: id.clone(),
                held: lane.held.load(Ordering::Acquire),
                peak: lane.peak.load(Ordering::Acquire),
                failing: lane.failing.load(Ordering::Acquire),
            })
            .collect();
        stats.sort_by(|a, b| a.subscription_id.cmp(&b.subscription_id));
        stats
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
    /// Signalled by a lane that has room again after it was at least half full.
    room: Notify,
}

/// (subscription, event) pairs claimed by this process and not yet recorded as done.
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<HashSet<(String, String)>>>);

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The lanes that exist, by subscription.
#[derive(Clone, Default)]
struct LaneRegistry(Arc<Mutex<HashMap<String, Arc<LaneState>>>>);

impl LaneRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LaneState>>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What a lane and the claim loop share: how much the lane holds.
#[derive(Default)]
struct LaneState {
    /// Events handed to the lane and not finished (waiting or being sent).
    held: AtomicUsize,
    peak: AtomicUsize,
    /// The subscription is failing: the lane sends one at a time, so it gets less.
    failing: AtomicBool,
}

impl LaneState {
    fn capacity(&self) -> usize {
        if self.failing.load(Ordering::Acquire) {
            FAILING_LANE_CAPACITY
        } else {
            LANE_CAPACITY
        }
    }

    /// How many more events the lane may be given.
    fn room(&self) -> usize {
        self.capacity().saturating_sub(self.held.load(Ordering::Acquire))
    }

    fn add(&self, n: usize) {
        let held = self.held.fetch_add(n, Ordering::AcqRel) + n;
        self.peak.fetch_max(held, Ordering::AcqRel);
    }

    /// One event finished; answers whether the lane just got down to half its capacity (time to claim more).
    fn finish_one(&self) -> bool {
        let before = self.held.fetch_sub(1, Ordering::AcqRel);
        before.saturating_sub(1) == self.capacity() / 2
    }
}

enum Outcome {
    Attempt(NewDelivery),
    /// The subscription is done with the event (sent, or dropped): its queue row can go, and the event with its last
    /// row.
    Done {
        subscription_id: String,
        event_id: String,
    },
}

/// An event ready to send.
struct Prepared {
    id: String,
    kind: EventKind,
    /// The id of the record the event is about: a lane never has two deliveries of one record under way.
    record_id: String,
    body: Bytes,
}

/// Most deliveries a healthy subscription has under way at once. Below the 20 failures that turn a subscription
/// off, so that a receiver that starts failing is not sent more than 20 attempts.
pub const LANE_CONCURRENCY: usize = 8;
/// Most events a healthy subscription's lane holds (claimed, waiting or being sent): enough to keep
/// [`LANE_CONCURRENCY`] deliveries under way between claims at a thousand events a second (a claim refills a lane
/// that got down to half), and all the memory a subscription costs whatever its backlog (a few hundred KB).
pub const LANE_CAPACITY: usize = 32 * LANE_CONCURRENCY;
/// Most events a failing subscription's lane holds: it sends one at a time.
pub const FAILING_LANE_CAPACITY: usize = 2;

struct Job {
    event: Prepared,
    target: Arc<Target>,
    /// Taken before the subscription was read as active. A lane that turns the subscription off notes the moment
    /// after that change committed, and drops every job loaded before it: such a job may have been claimed before
    /// the change (which dropped its queue row), whatever order the two tasks then ran in. Taking it after the
    /// claim committed let a job claimed just before the turn-off through (a 21st attempt, seen on PostgreSQL).
    loaded_at: Instant,
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
