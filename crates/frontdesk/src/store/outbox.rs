//! The webhook outbox: events recorded atomically with the writes that caused them.

use super::{format_ts, StoreResult};
use crate::store::schema::{OutboxEvents as E, WebhookQueue as Q, WebhookSubscriptions};
use crate::store::statement::{in_taken, rows, statement, Expr, ExprTrait, Order, RowLocks, Sql};
use crate::store::{Conn, Row};

/// An event about to be recorded. `payload` is the JSON body's `data`, already serialized.
pub struct NewEvent<'a> {
    pub organization_id: &'a str,
    /// The hotel the record belongs to; `None` reaches every subscription of the organization.
    pub hotel_id: Option<&'a str>,
    pub kind: &'a str,
    pub payload: String,
}

/// The INSERT of `events` (at least one), one row each.
pub(super) fn insert_statement(events: &[PendingEvent]) -> sea_query::InsertStatement {
    let mut insert = Sql::insert();
    insert.into_table(E::Table).columns([E::Id, E::OrganizationId, E::HotelId, E::Kind, E::Payload, E::CreatedAt]);
    for event in events {
        // Cannot panic: one value for each of the six columns named above.
        insert.values_panic([
            Expr::val(event.id.as_str()),
            Expr::val(event.organization_id.as_str()),
            Expr::val(event.hotel_id.as_deref()),
            Expr::val(event.kind.as_str()),
            Expr::val(event.payload.as_str()),
            Expr::val(format_ts(event.created_at)),
        ]);
    }
    insert
}

/// Inserts one event at once (tests and tools; a change records its events with its audit entries on commit).
pub async fn insert(conn: &mut Conn, event: NewEvent<'_>) -> StoreResult<()> {
    statement(conn.engine(), &insert_statement(&[PendingEvent::new(event)])).execute(conn).await?;
    Ok(())
}

/// The columns [`pending`] reads.
const PENDING_COLUMNS: [E; 6] = [E::Id, E::OrganizationId, E::HotelId, E::Kind, E::Payload, E::CreatedAt];

/// An event of the outbox, pending until delivered: as a change records it (its id and time taken when the record
/// is written, so the outbox's order is the order of the writes; the row inserted when the change commits,
/// [`super::WriteTx::write_trail`]), and as the dispatcher reads it.
#[derive(Debug, Clone)]
pub struct PendingEvent {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: Option<String>,
    pub kind: String,
    pub payload: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl PendingEvent {
    pub fn new(event: NewEvent<'_>) -> PendingEvent {
        PendingEvent {
            id: super::new_id(),
            organization_id: event.organization_id.to_string(),
            hotel_id: event.hotel_id.map(str::to_owned),
            kind: event.kind.to_string(),
            payload: event.payload,
            created_at: chrono::Utc::now(),
        }
    }
}

fn pending(row: &Row) -> StoreResult<PendingEvent> {
    use super::RowExt;
    Ok(PendingEvent {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        hotel_id: row.try_get("hotel_id")?,
        kind: row.try_get("kind")?,
        payload: row.try_get("payload")?,
        created_at: row.get_ts("created_at")?,
    })
}

/// Takes up to `limit` events not handed out yet, oldest first, and marks them handed out: the caller writes their
/// queue rows ([`enqueue`]) in the same transaction. On PostgreSQL rows another process is taking right now are
/// skipped, so concurrent dispatchers never hand out the same event twice.
pub async fn take_new(conn: &mut Conn, limit: i64) -> StoreResult<Vec<PendingEvent>> {
    let limit = rows(limit);
    let next = Sql::select()
        .column(E::Id)
        .from(E::Table)
        .and_where(Expr::col(E::HandedOut).eq(false))
        .order_by(E::Id, Order::Asc)
        .limit(limit)
        .lock_skipping_held()
        .take();
    let update = Sql::update()
        .table(E::Table)
        .value(E::HandedOut, true)
        .and_where(in_taken(conn.engine(), E::Id, next))
        .returning(Sql::returning().columns(PENDING_COLUMNS))
        .take();
    let rows = statement(conn.engine(), &update).fetch_all(conn).await?;
    let mut events = rows.iter().map(pending).collect::<StoreResult<Vec<_>>>()?;
    events.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(events)
}

/// Queues events for subscriptions: (subscription id, event id) pairs, claimed until `claimed_until` by the caller
/// (who sends them now) or unclaimed.
pub async fn enqueue(conn: &mut Conn, rows: &[(&str, &str)], claimed_until: Option<&str>) -> StoreResult<()> {
    for chunk in rows.chunks(300) {
        let mut insert = Sql::insert();
        insert.into_table(Q::Table).columns([Q::SubscriptionId, Q::EventId, Q::ClaimedUntil]);
        for (subscription, event) in chunk {
            // Cannot panic: three columns, three values.
            insert.values_panic([Expr::val(*subscription), Expr::val(*event), Expr::val(claimed_until)]);
        }
        statement(conn.engine(), &insert).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Claims up to `limit` of the events queued for a subscription that nobody holds (never claimed, released, or
/// whose claim ran out because its process died) until `until`, oldest first, if the subscription is still active.
/// On PostgreSQL rows another process is claiming right now are skipped, so concurrent dispatchers never claim the
/// same (subscription, event).
pub async fn claim_queued(
    conn: &mut Conn,
    subscription_id: &str,
    now: &str,
    until: &str,
    limit: i64,
) -> StoreResult<Vec<PendingEvent>> {
    let engine = conn.engine();
    let limit = rows(limit);
    let active = Sql::select()
        .expr(Expr::cust("1"))
        .from(WebhookSubscriptions::Table)
        .and_where(Expr::col((WebhookSubscriptions::Table, WebhookSubscriptions::Id)).eq(subscription_id))
        .and_where(Expr::col((WebhookSubscriptions::Table, WebhookSubscriptions::Active)).eq(true))
        .take();
    let claimable = Sql::select()
        .column(Q::EventId)
        .from(Q::Table)
        .and_where(Expr::col(Q::SubscriptionId).eq(subscription_id))
        .and_where(Expr::col(Q::ClaimedUntil).is_null().or(Expr::col(Q::ClaimedUntil).lt(now)))
        .and_where(Expr::exists(active))
        .order_by(Q::EventId, Order::Asc)
        .limit(limit)
        .lock_skipping_held()
        .take();
    let update = Sql::update()
        .table(Q::Table)
        .value(Q::ClaimedUntil, until)
        .and_where(Expr::col(Q::SubscriptionId).eq(subscription_id))
        .and_where(in_taken(engine, Q::EventId, claimable))
        .returning_col(Q::EventId)
        .take();
    let rows = statement(engine, &update).fetch_all(&mut *conn).await?;
    let ids = rows.iter().map(|row| row.try_get("event_id")).collect::<Result<Vec<String>, _>>()?;
    let mut events = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let select = Sql::select()
            .columns(PENDING_COLUMNS)
            .from(E::Table)
            .and_where(Expr::col(E::Id).is_in(chunk.iter().map(String::as_str)))
            .take();
        for row in statement(engine, &select).fetch_all(&mut *conn).await? {
            events.push(pending(&row)?);
        }
    }
    events.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(events)
}

/// `UPDATE webhook_queue SET {set} WHERE subscription_id = … AND event_id IN (…)`, 500 events at a time.
async fn update_queued(
    conn: &mut Conn,
    subscription_id: &str,
    event_ids: &[String],
    until: Option<&str>,
) -> StoreResult<()> {
    for chunk in event_ids.chunks(500) {
        let update = Sql::update()
            .table(Q::Table)
            .value(Q::ClaimedUntil, until)
            .and_where(Expr::col(Q::SubscriptionId).eq(subscription_id))
            .and_where(Expr::col(Q::EventId).is_in(chunk.iter().map(String::as_str)))
            .take();
        statement(conn.engine(), &update).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Extends the claim on a subscription's events still being delivered.
pub async fn extend_queued(
    conn: &mut Conn,
    subscription_id: &str,
    event_ids: &[String],
    until: &str,
) -> StoreResult<()> {
    update_queued(conn, subscription_id, event_ids, Some(until)).await
}

/// Gives a subscription's events back unsent, for any dispatcher to claim at once.
pub async fn release_queued(conn: &mut Conn, subscription_id: &str, event_ids: &[String]) -> StoreResult<()> {
    update_queued(conn, subscription_id, event_ids, None).await
}

/// A subscription is done with these events (sent, or dropped).
pub async fn finish_queued(conn: &mut Conn, subscription_id: &str, event_ids: &[String]) -> StoreResult<()> {
    for chunk in event_ids.chunks(500) {
        let delete = Sql::delete()
            .from_table(Q::Table)
            .and_where(Expr::col(Q::SubscriptionId).eq(subscription_id))
            .and_where(Expr::col(Q::EventId).is_in(chunk.iter().map(String::as_str)))
            .take();
        statement(conn.engine(), &delete).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Removes those of `ids` that were handed out and that no subscription waits for any more.
pub async fn remove_finished(conn: &mut Conn, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let delete = Sql::delete()
            .from_table(E::Table)
            .and_where(Expr::col(E::Id).is_in(chunk.iter().map(String::as_str)))
            .and_where(Expr::col(E::HandedOut).eq(true))
            .and_where(nothing_queued())
            .take();
        statement(conn.engine(), &delete).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Takes back the queue rows just written for `events` whose subscription, one of `subscriptions`, is off: one
/// turned off after the caller read it active, whose turn-off committed while the caller waited for its foreign
/// key's lock on it (see [`super::webhooks::drop_queue`]). Runs in the caller's transaction after its queue rows are
/// written, so that it reads what has committed since; answers the (subscription, event) pairs taken back. Events
/// nobody waits for any more are removed.
pub async fn unqueue_turned_off(
    conn: &mut Conn,
    subscriptions: &[&str],
    events: &[&str],
) -> StoreResult<Vec<(String, String)>> {
    let mut turned_off: Vec<String> = Vec::new();
    for chunk in subscriptions.chunks(500) {
        let select = Sql::select()
            .column(WebhookSubscriptions::Id)
            .from(WebhookSubscriptions::Table)
            .and_where(Expr::col(WebhookSubscriptions::Id).is_in(chunk.iter().copied()))
            .and_where(Expr::col(WebhookSubscriptions::Active).eq(false))
            .take();
        for row in statement(conn.engine(), &select).fetch_all(&mut *conn).await? {
            turned_off.push(row.try_get("id")?);
        }
    }
    let mut taken_back: Vec<(String, String)> = Vec::new();
    for subscription in &turned_off {
        for chunk in events.chunks(500) {
            let delete = Sql::delete()
                .from_table(Q::Table)
                .and_where(Expr::col(Q::SubscriptionId).eq(subscription.as_str()))
                .and_where(Expr::col(Q::EventId).is_in(chunk.iter().copied()))
                .returning_col(Q::EventId)
                .take();
            for row in statement(conn.engine(), &delete).fetch_all(&mut *conn).await? {
                taken_back.push((subscription.clone(), row.try_get("event_id")?));
            }
        }
    }
    let events: Vec<String> = taken_back.iter().map(|(_, event)| event.clone()).collect();
    remove_finished(conn, &events).await?;
    Ok(taken_back)
}

/// Tidies what concurrent processes can leave behind: handed-out events no subscription waits for (when two
/// processes finish an event's last two rows at the same time, neither sees the other's deletion); and rows queued
/// for subscriptions that are off, which no release since the turn-off took its queue with it leaves (a turn-off and a hand-out see each
/// other's rows, [`super::webhooks::drop_queue`]) but a database written by an earlier one may hold.
pub async fn sweep(conn: &mut Conn) -> StoreResult<()> {
    let turned_off = Sql::select()
        .column(WebhookSubscriptions::Id)
        .from(WebhookSubscriptions::Table)
        .and_where(Expr::col(WebhookSubscriptions::Active).eq(false))
        .take();
    let delete =
        Sql::delete().from_table(Q::Table).and_where(Expr::col(Q::SubscriptionId).in_subquery(turned_off)).take();
    statement(conn.engine(), &delete).execute(&mut *conn).await?;
    let delete = Sql::delete()
        .from_table(E::Table)
        .and_where(Expr::col(E::HandedOut).eq(true))
        .and_where(nothing_queued())
        .take();
    statement(conn.engine(), &delete).execute(&mut *conn).await?;
    Ok(())
}

/// No subscription waits for the `outbox_events` row at hand any more: it has no queue row.
fn nothing_queued() -> Expr {
    Expr::not_exists(
        Sql::select()
            .expr(Expr::cust("1"))
            .from(Q::Table)
            .and_where(Expr::col((Q::Table, Q::EventId)).equals((E::Table, E::Id)))
            .take(),
    )
}

/// Removes events outright (nobody wants them, or they cannot be read).
pub async fn remove(conn: &mut Conn, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let delete = Sql::delete()
            .from_table(E::Table)
            .and_where(Expr::col(E::Id).is_in(chunk.iter().map(String::as_str)))
            .take();
        statement(conn.engine(), &delete).execute(&mut *conn).await?;
    }
    Ok(())
}
