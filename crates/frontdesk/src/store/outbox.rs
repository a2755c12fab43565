//! The webhook outbox: events recorded atomically with the writes that caused them.

use super::{format_ts, StoreResult};
use crate::store::{query, query_with, Conn, Row};

/// An event about to be recorded. `payload` is the JSON body's `data`, already serialized.
pub struct NewEvent<'a> {
    pub organization_id: &'a str,
    /// The hotel the record belongs to; `None` reaches every subscription of the organization.
    pub hotel_id: Option<&'a str>,
    pub kind: &'a str,
    pub payload: String,
}

pub async fn insert(conn: &mut Conn, event: &NewEvent<'_>) -> StoreResult<()> {
    query(
        "INSERT INTO outbox_events (id, organization_id, hotel_id, kind, payload, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(super::new_id())
    .bind(event.organization_id)
    .bind(event.hotel_id)
    .bind(event.kind)
    .bind(&event.payload)
    .bind(format_ts(chrono::Utc::now()))
    .execute(conn)
    .await?;
    Ok(())
}

/// A recorded event, as the dispatcher reads it.
#[derive(Debug, Clone)]
pub struct PendingEvent {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: Option<String>,
    pub kind: String,
    pub payload: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
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
    let lock = super::Engine::of(conn).lock_rows_skip_locked();
    let sql = format!(
        "UPDATE outbox_events SET handed_out = TRUE WHERE id IN (SELECT id FROM outbox_events \
         WHERE handed_out = FALSE ORDER BY id LIMIT $1{lock}) \
         RETURNING id, organization_id, hotel_id, kind, payload, created_at"
    );
    let rows = query(&sql).bind(limit).fetch_all(conn).await?;
    let mut events = rows.iter().map(pending).collect::<StoreResult<Vec<_>>>()?;
    events.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(events)
}

/// Queues events for subscriptions: (subscription id, event id) pairs, claimed until `claimed_until` by the caller
/// (who sends them now) or unclaimed.
pub async fn enqueue(conn: &mut Conn, rows: &[(&str, &str)], claimed_until: Option<&str>) -> StoreResult<()> {
    for chunk in rows.chunks(300) {
        let mut values = super::sql::Conditions::new(super::Engine::of(conn));
        let tuples: Vec<String> = chunk
            .iter()
            .map(|(subscription, event)| {
                let s = values.bind(subscription.to_string());
                let e = values.bind(event.to_string());
                let c = values.bind(claimed_until.map(str::to_string));
                format!("({s}, {e}, {c})")
            })
            .collect();
        let sql = format!(
            "INSERT INTO webhook_queue (subscription_id, event_id, claimed_until) VALUES {}",
            tuples.join(", ")
        );
        query_with(&sql, values).execute(&mut *conn).await?;
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
    let engine = super::Engine::of(conn);
    let lock = engine.lock_rows_skip_locked();
    let sql = format!(
        "UPDATE webhook_queue SET claimed_until = $1 WHERE subscription_id = $2 AND event_id IN \
         (SELECT event_id FROM webhook_queue WHERE subscription_id = $2 \
         AND (claimed_until IS NULL OR claimed_until < $3) \
         AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = $2 AND s.active = TRUE) \
         ORDER BY event_id LIMIT $4{lock}) RETURNING event_id"
    );
    let rows = query(&sql).bind(until).bind(subscription_id).bind(now).bind(limit).fetch_all(&mut *conn).await?;
    let ids = rows.iter().map(|row| row.try_get("event_id")).collect::<Result<Vec<String>, _>>()?;
    let mut events = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(engine);
        query.push_in("id", chunk);
        let sql = format!(
            "SELECT id, organization_id, hotel_id, kind, payload, created_at FROM outbox_events{}",
            query.where_clause()
        );
        for row in query_with(&sql, query).fetch_all(&mut *conn).await? {
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
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        let set = query.bind(until.map(str::to_string));
        query.push("subscription_id = ?", subscription_id.to_string());
        query.push_in("event_id", chunk);
        let sql = format!("UPDATE webhook_queue SET claimed_until = {set}{}", query.where_clause());
        query_with(&sql, query).execute(&mut *conn).await?;
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
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        query.push("subscription_id = ?", subscription_id.to_string());
        query.push_in("event_id", chunk);
        let sql = format!("DELETE FROM webhook_queue{}", query.where_clause());
        query_with(&sql, query).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Removes those of `ids` that were handed out and that no subscription waits for any more.
pub async fn remove_finished(conn: &mut Conn, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        query.push_in("id", chunk);
        let sql = format!(
            "DELETE FROM outbox_events{} AND handed_out = TRUE \
             AND NOT EXISTS (SELECT 1 FROM webhook_queue q WHERE q.event_id = outbox_events.id)",
            query.where_clause()
        );
        query_with(&sql, query).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Tidies what concurrent processes can leave behind: rows queued for subscriptions that were turned off, and
/// handed-out events no subscription waits for (when two processes finish an event's last two rows at the same
/// time, neither sees the other's deletion).
pub async fn sweep(conn: &mut Conn) -> StoreResult<()> {
    query("DELETE FROM webhook_queue WHERE subscription_id IN (SELECT id FROM webhook_subscriptions WHERE active = FALSE)")
        .execute(&mut *conn)
        .await?;
    query(
        "DELETE FROM outbox_events WHERE handed_out = TRUE \
         AND NOT EXISTS (SELECT 1 FROM webhook_queue q WHERE q.event_id = outbox_events.id)",
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Removes events outright (nobody wants them, or they cannot be read).
pub async fn remove(conn: &mut Conn, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        query.push_in("id", chunk);
        let sql = format!("DELETE FROM outbox_events{}", query.where_clause());
        query_with(&sql, query).execute(&mut *conn).await?;
    }
    Ok(())
}
