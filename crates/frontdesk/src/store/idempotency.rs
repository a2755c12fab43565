//! Idempotency keys: what the first request sent with a key made, by namespace and scope (see
//! [`crate::domain::idempotency`]).

use chrono::{DateTime, Utc};

use super::{format_ts, StoreResult};
use crate::store::{query, Conn};

/// Where a key is remembered: its namespace, the scope within it (a hotel, an organization) and the key itself.
#[derive(Debug, Clone, Copy)]
pub struct KeyRef<'a> {
    pub namespace: &'a str,
    pub scope: &'a str,
    pub key: &'a str,
}

/// What a key was first used for: (request digest, id of what the request made).
pub async fn find(conn: &mut Conn, key: KeyRef<'_>) -> StoreResult<Option<(String, String)>> {
    let row =
        query("SELECT request_hash, result_id FROM idempotency_keys WHERE namespace = $1 AND scope = $2 AND key = $3")
            .bind(key.namespace)
            .bind(key.scope)
            .bind(key.key)
            .fetch_optional(conn)
            .await?;
    row.map(|row| Ok((row.try_get("request_hash")?, row.try_get("result_id")?))).transpose()
}

/// Remembers a key; a unique violation means another request took it first.
pub async fn insert(
    conn: &mut Conn,
    key: KeyRef<'_>,
    organization_id: &str,
    request_hash: &str,
    result_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    query(
        "INSERT INTO idempotency_keys (namespace, scope, key, organization_id, request_hash, result_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(key.namespace)
    .bind(key.scope)
    .bind(key.key)
    .bind(organization_id)
    .bind(request_hash)
    .bind(result_id)
    .bind(format_ts(at))
    .execute(conn)
    .await?;
    Ok(())
}
