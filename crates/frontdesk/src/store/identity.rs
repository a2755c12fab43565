//! Organizations, operators and their access tokens.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::domain::identity::{Operator, Organization};
use crate::store::{query, Conn, Row};

fn organization(row: &Row) -> StoreResult<Organization> {
    Ok(Organization { id: row.try_get("id")?, name: row.try_get("name")?, created_at: row.get_ts("created_at")? })
}

pub async fn insert_organization(conn: &mut Conn, org: &Organization) -> StoreResult<()> {
    query("INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&org.id)
        .bind(&org.name)
        .bind(format_ts(org.created_at))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn get_organization(conn: &mut Conn, id: &str) -> StoreResult<Option<Organization>> {
    query("SELECT id, name, created_at FROM organizations WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(organization)
        .transpose()
}

pub async fn list_organizations(conn: &mut Conn) -> StoreResult<Vec<Organization>> {
    query("SELECT id, name, created_at FROM organizations ORDER BY id")
        .fetch_all(conn)
        .await?
        .iter()
        .map(organization)
        .collect()
}

const OPERATOR_COLUMNS: &str = "id, organization_id, email, name, created_at";

fn operator(row: &Row) -> StoreResult<Operator> {
    Ok(Operator {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        email: row.try_get("email")?,
        name: row.try_get("name")?,
        created_at: row.get_ts("created_at")?,
    })
}

pub async fn insert_operator(conn: &mut Conn, op: &Operator, password_hash: &str) -> StoreResult<()> {
    query(
        "INSERT INTO operators (id, organization_id, email, email_normalized, name, password_hash, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
    )
    .bind(&op.id)
    .bind(&op.organization_id)
    .bind(&op.email)
    .bind(op.email.to_lowercase())
    .bind(&op.name)
    .bind(password_hash)
    .bind(format_ts(op.created_at))
    .execute(conn)
    .await?;
    Ok(())
}

/// The operator with this e-mail (case-insensitive) and the stored password hash.
pub async fn find_operator_by_email(conn: &mut Conn, email: &str) -> StoreResult<Option<(Operator, String)>> {
    let row = query(&format!("SELECT {OPERATOR_COLUMNS}, password_hash FROM operators WHERE email_normalized = $1"))
        .bind(email.to_lowercase())
        .fetch_optional(conn)
        .await?;
    row.map(|row| Ok((operator(&row)?, row.try_get("password_hash")?))).transpose()
}

/// The operators of an organization (never their password hashes).
pub async fn list_operators(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Operator>> {
    query(&format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE organization_id = $1 ORDER BY id"))
        .bind(organization_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(operator)
        .collect()
}

pub async fn get_operator(conn: &mut Conn, id: &str) -> StoreResult<Option<Operator>> {
    query(&format!("SELECT {OPERATOR_COLUMNS} FROM operators WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(operator)
        .transpose()
}

pub async fn set_password_hash(
    conn: &mut Conn,
    operator_id: &str,
    password_hash: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    query("UPDATE operators SET password_hash = $1, updated_at = $2 WHERE id = $3")
        .bind(password_hash)
        .bind(format_ts(at))
        .bind(operator_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes an operator; their access tokens and connector grants and tokens go with them (foreign keys cascade).
pub async fn delete_operator(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    query("DELETE FROM operators WHERE id = $1").bind(operator_id).execute(conn).await?;
    Ok(())
}

/// Revokes every access token of an operator.
pub async fn revoke_operator_tokens(conn: &mut Conn, operator_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE access_tokens SET revoked_at = $1 WHERE operator_id = $2 AND revoked_at IS NULL")
        .bind(format_ts(at))
        .bind(operator_id)
        .execute(conn)
        .await?;
    Ok(())
}

pub struct NewAccessToken<'a> {
    pub id: &'a str,
    pub operator_id: &'a str,
    pub organization_id: &'a str,
    pub token_hash: &'a str,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// How long the token may go unused; `None`: as long as it lives.
    pub idle_timeout_secs: Option<i64>,
    /// `session` (signing in) or `token` (named, for scripts).
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub user_agent: Option<&'a str>,
}

pub async fn insert_access_token(conn: &mut Conn, token: &NewAccessToken<'_>) -> StoreResult<()> {
    query(
        "INSERT INTO access_tokens (id, operator_id, organization_id, token_hash, created_at, expires_at, \
         idle_timeout_secs, kind, name, user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(token.id)
    .bind(token.operator_id)
    .bind(token.organization_id)
    .bind(token.token_hash)
    .bind(format_ts(token.created_at))
    .bind(format_ts(token.expires_at))
    .bind(token.idle_timeout_secs)
    .bind(token.kind)
    .bind(token.name)
    .bind(token.user_agent)
    .execute(conn)
    .await?;
    Ok(())
}

/// A stored access token, found by its digest.
pub struct StoredAccessToken {
    pub id: String,
    pub operator_id: String,
    pub organization_id: String,
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub revoked: bool,
    /// The last use, recorded to the minute; `None` before the first.
    pub last_used_at: Option<DateTime<Utc>>,
    pub idle_timeout_secs: Option<i64>,
}

pub async fn find_access_token(conn: &mut Conn, token_hash: &str) -> StoreResult<Option<StoredAccessToken>> {
    let row = query(
        "SELECT id, operator_id, organization_id, token_hash, created_at, expires_at, revoked_at, last_used_at, \
         idle_timeout_secs FROM access_tokens WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(StoredAccessToken {
            id: row.try_get("id")?,
            operator_id: row.try_get("operator_id")?,
            organization_id: row.try_get("organization_id")?,
            token_hash: row.try_get("token_hash")?,
            created_at: row.get_ts("created_at")?,
            expires_at: row.get_ts("expires_at")?,
            revoked: row.try_get::<Option<String>, _>("revoked_at")?.is_some(),
            last_used_at: row.get_opt_ts("last_used_at")?,
            idle_timeout_secs: row.try_get("idle_timeout_secs")?,
        })
    })
    .transpose()
}

pub async fn revoke_access_token(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE access_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Records a token's use at `at`, unless one since `since` is recorded already.
pub async fn touch_access_token(conn: &mut Conn, id: &str, at: DateTime<Utc>, since: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE access_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)")
        .bind(format_ts(at))
        .bind(id)
        .bind(format_ts(since))
        .execute(conn)
        .await?;
    Ok(())
}

/// Locks an organization's row until the transaction ends, so that writes that count its operators (removing one)
/// take turns on PostgreSQL (SQLite's write transactions are exclusive already).
pub async fn lock_organization(conn: &mut Conn, organization_id: &str) -> StoreResult<()> {
    query("UPDATE organizations SET name = name WHERE id = $1").bind(organization_id).execute(conn).await?;
    Ok(())
}

pub async fn count_operators(conn: &mut Conn, organization_id: &str) -> StoreResult<i64> {
    let row = query("SELECT COUNT(*) AS n FROM operators WHERE organization_id = $1")
        .bind(organization_id)
        .fetch_one(conn)
        .await?;
    row.try_get("n")
}

/// An invitation to set a password, stored by the digest of its link's token.
pub struct NewInvitation<'a> {
    pub id: &'a str,
    pub operator_id: &'a str,
    pub organization_id: &'a str,
    pub token_hash: &'a str,
    pub invited_by: &'a str,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub async fn insert_invitation(conn: &mut Conn, invitation: &NewInvitation<'_>) -> StoreResult<()> {
    query(
        "INSERT INTO operator_invitations (id, operator_id, organization_id, token_hash, invited_by, created_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(invitation.id)
    .bind(invitation.operator_id)
    .bind(invitation.organization_id)
    .bind(invitation.token_hash)
    .bind(invitation.invited_by)
    .bind(format_ts(invitation.created_at))
    .bind(format_ts(invitation.expires_at))
    .execute(conn)
    .await?;
    Ok(())
}

/// A stored invitation, found by its digest.
pub struct StoredInvitation {
    pub id: String,
    pub operator_id: String,
    pub token_hash: String,
    pub invited_by: String,
    pub expires_at: DateTime<Utc>,
}

pub async fn find_invitation(conn: &mut Conn, token_hash: &str) -> StoreResult<Option<StoredInvitation>> {
    let row = query(
        "SELECT id, operator_id, token_hash, invited_by, expires_at FROM operator_invitations WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(StoredInvitation {
            id: row.try_get("id")?,
            operator_id: row.try_get("operator_id")?,
            token_hash: row.try_get("token_hash")?,
            invited_by: row.try_get("invited_by")?,
            expires_at: row.get_ts("expires_at")?,
        })
    })
    .transpose()
}

/// Deletes one invitation; answers whether it was still there (a link works once, even when opened twice at once).
pub async fn delete_invitation(conn: &mut Conn, id: &str) -> StoreResult<bool> {
    let done = query("DELETE FROM operator_invitations WHERE id = $1").bind(id).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete_operator_invitations(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    query("DELETE FROM operator_invitations WHERE operator_id = $1").bind(operator_id).execute(conn).await?;
    Ok(())
}

/// When each invited operator of an organization's invitation expires (the latest, should there be several).
pub async fn invitation_expiries(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
    let rows = query(
        "SELECT operator_id, MAX(expires_at) AS expires_at FROM operator_invitations WHERE organization_id = $1 \
         GROUP BY operator_id",
    )
    .bind(organization_id)
    .fetch_all(conn)
    .await?;
    rows.iter().map(|row| Ok((row.try_get("operator_id")?, row.get_ts("expires_at")?))).collect()
}

/// An access token as its operator sees it in the dashboard (never its digest).
#[derive(Debug, Clone)]
pub struct ListedAccessToken {
    pub id: String,
    pub kind: String,
    pub name: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub idle_timeout_secs: Option<i64>,
}

const LISTED_COLUMNS: &str = "id, kind, name, user_agent, created_at, expires_at, last_used_at, idle_timeout_secs";

fn listed(row: &Row) -> StoreResult<ListedAccessToken> {
    Ok(ListedAccessToken {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        name: row.try_get("name")?,
        user_agent: row.try_get("user_agent")?,
        created_at: row.get_ts("created_at")?,
        expires_at: row.get_ts("expires_at")?,
        last_used_at: row.get_opt_ts("last_used_at")?,
        idle_timeout_secs: row.try_get("idle_timeout_secs")?,
    })
}

/// The operator's tokens that are neither revoked nor expired at `at` (idle sessions are the caller's to judge),
/// newest first.
pub async fn list_operator_tokens(
    conn: &mut Conn,
    operator_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<Vec<ListedAccessToken>> {
    query(&format!(
        "SELECT {LISTED_COLUMNS} FROM access_tokens WHERE operator_id = $1 AND revoked_at IS NULL AND expires_at > $2 \
         ORDER BY created_at DESC, id DESC"
    ))
    .bind(operator_id)
    .bind(format_ts(at))
    .fetch_all(conn)
    .await?
    .iter()
    .map(listed)
    .collect()
}

/// One unrevoked token of the operator.
pub async fn get_operator_token(
    conn: &mut Conn,
    operator_id: &str,
    id: &str,
) -> StoreResult<Option<ListedAccessToken>> {
    query(&format!(
        "SELECT {LISTED_COLUMNS} FROM access_tokens WHERE operator_id = $1 AND id = $2 AND revoked_at IS NULL"
    ))
    .bind(operator_id)
    .bind(id)
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(listed)
    .transpose()
}

/// Revokes every signed-in session of the operator but `keep_id`; named tokens stay. Answers how many ended.
pub async fn revoke_other_sessions(
    conn: &mut Conn,
    operator_id: &str,
    keep_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<u64> {
    let done = query(
        "UPDATE access_tokens SET revoked_at = $1 WHERE operator_id = $2 AND id <> $3 AND kind = 'session' \
         AND revoked_at IS NULL",
    )
    .bind(format_ts(at))
    .bind(operator_id)
    .bind(keep_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}
