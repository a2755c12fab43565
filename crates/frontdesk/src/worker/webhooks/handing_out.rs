//! Handing out: new outbox events become queue rows of the subscriptions that want them; events nobody wants are
//! removed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use chrono::{TimeDelta, Utc};

use super::{give_event, DispatcherOptions, Lane, LaneRegistry, Shared, FAILING_LANE_CAPACITY, LANE_CAPACITY};
use crate::domain::change::{Change, Job, Writer};
use crate::domain::events::EventKind;
use crate::domain::webhooks::{self, Target};
use crate::store::outbox::{self, PendingEvent};
use crate::store::{self, format_ts, Db};

pub(super) async fn sweep(db: &Db) -> anyhow::Result<()> {
    let mut tx = Change::begin_as(db, Writer::Job(Job::WebhookDispatcher)).await?;
    outbox::sweep(tx.conn()).await?;
    tx.commit().await?;
    Ok(())
}

/// Hands a batch of new events to the subscriptions that want them. A subscription whose lane here has room, and
/// that has nothing older waiting (`more`), gets its events claimed at once and handed to its lane; the others' are
/// queued unclaimed (and the subscription noted in `more`). Answers how many events were taken.
pub(super) async fn hand_out(
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
    let mut tx = Change::begin_as(&shared.db, Writer::Job(Job::WebhookDispatcher)).await?;
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
            if !webhooks::wants(target, &event.organization_id, event.hotel_id.as_deref(), kind, event.created_at) {
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
    // A subscription turned off since `active_targets` read it: its turn-off either waited for these rows and drops
    // them, or committed before they were written, and then they are taken back here.
    let subscriptions: HashSet<&str> = pairs.iter().chain(&queued).map(|(subscription, _)| *subscription).collect();
    let subscriptions: Vec<&str> = subscriptions.into_iter().collect();
    let event_ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let taken_back: HashSet<(String, String)> =
        outbox::unqueue_turned_off(tx.conn(), &subscriptions, &event_ids).await?.into_iter().collect();
    tx.commit().await?;
    for (target, event) in claimed {
        // Nearly always empty: no key is built for the lookup then.
        if !taken_back.is_empty() && taken_back.contains(&(target.id.clone(), event.id.clone())) {
            continue;
        }
        shared.in_flight.lock().insert((target.id.clone(), event.id.clone()));
        give_event(shared, lanes, registry, target.clone(), event, loaded_at);
    }
    Ok(taken)
}
