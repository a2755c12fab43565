//! Recording: attempts and finished (subscription, event) pairs written in batches.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{by_subscription, InFlight, Outcome};
use crate::domain::change::{Change, Job, Writer};
use crate::store::outbox::{self};
use crate::store::{self, Db};

/// Writes attempts and finished (subscription, event) pairs in batches: whatever arrived while the previous batch
/// was being written.
pub(super) async fn record(db: Db, in_flight: InFlight, mut results: mpsc::UnboundedReceiver<Outcome>) {
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
pub(super) const PRUNE_INTERVAL: Duration = Duration::from_secs(10);

pub(super) async fn write_batch(
    db: &Db,
    batch: &[Outcome],
    pruned: &mut HashMap<String, Instant>,
) -> crate::domain::Result<Vec<(String, String)>> {
    let mut attempts = Vec::new();
    let mut done = Vec::new();
    for outcome in batch {
        match outcome {
            Outcome::Attempt(attempt) => attempts.push(attempt),
            Outcome::Done { subscription_id, event_id } => done.push((subscription_id.clone(), event_id.clone())),
        }
    }
    let mut tx = Change::begin_as(db, Writer::Job(Job::WebhookDispatcher)).await?;
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
            store::webhooks::prune_deliveries(tx.conn(), id, crate::domain::webhooks::DELIVERY_LOG_SIZE).await?;
            pruned.insert(id.to_string(), Instant::now());
        }
    }
    tx.commit().await?;
    Ok(done)
}
