//! API keys. Secrets are stored only as digests, found through a unique index.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::model::access::Scope;
use crate::model::api_keys::ApiKey;
use crate::store::schema::ApiKeys;
use crate::store::statement::{insert_row, one_of_organization, statement, Expr, ExprTrait, Order, Sql};
use crate::store::{Conn, Row};

const COLUMNS: [ApiKeys; 8] = [
    ApiKeys::Id,
    ApiKeys::OrganizationId,
    ApiKeys::HotelId,
    ApiKeys::Name,
    ApiKeys::Scopes,
    ApiKeys::RateLimitPerMinute,
    ApiKeys::CreatedAt,
    ApiKeys::LastUsedAt,
];

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
    let insert = insert_row(
        ApiKeys::Table,
        [
            (ApiKeys::Id, Expr::val(&key.id)),
            (ApiKeys::OrganizationId, Expr::val(organization_id)),
            (ApiKeys::HotelId, Expr::val(key.hotel_id.clone())),
            (ApiKeys::Name, Expr::val(&key.name)),
            (ApiKeys::Scopes, Expr::val(scopes_to_text(&key.scopes))),
            (ApiKeys::SecretHash, Expr::val(secret_hash)),
            (ApiKeys::CreatedAt, Expr::val(format_ts(key.created_at))),
            (ApiKeys::RateLimitPerMinute, Expr::val(key.rate_limit_per_minute)),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<ApiKey>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(ApiKeys::Table)
        .and_where(Expr::col(ApiKeys::OrganizationId).eq(organization_id))
        .order_by(ApiKeys::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(api_key).collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<ApiKey>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(ApiKeys::Table)
        .and_where(one_of_organization(ApiKeys::Id, id, ApiKeys::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(api_key).transpose()
}

pub async fn update(conn: &mut Conn, organization_id: &str, key: &ApiKey) -> StoreResult<()> {
    let update = Sql::update()
        .table(ApiKeys::Table)
        .values([
            (ApiKeys::Name, Expr::val(&key.name)),
            (ApiKeys::Scopes, Expr::val(scopes_to_text(&key.scopes))),
            (ApiKeys::RateLimitPerMinute, Expr::val(key.rate_limit_per_minute)),
        ])
        .and_where(one_of_organization(ApiKeys::Id, &key.id, ApiKeys::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<bool> {
    let delete = Sql::delete()
        .from_table(ApiKeys::Table)
        .and_where(one_of_organization(ApiKeys::Id, id, ApiKeys::OrganizationId, organization_id))
        .take();
    let done = statement(conn.engine(), &delete).execute(conn).await?;
    Ok(done.rows_affected() > 0)
}

/// What authentication needs of a key.
#[derive(Debug, Clone)]
pub struct StoredApiKey {
    pub id: String,
    pub name: String,
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
    let select = Sql::select()
        .columns([
            ApiKeys::Id,
            ApiKeys::Name,
            ApiKeys::OrganizationId,
            ApiKeys::HotelId,
            ApiKeys::Scopes,
            ApiKeys::SecretHash,
            ApiKeys::RateLimitPerMinute,
            ApiKeys::LastUsedAt,
        ])
        .from(ApiKeys::Table)
        .and_where(Expr::col(ApiKeys::SecretHash).eq(secret_hash))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(StoredApiKey {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
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
    let update = Sql::update()
        .table(ApiKeys::Table)
        .value(ApiKeys::LastUsedAt, format_ts(at))
        .and_where(Expr::col(ApiKeys::Id).eq(id))
        .and_where(
            Expr::col(ApiKeys::LastUsedAt).is_null().or(Expr::col(ApiKeys::LastUsedAt).lt(format_ts(unless_since))),
        )
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
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
