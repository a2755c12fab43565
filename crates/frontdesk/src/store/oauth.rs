//! The assistant endpoint's OAuth records: clients, grants (sign-in ticket and authorization code) and tokens.
//! Secrets are looked up by their digest through unique indexes; the rows never hold a secret itself.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::schema::{OauthClients, OauthGrants, OauthTokens};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, Order, Sql};
use crate::store::{Conn, Row};

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
    let insert = insert_row(
        OauthClients::Table,
        [
            (OauthClients::Id, Expr::val(&client.id)),
            (OauthClients::Name, Expr::val(&client.name)),
            (OauthClients::RedirectUris, Expr::val(uris)),
            (OauthClients::CreatedAt, Expr::val(format_ts(client.created_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn get_client(conn: &mut Conn, id: &str) -> StoreResult<Option<ClientRow>> {
    let select = Sql::select()
        .columns([OauthClients::Id, OauthClients::Name, OauthClients::RedirectUris, OauthClients::CreatedAt])
        .from(OauthClients::Table)
        .and_where(Expr::col(OauthClients::Id).eq(id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
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

const GRANT_COLUMNS: [OauthGrants; 16] = [
    OauthGrants::Id,
    OauthGrants::ClientId,
    OauthGrants::OperatorId,
    OauthGrants::OrganizationId,
    OauthGrants::RedirectUri,
    OauthGrants::CodeChallenge,
    OauthGrants::State,
    OauthGrants::Scope,
    OauthGrants::Resource,
    OauthGrants::TicketHash,
    OauthGrants::TicketExpiresAt,
    OauthGrants::TicketUsedAt,
    OauthGrants::CodeHash,
    OauthGrants::CodeExpiresAt,
    OauthGrants::CodeUsedAt,
    OauthGrants::CreatedAt,
];

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
    let insert = insert_row(
        OauthGrants::Table,
        [
            (OauthGrants::Id, Expr::val(&g.id)),
            (OauthGrants::ClientId, Expr::val(&g.client_id)),
            (OauthGrants::OperatorId, Expr::val(&g.operator_id)),
            (OauthGrants::OrganizationId, Expr::val(&g.organization_id)),
            (OauthGrants::RedirectUri, Expr::val(&g.redirect_uri)),
            (OauthGrants::CodeChallenge, Expr::val(&g.code_challenge)),
            (OauthGrants::State, Expr::val(g.state.clone())),
            (OauthGrants::Scope, Expr::val(&g.scope)),
            (OauthGrants::Resource, Expr::val(&g.resource)),
            (OauthGrants::TicketHash, Expr::val(&g.ticket_hash)),
            (OauthGrants::TicketExpiresAt, Expr::val(format_ts(g.ticket_expires_at))),
            (OauthGrants::CreatedAt, Expr::val(format_ts(g.created_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn grant_by_ticket(conn: &mut Conn, ticket_hash: &str) -> StoreResult<Option<GrantRow>> {
    let select = Sql::select()
        .columns(GRANT_COLUMNS)
        .from(OauthGrants::Table)
        .and_where(Expr::col(OauthGrants::TicketHash).eq(ticket_hash))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(grant).transpose()
}

pub async fn grant_by_code(conn: &mut Conn, code_hash: &str) -> StoreResult<Option<GrantRow>> {
    let select = Sql::select()
        .columns(GRANT_COLUMNS)
        .from(OauthGrants::Table)
        .and_where(Expr::col(OauthGrants::CodeHash).eq(code_hash))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(grant).transpose()
}

/// Spends a sign-in ticket; answers whether this call was the one that spent it.
pub async fn use_ticket(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let update = Sql::update()
        .table(OauthGrants::Table)
        .value(OauthGrants::TicketUsedAt, format_ts(at))
        .and_where(Expr::col(OauthGrants::Id).eq(id))
        .and_where(Expr::col(OauthGrants::TicketUsedAt).is_null())
        .take();
    let done = statement(conn.engine(), &update).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

pub async fn set_code(conn: &mut Conn, id: &str, code_hash: &str, expires_at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(OauthGrants::Table)
        .values([
            (OauthGrants::CodeHash, Expr::val(code_hash)),
            (OauthGrants::CodeExpiresAt, Expr::val(format_ts(expires_at))),
        ])
        .and_where(Expr::col(OauthGrants::Id).eq(id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Spends an authorization code; answers whether this call was the one that spent it.
pub async fn use_code(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let update = Sql::update()
        .table(OauthGrants::Table)
        .value(OauthGrants::CodeUsedAt, format_ts(at))
        .and_where(Expr::col(OauthGrants::Id).eq(id))
        .and_where(Expr::col(OauthGrants::CodeUsedAt).is_null())
        .take();
    let done = statement(conn.engine(), &update).execute(conn).await?;
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
    /// The last use at the assistant endpoint (access tokens), recorded to the minute.
    pub last_used_at: Option<DateTime<Utc>>,
}

pub async fn insert_token(conn: &mut Conn, t: &TokenRow) -> StoreResult<()> {
    let insert = insert_row(
        OauthTokens::Table,
        [
            (OauthTokens::Id, Expr::val(&t.id)),
            (OauthTokens::TokenHash, Expr::val(&t.token_hash)),
            (OauthTokens::Kind, Expr::val(&t.kind)),
            (OauthTokens::FamilyId, Expr::val(&t.family_id)),
            (OauthTokens::ClientId, Expr::val(&t.client_id)),
            (OauthTokens::OperatorId, Expr::val(&t.operator_id)),
            (OauthTokens::OrganizationId, Expr::val(&t.organization_id)),
            (OauthTokens::Scope, Expr::val(&t.scope)),
            (OauthTokens::Resource, Expr::val(&t.resource)),
            (OauthTokens::CreatedAt, Expr::val(format_ts(t.created_at))),
            (OauthTokens::ExpiresAt, Expr::val(format_ts(t.expires_at))),
            (OauthTokens::GrantedAt, Expr::val(format_ts(t.granted_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn token_by_hash(conn: &mut Conn, token_hash: &str) -> StoreResult<Option<TokenRow>> {
    let select = Sql::select()
        .columns([
            OauthTokens::Id,
            OauthTokens::TokenHash,
            OauthTokens::Kind,
            OauthTokens::FamilyId,
            OauthTokens::ClientId,
            OauthTokens::OperatorId,
            OauthTokens::OrganizationId,
            OauthTokens::Scope,
            OauthTokens::Resource,
            OauthTokens::CreatedAt,
            OauthTokens::ExpiresAt,
            OauthTokens::UsedAt,
            OauthTokens::RevokedAt,
            OauthTokens::GrantedAt,
            OauthTokens::LastUsedAt,
        ])
        .from(OauthTokens::Table)
        .and_where(Expr::col(OauthTokens::TokenHash).eq(token_hash))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
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
    let update = Sql::update()
        .table(OauthTokens::Table)
        .value(OauthTokens::UsedAt, format_ts(at))
        .and_where(Expr::col(OauthTokens::Id).eq(id))
        .and_where(Expr::col(OauthTokens::UsedAt).is_null())
        .and_where(Expr::col(OauthTokens::RevokedAt).is_null())
        .take();
    let done = statement(conn.engine(), &update).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

pub async fn revoke_token(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(OauthTokens::Table)
        .value(OauthTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(OauthTokens::Id).eq(id))
        .and_where(Expr::col(OauthTokens::RevokedAt).is_null())
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Revokes every token issued from one grant.
pub async fn revoke_family(conn: &mut Conn, family_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(OauthTokens::Table)
        .value(OauthTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(OauthTokens::FamilyId).eq(family_id))
        .and_where(Expr::col(OauthTokens::RevokedAt).is_null())
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Deletes what can no longer be used: tokens expired before `before`, and authorizations begun before it (their
/// ticket and code lived minutes). Revocation of a family needs neither.
pub async fn purge(conn: &mut Conn, before: DateTime<Utc>) -> StoreResult<()> {
    let tokens = Sql::delete()
        .from_table(OauthTokens::Table)
        .and_where(Expr::col(OauthTokens::ExpiresAt).lt(format_ts(before)))
        .take();
    statement(conn.engine(), &tokens).execute(&mut *conn).await?;
    let grants = Sql::delete()
        .from_table(OauthGrants::Table)
        .and_where(Expr::col(OauthGrants::CreatedAt).lt(format_ts(before)))
        .take();
    statement(conn.engine(), &grants).execute(conn).await?;
    Ok(())
}

/// Forgets every assistant grant and token of an operator (their password changed): sign-ins in progress, codes not
/// yet exchanged and tokens issued all stop working.
pub async fn forget_operator(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    let tokens = Sql::delete()
        .from_table(OauthTokens::Table)
        .and_where(Expr::col(OauthTokens::OperatorId).eq(operator_id))
        .take();
    statement(conn.engine(), &tokens).execute(&mut *conn).await?;
    let grants = Sql::delete()
        .from_table(OauthGrants::Table)
        .and_where(Expr::col(OauthGrants::OperatorId).eq(operator_id))
        .take();
    statement(conn.engine(), &grants).execute(conn).await?;
    Ok(())
}

/// Notes that an operator signed in through a client (it is in use, and stays registered).
pub async fn client_used(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(OauthClients::Table)
        .value(OauthClients::UsedAt, format_ts(at))
        .and_where(Expr::col(OauthClients::Id).eq(id))
        .and_where(Expr::col(OauthClients::UsedAt).is_null())
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Removes clients registered before `before` through which no operator ever signed in.
pub async fn purge_unused_clients(conn: &mut Conn, before: DateTime<Utc>) -> StoreResult<u64> {
    let delete = Sql::delete()
        .from_table(OauthClients::Table)
        .and_where(Expr::col(OauthClients::UsedAt).is_null())
        .and_where(Expr::col(OauthClients::CreatedAt).lt(format_ts(before)))
        .take();
    let done = statement(conn.engine(), &delete).execute(conn).await?;
    Ok(done.rows_affected())
}

/// Records an access token's use at `at`, unless one since `since` is recorded already.
pub async fn touch_token(conn: &mut Conn, id: &str, at: DateTime<Utc>, since: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(OauthTokens::Table)
        .value(OauthTokens::LastUsedAt, format_ts(at))
        .and_where(Expr::col(OauthTokens::Id).eq(id))
        .and_where(
            Expr::col(OauthTokens::LastUsedAt).is_null().or(Expr::col(OauthTokens::LastUsedAt).lt(format_ts(since))),
        )
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
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
    let (tokens, clients) = (OauthTokens::Table, OauthClients::Table);
    let select = Sql::select()
        .column((tokens, OauthTokens::ClientId))
        .columns([(clients, OauthClients::Name), (clients, OauthClients::RedirectUris)])
        .columns([
            (tokens, OauthTokens::OperatorId),
            (tokens, OauthTokens::GrantedAt),
            (tokens, OauthTokens::CreatedAt),
            (tokens, OauthTokens::LastUsedAt),
        ])
        .from(tokens)
        .join(
            JoinType::InnerJoin,
            clients,
            Expr::col((clients, OauthClients::Id)).equals((tokens, OauthTokens::ClientId)),
        )
        .and_where(Expr::col((tokens, OauthTokens::OrganizationId)).eq(organization_id))
        .and_where(Expr::col((tokens, OauthTokens::RevokedAt)).is_null())
        .and_where(Expr::col((tokens, OauthTokens::UsedAt)).is_null())
        .and_where(Expr::col((tokens, OauthTokens::ExpiresAt)).gt(format_ts(at)))
        .order_by((clients, OauthClients::Name), Order::Asc)
        .order_by((tokens, OauthTokens::ClientId), Order::Asc)
        .order_by((tokens, OauthTokens::Id), Order::Asc)
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(&mut *conn).await?;
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
        let select = Sql::select()
            .expr_as(Expr::col(OauthTokens::LastUsedAt).max(), "last_used_at")
            .from(OauthTokens::Table)
            .and_where(Expr::col(OauthTokens::OrganizationId).eq(organization_id))
            .and_where(Expr::col(OauthTokens::ClientId).eq(&c.client_id))
            .take();
        let row = statement(conn.engine(), &select).fetch_one(&mut *conn).await?;
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
    let update = Sql::update()
        .table(OauthTokens::Table)
        .value(OauthTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(OauthTokens::OrganizationId).eq(organization_id))
        .and_where(Expr::col(OauthTokens::ClientId).eq(client_id))
        .and_where(Expr::col(OauthTokens::RevokedAt).is_null())
        .take();
    let done = statement(conn.engine(), &update).execute(&mut *conn).await?;
    let delete = Sql::delete()
        .from_table(OauthGrants::Table)
        .and_where(Expr::col(OauthGrants::OrganizationId).eq(organization_id))
        .and_where(Expr::col(OauthGrants::ClientId).eq(client_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(done.rows_affected())
}
