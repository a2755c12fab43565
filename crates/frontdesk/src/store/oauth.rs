//! The assistant connector's OAuth records: clients, grants (sign-in ticket and authorization code) and tokens.
//! Secrets are looked up by their digest through unique indexes; the rows never hold a secret itself.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::{query, Conn, Row};

/// A registered client.
#[derive(Debug, Clone)]
pub struct ClientRow {
    pub id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_client(conn: &mut Conn, client: &ClientRow) -> StoreResult<()> {
    let uris = serde_json::to_string(&client.redirect_uris).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    query("INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&client.id)
        .bind(&client.name)
        .bind(uris)
        .bind(format_ts(client.created_at))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn get_client(conn: &mut Conn, id: &str) -> StoreResult<Option<ClientRow>> {
    let row = query("SELECT id, name, redirect_uris, created_at FROM oauth_clients WHERE id = $1")
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.map(|row| {
        let uris: String = row.try_get("redirect_uris")?;
        Ok(ClientRow {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            redirect_uris: serde_json::from_str(&uris).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
            created_at: row.get_ts("created_at")?,
        })
    })
    .transpose()
}

/// An authorization: the request the operator signed in for, and later its code.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub id: String,
    pub client_id: String,
    pub operator_id: String,
    pub organization_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub state: Option<String>,
    pub scope: String,
    pub resource: String,
    pub ticket_hash: String,
    pub ticket_expires_at: DateTime<Utc>,
    pub ticket_used: bool,
    pub code_hash: Option<String>,
    pub code_expires_at: Option<DateTime<Utc>>,
    pub code_used: bool,
    pub created_at: DateTime<Utc>,
}

const GRANT_COLUMNS: &str = "id, client_id, operator_id, organization_id, redirect_uri, code_challenge, state, scope, \
                             resource, ticket_hash, ticket_expires_at, ticket_used_at, code_hash, code_expires_at, \
                             code_used_at, created_at";

fn grant(row: &Row) -> StoreResult<GrantRow> {
    Ok(GrantRow {
        id: row.try_get("id")?,
        client_id: row.try_get("client_id")?,
        operator_id: row.try_get("operator_id")?,
        organization_id: row.try_get("organization_id")?,
        redirect_uri: row.try_get("redirect_uri")?,
        code_challenge: row.try_get("code_challenge")?,
        state: row.try_get("state")?,
        scope: row.try_get("scope")?,
        resource: row.try_get("resource")?,
        ticket_hash: row.try_get("ticket_hash")?,
        ticket_expires_at: row.get_ts("ticket_expires_at")?,
        ticket_used: row.get_opt_ts("ticket_used_at")?.is_some(),
        code_hash: row.try_get("code_hash")?,
        code_expires_at: row.get_opt_ts("code_expires_at")?,
        code_used: row.get_opt_ts("code_used_at")?.is_some(),
        created_at: row.get_ts("created_at")?,
    })
}

pub async fn insert_grant(conn: &mut Conn, g: &GrantRow) -> StoreResult<()> {
    query(
        "INSERT INTO oauth_grants (id, client_id, operator_id, organization_id, redirect_uri, code_challenge, state, \
         scope, resource, ticket_hash, ticket_expires_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&g.id)
    .bind(&g.client_id)
    .bind(&g.operator_id)
    .bind(&g.organization_id)
    .bind(&g.redirect_uri)
    .bind(&g.code_challenge)
    .bind(&g.state)
    .bind(&g.scope)
    .bind(&g.resource)
    .bind(&g.ticket_hash)
    .bind(format_ts(g.ticket_expires_at))
    .bind(format_ts(g.created_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn grant_by_ticket(conn: &mut Conn, ticket_hash: &str) -> StoreResult<Option<GrantRow>> {
    query(&format!("SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE ticket_hash = $1"))
        .bind(ticket_hash)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(grant)
        .transpose()
}

pub async fn grant_by_code(conn: &mut Conn, code_hash: &str) -> StoreResult<Option<GrantRow>> {
    query(&format!("SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE code_hash = $1"))
        .bind(code_hash)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(grant)
        .transpose()
}

/// Spends a sign-in ticket; answers whether this call was the one that spent it.
pub async fn use_ticket(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let done = query("UPDATE oauth_grants SET ticket_used_at = $1 WHERE id = $2 AND ticket_used_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn set_code(conn: &mut Conn, id: &str, code_hash: &str, expires_at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE oauth_grants SET code_hash = $1, code_expires_at = $2 WHERE id = $3")
        .bind(code_hash)
        .bind(format_ts(expires_at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Spends an authorization code; answers whether this call was the one that spent it.
pub async fn use_code(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let done = query("UPDATE oauth_grants SET code_used_at = $1 WHERE id = $2 AND code_used_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// An access or refresh token.
#[derive(Debug, Clone)]
pub struct TokenRow {
    pub id: String,
    pub token_hash: String,
    /// `access` or `refresh`.
    pub kind: String,
    pub family_id: String,
    pub client_id: String,
    pub operator_id: String,
    pub organization_id: String,
    pub scope: String,
    pub resource: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub used: bool,
    pub revoked: bool,
    /// When the operator allowed the connection this token descends from.
    pub granted_at: DateTime<Utc>,
    /// The last use at the connector (access tokens), recorded to the minute.
    pub last_used_at: Option<DateTime<Utc>>,
}

pub async fn insert_token(conn: &mut Conn, t: &TokenRow) -> StoreResult<()> {
    query(
        "INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, operator_id, organization_id, scope, \
         resource, created_at, expires_at, granted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&t.id)
    .bind(&t.token_hash)
    .bind(&t.kind)
    .bind(&t.family_id)
    .bind(&t.client_id)
    .bind(&t.operator_id)
    .bind(&t.organization_id)
    .bind(&t.scope)
    .bind(&t.resource)
    .bind(format_ts(t.created_at))
    .bind(format_ts(t.expires_at))
    .bind(format_ts(t.granted_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn token_by_hash(conn: &mut Conn, token_hash: &str) -> StoreResult<Option<TokenRow>> {
    let row = query(
        "SELECT id, token_hash, kind, family_id, client_id, operator_id, organization_id, scope, resource, \
         created_at, expires_at, used_at, revoked_at, granted_at, last_used_at FROM oauth_tokens WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(TokenRow {
            id: row.try_get("id")?,
            token_hash: row.try_get("token_hash")?,
            kind: row.try_get("kind")?,
            family_id: row.try_get("family_id")?,
            client_id: row.try_get("client_id")?,
            operator_id: row.try_get("operator_id")?,
            organization_id: row.try_get("organization_id")?,
            scope: row.try_get("scope")?,
            resource: row.try_get("resource")?,
            created_at: row.get_ts("created_at")?,
            expires_at: row.get_ts("expires_at")?,
            used: row.get_opt_ts("used_at")?.is_some(),
            revoked: row.get_opt_ts("revoked_at")?.is_some(),
            granted_at: row.get_opt_ts("granted_at")?.unwrap_or(row.get_ts("created_at")?),
            last_used_at: row.get_opt_ts("last_used_at")?,
        })
    })
    .transpose()
}

/// Spends a refresh token; answers whether this call was the one that spent it.
pub async fn use_token(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let done = query("UPDATE oauth_tokens SET used_at = $1 WHERE id = $2 AND used_at IS NULL AND revoked_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn revoke_token(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE oauth_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Revokes every token issued from one grant.
pub async fn revoke_family(conn: &mut Conn, family_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE oauth_tokens SET revoked_at = $1 WHERE family_id = $2 AND revoked_at IS NULL")
        .bind(format_ts(at))
        .bind(family_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes what can no longer be used: tokens expired before `before`, and authorizations begun before it (their
/// ticket and code lived minutes). Revocation of a family needs neither.
pub async fn purge(conn: &mut Conn, before: DateTime<Utc>) -> StoreResult<()> {
    query("DELETE FROM oauth_tokens WHERE expires_at < $1").bind(format_ts(before)).execute(&mut *conn).await?;
    query("DELETE FROM oauth_grants WHERE created_at < $1").bind(format_ts(before)).execute(conn).await?;
    Ok(())
}

/// Forgets every connector grant and token of an operator (their password changed): sign-ins in progress, codes not
/// yet exchanged and tokens issued all stop working.
pub async fn forget_operator(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    query("DELETE FROM oauth_tokens WHERE operator_id = $1").bind(operator_id).execute(&mut *conn).await?;
    query("DELETE FROM oauth_grants WHERE operator_id = $1").bind(operator_id).execute(conn).await?;
    Ok(())
}

/// Notes that an operator signed in through a client (it is in use, and stays registered).
pub async fn client_used(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE oauth_clients SET used_at = $1 WHERE id = $2 AND used_at IS NULL")
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Removes clients registered before `before` through which no operator ever signed in.
pub async fn purge_unused_clients(conn: &mut Conn, before: DateTime<Utc>) -> StoreResult<u64> {
    let done = query("DELETE FROM oauth_clients WHERE used_at IS NULL AND created_at < $1")
        .bind(format_ts(before))
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

/// Records an access token's use at `at`, unless one since `since` is recorded already.
pub async fn touch_token(conn: &mut Conn, id: &str, at: DateTime<Utc>, since: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE oauth_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)")
        .bind(format_ts(at))
        .bind(id)
        .bind(format_ts(since))
        .execute(conn)
        .await?;
    Ok(())
}

/// A client with live tokens in an organization: an assistant connected to it.
#[derive(Debug, Clone)]
pub struct ConnectionRow {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    /// The operators who allowed it (ids), each once.
    pub operator_ids: Vec<String>,
    pub granted_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// The clients holding an unrevoked, unexpired token of the organization at `at`, by name. A refresh token that
/// was spent (rotated) no longer connects anything, so only unspent ones count.
pub async fn connections(conn: &mut Conn, organization_id: &str, at: DateTime<Utc>) -> StoreResult<Vec<ConnectionRow>> {
    let rows = query(
        "SELECT t.client_id, c.name, c.redirect_uris, t.operator_id, t.granted_at, t.created_at, t.last_used_at \
         FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client_id \
         WHERE t.organization_id = $1 AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > $2 \
         ORDER BY c.name, t.client_id, t.id",
    )
    .bind(organization_id)
    .bind(format_ts(at))
    .fetch_all(&mut *conn)
    .await?;
    let mut out: Vec<ConnectionRow> = Vec::new();
    for row in rows {
        let client_id: String = row.try_get("client_id")?;
        let operator_id: String = row.try_get("operator_id")?;
        let created_at = row.get_ts("created_at")?;
        let granted_at = row.get_opt_ts("granted_at")?.unwrap_or(created_at);
        let last_used_at = row.get_opt_ts("last_used_at")?;
        let same = out.last().is_some_and(|c| c.client_id == client_id);
        if !same {
            let uris: String = row.try_get("redirect_uris")?;
            out.push(ConnectionRow {
                client_id: client_id.clone(),
                client_name: row.try_get("name")?,
                redirect_uris: serde_json::from_str(&uris).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
                operator_ids: Vec::new(),
                granted_at,
                last_used_at: None,
            });
        }
        if let Some(c) = out.last_mut() {
            if !c.operator_ids.contains(&operator_id) {
                c.operator_ids.push(operator_id);
            }
            c.granted_at = c.granted_at.min(granted_at);
            c.last_used_at = c.last_used_at.max(last_used_at);
        }
    }
    // The last use of any of its tokens in the organization, expired ones included: a refresh hands out a fresh
    // access token that has not been used yet, and "last used" must not go back to "not yet" because of it.
    for c in &mut out {
        let row = query(
            "SELECT MAX(last_used_at) AS last_used_at FROM oauth_tokens WHERE organization_id = $1 AND client_id = $2",
        )
        .bind(organization_id)
        .bind(&c.client_id)
        .fetch_one(&mut *conn)
        .await?;
        c.last_used_at = c.last_used_at.max(row.get_opt_ts("last_used_at")?);
    }
    Ok(out)
}

/// Cuts a client off from an organization: every token of it there is revoked (access and refresh alike) and every
/// authorization deleted, so neither a token held nor a code not yet exchanged works again. Answers how many tokens
/// were live.
pub async fn revoke_client_in_organization(
    conn: &mut Conn,
    organization_id: &str,
    client_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<u64> {
    let done = query(
        "UPDATE oauth_tokens SET revoked_at = $1 WHERE organization_id = $2 AND client_id = $3 AND revoked_at IS NULL",
    )
    .bind(format_ts(at))
    .bind(organization_id)
    .bind(client_id)
    .execute(&mut *conn)
    .await?;
    query("DELETE FROM oauth_grants WHERE organization_id = $1 AND client_id = $2")
        .bind(organization_id)
        .bind(client_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}
