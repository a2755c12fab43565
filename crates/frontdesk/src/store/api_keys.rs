//! API keys. Secrets are stored only as digests, found through a unique index.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::domain::access::Scope;
use crate::domain::api_keys::ApiKey;
use crate::store::{query, Conn, Row};

const COLUMNS: &str = "id, organization_id, hotel_id, name, scopes, rate_limit_per_minute, created_at, last_used_at";

fn api_key(row: &Row) -> StoreResult<ApiKey> {
    Ok(ApiKey {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        scopes: scopes_from_text(&row.try_get::<String, _>("scopes")?),
        hotel_id: row.try_get("hotel_id")?,
        rate_limit_per_minute: row.try_get("rate_limit_per_minute")?,
        created_at: row.get_ts("created_at")?,
        last_used_at: row.get_opt_ts("last_used_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, key: &ApiKey, secret_hash: &str) -> StoreResult<()> {
    query(
        "INSERT INTO api_keys (id, organization_id, hotel_id, name, scopes, secret_hash, created_at, \
         rate_limit_per_minute) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&key.id)
    .bind(organization_id)
    .bind(&key.hotel_id)
    .bind(&key.name)
    .bind(scopes_to_text(&key.scopes))
    .bind(secret_hash)
    .bind(format_ts(key.created_at))
    .bind(key.rate_limit_per_minute)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<ApiKey>> {
    query(&format!("SELECT {COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY id"))
        .bind(organization_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(api_key)
        .collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<ApiKey>> {
    query(&format!("SELECT {COLUMNS} FROM api_keys WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(api_key)
        .transpose()
}

pub async fn update(conn: &mut Conn, organization_id: &str, key: &ApiKey) -> StoreResult<()> {
    query(
        "UPDATE api_keys SET name = $1, scopes = $2, rate_limit_per_minute = $3 WHERE organization_id = $4 AND id = $5",
    )
    .bind(&key.name)
    .bind(scopes_to_text(&key.scopes))
    .bind(key.rate_limit_per_minute)
    .bind(organization_id)
    .bind(&key.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<bool> {
    let done = query("DELETE FROM api_keys WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// What authentication needs of a key.
#[derive(Debug, Clone)]
pub struct StoredApiKey {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: Option<String>,
    pub scopes: String,
    pub secret_hash: String,
    pub rate_limit_per_minute: Option<i64>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// The key with this digest, as read at most [`super::recent::MAX_AGE`] ago and not before a write of this process.
pub async fn find_by_digest_recent(db: &super::Db, secret_hash: &str) -> StoreResult<Option<StoredApiKey>> {
    db.recent
        .api_keys
        .get_or_read(&db.writes, &secret_hash.to_string(), || async {
            find_by_digest(&mut *db.read().await?, secret_hash).await
        })
        .await
}

pub async fn find_by_digest(conn: &mut Conn, secret_hash: &str) -> StoreResult<Option<StoredApiKey>> {
    let row = query(
        "SELECT id, organization_id, hotel_id, scopes, secret_hash, rate_limit_per_minute, last_used_at FROM api_keys \
         WHERE secret_hash = $1",
    )
    .bind(secret_hash)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(StoredApiKey {
            id: row.try_get("id")?,
            organization_id: row.try_get("organization_id")?,
            hotel_id: row.try_get("hotel_id")?,
            scopes: row.try_get("scopes")?,
            secret_hash: row.try_get("secret_hash")?,
            rate_limit_per_minute: row.try_get("rate_limit_per_minute")?,
            last_used_at: row.get_opt_ts("last_used_at")?,
        })
    })
    .transpose()
}

/// Records a use, unless one at or after `unless_since` is already recorded (another process got there first).
pub async fn touch(conn: &mut Conn, id: &str, at: DateTime<Utc>, unless_since: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)")
        .bind(format_ts(at))
        .bind(id)
        .bind(format_ts(unless_since))
        .execute(conn)
        .await?;
    Ok(())
}

/// The stored form of a scope list: scope names joined by spaces, sorted.
pub fn scopes_to_text(scopes: &[Scope]) -> String {
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" ")
}

pub fn scopes_from_text(text: &str) -> Vec<Scope> {
    text.split_whitespace().filter_map(Scope::parse).collect()
}
