//! Webhook subscriptions and their delivery log.

use super::sql::{Conditions, StoredAs};
use super::{bool_int, format_ts, Engine, RowExt, StoreResult};
use crate::domain::events::EventKind;
use crate::domain::webhooks::{Target, WebhookDelivery, WebhookSubscription};
use crate::store::{query, query_with, Conn, Row};

const COLUMNS: &str =
    "id, organization_id, hotel_id, url, events, active, consecutive_failures, created_at, updated_at";

fn events_to_text(events: &[EventKind]) -> String {
    events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(" ")
}

fn events_from_text(text: &str) -> Vec<EventKind> {
    text.split_whitespace().filter_map(EventKind::parse).collect()
}

fn subscription(row: &Row) -> StoreResult<WebhookSubscription> {
    Ok(WebhookSubscription {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        url: row.try_get("url")?,
        events: events_from_text(&row.try_get::<String, _>("events")?),
        active: row.get_bool("active")?,
        consecutive_failures: row.try_get("consecutive_failures")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(
    conn: &mut Conn,
    organization_id: &str,
    s: &WebhookSubscription,
    secret_sealed: &str,
) -> StoreResult<()> {
    query(
        "INSERT INTO webhook_subscriptions (id, organization_id, hotel_id, url, events, active, secret_sealed, \
         consecutive_failures, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&s.id)
    .bind(organization_id)
    .bind(&s.hotel_id)
    .bind(&s.url)
    .bind(events_to_text(&s.events))
    .bind(bool_int(s.active))
    .bind(secret_sealed)
    .bind(s.consecutive_failures)
    .bind(format_ts(s.created_at))
    .bind(format_ts(s.updated_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<WebhookSubscription>> {
    query(&format!("SELECT {COLUMNS} FROM webhook_subscriptions WHERE organization_id = $1 ORDER BY id"))
        .bind(organization_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(subscription)
        .collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<WebhookSubscription>> {
    query(&format!("SELECT {COLUMNS} FROM webhook_subscriptions WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(subscription)
        .transpose()
}

pub async fn update(conn: &mut Conn, organization_id: &str, s: &WebhookSubscription) -> StoreResult<()> {
    query(
        "UPDATE webhook_subscriptions SET url = $1, events = $2, active = $3, consecutive_failures = $4, \
         updated_at = $5 WHERE organization_id = $6 AND id = $7",
    )
    .bind(&s.url)
    .bind(events_to_text(&s.events))
    .bind(bool_int(s.active))
    .bind(s.consecutive_failures)
    .bind(format_ts(s.updated_at))
    .bind(organization_id)
    .bind(&s.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM webhook_subscriptions WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

const TARGET_COLUMNS: &str =
    "id, organization_id, hotel_id, url, events, secret_sealed, consecutive_failures, created_at";

fn target(row: &Row) -> StoreResult<Target> {
    Ok(Target {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        hotel_id: row.try_get("hotel_id")?,
        url: row.try_get("url")?,
        events: events_from_text(&row.try_get::<String, _>("events")?),
        secret_sealed: row.try_get("secret_sealed")?,
        consecutive_failures: row.try_get("consecutive_failures")?,
        created_at: row.get_ts("created_at")?,
    })
}

/// The active subscriptions of an organization (which of them want an event is [`Target::wants`]).
pub async fn active_targets(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Target>> {
    query(&format!("SELECT {TARGET_COLUMNS} FROM webhook_subscriptions WHERE organization_id = $1 AND active = TRUE"))
        .bind(organization_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(target)
        .collect()
}

/// The active subscriptions among `ids`, or every active subscription when `ids` is `None`.
pub async fn active_targets_among(conn: &mut Conn, ids: Option<&[String]>) -> StoreResult<Vec<Target>> {
    let Some(ids) = ids else {
        return query(&format!("SELECT {TARGET_COLUMNS} FROM webhook_subscriptions WHERE active = TRUE"))
            .fetch_all(conn)
            .await?
            .iter()
            .map(target)
            .collect();
    };
    let mut targets = Vec::new();
    for chunk in ids.chunks(500) {
        let mut query = Conditions::new(Engine::of(conn));
        query.push_in("id", chunk);
        let sql =
            format!("SELECT {TARGET_COLUMNS} FROM webhook_subscriptions{} AND active = TRUE", query.where_clause());
        for row in query_with(&sql, query).fetch_all(&mut *conn).await? {
            targets.push(target(&row)?);
        }
    }
    Ok(targets)
}

/// A subscription's failure count after one more failure.
pub struct FailureCount {
    pub consecutive_failures: i64,
    pub active: bool,
}

/// Counts a failed delivery (whether that turns the subscription off is the domain's rule,
/// [`crate::domain::webhooks::failures_turn_off`]). `None` if the subscription was deleted meanwhile.
pub async fn count_failure(conn: &mut Conn, id: &str, at: &str) -> StoreResult<Option<FailureCount>> {
    let row = query(
        "UPDATE webhook_subscriptions SET consecutive_failures = consecutive_failures + 1, updated_at = $1 \
         WHERE id = $2 RETURNING consecutive_failures, active",
    )
    .bind(at)
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(FailureCount { consecutive_failures: row.try_get("consecutive_failures")?, active: row.get_bool("active")? })
    })
    .transpose()
}

/// Turns a subscription off and drops what it had queued.
pub async fn turn_off(conn: &mut Conn, id: &str) -> StoreResult<()> {
    query("UPDATE webhook_subscriptions SET active = FALSE WHERE id = $1").bind(id).execute(&mut *conn).await?;
    drop_queue(conn, id).await
}

/// Drops the events still queued for a subscription (and the events no other subscription still waits for).
///
/// Queue rows first, then events, as the dispatcher's recorder takes them (`outbox::finish_queued`, then
/// `outbox::remove_finished`): deleting an event first cascades to its queue rows, and two writers taking an event
/// and its queue row in opposite orders can deadlock, which PostgreSQL ends by giving one of them up.
pub async fn drop_queue(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let dropped = query("DELETE FROM webhook_queue WHERE subscription_id = $1 RETURNING event_id")
        .bind(id)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| row.try_get("event_id"))
        .collect::<StoreResult<Vec<String>>>()?;
    super::outbox::remove_finished(conn, &dropped).await
}

/// A success clears the failure count.
pub async fn record_success(conn: &mut Conn, id: &str) -> StoreResult<()> {
    query("UPDATE webhook_subscriptions SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures > 0")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A delivery attempt to log.
pub struct NewDelivery {
    pub subscription_id: String,
    pub delivery: WebhookDelivery,
}

/// Logs delivery attempts (of subscriptions that still exist), many rows per statement: the dispatcher logs
/// thousands a second, and on PostgreSQL each statement is a round trip.
pub async fn insert_deliveries(conn: &mut Conn, deliveries: &[&NewDelivery]) -> StoreResult<()> {
    // Nine parameters a row keeps a chunk well under either engine's limit on parameters per statement.
    for chunk in deliveries.chunks(400) {
        let mut values = Conditions::new(Engine::of(conn));
        let rows: Vec<String> = chunk
            .iter()
            .map(|d| {
                let row = [
                    values.bind_as(d.delivery.id.clone(), StoredAs::Id),
                    values.bind_as(d.subscription_id.clone(), StoredAs::Id),
                    values.bind_as(d.delivery.event_id.clone(), StoredAs::Id),
                    values.bind(d.delivery.event.as_str()),
                    values.bind_as(format_ts(d.delivery.attempted_at), StoredAs::Instant),
                    values.bind_as(bool_int(d.delivery.success), StoredAs::Flag),
                    values.bind_as(d.delivery.status_code, StoredAs::Integer),
                    values.bind(d.delivery.error.clone()),
                    values.bind_as(d.delivery.duration_ms, StoredAs::Integer),
                ];
                format!("({})", row.join(", "))
            })
            .collect();
        // Both engines name the columns of a VALUES list column1, column2, …
        let sql = format!(
            "INSERT INTO webhook_deliveries (id, subscription_id, event_id, event, attempted_at, success, status_code, \
             error, duration_ms) SELECT column1, column2, column3, column4, column5, column6, column7, column8, column9 \
             FROM (VALUES {}) AS attempts WHERE EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = column2)",
            rows.join(", ")
        );
        query_with(&sql, values).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Keeps the newest `keep` attempts of a subscription (ids are time-ordered UUIDv7): deletes those older than the
/// oldest attempt kept (none while there are `keep` or fewer).
pub async fn prune_deliveries(conn: &mut Conn, subscription_id: &str, keep: i64) -> StoreResult<()> {
    query(
        "DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND id < (SELECT id FROM webhook_deliveries \
         WHERE subscription_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
    )
    .bind(subscription_id)
    .bind(keep.max(1) - 1)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn deliveries(conn: &mut Conn, subscription_id: &str, limit: i64) -> StoreResult<Vec<WebhookDelivery>> {
    let rows = query(
        "SELECT id, event_id, event, attempted_at, success, status_code, error, duration_ms FROM webhook_deliveries \
         WHERE subscription_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(subscription_id)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            let event: String = row.try_get("event")?;
            Ok(WebhookDelivery {
                id: row.try_get("id")?,
                event_id: row.try_get("event_id")?,
                event: EventKind::parse(&event)
                    .ok_or_else(|| super::Error::undecodable(format!("unknown event kind {event}")))?,
                attempted_at: row.get_ts("attempted_at")?,
                success: row.get_bool("success")?,
                status_code: row.try_get("status_code")?,
                error: row.try_get("error")?,
                duration_ms: row.try_get("duration_ms")?,
            })
        })
        .collect()
}
