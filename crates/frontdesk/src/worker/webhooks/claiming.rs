//! Claiming: the loop that hands out new events and claims queued ones for the lanes that have room, takes over
//! claims that ran out, extends those still being delivered and drops idle lanes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};

use tokio::sync::{mpsc, watch};

use super::{
    hand_out, lane, prepare, sweep, DispatcherOptions, Job, LaneRegistry, LaneState, Outcome, Shared,
    FAILING_LANE_CAPACITY, LANE_CAPACITY,
};
use crate::domain::change::{self, Change, Writer};
use crate::domain::events::EventKind;
use crate::domain::webhooks::Target;
use crate::store::outbox::{self, PendingEvent};
use crate::store::{self, format_ts};

/// A lane as the claim loop holds it.
pub(super) struct Lane {
    pub(super) sender: mpsc::UnboundedSender<Job>,
    pub(super) state: Arc<LaneState>,
    /// When the lane was last given an event.
    pub(super) last_used: Instant,
}

/// How often queue rows of subscriptions turned off and events nobody waits for are tidied away.
pub(super) const SWEEP_INTERVAL: Duration = Duration::from_secs(60);

pub(super) async fn claim_loop(
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

/// Claims for each candidate subscription (every active one when `None`) as many queued events as its lane has
/// room for, and hands them to the lane. Answers the subscriptions whose lane was filled (more may be waiting).
pub(super) async fn claim(
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
        let mut tx = Change::begin_as(&shared.db, Writer::Job(change::Job::WebhookDispatcher)).await?;
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
pub(super) fn give_event(
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
pub(super) fn give(shared: &Arc<Shared>, lanes: &mut HashMap<String, Lane>, registry: &LaneRegistry, mut job: Job) {
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

pub(super) async fn extend_claims(shared: &Shared, options: &DispatcherOptions) -> anyhow::Result<()> {
    let pairs: Vec<(String, String)> = shared.in_flight.lock().iter().cloned().collect();
    if pairs.is_empty() {
        return Ok(());
    }
    let until = format_ts(Utc::now() + TimeDelta::from_std(options.lease)?);
    let mut tx = Change::begin_as(&shared.db, Writer::Job(change::Job::WebhookDispatcher)).await?;
    for (subscription, events) in by_subscription(&pairs) {
        outbox::extend_queued(tx.conn(), subscription, &events, &until).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// (subscription, event) pairs grouped by subscription.
pub(super) fn by_subscription(pairs: &[(String, String)]) -> BTreeMap<&str, Vec<String>> {
    let mut grouped: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (subscription, event) in pairs {
        grouped.entry(subscription.as_str()).or_default().push(event.clone());
    }
    grouped
}
