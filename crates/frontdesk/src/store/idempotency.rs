//! Idempotency keys: what the first request sent with a key made, by namespace and scope (see
//! [`crate::domain::idempotency`]).

use chrono::{DateTime, Utc};

use super::{format_ts, StoreResult};
use crate::store::schema::IdempotencyKeys as K;
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, Sql};
use crate::store::Conn;

/// Where a key is remembered: its namespace, the scope within it (a hotel, an organization) and the key itself.
#[derive(Debug, Clone, Copy)]
pub struct KeyRef<'a> {
    pub namespace: &'a str,
    pub scope: &'a str,
    pub key: &'a str,
}

/// What a key was first used for: (request digest, id of what the request made).
pub async fn find(conn: &mut Conn, key: KeyRef<'_>) -> StoreResult<Option<(String, String)>> {
    let select = Sql::select()
        .columns([K::RequestHash, K::ResultId])
        .from(K::Table)
        .and_where(Expr::col(K::Namespace).eq(key.namespace))
        .and_where(Expr::col(K::Scope).eq(key.scope))
        .and_where(Expr::col(K::Key).eq(key.key))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
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
    let insert = insert_row(
        K::Table,
        [
            (K::Namespace, Expr::val(key.namespace)),
            (K::Scope, Expr::val(key.scope)),
            (K::Key, Expr::val(key.key)),
            (K::OrganizationId, Expr::val(organization_id)),
            (K::RequestHash, Expr::val(request_hash)),
            (K::ResultId, Expr::val(result_id)),
            (K::CreatedAt, Expr::val(format_ts(at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}
