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
