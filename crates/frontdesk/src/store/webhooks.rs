//! Webhook subscriptions and their delivery log.

use chrono::{DateTime, Utc};

use super::sql::{Conditions, StoredAs};
use super::{bool_int, format_ts, Engine, RowExt, StoreResult};
use crate::model::events::EventKind;
use crate::model::webhooks::{WebhookDelivery, WebhookSubscription};
use crate::store::schema::{WebhookDeliveries as D, WebhookQueue, WebhookSubscriptions as S};
use crate::store::statement::{
    insert_row, one_of_organization, rows, statement, Expr, ExprTrait, Order, RowLocks, SelectStatement, Sql,
};
use crate::store::{query_with, Conn, Row};

/// An active subscription as the dispatcher needs it.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: String,
    pub url: String,
    /// The event kinds wanted; empty: every kind.
    pub events: Vec<EventKind>,
    pub secret_sealed: String,
    pub consecutive_failures: i64,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: [S; 9] = [
    S::Id,
    S::OrganizationId,
    S::HotelId,
    S::Url,
    S::Events,
    S::Active,
    S::ConsecutiveFailures,
    S::CreatedAt,
    S::UpdatedAt,
];

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
    let insert = insert_row(
        S::Table,
        [
            (S::Id, Expr::val(&s.id)),
            (S::OrganizationId, Expr::val(organization_id)),
            (S::HotelId, Expr::val(&s.hotel_id)),
            (S::Url, Expr::val(&s.url)),
            (S::Events, Expr::val(events_to_text(&s.events))),
            (S::Active, Expr::val(s.active)),
            (S::SecretSealed, Expr::val(secret_sealed)),
            (S::ConsecutiveFailures, Expr::val(s.consecutive_failures)),
            (S::CreatedAt, Expr::val(format_ts(s.created_at))),
            (S::UpdatedAt, Expr::val(format_ts(s.updated_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<WebhookSubscription>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(S::Table)
        .and_where(Expr::col(S::OrganizationId).eq(organization_id))
        .order_by(S::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(subscription).collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<WebhookSubscription>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(S::Table)
        .and_where(one_of_organization(S::Id, id, S::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(subscription).transpose()
}

pub async fn update(conn: &mut Conn, organization_id: &str, s: &WebhookSubscription) -> StoreResult<()> {
    let update = Sql::update()
        .table(S::Table)
        .values([
            (S::Url, Expr::val(&s.url)),
            (S::Events, Expr::val(events_to_text(&s.events))),
            (S::Active, Expr::val(s.active)),
            (S::ConsecutiveFailures, Expr::val(s.consecutive_failures)),
            (S::UpdatedAt, Expr::val(format_ts(s.updated_at))),
        ])
        .and_where(one_of_organization(S::Id, &s.id, S::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Every subscription's id and sealed secret, of every organization (moving them to another sealing key).
pub async fn sealed_secrets(conn: &mut Conn) -> StoreResult<Vec<(String, String)>> {
    let select = Sql::select().columns([S::Id, S::SecretSealed]).from(S::Table).order_by(S::Id, Order::Asc).take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("id")?, row.try_get("secret_sealed")?)))
        .collect()
}

pub async fn set_sealed_secret(conn: &mut Conn, id: &str, sealed: &str) -> StoreResult<()> {
    let update = Sql::update().table(S::Table).value(S::SecretSealed, sealed).and_where(Expr::col(S::Id).eq(id)).take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(S::Table)
        .and_where(one_of_organization(S::Id, id, S::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

const TARGET_COLUMNS: [S; 8] =
    [S::Id, S::OrganizationId, S::HotelId, S::Url, S::Events, S::SecretSealed, S::ConsecutiveFailures, S::CreatedAt];

/// The active subscriptions' [`TARGET_COLUMNS`], to narrow down.
fn active_targets_select() -> SelectStatement {
    Sql::select().columns(TARGET_COLUMNS).from(S::Table).and_where(Expr::col(S::Active).eq(true)).take()
}

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
///
/// Not locked: a subscription turned off between this read and the caller's commit is handled by the turn-off
/// waiting for the caller's queue rows ([`drop_queue`]) or by the caller finding it off after queuing
/// ([`super::outbox::unqueue_turned_off`]). Locking the subscriptions `FOR SHARE` here instead made webhook
/// delivery 2.6x slower on PostgreSQL (`benches/webhooks.rs`: a write's p50 with three subscriptions 29.6 ms
/// against 11.4 ms).
pub async fn active_targets(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Target>> {
    let select = active_targets_select().and_where(Expr::col(S::OrganizationId).eq(organization_id)).take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(target).collect()
}

/// The active subscriptions among `ids`, or every active subscription when `ids` is `None`.
pub async fn active_targets_among(conn: &mut Conn, ids: Option<&[String]>) -> StoreResult<Vec<Target>> {
    let Some(ids) = ids else {
        return statement(conn.engine(), &active_targets_select()).fetch_all(conn).await?.iter().map(target).collect();
    };
    let mut targets = Vec::new();
    for chunk in ids.chunks(500) {
        let select = active_targets_select().and_where(Expr::col(S::Id).is_in(chunk.iter().map(String::as_str))).take();
        for row in statement(conn.engine(), &select).fetch_all(&mut *conn).await? {
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
    let update = Sql::update()
        .table(S::Table)
        .values([(S::ConsecutiveFailures, Expr::col(S::ConsecutiveFailures).add(1)), (S::UpdatedAt, Expr::val(at))])
        .and_where(Expr::col(S::Id).eq(id))
        .returning(Sql::returning().columns([S::ConsecutiveFailures, S::Active]))
        .take();
    let row = statement(conn.engine(), &update).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(FailureCount { consecutive_failures: row.try_get("consecutive_failures")?, active: row.get_bool("active")? })
    })
    .transpose()
}

/// Turns a subscription off and drops what it had queued.
pub async fn turn_off(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let update = Sql::update().table(S::Table).value(S::Active, false).and_where(Expr::col(S::Id).eq(id)).take();
    statement(conn.engine(), &update).execute(&mut *conn).await?;
    drop_queue(conn, id).await
}

/// Drops the events still queued for a subscription (and the events no other subscription still waits for).
///
/// The subscription is locked first, exclusively: a hand-out that read it active and has queued events for it
/// holds its foreign key's lock on it until it commits, so this waits for that hand-out and then sees its rows. A
/// hand-out that reaches the subscription after this lock waits for the turn-off to commit, and then finds the
/// subscription off itself ([`super::outbox::unqueue_turned_off`]). Between the two, no row queued for a
/// subscription that is off outlives the transaction that queued it.
///
/// Queue rows first, then events, as the dispatcher's recorder takes them (`outbox::finish_queued`, then
/// `outbox::remove_finished`): deleting an event first cascades to its queue rows, and two writers taking an event
/// and its queue row in opposite orders can deadlock, which PostgreSQL ends by giving one of them up.
pub async fn drop_queue(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let lock = Sql::select().column(S::Id).from(S::Table).and_where(Expr::col(S::Id).eq(id)).lock_exclusively().take();
    statement(conn.engine(), &lock).fetch_optional(&mut *conn).await?;
    let delete = Sql::delete()
        .from_table(WebhookQueue::Table)
        .and_where(Expr::col(WebhookQueue::SubscriptionId).eq(id))
        .returning_col(WebhookQueue::EventId)
        .take();
    let dropped = statement(conn.engine(), &delete)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| row.try_get("event_id"))
        .collect::<StoreResult<Vec<String>>>()?;
    super::outbox::remove_finished(conn, &dropped).await
}

/// A success clears the failure count.
pub async fn record_success(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let update = Sql::update()
        .table(S::Table)
        .value(S::ConsecutiveFailures, 0)
        .and_where(Expr::col(S::Id).eq(id))
        .and_where(Expr::col(S::ConsecutiveFailures).gt(0))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
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
    let oldest_kept = Sql::select()
        .column(D::Id)
        .from(D::Table)
        .and_where(Expr::col(D::SubscriptionId).eq(subscription_id))
        .order_by(D::Id, Order::Desc)
        .limit(1)
        .offset(std::cmp::max(keep, 1).unsigned_abs() - 1)
        .take();
    let delete = Sql::delete()
        .from_table(D::Table)
        .and_where(Expr::col(D::SubscriptionId).eq(subscription_id))
        .and_where(Expr::col(D::Id).lt(oldest_kept))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

pub async fn deliveries(conn: &mut Conn, subscription_id: &str, limit: i64) -> StoreResult<Vec<WebhookDelivery>> {
    let limit = rows(limit);
    let select = Sql::select()
        .columns([D::Id, D::EventId, D::Event, D::AttemptedAt, D::Success, D::StatusCode, D::Error, D::DurationMs])
        .from(D::Table)
        .and_where(Expr::col(D::SubscriptionId).eq(subscription_id))
        .order_by(D::Id, Order::Desc)
        .limit(limit)
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
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
