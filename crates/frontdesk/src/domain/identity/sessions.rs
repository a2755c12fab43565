//! Signing in and out, the access tokens it issues, and the authentication of both credential kinds (operator
//! access tokens, API keys).

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{busy, Operator, Organization};
use crate::domain::access::{Actor, Credential};
use crate::domain::change::{Change, Job, Writer};
use crate::domain::{attempts, new_id, now, operator_tokens, secrets, Error, Result};
use crate::store::api_keys::scopes_from_text;
use crate::store::{self, identity as rows, Db};

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
        kind: operator_tokens::KIND_TOKEN,
        name: Some("Command line"),
        user_agent: None,
        expires_at: created_at + ttl,
        idle: None,
    };
    let mut tx = Change::begin_as(db, Writer::CommandLine).await?;
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
        kind: operator_tokens::KIND_SESSION,
        name: None,
        user_agent,
        expires_at: created_at + limits.ttl,
        idle: limits.idle,
    };
    let mut tx = Change::begin_as(db, Writer::Operator { operator_id: operator.id.clone() }).await?;
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
    tx: &mut Change,
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

/// Revokes the access token the operator used for this request.
pub async fn logout(db: &Db, actor: &Actor) -> Result<()> {
    let Credential::Operator { token_id, .. } = &actor.credential else {
        return Err(Error::Forbidden("only an operator access token can be logged out".into()));
    };
    let mut tx = Change::begin(db, actor).await?;
    rows::revoke_access_token(tx.conn(), token_id, now()).await?;
    tx.commit().await?;
    Ok(())
}

/// Ends the session a browser held before it signed in again (the token of its session cookie), whoever's it was:
/// a session planted in the browser, or left there, must not outlive the sign-in that replaces it.
/// `writer` is the sign-in that replaces it.
pub async fn end_replaced_session(db: &Db, writer: Writer, token: &str) -> Result<()> {
    if !token.starts_with(secrets::ACCESS_TOKEN_PREFIX) {
        return Ok(());
    }
    let digest = secrets::digest(token);
    let Some(stored) = rows::find_access_token(&mut *db.read().await?, &digest).await? else { return Ok(()) };
    if !secrets::digests_match(&stored.token_hash, &digest) || stored.revoked {
        return Ok(());
    }
    let mut tx = Change::begin_as(db, writer).await?;
    rows::revoke_access_token(tx.conn(), &stored.id, now()).await?;
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
    // The first use is recorded (in the background, off the request's path; a token used once must not read "not
    // yet"), later ones at most once per granularity, as for API keys.
    if stored.last_used_at.is_none_or(|t| at - t >= LAST_USED_GRANULARITY) {
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
        credential: Credential::Operator {
            operator_id: stored.operator_id,
            name: stored.operator_name,
            token_id: stored.id,
            role: stored.role,
            hotels: stored.hotel_ids,
        },
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
            name: key.name,
            scopes: scopes_from_text(&key.scopes),
            rate_limit_per_minute: key.rate_limit_per_minute.and_then(|l| u32::try_from(l).ok()),
        },
    })
}

async fn touch_access_token(db: &Db, id: &str, at: DateTime<Utc>) -> Result<()> {
    let mut tx = Change::begin_as(db, Writer::Job(Job::LastUse)).await?;
    rows::touch_access_token(tx.conn(), id, at, at - LAST_USED_GRANULARITY).await?;
    tx.commit().await?;
    Ok(())
}

async fn touch_api_key(db: &Db, id: &str, at: DateTime<Utc>) -> Result<()> {
    let mut tx = Change::begin_as(db, Writer::Job(Job::LastUse)).await?;
    store::api_keys::touch(tx.conn(), id, at, at - LAST_USED_GRANULARITY).await?;
    tx.commit().await?;
    Ok(())
}
