//! The webhook outbox: events recorded atomically with the writes that caused them.

use sqlx::AnyConnection;

use super::{format_ts, StoreResult};

/// An event about to be recorded. `payload` is the JSON body's `data`, already serialized.
pub struct NewEvent<'a> {
    pub organization_id: &'a str,
    /// The hotel the record belongs to; `None` reaches every subscription of the organization.
    pub hotel_id: Option<&'a str>,
    pub kind: &'a str,
    pub payload: String,
}

pub async fn insert(conn: &mut AnyConnection, event: &NewEvent<'_>) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO outbox_events (id, organization_id, hotel_id, kind, payload, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(crate::domain::new_id())
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

/// Claims up to `limit` events that nobody holds (never claimed, or whose claim ran out because its process
/// died) until `until`, oldest first. On PostgreSQL rows another process is claiming right now are skipped, so
/// concurrent dispatchers never claim the same event.
pub async fn claim(conn: &mut AnyConnection, now: &str, until: &str, limit: i64) -> StoreResult<Vec<PendingEvent>> {
    use super::RowExt;
    use sqlx::Row;
    let lock = super::Engine::of(conn).lock_rows_skip_locked();
    let sql = format!(
        "UPDATE outbox_events SET claimed_until = $1 WHERE id IN (SELECT id FROM outbox_events \
         WHERE claimed_until IS NULL OR claimed_until < $2 ORDER BY id LIMIT $3{lock}) \
         RETURNING id, organization_id, hotel_id, kind, payload, created_at"
    );
    let rows = sqlx::query(&sql).bind(until).bind(now).bind(limit).fetch_all(conn).await?;
    let mut events = rows
        .iter()
        .map(|row| {
            Ok(PendingEvent {
                id: row.try_get("id")?,
                organization_id: row.try_get("organization_id")?,
                hotel_id: row.try_get("hotel_id")?,
                kind: row.try_get("kind")?,
                payload: row.try_get("payload")?,
                created_at: row.get_ts("created_at")?,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    events.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(events)
}

/// Extends the claim on events still being delivered.
pub async fn extend_claims(conn: &mut AnyConnection, ids: &[String], until: &str) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        let set = query.bind(until.to_string());
        query.push_in("id", chunk);
        let sql = format!("UPDATE outbox_events SET claimed_until = {set}{}", query.where_clause());
        sqlx::query_with(&sql, query.into_args()).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Gives events back unsent, for any dispatcher to claim at once.
pub async fn release_claims(conn: &mut AnyConnection, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        query.push_in("id", chunk);
        let sql = format!("UPDATE outbox_events SET claimed_until = NULL{}", query.where_clause());
        sqlx::query_with(&sql, query.into_args()).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Removes delivered events.
pub async fn remove(conn: &mut AnyConnection, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let mut query = super::sql::Conditions::new(super::Engine::of(conn));
        query.push_in("id", chunk);
        let sql = format!("DELETE FROM outbox_events{}", query.where_clause());
        sqlx::query_with(&sql, query.into_args()).execute(&mut *conn).await?;
    }
    Ok(())
}
