//! Organizations, operators and their access tokens.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::model::identity::{Operator, Organization, Role};
use crate::store::schema::{AccessTokens, OperatorInvitations, Operators, Organizations};
use crate::store::statement::{
    insert_row, one_of_organization, statement, Alias, Asterisk, Expr, ExprTrait, Order, RowLocks, Sql,
};
use crate::store::{Conn, Row};

const ORGANIZATION_COLUMNS: [Organizations; 3] = [Organizations::Id, Organizations::Name, Organizations::CreatedAt];

fn organization(row: &Row) -> StoreResult<Organization> {
    Ok(Organization { id: row.try_get("id")?, name: row.try_get("name")?, created_at: row.get_ts("created_at")? })
}

pub async fn insert_organization(conn: &mut Conn, org: &Organization) -> StoreResult<()> {
    let insert = insert_row(
        Organizations::Table,
        [
            (Organizations::Id, Expr::val(&org.id)),
            (Organizations::Name, Expr::val(&org.name)),
            (Organizations::CreatedAt, Expr::val(format_ts(org.created_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn get_organization(conn: &mut Conn, id: &str) -> StoreResult<Option<Organization>> {
    let select = Sql::select()
        .columns(ORGANIZATION_COLUMNS)
        .from(Organizations::Table)
        .and_where(Expr::col(Organizations::Id).eq(id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(organization).transpose()
}

pub async fn list_organizations(conn: &mut Conn) -> StoreResult<Vec<Organization>> {
    let select = Sql::select()
        .columns(ORGANIZATION_COLUMNS)
        .from(Organizations::Table)
        .order_by(Organizations::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(organization).collect()
}

const OPERATOR_COLUMNS: [Operators; 7] = [
    Operators::Id,
    Operators::OrganizationId,
    Operators::Email,
    Operators::Name,
    Operators::Role,
    Operators::HotelIds,
    Operators::CreatedAt,
];

fn operator(row: &Row) -> StoreResult<Operator> {
    let (role, hotel_ids) = role_of(row)?;
    Ok(Operator {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        email: row.try_get("email")?,
        name: row.try_get("name")?,
        role,
        hotel_ids,
        created_at: row.get_ts("created_at")?,
    })
}

/// An operator's role and hotels, from the columns `role` and `hotel_ids` of `row`.
fn role_of(row: &Row) -> StoreResult<(Role, Option<Vec<String>>)> {
    let role: String = row.try_get("role")?;
    let role = Role::parse(&role).ok_or_else(|| sqlx::Error::Decode(format!("operator role {role}").into()))?;
    let hotels: Option<String> = row.try_get("hotel_ids")?;
    let hotels = match hotels {
        Some(text) => {
            Some(serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(format!("operator hotels: {e}").into()))?)
        }
        None => None,
    };
    Ok((role, hotels))
}

fn hotel_ids_text(hotel_ids: Option<&[String]>) -> StoreResult<Option<String>> {
    hotel_ids.map(|ids| serde_json::to_string(ids).map_err(|e| sqlx::Error::Encode(Box::new(e)).into())).transpose()
}

/// Gives an operator of `organization_id` a role and hotels; answers whether there was such an operator.
pub async fn set_role(
    conn: &mut Conn,
    organization_id: &str,
    operator_id: &str,
    role: Role,
    hotel_ids: Option<&[String]>,
    at: DateTime<Utc>,
) -> StoreResult<bool> {
    let update = Sql::update()
        .table(Operators::Table)
        .value(Operators::Role, role.as_str())
        .value(Operators::HotelIds, hotel_ids_text(hotel_ids)?)
        .value(Operators::UpdatedAt, format_ts(at))
        .and_where(one_of_organization(Operators::Id, operator_id, Operators::OrganizationId, organization_id))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// The ids of the owners of an organization, locked until the transaction ends (on PostgreSQL; SQLite's write
/// transactions are exclusive already), so that two owners demoting each other at once take turns and one owner
/// always remains.
pub async fn owners_locked(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<String>> {
    let select = Sql::select()
        .column(Operators::Id)
        .from(Operators::Table)
        .and_where(Expr::col(Operators::OrganizationId).eq(organization_id))
        .and_where(Expr::col(Operators::Role).eq(Role::Owner.as_str()))
        .order_by(Operators::Id, Order::Asc)
        .lock_for_writing()
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(|row| row.try_get("id")).collect()
}

/// Inserts an operator. One who `claims_email` signs in with it, and no other operator may have it (`Taken`
/// otherwise); an invited operator claims theirs only when they choose a password ([`claim_operator_email`]).
pub async fn insert_operator(
    conn: &mut Conn,
    op: &Operator,
    password_hash: &str,
    claims_email: bool,
) -> StoreResult<()> {
    // Unclaimed, the unique column holds a text no e-mail address can be (it has no @).
    let sign_in_email = if claims_email { op.email.to_lowercase() } else { format!("unclaimed:{}", op.id) };
    let insert = insert_row(
        Operators::Table,
        [
            (Operators::Id, Expr::val(&op.id)),
            (Operators::OrganizationId, Expr::val(&op.organization_id)),
            (Operators::Email, Expr::val(&op.email)),
            (Operators::EmailNormalized, Expr::val(sign_in_email)),
            (Operators::Name, Expr::val(&op.name)),
            (Operators::Role, Expr::val(op.role.as_str())),
            (Operators::HotelIds, Expr::val(hotel_ids_text(op.hotel_ids.as_deref())?)),
            (Operators::PasswordHash, Expr::val(password_hash)),
            (Operators::CreatedAt, Expr::val(format_ts(op.created_at))),
            (Operators::UpdatedAt, Expr::val(format_ts(op.created_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// The operator with this e-mail (case-insensitive) and the stored password hash.
pub async fn find_operator_by_email(conn: &mut Conn, email: &str) -> StoreResult<Option<(Operator, String)>> {
    let select = Sql::select()
        .columns(OPERATOR_COLUMNS)
        .column(Operators::PasswordHash)
        .from(Operators::Table)
        .and_where(Expr::col(Operators::EmailNormalized).eq(email.to_lowercase()))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| Ok((operator(&row)?, row.try_get("password_hash")?))).transpose()
}

/// The operators of an organization (never their password hashes).
pub async fn list_operators(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Operator>> {
    let select = Sql::select()
        .columns(OPERATOR_COLUMNS)
        .from(Operators::Table)
        .and_where(Expr::col(Operators::OrganizationId).eq(organization_id))
        .order_by(Operators::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(operator).collect()
}

pub async fn get_operator(conn: &mut Conn, id: &str) -> StoreResult<Option<Operator>> {
    let select = Sql::select()
        .columns(OPERATOR_COLUMNS)
        .from(Operators::Table)
        .and_where(Expr::col(Operators::Id).eq(id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(operator).transpose()
}

pub async fn set_password_hash(
    conn: &mut Conn,
    operator_id: &str,
    password_hash: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let update = Sql::update()
        .table(Operators::Table)
        .values([(Operators::PasswordHash, Expr::val(password_hash)), (Operators::UpdatedAt, Expr::val(format_ts(at)))])
        .and_where(Expr::col(Operators::Id).eq(operator_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// The operator signs in with their e-mail from now on: `Taken` when another operator has it.
pub async fn claim_operator_email(conn: &mut Conn, operator: &Operator) -> StoreResult<()> {
    let update = Sql::update()
        .table(Operators::Table)
        .value(Operators::EmailNormalized, operator.email.to_lowercase())
        .and_where(Expr::col(Operators::Id).eq(&operator.id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Deletes an operator; their access tokens and assistant grants and tokens go with them (foreign keys cascade).
pub async fn delete_operator(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    let delete = Sql::delete().from_table(Operators::Table).and_where(Expr::col(Operators::Id).eq(operator_id)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// Revokes every access token of an operator.
pub async fn revoke_operator_tokens(conn: &mut Conn, operator_id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(AccessTokens::Table)
        .value(AccessTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(AccessTokens::OperatorId).eq(operator_id))
        .and_where(Expr::col(AccessTokens::RevokedAt).is_null())
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
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
    let insert = insert_row(
        AccessTokens::Table,
        [
            (AccessTokens::Id, Expr::val(token.id)),
            (AccessTokens::OperatorId, Expr::val(token.operator_id)),
            (AccessTokens::OrganizationId, Expr::val(token.organization_id)),
            (AccessTokens::TokenHash, Expr::val(token.token_hash)),
            (AccessTokens::CreatedAt, Expr::val(format_ts(token.created_at))),
            (AccessTokens::ExpiresAt, Expr::val(format_ts(token.expires_at))),
            (AccessTokens::IdleTimeoutSecs, Expr::val(token.idle_timeout_secs)),
            (AccessTokens::Kind, Expr::val(token.kind)),
            (AccessTokens::Name, Expr::val(token.name)),
            (AccessTokens::UserAgent, Expr::val(token.user_agent)),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
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
    /// The operator's name, role and hotels, read with the token: every request needs the role and hotels, and
    /// every write names its operator in the audit log.
    pub operator_name: String,
    pub role: Role,
    pub hotel_ids: Option<Vec<String>>,
}

pub async fn find_access_token(conn: &mut Conn, token_hash: &str) -> StoreResult<Option<StoredAccessToken>> {
    let select = Sql::select()
        .columns(
            [
                AccessTokens::Id,
                AccessTokens::OperatorId,
                AccessTokens::OrganizationId,
                AccessTokens::TokenHash,
                AccessTokens::CreatedAt,
                AccessTokens::ExpiresAt,
                AccessTokens::RevokedAt,
                AccessTokens::LastUsedAt,
                AccessTokens::IdleTimeoutSecs,
            ]
            .map(|column| (AccessTokens::Table, column)),
        )
        .expr_as(Expr::col((Operators::Table, Operators::Name)), Alias::new("operator_name"))
        .column((Operators::Table, Operators::Role))
        .column((Operators::Table, Operators::HotelIds))
        .from(AccessTokens::Table)
        .inner_join(
            Operators::Table,
            Expr::col((Operators::Table, Operators::Id)).equals((AccessTokens::Table, AccessTokens::OperatorId)),
        )
        .and_where(Expr::col((AccessTokens::Table, AccessTokens::TokenHash)).eq(token_hash))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        let (role, hotel_ids) = role_of(&row)?;
        Ok(StoredAccessToken {
            operator_name: row.try_get("operator_name")?,
            role,
            hotel_ids,
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
    let update = Sql::update()
        .table(AccessTokens::Table)
        .value(AccessTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(AccessTokens::Id).eq(id))
        .and_where(Expr::col(AccessTokens::RevokedAt).is_null())
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Records a token's use at `at`, unless one since `since` is recorded already.
pub async fn touch_access_token(conn: &mut Conn, id: &str, at: DateTime<Utc>, since: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(AccessTokens::Table)
        .value(AccessTokens::LastUsedAt, format_ts(at))
        .and_where(Expr::col(AccessTokens::Id).eq(id))
        .and_where(
            Expr::col(AccessTokens::LastUsedAt).is_null().or(Expr::col(AccessTokens::LastUsedAt).lt(format_ts(since))),
        )
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Locks an organization's row until the transaction ends, so that writes that count its operators (removing one)
/// take turns on PostgreSQL (SQLite's write transactions are exclusive already).
pub async fn lock_organization(conn: &mut Conn, organization_id: &str) -> StoreResult<()> {
    let update = Sql::update()
        .table(Organizations::Table)
        .value(Organizations::Name, Expr::col(Organizations::Name))
        .and_where(Expr::col(Organizations::Id).eq(organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn count_operators(conn: &mut Conn, organization_id: &str) -> StoreResult<i64> {
    let select = Sql::select()
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(Operators::Table)
        .and_where(Expr::col(Operators::OrganizationId).eq(organization_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
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
    let insert = insert_row(
        OperatorInvitations::Table,
        [
            (OperatorInvitations::Id, Expr::val(invitation.id)),
            (OperatorInvitations::OperatorId, Expr::val(invitation.operator_id)),
            (OperatorInvitations::OrganizationId, Expr::val(invitation.organization_id)),
            (OperatorInvitations::TokenHash, Expr::val(invitation.token_hash)),
            (OperatorInvitations::InvitedBy, Expr::val(invitation.invited_by)),
            (OperatorInvitations::CreatedAt, Expr::val(format_ts(invitation.created_at))),
            (OperatorInvitations::ExpiresAt, Expr::val(format_ts(invitation.expires_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
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
    let select = Sql::select()
        .columns([
            OperatorInvitations::Id,
            OperatorInvitations::OperatorId,
            OperatorInvitations::TokenHash,
            OperatorInvitations::InvitedBy,
            OperatorInvitations::ExpiresAt,
        ])
        .from(OperatorInvitations::Table)
        .and_where(Expr::col(OperatorInvitations::TokenHash).eq(token_hash))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
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
    let delete = Sql::delete()
        .from_table(OperatorInvitations::Table)
        .and_where(Expr::col(OperatorInvitations::Id).eq(id))
        .take();
    let done = statement(conn.engine(), &delete).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete_operator_invitations(conn: &mut Conn, operator_id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(OperatorInvitations::Table)
        .and_where(Expr::col(OperatorInvitations::OperatorId).eq(operator_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// When each invited operator of an organization's invitation expires (the latest, should there be several).
pub async fn invitation_expiries(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
    let select = Sql::select()
        .column(OperatorInvitations::OperatorId)
        .expr_as(Expr::col(OperatorInvitations::ExpiresAt).max(), "expires_at")
        .from(OperatorInvitations::Table)
        .and_where(Expr::col(OperatorInvitations::OrganizationId).eq(organization_id))
        .group_by_col(OperatorInvitations::OperatorId)
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
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

const LISTED_COLUMNS: [AccessTokens; 8] = [
    AccessTokens::Id,
    AccessTokens::Kind,
    AccessTokens::Name,
    AccessTokens::UserAgent,
    AccessTokens::CreatedAt,
    AccessTokens::ExpiresAt,
    AccessTokens::LastUsedAt,
    AccessTokens::IdleTimeoutSecs,
];

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
    let select = Sql::select()
        .columns(LISTED_COLUMNS)
        .from(AccessTokens::Table)
        .and_where(Expr::col(AccessTokens::OperatorId).eq(operator_id))
        .and_where(Expr::col(AccessTokens::RevokedAt).is_null())
        .and_where(Expr::col(AccessTokens::ExpiresAt).gt(format_ts(at)))
        .order_by(AccessTokens::CreatedAt, Order::Desc)
        .order_by(AccessTokens::Id, Order::Desc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(listed).collect()
}

/// One unrevoked token of the operator.
pub async fn get_operator_token(
    conn: &mut Conn,
    operator_id: &str,
    id: &str,
) -> StoreResult<Option<ListedAccessToken>> {
    let select = Sql::select()
        .columns(LISTED_COLUMNS)
        .from(AccessTokens::Table)
        .and_where(Expr::col(AccessTokens::OperatorId).eq(operator_id))
        .and_where(Expr::col(AccessTokens::Id).eq(id))
        .and_where(Expr::col(AccessTokens::RevokedAt).is_null())
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(listed).transpose()
}

/// Revokes every signed-in session of the operator but `keep_id`; named tokens stay. Answers how many ended.
pub async fn revoke_other_sessions(
    conn: &mut Conn,
    operator_id: &str,
    keep_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<u64> {
    let update = Sql::update()
        .table(AccessTokens::Table)
        .value(AccessTokens::RevokedAt, format_ts(at))
        .and_where(Expr::col(AccessTokens::OperatorId).eq(operator_id))
        .and_where(Expr::col(AccessTokens::Id).ne(keep_id))
        .and_where(Expr::col(AccessTokens::Kind).eq("session"))
        .and_where(Expr::col(AccessTokens::RevokedAt).is_null())
        .take();
    let done = statement(conn.engine(), &update).execute(conn).await?;
    Ok(done.rows_affected())
}

/// When the operator of access token `id` last gave their password: a step-up's time, else signing in (the token's
/// creation). `None`: no such token.
pub async fn password_given_at(conn: &mut Conn, id: &str) -> StoreResult<Option<DateTime<Utc>>> {
    let select = Sql::select()
        .columns([AccessTokens::CreatedAt, AccessTokens::PasswordGivenAt])
        .from(AccessTokens::Table)
        .and_where(Expr::col(AccessTokens::Id).eq(id))
        .take();
    let Some(row) = statement(conn.engine(), &select).fetch_optional(conn).await? else { return Ok(None) };
    Ok(Some(match row.get_opt_ts("password_given_at")? {
        Some(at) => at,
        None => row.get_ts("created_at")?,
    }))
}

/// Records that the operator of access token `id` gave their password again at `at` (a step-up).
pub async fn set_password_given_at(conn: &mut Conn, id: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(AccessTokens::Table)
        .value(AccessTokens::PasswordGivenAt, format_ts(at))
        .and_where(Expr::col(AccessTokens::Id).eq(id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}
