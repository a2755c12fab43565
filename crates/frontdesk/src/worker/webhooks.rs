//! The webhook dispatcher: delivers the outbox's events to the subscriptions that want them.
//!
//! * **Handing out.** New outbox events are handed to the subscriptions that want them ([`Target::wants`]) in one
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

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{TimeDelta, Utc};
use futures::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;

use crate::domain::events::EventKind;
use crate::domain::new_id;
use crate::domain::secrets::SecretBox;
use crate::domain::webhooks::{self, signature, url_policy, Target, WebhookDelivery, WebhookSettings};
use crate::store::outbox::{self, PendingEvent};
use crate::store::webhooks::NewDelivery;
use crate::store::{self, format_ts, Db};

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

/// A lane as the claim loop holds it.
struct Lane {
    sender: mpsc::UnboundedSender<Job>,
    state: Arc<LaneState>,
    /// When the lane was last given an event.
    last_used: Instant,
}

/// How often queue rows of subscriptions turned off and events nobody waits for are tidied away.
const SWEEP_INTERVAL: Duration = Duration::from_secs(60);

async fn claim_loop(
    shared: Arc<Shared>,
    options: DispatcherOptions,
    registry: LaneRegistry,
    mut stop: watch::Receiver<bool>,
) {
    let mut lanes: HashMap<String, Lane> = HashMap::new();
    // Subscriptions that may have queued events nobody claimed: their last claim filled their lane, or they were
    // handed more than their lane had room for.
    let mut more: HashSet<String> = HashSet::new();
    let mut last_extension = Instant::now();
    let mut last_sweep: Option<Instant> = None;
    let mut last_poll: Option<Instant> = None;
    loop {
        if last_sweep.is_none_or(|at| at.elapsed() >= SWEEP_INTERVAL) {
            last_sweep = Some(Instant::now());
            if let Err(err) = sweep(&shared.db).await {
                tracing::warn!(error = %format!("{err:#}"), "tidying the webhook queue failed");
            }
        }
        // Every subscription is looked at now and then (events handed out by other processes, given back, or whose
        // claim ran out; the first round: events queued before this process started), whatever the load.
        let poll_all = last_poll.is_none_or(|at| at.elapsed() >= options.poll_interval);
        // The first round hands nothing straight to lanes: older events may be queued for the same subscriptions.
        let direct = last_poll.is_some();
        if poll_all {
            last_poll = Some(Instant::now());
        }
        loop {
            match hand_out(&shared, &options, &mut lanes, &registry, &mut more, direct).await {
                Ok(taken) if (taken as i64) < options.batch_size => break,
                Ok(_) => continue,
                Err(err) => {
                    tracing::warn!(error = %format!("{err:#}"), "handing out webhook events failed; retrying");
                    break;
                }
            }
        }
        let candidates = if poll_all { None } else { Some(std::mem::take(&mut more)) };
        if candidates.as_ref().is_none_or(|c| !c.is_empty()) {
            match claim(&shared, &options, &mut lanes, &registry, candidates).await {
                // After a look at every subscription, those that filled their lane are all that may have more.
                Ok(full) if poll_all => more = full,
                Ok(full) => more.extend(full),
                Err(err) => tracing::warn!(error = %format!("{err:#}"), "claiming webhook events failed; retrying"),
            }
        }
        // Lanes that held nothing for a while go (their task ends when its sender does).
        lanes.retain(|_, lane| {
            lane.state.held.load(Ordering::Acquire) > 0 || lane.last_used.elapsed() < options.lane_idle
        });
        registry.lock().retain(|id, _| lanes.contains_key(id));
        if last_extension.elapsed() >= options.lease / 3 {
            last_extension = Instant::now();
            if let Err(err) = extend_claims(&shared, &options).await {
                tracing::warn!(error = %format!("{err:#}"), "extending webhook event claims failed");
            }
        }
        let until_poll = last_poll.map_or(Duration::ZERO, |at| options.poll_interval.saturating_sub(at.elapsed()));
        tokio::select! {
            _ = shared.db.outbox_written() => tokio::time::sleep(options.batch_window).await,
            _ = shared.room.notified() => {}
            _ = tokio::time::sleep(until_poll) => {}
            _ = stop.changed() => break,
        }
    }
    shared.stopping.store(true, Ordering::Release);
}

async fn sweep(db: &Db) -> anyhow::Result<()> {
    let mut tx = db.begin_write().await?;
    outbox::sweep(tx.conn()).await?;
    tx.commit().await?;
    Ok(())
}

/// Hands a batch of new events to the subscriptions that want them. A subscription whose lane here has room, and
/// that has nothing older waiting (`more`), gets its events claimed at once and handed to its lane; the others' are
/// queued unclaimed (and the subscription noted in `more`). Answers how many events were taken.
async fn hand_out(
    shared: &Arc<Shared>,
    options: &DispatcherOptions,
    lanes: &mut HashMap<String, Lane>,
    registry: &LaneRegistry,
    more: &mut HashSet<String>,
    direct: bool,
) -> anyhow::Result<usize> {
    let until = format_ts(Utc::now() + TimeDelta::from_std(options.lease)?);
    // Taken before the subscriptions are read: a lane that turns one off records the moment after its change
    // committed, so any job read before that change is older than it and is dropped (see `Job::loaded_at`).
    let loaded_at = Instant::now();
    let mut tx = shared.db.begin_write().await?;
    let events = outbox::take_new(tx.conn(), options.batch_size).await?;
    let taken = events.len();
    if events.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let mut targets: HashMap<String, Vec<Arc<Target>>> = HashMap::new();
    for event in &events {
        if !targets.contains_key(&event.organization_id) {
            let active = store::webhooks::active_targets(tx.conn(), &event.organization_id).await?;
            targets.insert(event.organization_id.clone(), active.into_iter().map(Arc::new).collect());
        }
    }
    let mut room: HashMap<String, usize> = HashMap::new();
    let mut claimed: Vec<(&Arc<Target>, &PendingEvent)> = Vec::new();
    let mut queued: Vec<(&str, &str)> = Vec::new();
    let mut unwanted: Vec<String> = Vec::new();
    for event in &events {
        let Some(kind) = EventKind::parse(&event.kind) else {
            tracing::error!(event_id = %event.id, kind = %event.kind, "an outbox event of unknown kind is dropped");
            unwanted.push(event.id.clone());
            continue;
        };
        let mut wanted = false;
        for target in targets.get(&event.organization_id).into_iter().flatten() {
            if !target.wants(&event.organization_id, event.hotel_id.as_deref(), kind, event.created_at) {
                continue;
            }
            wanted = true;
            let room = room.entry(target.id.clone()).or_insert_with(|| match lanes.get(&target.id) {
                Some(lane) => lane.state.room(),
                None if target.consecutive_failures > 0 => FAILING_LANE_CAPACITY,
                None => LANE_CAPACITY,
            });
            if direct && *room > 0 && !more.contains(&target.id) {
                *room -= 1;
                claimed.push((target, event));
            } else {
                // Once one event of a subscription waits in the queue, the ones after it wait too, in order.
                more.insert(target.id.clone());
                queued.push((target.id.as_str(), event.id.as_str()));
            }
        }
        if !wanted {
            unwanted.push(event.id.clone());
        }
    }
    let pairs: Vec<(&str, &str)> = claimed.iter().map(|(t, e)| (t.id.as_str(), e.id.as_str())).collect();
    outbox::enqueue(tx.conn(), &pairs, Some(&until)).await?;
    outbox::enqueue(tx.conn(), &queued, None).await?;
    outbox::remove(tx.conn(), &unwanted).await?;
    tx.commit().await?;
    for (target, event) in claimed {
        shared.in_flight.lock().insert((target.id.clone(), event.id.clone()));
        give_event(shared, lanes, registry, target.clone(), event, loaded_at);
    }
    Ok(taken)
}

/// Claims for each candidate subscription (every active one when `None`) as many queued events as its lane has
/// room for, and hands them to the lane. Answers the subscriptions whose lane was filled (more may be waiting).
async fn claim(
    shared: &Arc<Shared>,
    options: &DispatcherOptions,
    lanes: &mut HashMap<String, Lane>,
    registry: &LaneRegistry,
    candidates: Option<HashSet<String>>,
) -> anyhow::Result<HashSet<String>> {
    // Only lanes with room: a subscription whose lane is full is not claimed for, whatever its backlog; it is
    // looked at again when its lane has room.
    let mut full = HashSet::new();
    let ids: Option<Vec<String>> = candidates.map(|candidates| {
        candidates
            .into_iter()
            .filter(|id| match lanes.get(id) {
                Some(lane) if lane.state.room() == 0 => {
                    full.insert(id.clone());
                    false
                }
                _ => true,
            })
            .collect()
    });
    if ids.as_ref().is_some_and(|ids| ids.is_empty()) {
        return Ok(full);
    }
    // Before the subscriptions are read, as in `hand_out`.
    let loaded_at = Instant::now();
    let targets = {
        let mut conn = shared.db.read().await?;
        store::webhooks::active_targets_among(&mut conn, ids.as_deref()).await?
    };
    let now = Utc::now();
    let until = now + TimeDelta::from_std(options.lease)?;
    let mut claimed: Vec<(Arc<Target>, Vec<PendingEvent>)> = Vec::new();
    {
        let mut tx = shared.db.begin_write().await?;
        for target in targets {
            let room = match lanes.get(&target.id) {
                Some(lane) => lane.state.room(),
                None if target.consecutive_failures > 0 => FAILING_LANE_CAPACITY,
                None => LANE_CAPACITY,
            };
            if room == 0 {
                full.insert(target.id.clone());
                continue;
            }
            let limit = i64::try_from(room)?;
            let events = outbox::claim_queued(tx.conn(), &target.id, &format_ts(now), &format_ts(until), limit).await?;
            if events.len() >= room {
                full.insert(target.id.clone());
            }
            if !events.is_empty() {
                claimed.push((Arc::new(target), events));
            }
        }
        tx.commit().await?;
    }
    for (target, events) in claimed {
        // An event this process is still delivering comes back when its claim ran out; claiming it again extended
        // the claim, and it must not be sent twice.
        let events: Vec<PendingEvent> = {
            let mut in_flight = shared.in_flight.lock();
            events.into_iter().filter(|e| in_flight.insert((target.id.clone(), e.id.clone()))).collect()
        };
        for event in &events {
            give_event(shared, lanes, registry, target.clone(), event, loaded_at);
        }
    }
    Ok(full)
}

/// Prepares a claimed event for a subscription and hands it to the subscription's lane (an event that cannot be
/// sent is dropped).
fn give_event(
    shared: &Arc<Shared>,
    lanes: &mut HashMap<String, Lane>,
    registry: &LaneRegistry,
    target: Arc<Target>,
    event: &PendingEvent,
    loaded_at: Instant,
) {
    let done = || Outcome::Done { subscription_id: target.id.clone(), event_id: event.id.clone() };
    let Some(kind) = EventKind::parse(&event.kind) else {
        tracing::error!(event_id = %event.id, kind = %event.kind, "an outbox event of unknown kind is dropped");
        let _ = shared.results.send(done());
        return;
    };
    let prepared = match prepare(event, kind) {
        Ok(prepared) => prepared,
        Err(err) => {
            tracing::error!(event_id = %event.id, error = %err, "an outbox event with an unreadable payload is dropped");
            let _ = shared.results.send(done());
            return;
        }
    };
    give(shared, lanes, registry, Job { event: prepared, target, loaded_at });
}

/// Hands a job to its subscription's lane, starting the lane if there is none.
fn give(shared: &Arc<Shared>, lanes: &mut HashMap<String, Lane>, registry: &LaneRegistry, mut job: Job) {
    let id = job.target.id.clone();
    // A lane whose task ended (it cannot, short of a panic) is replaced.
    if let Some(lane) = lanes.get_mut(&id) {
        lane.state.add(1);
        match lane.sender.send(job) {
            Ok(()) => {
                lane.last_used = Instant::now();
                return;
            }
            Err(mpsc::error::SendError(returned)) => job = returned,
        }
    }
    let state = Arc::new(LaneState::default());
    state.failing.store(job.target.consecutive_failures > 0, Ordering::Release);
    state.add(1);
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(lane(shared.clone(), state.clone(), receiver));
    let _ = sender.send(job);
    registry.lock().insert(id.clone(), state.clone());
    lanes.insert(id, Lane { sender, state, last_used: Instant::now() });
}

async fn extend_claims(shared: &Shared, options: &DispatcherOptions) -> anyhow::Result<()> {
    let pairs: Vec<(String, String)> = shared.in_flight.lock().iter().cloned().collect();
    if pairs.is_empty() {
        return Ok(());
    }
    let until = format_ts(Utc::now() + TimeDelta::from_std(options.lease)?);
    let mut tx = shared.db.begin_write().await?;
    for (subscription, events) in by_subscription(&pairs) {
        outbox::extend_queued(tx.conn(), subscription, &events, &until).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// (subscription, event) pairs grouped by subscription.
fn by_subscription(pairs: &[(String, String)]) -> BTreeMap<&str, Vec<String>> {
    let mut grouped: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (subscription, event) in pairs {
        grouped.entry(subscription.as_str()).or_default().push(event.clone());
    }
    grouped
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
async fn lane(shared: Arc<Shared>, state: Arc<LaneState>, mut jobs: mpsc::UnboundedReceiver<Job>) {
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
fn finish_job(shared: &Shared, job: &Job) {
    let _ =
        shared.results.send(Outcome::Done { subscription_id: job.target.id.clone(), event_id: job.event.id.clone() });
}

async fn release_claims(db: &Db, pairs: &[(String, String)]) -> Result<(), sqlx::Error> {
    let mut tx = db.begin_write().await?;
    for (subscription, events) in by_subscription(pairs) {
        outbox::release_queued(tx.conn(), subscription, &events).await?;
    }
    tx.commit().await
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

/// Writes attempts and finished (subscription, event) pairs in batches: whatever arrived while the previous batch
/// was being written.
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
                for pair in done {
                    in_flight.remove(&pair);
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
) -> Result<Vec<(String, String)>, sqlx::Error> {
    let mut attempts = Vec::new();
    let mut done = Vec::new();
    for outcome in batch {
        match outcome {
            Outcome::Attempt(attempt) => attempts.push(attempt),
            Outcome::Done { subscription_id, event_id } => done.push((subscription_id.clone(), event_id.clone())),
        }
    }
    let mut tx = db.begin_write().await?;
    store::webhooks::insert_deliveries(tx.conn(), &attempts).await?;
    for (subscription, events) in by_subscription(&done) {
        outbox::finish_queued(tx.conn(), subscription, &events).await?;
    }
    let mut events: Vec<String> = done.iter().map(|(_, event)| event.clone()).collect();
    events.sort_unstable();
    events.dedup();
    outbox::remove_finished(tx.conn(), &events).await?;
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
