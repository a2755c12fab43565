//! Organizations, operators, sign-in and authentication of both credential kinds.

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::{scopes_from_text, Actor, Credential};
use super::attempts;
use super::validate::{clean, Checks};
use super::{new_id, now, secrets, Error, Result};
use crate::store::{self, identity as rows, Db};

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// A dashboard user of one organization.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Operator {
    pub id: String,
    pub organization_id: String,
    pub email: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoginIn {
    pub email: String,
    pub password: String,
}

/// An operator access token, shown once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOut {
    /// Send as `Authorization: Token <token>`. Shown only in this response.
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub operator: Operator,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeOut {
    pub operator: Operator,
    pub organization: Organization,
}

pub async fn create_organization(db: &Db, name: &str) -> Result<Organization> {
    let mut checks = Checks::new();
    checks.line("name", name, 200);
    checks.finish()?;
    let org = Organization { id: new_id(), name: clean(name), created_at: now() };
    let mut tx = db.begin_write().await?;
    rows::insert_organization(tx.conn(), &org).await?;
    tx.commit().await?;
    Ok(org)
}

pub async fn list_organizations(db: &Db) -> Result<Vec<Organization>> {
    Ok(rows::list_organizations(&mut *db.read().await?).await?)
}

/// The operators of the actor's organization (operators and the service itself only).
pub async fn list_operators(db: &Db, actor: &Actor) -> Result<Vec<Operator>> {
    actor.require_operator()?;
    Ok(rows::list_operators(&mut *db.read().await?, &actor.organization_id).await?)
}

pub struct OperatorIn<'a> {
    pub organization_id: &'a str,
    pub email: &'a str,
    pub name: &'a str,
    pub password: &'a str,
}

pub async fn create_operator(db: &Db, input: OperatorIn<'_>) -> Result<Operator> {
    let mut checks = Checks::new();
    checks.email("email", input.email);
    checks.line("name", input.name, 200);
    check_new_password(&mut checks, input.password);
    checks.finish()?;
    let password_hash = hash(input.password).await?;
    let mut tx = db.begin_write().await?;
    let op = insert_operator(&mut tx, &input, &password_hash).await?;
    tx.commit().await?;
    Ok(op)
}

async fn insert_operator(tx: &mut store::WriteTx, input: &OperatorIn<'_>, password_hash: &str) -> Result<Operator> {
    let op = Operator {
        id: new_id(),
        organization_id: input.organization_id.to_string(),
        email: clean(input.email),
        name: clean(input.name),
        created_at: now(),
    };
    if rows::get_organization(tx.conn(), &op.organization_id).await?.is_none() {
        return Err(Error::NotFound("organization"));
    }
    match rows::insert_operator(tx.conn(), &op, password_hash).await {
        Err(e) if store::is_unique_violation(&e) => Err(Error::Validation(vec![super::FieldError::field(
            "email",
            "an operator with this e-mail already exists",
        )])),
        other => {
            other?;
            Ok(op)
        }
    }
}

/// A password's argon2id hash, made in turn with every other ([`secrets::PasswordHashing`]).
async fn hash(password: &str) -> Result<String> {
    let password = password.to_string();
    secrets::PasswordHashing::global()
        .run(move || secrets::hash_password(&password))
        .await
        .map_err(busy)?
        .map_err(Error::from)
}

/// A password check or hash that waited for its turn in vain: 429, try again in a moment.
fn busy(err: anyhow::Error) -> Error {
    match err.downcast::<secrets::HashingBusy>() {
        Ok(_) => Error::TooManyAttempts {
            message: "the service is checking too many sign-ins at once; try again in a moment".into(),
            retry_after_secs: 1,
        },
        Err(err) => Error::Internal(err),
    }
}

/// How long a session token lives, and how long it may go unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub ttl: TimeDelta,
    /// `None`: no idle limit (tokens for scripts, `admin create-token`).
    pub idle: Option<TimeDelta>,
}

/// Issues a new access token for an operator, without an idle limit (`admin create-token`): a named token, like
/// those the dashboard's Integrations page makes.
pub async fn issue_token(db: &Db, operator: Operator, ttl: TimeDelta) -> Result<SessionOut> {
    let token = secrets::generate(secrets::ACCESS_TOKEN_PREFIX);
    let created_at = now();
    let new = NewToken {
        kind: super::operator_tokens::KIND_TOKEN,
        name: Some("Command line"),
        user_agent: None,
        expires_at: created_at + ttl,
        idle: None,
    };
    let mut tx = db.begin_write().await?;
    insert_token(&mut tx, &operator, &token, created_at, &new).await?;
    tx.commit().await?;
    Ok(SessionOut { token, expires_at: new.expires_at, operator })
}

/// Issues a new session token for an operator who signed in (with the browser's `User-Agent`, when one was sent).
pub async fn issue_session(
    db: &Db,
    operator: Operator,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let token = secrets::generate(secrets::ACCESS_TOKEN_PREFIX);
    let created_at = now();
    let new = NewToken {
        kind: super::operator_tokens::KIND_SESSION,
        name: None,
        user_agent,
        expires_at: created_at + limits.ttl,
        idle: limits.idle,
    };
    let mut tx = db.begin_write().await?;
    insert_token(&mut tx, &operator, &token, created_at, &new).await?;
    tx.commit().await?;
    Ok(SessionOut { token, expires_at: new.expires_at, operator })
}

/// What distinguishes one access token from another, besides its operator.
pub(crate) struct NewToken<'a> {
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub expires_at: DateTime<Utc>,
    pub idle: Option<TimeDelta>,
}

/// Stores a new access token (its digest) in the transaction; answers its id.
pub(crate) async fn insert_token(
    tx: &mut store::WriteTx,
    operator: &Operator,
    token: &str,
    created_at: DateTime<Utc>,
    new: &NewToken<'_>,
) -> Result<String> {
    let id = new_id();
    // A browser's description of itself is only shown back, never trusted: kept to one short line.
    let user_agent: Option<String> =
        new.user_agent.map(|ua| ua.chars().filter(|c| !c.is_control()).take(300).collect());
    rows::insert_access_token(
        tx.conn(),
        &rows::NewAccessToken {
            id: &id,
            operator_id: &operator.id,
            organization_id: &operator.organization_id,
            token_hash: &secrets::digest(token),
            created_at,
            expires_at: new.expires_at,
            idle_timeout_secs: new.idle.map(|idle| idle.num_seconds()),
            kind: new.kind,
            name: new.name,
            user_agent: user_agent.as_deref(),
        },
    )
    .await?;
    Ok(id)
}

pub async fn find_operator_by_email(db: &Db, email: &str) -> Result<Operator> {
    rows::find_operator_by_email(&mut *db.read().await?, email.trim())
        .await?
        .map(|(op, _)| op)
        .ok_or(Error::NotFound("operator"))
}

/// Signs an operator in and issues a session token. A wrong e-mail and a wrong password answer alike, and take
/// alike long.
pub async fn login(
    db: &Db,
    input: LoginIn,
    address: &str,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let operator = sign_in(db, &input.email, input.password, address).await?;
    issue_session(db, operator, limits, user_agent).await
}

/// The operator whose e-mail and password these are, for a sign-in from the client `address`. Every way to sign in
/// comes through here: the attempt is counted before the password is checked, and refused (429, with the wait)
/// while its counts ask to wait ([`attempts::begin_sign_in`]). A wrong e-mail and a wrong password answer alike
/// (401), and take alike long.
pub async fn sign_in(db: &Db, email: &str, password: String, address: &str) -> Result<Operator> {
    let attempt = attempts::begin_sign_in(db, email, address).await?;
    match check_password(db, email, password).await {
        Ok(operator) => {
            attempt.succeeded(db).await?;
            Ok(operator)
        }
        Err(err @ Error::Unauthorized(_)) => {
            attempt.failed(db).await?;
            Err(err)
        }
        // Not an answer about the password (busy, the database): the attempt stays counted, its wait as it was.
        Err(err) => Err(err),
    }
}

async fn check_password(db: &Db, email: &str, password: String) -> Result<Operator> {
    let found = rows::find_operator_by_email(&mut *db.read().await?, email.trim()).await?;
    let (operator, hash) = match found {
        Some((op, hash)) => (Some(op), Some(hash)),
        None => (None, None),
    };
    let verified = secrets::PasswordHashing::global()
        .run(move || {
            let hash = hash.as_deref().unwrap_or_else(|| secrets::dummy_password_hash());
            secrets::verify_password(&password, hash)
        })
        .await
        .map_err(busy)?;
    match operator {
        Some(op) if verified => Ok(op),
        _ => Err(Error::Unauthorized("invalid e-mail or password".into())),
    }
}

/// The operators of the actor's organization, each with when their invitation link expires while they have not
/// chosen a password yet (`None`: they have one).
#[derive(Debug, Clone)]
pub struct OperatorEntry {
    pub operator: Operator,
    pub invited_until: Option<DateTime<Utc>>,
}

pub async fn operators_with_invitations(db: &Db, actor: &Actor) -> Result<Vec<OperatorEntry>> {
    actor.require_operator()?;
    let mut conn = db.read().await?;
    let operators = rows::list_operators(&mut conn, &actor.organization_id).await?;
    let invited = rows::invitation_expiries(&mut conn, &actor.organization_id).await?;
    Ok(operators
        .into_iter()
        .map(|operator| {
            let invited_until = invited.iter().find(|(id, _)| *id == operator.id).map(|(_, at)| *at);
            OperatorEntry { operator, invited_until }
        })
        .collect())
}

/// An operator of the actor's organization, or 404 (another organization's operators do not exist for it).
pub async fn operator_of_organization(db: &Db, actor: &Actor, id: &str) -> Result<Operator> {
    actor.require_operator()?;
    in_organization(&mut *db.read().await?, actor, id).await
}

async fn in_organization(conn: &mut sqlx::AnyConnection, actor: &Actor, id: &str) -> Result<Operator> {
    rows::get_operator(conn, id)
        .await?
        .filter(|op| op.organization_id == actor.organization_id)
        .ok_or(Error::NotFound("operator"))
}

/// The operator the actor signs in as, if it is one (not an API key, not the command line).
fn acting_operator(actor: &Actor) -> Option<&str> {
    match &actor.credential {
        Credential::Operator { operator_id, .. } => Some(operator_id),
        _ => None,
    }
}

/// Adds an operator with a password chosen for them, to the actor's organization.
pub async fn add_operator(db: &Db, actor: &Actor, email: &str, name: &str, password: &str) -> Result<Operator> {
    actor.require_operator()?;
    create_operator(db, OperatorIn { organization_id: &actor.organization_id, email, name, password }).await
}

/// How long an invitation link works.
pub const INVITATION_TTL: TimeDelta = TimeDelta::days(7);

/// The prefix of an invitation link's token.
pub const INVITATION_PREFIX: &str = "fdi_";

/// An invitation: the token of its link, shown once to the operator who invited, and never stored.
#[derive(Debug)]
pub struct Invitation {
    pub operator: Operator,
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// Adds an operator to the actor's organization who chooses their own password through a link ([`accept_invitation`]).
/// Until then the operator has a random password nobody knows, so nobody can sign in as them.
pub async fn invite_operator(db: &Db, actor: &Actor, email: &str, name: &str) -> Result<Invitation> {
    actor.require_operator()?;
    let input = OperatorIn { organization_id: &actor.organization_id, email, name, password: "" };
    let mut checks = Checks::new();
    checks.email("email", input.email);
    checks.line("name", input.name, 200);
    checks.finish()?;
    let unknowable = hash(&secrets::generate("")).await?;
    let mut tx = db.begin_write().await?;
    let operator = insert_operator(&mut tx, &input, &unknowable).await?;
    let invitation = new_invitation(&mut tx, actor, &operator).await?;
    tx.commit().await?;
    Ok(invitation)
}

/// A new link for an operator who has not chosen a password yet (their earlier links stop working).
pub async fn renew_invitation(db: &Db, actor: &Actor, operator_id: &str) -> Result<Invitation> {
    actor.require_operator()?;
    let mut tx = db.begin_write().await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    let pending = rows::invitation_expiries(tx.conn(), &actor.organization_id).await?;
    if !pending.iter().any(|(id, _)| *id == operator.id) {
        return Err(Error::Conflict(format!("{} has chosen a password already", operator.name)));
    }
    rows::delete_operator_invitations(tx.conn(), &operator.id).await?;
    let invitation = new_invitation(&mut tx, actor, &operator).await?;
    tx.commit().await?;
    Ok(invitation)
}

async fn new_invitation(tx: &mut store::WriteTx, actor: &Actor, operator: &Operator) -> Result<Invitation> {
    let token = secrets::generate(INVITATION_PREFIX);
    let created_at = now();
    let expires_at = created_at + INVITATION_TTL;
    let invited_by = who(tx.conn(), actor).await?;
    rows::insert_invitation(
        tx.conn(),
        &rows::NewInvitation {
            id: &new_id(),
            operator_id: &operator.id,
            organization_id: &operator.organization_id,
            token_hash: &secrets::digest(&token),
            invited_by: &invited_by,
            created_at,
            expires_at,
        },
    )
    .await?;
    Ok(Invitation { operator: operator.clone(), token, expires_at })
}

/// What an invitation link's page shows: who is invited, to which organization, by whom.
#[derive(Debug)]
pub struct InvitationView {
    pub operator: Operator,
    pub organization: Organization,
    pub invited_by: String,
}

/// The invitation a link's token opens: 404 for a token that is unknown, used, replaced or expired (one answer for
/// all, so a link says nothing about why it does not work).
pub async fn invitation(db: &Db, token: &str) -> Result<InvitationView> {
    let mut conn = db.read().await?;
    let stored = valid_invitation(&mut conn, token).await?;
    let operator = rows::get_operator(&mut conn, &stored.operator_id).await?.ok_or(Error::NotFound("invitation"))?;
    let organization =
        rows::get_organization(&mut conn, &operator.organization_id).await?.ok_or(Error::NotFound("invitation"))?;
    Ok(InvitationView { operator, organization, invited_by: stored.invited_by })
}

async fn valid_invitation(conn: &mut sqlx::AnyConnection, token: &str) -> Result<rows::StoredInvitation> {
    let gone = || Error::NotFound("invitation");
    if !token.starts_with(INVITATION_PREFIX) {
        return Err(gone());
    }
    let digest = secrets::digest(token);
    let stored = rows::find_invitation(conn, &digest).await?.ok_or_else(gone)?;
    if !secrets::digests_match(&stored.token_hash, &digest) || stored.expires_at <= now() {
        return Err(gone());
    }
    Ok(stored)
}

/// Sets the invited operator's password through their link, once, and signs them in. The link stops working.
/// `user_agent` is the browser's, recorded on the session it gets (the operator's list of signed-in browsers).
pub async fn accept_invitation(
    db: &Db,
    token: &str,
    password: &str,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let mut checks = Checks::new();
    check_new_password(&mut checks, password);
    checks.finish()?;
    let password_hash = hash(password).await?;
    let mut tx = db.begin_write().await?;
    let stored = valid_invitation(tx.conn(), token).await?;
    // Deleted first: of two uses of one link at once, only the one that deletes it goes on.
    if !rows::delete_invitation(tx.conn(), &stored.id).await? {
        return Err(Error::NotFound("invitation"));
    }
    let operator = rows::get_operator(tx.conn(), &stored.operator_id).await?.ok_or(Error::NotFound("invitation"))?;
    let at = now();
    rows::set_password_hash(tx.conn(), &operator.id, &password_hash, at).await?;
    rows::delete_operator_invitations(tx.conn(), &operator.id).await?;
    tx.commit().await?;
    issue_session(db, operator, limits, user_agent).await
}

/// Gives another operator of the actor's organization a new password. Every session token, connector token and
/// connector sign-in in progress of that operator ends with the old password, and any invitation link of theirs
/// stops working. An operator changes their own password with [`change_own_password`], which asks for the current
/// one.
pub async fn reset_password(db: &Db, actor: &Actor, operator_id: &str, password: &str) -> Result<Operator> {
    actor.require_operator()?;
    if acting_operator(actor) == Some(operator_id) {
        return Err(Error::Conflict(
            "change your own password with your current one (Your password), not by resetting it".into(),
        ));
    }
    let mut checks = Checks::new();
    check_new_password(&mut checks, password);
    checks.finish()?;
    let password_hash = hash(password).await?;
    let mut tx = db.begin_write().await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    replace_password(&mut tx, &operator.id, &password_hash).await?;
    tx.commit().await?;
    Ok(operator)
}

/// Stores a new password hash and ends everything the old password opened.
async fn replace_password(tx: &mut store::WriteTx, operator_id: &str, password_hash: &str) -> Result<()> {
    let at = now();
    rows::set_password_hash(tx.conn(), operator_id, password_hash, at).await?;
    rows::revoke_operator_tokens(tx.conn(), operator_id, at).await?;
    rows::delete_operator_invitations(tx.conn(), operator_id).await?;
    store::oauth::forget_operator(tx.conn(), operator_id).await?;
    Ok(())
}

/// The signed-in operator changes their own password, giving the current one (checked, and counted, as a sign-in
/// from `address` is: a session left open cannot be used to guess it). Every session and token of theirs ends, this
/// one too; the new session answered replaces it.
pub async fn change_own_password(
    db: &Db,
    actor: &Actor,
    current: String,
    new: &str,
    address: &str,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let Some(operator_id) = acting_operator(actor) else {
        return Err(Error::Forbidden("only a signed-in operator has a password to change".into()));
    };
    let me = rows::get_operator(&mut *db.read().await?, operator_id).await?.ok_or(Error::NotFound("operator"))?;
    let mut checks = Checks::new();
    check_new_password(&mut checks, new);
    checks.finish()?;
    match sign_in(db, &me.email, current, address).await {
        Ok(_) => {}
        Err(Error::Unauthorized(_)) => {
            return Err(Error::Validation(vec![super::FieldError::field(
                "currentPassword",
                "is not your current password",
            )]))
        }
        Err(err) => return Err(err),
    }
    let password_hash = hash(new).await?;
    let mut tx = db.begin_write().await?;
    replace_password(&mut tx, &me.id, &password_hash).await?;
    tx.commit().await?;
    issue_session(db, me, limits, user_agent).await
}

/// Removes an operator of the actor's organization, and with them (the database cascades) every session token,
/// connector token, connector sign-in and invitation of theirs. An operator cannot remove themselves, and an
/// organization keeps at least one operator, so that nobody locks the organization out of its dashboard by a click.
/// The command line (the service's administrator, who can create operators) may remove the last one.
pub async fn remove_operator(db: &Db, actor: &Actor, operator_id: &str) -> Result<Operator> {
    actor.require_operator()?;
    if acting_operator(actor) == Some(operator_id) {
        return Err(Error::Conflict("you cannot remove yourself; another operator of your organization can".into()));
    }
    let mut tx = db.begin_write().await?;
    rows::lock_organization(tx.conn(), &actor.organization_id).await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    let by_command_line = matches!(actor.credential, Credential::System);
    if !by_command_line && rows::count_operators(tx.conn(), &actor.organization_id).await? <= 1 {
        return Err(Error::Conflict("the last operator of an organization cannot be removed".into()));
    }
    rows::delete_operator(tx.conn(), &operator.id).await?;
    tx.commit().await?;
    Ok(operator)
}

fn check_new_password(checks: &mut Checks, password: &str) {
    if password.chars().count() < 8 {
        checks.fail("password", "must be at least 8 characters");
    }
}

/// The organization of an operator's sign-in (the consent page names it).
pub async fn organization(db: &Db, id: &str) -> Result<Organization> {
    rows::get_organization(&mut *db.read().await?, id).await?.ok_or(Error::NotFound("organization"))
}

/// Revokes the access token the operator used for this request.
pub async fn logout(db: &Db, actor: &Actor) -> Result<()> {
    let Credential::Operator { token_id, .. } = &actor.credential else {
        return Err(Error::Forbidden("only an operator access token can be logged out".into()));
    };
    let mut tx = db.begin_write().await?;
    rows::revoke_access_token(tx.conn(), token_id, now()).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn me(db: &Db, actor: &Actor) -> Result<MeOut> {
    let Credential::Operator { operator_id, .. } = &actor.credential else {
        return Err(Error::Forbidden("this endpoint requires an operator access token".into()));
    };
    let mut conn = db.read().await?;
    let operator = rows::get_operator(&mut conn, operator_id).await?.ok_or(Error::NotFound("operator"))?;
    let organization =
        rows::get_organization(&mut conn, &operator.organization_id).await?.ok_or(Error::NotFound("organization"))?;
    Ok(MeOut { operator, organization })
}

fn invalid_credentials() -> Error {
    Error::Unauthorized("invalid credentials".into())
}

/// Authenticates an operator access token.
pub async fn authenticate_token(db: &Db, token: &str) -> Result<Actor> {
    if !token.starts_with(secrets::ACCESS_TOKEN_PREFIX) {
        return Err(invalid_credentials());
    }
    let digest = secrets::digest(token);
    let stored = rows::find_access_token(&mut *db.read().await?, &digest).await?.ok_or_else(invalid_credentials)?;
    if !secrets::digests_match(&stored.token_hash, &digest) || stored.revoked {
        return Err(invalid_credentials());
    }
    let at = Utc::now();
    if stored.expires_at <= at {
        return Err(Error::Unauthorized("the access token has expired".into()));
    }
    let last_used = stored.last_used_at.unwrap_or(stored.created_at);
    if let Some(idle) = stored.idle_timeout_secs {
        if last_used + TimeDelta::seconds(idle) <= at {
            return Err(Error::Unauthorized("the session has ended: it was not used for too long".into()));
        }
    }
    if at - last_used >= LAST_USED_GRANULARITY {
        let db = db.clone();
        let id = stored.id.clone();
        tokio::spawn(async move {
            if let Err(err) = touch_access_token(&db, &id, at).await {
                tracing::warn!(error = %err, "could not record an access token's last use");
            }
        });
    }
    Ok(Actor {
        organization_id: stored.organization_id,
        hotel_pin: None,
        credential: Credential::Operator { operator_id: stored.operator_id, token_id: stored.id },
    })
}

/// How stale `lastUsedAt` of a key (and the last use of a session) may get: recording every use would turn each
/// read into a write. A session's idle limit is therefore kept to within this much.
const LAST_USED_GRANULARITY: TimeDelta = TimeDelta::seconds(60);

/// Authenticates an API key secret.
pub async fn authenticate_api_key(db: &Db, secret: &str) -> Result<Actor> {
    if !secret.starts_with(secrets::API_KEY_PREFIX) {
        return Err(invalid_credentials());
    }
    let digest = secrets::digest(secret);
    // Reused for a few milliseconds: a key revoked through another process stops working within that bound.
    let key = store::api_keys::find_by_digest_recent(db, &digest).await?.ok_or_else(invalid_credentials)?;
    if !secrets::digests_match(&key.secret_hash, &digest) {
        return Err(invalid_credentials());
    }
    let now = now();
    if key.last_used_at.is_none_or(|t| now - t >= LAST_USED_GRANULARITY) {
        let db = db.clone();
        let id = key.id.clone();
        tokio::spawn(async move {
            if let Err(err) = touch_api_key(&db, &id, now).await {
                tracing::warn!(error = %err, "could not record an API key's last use");
            }
        });
    }
    Ok(Actor {
        organization_id: key.organization_id,
        hotel_pin: key.hotel_id,
        credential: Credential::ApiKey {
            key_id: key.id,
            scopes: scopes_from_text(&key.scopes),
            rate_limit_per_minute: key.rate_limit_per_minute.and_then(|l| u32::try_from(l).ok()),
        },
    })
}

async fn touch_access_token(db: &Db, id: &str, at: DateTime<Utc>) -> Result<()> {
    let mut tx = db.begin_write().await?;
    rows::touch_access_token(tx.conn(), id, at, at - LAST_USED_GRANULARITY).await?;
    tx.commit().await?;
    Ok(())
}

async fn touch_api_key(db: &Db, id: &str, at: DateTime<Utc>) -> Result<()> {
    let mut tx = db.begin_write().await?;
    store::api_keys::touch(tx.conn(), id, at, at - LAST_USED_GRANULARITY).await?;
    tx.commit().await?;
    Ok(())
}

/// Who an actor is, as people read it in a record's history: the operator's name, `API key <name>`, or
/// `Frontdesk` for the service itself (the command line, the demo).
pub async fn who(conn: &mut sqlx::AnyConnection, actor: &Actor) -> Result<String> {
    Ok(match &actor.credential {
        Credential::Operator { operator_id, .. } => match store::identity::get_operator(conn, operator_id).await? {
            Some(operator) => operator.name,
            None => "an operator".to_string(),
        },
        Credential::ApiKey { key_id, .. } => match store::api_keys::get(conn, &actor.organization_id, key_id).await? {
            Some(key) => format!("API key {}", key.name),
            None => "an API key".to_string(),
        },
        Credential::System => "Frontdesk".to_string(),
    })
}
