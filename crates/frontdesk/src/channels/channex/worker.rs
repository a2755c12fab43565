//! The Channex dispatcher: sends each connected hotel's recorded changes (`channel_changes`) to Channex.
//!
//! * **Coalescing.** Every [`Options::tick`] the dispatcher looks for active connections, not paused, whose hotel
//!   has changes waiting. A kind (availability, or rates and restrictions) is sent once its oldest change has
//!   waited [`Options::coalesce`]: everything recorded by then goes in **one** request per kind, its nights read
//!   afresh (the rooms free to sell, the plans' daily rates) and runs of equal nights sent as ranges. A full sync
//!   (every night of the horizon) is therefore exactly two requests.
//! * **Across processes.** A connection is claimed with a lease in the database (`claimed_until`, as the end of
//!   day's and the webhooks' leases are), so one process at a time sends for it; a claim whose process died runs
//!   out and is taken over.
//! * **Limits.** Channex allows 10 availability and 10 restrictions requests a minute per property; every request
//!   is logged (`channel_requests`), and a kind with [`Options::per_minute`] requests in the last minute waits
//!   (the log is in the database, so the count holds across processes).
//! * **Errors.** After any answer but success, the connection's sends pause for [`Options::error_pause`] (a minute,
//!   as Channex asks). 429, 5xx and no answer (unreachable, timed out) keep the changes for the next try; a 401 or
//!   403 stops the connection (the key was revoked) and keeps them; a 422 refuses the values, which are then
//!   shown, not retried. Warnings inside a 200 are logged with the request.
//! * **Bookings.** Every [`Options::feed_every`] each active connection's booking revision feed is read and
//!   applied ([`super::revisions`]), beside the webhook.
//! * **Nightly full sync.** At the same pace, a connection whose hotel chose an hour for it gets one full sync in
//!   that hour of the hotel's day ([`channels::queue_nightly_syncs`]); no other timer ever sends a full sync.
//! * **Nothing lost.** Change rows are deleted only after the answer that took them, in the transaction that logs
//!   the request; a change recorded while a request is under way is not among those deleted. A process killed
//!   between a write and its send leaves the row, which the next round sends.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use futures::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::client::{Answer, Client, Sent};
use super::mapping::{self, PlanInput};
use super::CHANNEL;
use crate::channels::{self, ChannelChange, ChannelConnection, ChannelRequest, RequestOutcome};
use crate::domain::change::{Change, ChannelChangeKind, Job, Writer};
use crate::domain::secrets::SecretBox;
use crate::store::{self, Db};

/// Tuning of the dispatcher; the defaults are what the service runs with.
#[derive(Debug, Clone)]
pub struct Options {
    /// How often connections with waiting changes are looked for.
    pub tick: Duration,
    /// How long a kind's oldest change waits for others to join it in one request.
    pub coalesce: Duration,
    /// How long a connection's sends pause after an error answer.
    pub error_pause: Duration,
    /// How long a claim on a connection holds before another process may take it over.
    pub lease: Duration,
    /// Longest a request may take.
    pub timeout: Duration,
    /// Most requests of one kind per connection within [`Options::limit_window`] (Channex: 10 a minute).
    pub per_minute: i64,
    /// The window [`Options::per_minute`] counts over (a minute; tests shorten it).
    pub limit_window: Duration,
    /// Most change rows one request answers for (the rest go in the next).
    pub batch: u64,
    /// How often the booking revision feed is read (the safety net beside the webhook).
    pub feed_every: Duration,
    /// Largest body of one request, in bytes: Channex takes messages of up to 10 MB, so a request that would be
    /// larger (a full sync of a property with many plans whose nights all differ) goes as several.
    pub max_body: usize,
    /// How many connections are sent for at once.
    pub parallel: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tick: Duration::from_secs(1),
            coalesce: Duration::from_secs(3),
            error_pause: Duration::from_secs(60),
            lease: Duration::from_secs(120),
            timeout: Duration::from_secs(20),
            per_minute: 10,
            limit_window: Duration::from_secs(60),
            batch: 20_000,
            feed_every: Duration::from_secs(60),
            max_body: 9_000_000,
            parallel: 8,
        }
    }
}

/// A running dispatcher.
pub struct Dispatcher {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Dispatcher {
    /// Starts sending in the background; `sealing` opens the connections' API keys.
    pub fn spawn(db: Db, sealing: SecretBox, options: Options) -> anyhow::Result<Dispatcher> {
        let http = Client::http(options.timeout)?;
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut last_feed: Option<std::time::Instant> = None;
            loop {
                if let Err(err) = round(&db, &sealing, &http, &options).await {
                    tracing::warn!(error = %format!("{err:#}"), "sending to Channex failed; retrying");
                }
                if last_feed.is_none_or(|at| at.elapsed() >= options.feed_every) {
                    last_feed = Some(std::time::Instant::now());
                    if let Err(err) = read_feeds(&db, &sealing, &http).await {
                        tracing::warn!(error = %format!("{err:#}"), "reading Channex's booking feed failed; retrying");
                    }
                    if let Err(err) = channels::queue_nightly_syncs(&db, CHANNEL, Utc::now()).await {
                        tracing::warn!(error = %format!("{err:#}"), "queueing the nightly full syncs failed; retrying");
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(options.tick) => {}
                    _ = stopped.changed() => break,
                }
            }
        });
        Ok(Dispatcher { stop, task })
    }

    /// Stops after the round under way.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Reads every active connection's booking revision feed and applies what it holds.
pub async fn read_feeds(db: &Db, sealing: &SecretBox, http: &reqwest::Client) -> anyhow::Result<()> {
    let connections = store::channels::active(&mut *db.read().await?, CHANNEL).await?;
    for c in connections {
        let Ok(api_key) = sealing.open(&c.api_key_sealed) else { continue };
        let client = Client::new(http.clone(), &c.base_url, &api_key);
        super::revisions::poll(db, &client, &c).await?;
    }
    Ok(())
}

fn writer() -> Writer {
    Writer::Job(Job::ChannelDispatcher)
}

/// One look at every connection with changes waiting: up to [`Options::parallel`] of them at once, so that one
/// slow property does not hold the others' changes back.
pub async fn round(db: &Db, sealing: &SecretBox, http: &reqwest::Client, options: &Options) -> anyhow::Result<()> {
    let due = store::channels::due(&mut *db.read().await?, CHANNEL, Utc::now()).await?;
    let results: Vec<anyhow::Result<()>> = futures::stream::iter(due)
        .map(|connection| async move { claim_and_send(db, sealing, http, options, &connection).await })
        .buffer_unordered(options.parallel.max(1))
        .collect()
        .await;
    results.into_iter().collect()
}

/// Claims a connection for this process, sends what waits for it, and gives the claim back.
async fn claim_and_send(
    db: &Db,
    sealing: &SecretBox,
    http: &reqwest::Client,
    options: &Options,
    connection: &ChannelConnection,
) -> anyhow::Result<()> {
    let at = Utc::now();
    let mut tx = Change::begin_as(db, writer()).await?;
    let claimed = store::channels::claim(tx.conn(), &connection.id, at, at + delta(options.lease)).await?;
    tx.commit().await?;
    if !claimed {
        return Ok(());
    }
    let sent = send_connection(db, sealing, http, options, connection).await;
    let mut tx = Change::begin_as(db, writer()).await?;
    store::channels::release(tx.conn(), &connection.id).await?;
    tx.commit().await?;
    sent
}

fn delta(duration: Duration) -> TimeDelta {
    TimeDelta::from_std(duration).unwrap_or(TimeDelta::MAX)
}

/// A request ready to go: `POST /availability` or `POST /restrictions` with its values.
#[derive(Debug)]
pub enum Request {
    Availability(Vec<mapping::AvailabilityValue>),
    Restrictions(Vec<mapping::RestrictionValue>),
}

impl Request {
    /// How many values it carries.
    pub fn len(&self) -> usize {
        match self {
            Request::Availability(values) => values.len(),
            Request::Restrictions(values) => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The body as sent.
    pub fn body(&self) -> serde_json::Result<Vec<u8>> {
        match self {
            Request::Availability(values) => serde_json::to_vec(&mapping::Values { values }),
            Request::Restrictions(values) => serde_json::to_vec(&mapping::Values { values }),
        }
    }

    /// The request as parts whose bodies are at most `max_body` bytes each, values in order (one part when it
    /// fits; a single value larger than that still goes, alone).
    pub fn split(self, max_body: usize) -> serde_json::Result<Vec<Request>> {
        fn parts<T: serde::Serialize>(values: Vec<T>, max_body: usize) -> serde_json::Result<Vec<Vec<T>>> {
            // `{"values":[` … `]}` is 13 bytes, and there is a comma between values: counting one with every value
            // counts one too many, which the frame's 12 makes up.
            const FRAME: usize = 12;
            let mut out: Vec<Vec<T>> = Vec::new();
            let mut size = FRAME;
            for value in values {
                let len = serde_json::to_vec(&value)?.len() + 1;
                if size + len > max_body && out.last().is_some_and(|part| !part.is_empty()) {
                    out.push(Vec::new());
                    size = FRAME;
                }
                if out.is_empty() {
                    out.push(Vec::new());
                }
                size += len;
                if let Some(part) = out.last_mut() {
                    part.push(value);
                }
            }
            Ok(out)
        }
        Ok(match self {
            Request::Availability(values) => parts(values, max_body)?.into_iter().map(Request::Availability).collect(),
            Request::Restrictions(values) => parts(values, max_body)?.into_iter().map(Request::Restrictions).collect(),
        })
    }
}

async fn send_connection(
    db: &Db,
    sealing: &SecretBox,
    http: &reqwest::Client,
    options: &Options,
    c: &ChannelConnection,
) -> anyhow::Result<()> {
    let Ok(api_key) = sealing.open(&c.api_key_sealed) else {
        let mut tx = Change::begin_as(db, writer()).await?;
        let reason = "the stored API key does not open with this service's key: connect again with the key";
        store::channels::stop(tx.conn(), &c.id, reason, Utc::now()).await?;
        tx.commit().await?;
        return Ok(());
    };
    let client = Client::new(http.clone(), &c.base_url, &api_key);
    'kinds: for kind in ChannelChangeKind::ALL {
        let Some((ids, request)) = prepare(db, options, c, kind).await? else { continue };
        let Some(request) = request else {
            // Nothing to tell (the nights are past, or nothing is mapped): the changes are done.
            let mut tx = Change::begin_as(db, writer()).await?;
            store::channels::delete_changes(tx.conn(), &ids).await?;
            tx.commit().await?;
            continue;
        };
        let parts = request.split(options.max_body)?;
        if parts.is_empty() {
            continue;
        }
        if parts.len() > 1 {
            // All parts within the kind's limit, or none now (the rows keep collecting).
            let window_start = Utc::now() - delta(options.limit_window);
            let mut conn = db.read().await?;
            let spent = store::channels::requests_since(&mut conn, &c.id, kind, window_start).await?;
            if spent + parts.len() as i64 > options.per_minute.max(parts.len() as i64) {
                continue;
            }
        }
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            let sent_at = Utc::now();
            let sent = match part {
                Request::Availability(values) => client.availability(values).await,
                Request::Restrictions(values) => client.restrictions(values).await,
            };
            let outcome = judge(&sent);
            // The changes are settled by the last part. A part refused (422) is logged and shown, and the rest
            // still go (a resend would be refused again); a part that does not go through (429, 5xx, no answer, a
            // revoked key) keeps them all, and the whole request goes again later (ARI writes are idempotent).
            let settles: &[String] = if i == last { &ids } else { &[] };
            record(db, options, c, kind, sent_at, part.len(), &sent, outcome, settles).await?;
            if !matches!(outcome, RequestOutcome::Accepted | RequestOutcome::Refused) {
                // Paused or stopped: nothing more for this connection now.
                break 'kinds;
            }
        }
    }
    Ok(())
}

/// The changes of `kind` to answer for and the request that tells them, when it is time to send: `None` while
/// they wait to be coalesced or the kind's limit is spent.
async fn prepare(
    db: &Db,
    options: &Options,
    c: &ChannelConnection,
    kind: ChannelChangeKind,
) -> anyhow::Result<Option<(Vec<String>, Option<Request>)>> {
    let mut conn = db.read().await?;
    let waiting = store::channels::waiting_changes(&mut conn, &c.hotel_id, kind, options.batch).await?;
    let Some((_, oldest)) = waiting.first() else { return Ok(None) };
    let now = Utc::now();
    if now - *oldest < delta(options.coalesce) {
        return Ok(None);
    }
    let window_start = now - delta(options.limit_window);
    if store::channels::requests_since(&mut conn, &c.id, kind, window_start).await? >= options.per_minute {
        return Ok(None);
    }
    let Some(hotel) = store::hotels::get(&mut conn, &c.organization_id, &c.hotel_id).await? else { return Ok(None) };
    let changes: Vec<ChannelChange> = waiting.into_iter().map(|(change, _)| change).collect();
    let ids = changes.iter().map(|change| change.id.clone()).collect();
    let request = build(&mut conn, c, kind, &changes, hotel.today()).await?;
    Ok(Some((ids, request)))
}

/// The request of `kind` that tells `changes` to Channex, read afresh at the hotel's `today` (`None`: nothing to
/// tell: the nights are past, or nothing is mapped).
pub async fn build(
    conn: &mut store::Conn,
    c: &ChannelConnection,
    kind: ChannelChangeKind,
    changes: &[ChannelChange],
    today: chrono::NaiveDate,
) -> anyhow::Result<Option<Request>> {
    let conn = &mut *conn;
    let nights: BTreeSet<_> = channels::nights_of(changes, today);
    let request = match kind {
        ChannelChangeKind::Availability => {
            let mapped = store::channels::room_type_mappings(conn, &c.id).await?;
            let ours: Vec<String> = mapped.iter().map(|m| m.room_type_id.clone()).collect();
            let mut counts = channels::availability(conn, &ours, &nights).await?;
            // Each room type is told only the nights its own changes (or the hotel's) name.
            for (room_type, per_night) in counts.iter_mut() {
                let own = channels::nights_of_subject(changes, Some(room_type), today);
                per_night.retain(|(night, _)| own.contains(night));
            }
            let pairs: Vec<(String, String)> = mapped.into_iter().map(|m| (m.room_type_id, m.remote_id)).collect();
            let values = mapping::availability_values(&c.property_id, &pairs, &counts);
            (!values.is_empty()).then_some(Request::Availability(values))
        }
        ChannelChangeKind::Rates => {
            let mapped = store::channels::rate_plan_mappings(conn, &c.id).await?;
            let mut plan_ids: Vec<String> = mapped.iter().map(|m| m.rate_plan_id.clone()).collect();
            plan_ids.dedup();
            let mut plans = channels::rates(conn, &c.organization_id, &c.hotel_id, &plan_ids, &nights).await?;
            // Each plan is told only the nights its own changes (or the hotel's) name.
            for plan in plans.iter_mut() {
                let own = channels::nights_of_subject(changes, Some(&plan.plan.id), today);
                plan.nights.retain(|(night, _)| own.contains(night));
            }
            let inputs: Vec<PlanInput<'_>> = mapped
                .iter()
                .filter_map(|m| {
                    let plan = plans.iter().find(|p| p.plan.id == m.rate_plan_id)?;
                    Some(PlanInput {
                        remote_id: &m.remote_id,
                        active: plan.plan.active,
                        currency: &plan.plan.currency,
                        nights: &plan.nights,
                    })
                })
                .collect();
            let values = mapping::restriction_values(&c.property_id, &inputs);
            (!values.is_empty()).then_some(Request::Restrictions(values))
        }
    };
    Ok(request)
}

/// What an answer means for the changes it carried.
pub fn judge(sent: &Sent) -> RequestOutcome {
    match sent {
        Sent::NoAnswer(_) => RequestOutcome::Retry,
        Sent::Answered(Answer { status, .. }) => match status {
            200..=299 => RequestOutcome::Accepted,
            401 | 403 => RequestOutcome::Unauthorized,
            422 => RequestOutcome::Refused,
            // 429, 5xx, and anything unexpected (a 404 for a property id mistyped): kept, tried again after the pause.
            _ => RequestOutcome::Retry,
        },
    }
}

/// Logs the request and settles its changes, in one transaction.
#[allow(clippy::too_many_arguments)]
async fn record(
    db: &Db,
    options: &Options,
    c: &ChannelConnection,
    kind: ChannelChangeKind,
    sent_at: chrono::DateTime<Utc>,
    count: usize,
    sent: &Sent,
    outcome: RequestOutcome,
    ids: &[String],
) -> anyhow::Result<()> {
    let (status, task_id, detail, warnings) = match sent {
        Sent::NoAnswer(why) => (None, None, why.clone(), "[]".to_string()),
        Sent::Answered(answer) => {
            let warnings = match (&answer.error, outcome) {
                // A 422 refuses the values: its details are what the page shows beside them.
                (Some(error), RequestOutcome::Refused) => {
                    serde_json::to_string(&[error.details.clone().unwrap_or(serde_json::Value::Null)])?
                }
                _ => serde_json::to_string(&answer.warnings)?,
            };
            let task_id = (!answer.task_ids.is_empty()).then(|| answer.task_ids.join(","));
            (Some(i64::from(answer.status)), task_id, answer.words(), warnings)
        }
    };
    tracing::info!(
        connection = %c.id, kind = kind.as_str(), status = ?status, outcome = outcome.as_str(), task_id = ?task_id,
        values = count, "sent to Channex"
    );
    let request = ChannelRequest {
        id: store::new_id(),
        connection_id: c.id.clone(),
        kind,
        sent_at,
        status,
        outcome,
        task_id,
        detail: detail.clone(),
        warnings,
        value_count: count as i64,
    };
    let now = Utc::now();
    let mut tx = Change::begin_as(db, writer()).await?;
    store::channels::record_request(tx.conn(), &request).await?;
    match outcome {
        RequestOutcome::Accepted => store::channels::delete_changes(tx.conn(), ids).await?,
        RequestOutcome::Refused => {
            store::channels::delete_changes(tx.conn(), ids).await?;
            store::channels::pause(tx.conn(), &c.id, now + delta(options.error_pause)).await?;
        }
        RequestOutcome::Retry => store::channels::pause(tx.conn(), &c.id, now + delta(options.error_pause)).await?,
        RequestOutcome::Unauthorized => {
            let reason = format!("Channex refused the API key ({detail}): connect again with a valid key");
            store::channels::stop(tx.conn(), &c.id, &reason, now).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::mapping::{AvailabilityValue, Dates};
    use super::Request;

    fn value(n: i64) -> AvailabilityValue {
        AvailabilityValue {
            property_id: "p".into(),
            room_type_id: "t".into(),
            dates: Dates::One { date: format!("2026-12-{:02}", n % 28 + 1) },
            availability: n,
        }
    }

    #[test]
    fn a_request_is_split_into_parts_within_the_largest_body_in_order() {
        let values: Vec<AvailabilityValue> = (0..100).map(value).collect();
        let whole = Request::Availability(values.clone()).body().unwrap().len();
        assert_eq!(Request::Availability(values.clone()).split(whole).unwrap().len(), 1, "it fits: one part");
        let parts = Request::Availability(values.clone()).split(whole / 3).unwrap();
        assert!(parts.len() >= 3, "{}", parts.len());
        let mut again = Vec::new();
        for part in parts {
            assert!(part.body().unwrap().len() <= whole / 3, "each part within the largest body");
            let Request::Availability(values) = part else { panic!("the same kind") };
            again.extend(values);
        }
        assert_eq!(again, values, "every value once, in order");
        let alone = Request::Availability(vec![value(1), value(2)]).split(10).unwrap();
        assert_eq!(alone.len(), 2, "a value larger than the limit still goes, alone");
    }
}
