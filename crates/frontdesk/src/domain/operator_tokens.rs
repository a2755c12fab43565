//! An operator's own access tokens, as the dashboard's Integrations page shows them: named tokens for scripts and
//! back-office tools (the contract's `Authorization: Token …`), and the sessions signing in started.
//!
//! Both kinds are rows of `access_tokens` and authenticate alike ([`super::identity::authenticate_token`]); they
//! differ in how they end. A session ends when signed out, after the idle limit (`--session-idle-timeout-hours`) or
//! at its expiry. A named token has no idle limit (a nightly script would otherwise lose it over a holiday): it ends
//! at the expiry its operator chose, if any, or when revoked. Either kind ends when the operator's password changes.
//! An operator sees and revokes only their own tokens: another operator's (of any organization) is not found.

use chrono::{DateTime, Datelike, NaiveDate, TimeDelta, Utc};

use super::access::{Actor, Credential};
use super::identity::{self, NewToken, Operator};
use super::validate::{clean, Checks};
use super::{now, secrets, Error, Result};
use crate::domain::change::{Change, Record, RecordKind};
use crate::model::identity::Role;
use crate::store::{identity as rows, Db};

/// A token issued by signing in.
pub const KIND_SESSION: &str = "session";
/// A token an operator named, for a script or tool (or `admin create-token`).
pub const KIND_TOKEN: &str = "token";

/// The expiry stored for a named token without one: `expires_at` is required, and no token outlives this.
const NEVER_YEAR: i32 = 9999;

/// How far ahead an owner may choose an expiry (or none).
pub const MAX_EXPIRY_DAYS: u64 = 3 * 366;

/// How far ahead anyone but an owner may choose an expiry, which they must: a token outlives the shift it was made
/// for, and only an owner decides that a tool may act for someone for longer (docs/roles.md).
pub const MAX_STAFF_EXPIRY_DAYS: u64 = 90;

/// How far ahead `actor` may choose a token's expiry, and whether they may choose none.
pub fn expiry_limit(actor: &Actor) -> (u64, bool) {
    match &actor.credential {
        Credential::Operator { role, .. } if *role != Role::Owner => (MAX_STAFF_EXPIRY_DAYS, false),
        _ => (MAX_EXPIRY_DAYS, true),
    }
}

/// A token or session of the signed-in operator (never the token itself, which is shown once).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorToken {
    pub id: String,
    pub name: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: DateTime<Utc>,
    /// `None`: a named token that lives until revoked.
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// Whether this is the token of the request that asked (the session the page is shown in).
    #[serde(skip)]
    pub current: bool,
}

/// An operator's token belongs to no hotel: it acts in all the operator may see.
impl Record for OperatorToken {
    const KIND: RecordKind = RecordKind::AccessToken;

    fn hotel_id(&self) -> Option<&str> {
        None
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}

/// The operator's live named tokens and signed-in sessions, newest first.
#[derive(Debug, Clone, Default)]
pub struct OperatorTokens {
    pub tokens: Vec<OperatorToken>,
    pub sessions: Vec<OperatorToken>,
}

/// A named token just made, with the token itself (shown this once).
#[derive(Debug, Clone)]
pub struct CreatedToken {
    pub token: OperatorToken,
    pub secret: String,
}

/// The operator and token id behind a request (operators' tokens only: an API key has no tokens of its own).
fn operator_of(actor: &Actor) -> Result<(&str, &str)> {
    match &actor.credential {
        Credential::Operator { operator_id, token_id, .. } => Ok((operator_id.as_str(), token_id.as_str())),
        _ => Err(Error::Forbidden("only an operator can manage their access tokens".into())),
    }
}

fn shown(row: rows::ListedAccessToken, current_id: &str) -> OperatorToken {
    let expires_at = (row.expires_at.year() < NEVER_YEAR).then_some(row.expires_at);
    OperatorToken {
        current: row.id == current_id,
        id: row.id,
        name: row.name,
        user_agent: row.user_agent,
        created_at: row.created_at,
        expires_at,
        last_used_at: row.last_used_at,
    }
}

/// Whether a session has gone unused past its idle limit at `at` (it no longer authenticates).
fn idle_past(row: &rows::ListedAccessToken, at: DateTime<Utc>) -> bool {
    let last_used = row.last_used_at.unwrap_or(row.created_at);
    row.idle_timeout_secs.is_some_and(|idle| last_used + TimeDelta::seconds(idle) <= at)
}

pub async fn list(db: &Db, actor: &Actor) -> Result<OperatorTokens> {
    let (operator_id, token_id) = operator_of(actor)?;
    let at = now();
    let rows = rows::list_operator_tokens(&mut *db.read().await?, operator_id, at).await?;
    let mut out = OperatorTokens::default();
    for row in rows.into_iter().filter(|row| !idle_past(row, at)) {
        if row.kind == KIND_SESSION {
            out.sessions.push(shown(row, token_id));
        } else {
            out.tokens.push(shown(row, token_id));
        }
    }
    Ok(out)
}

/// Makes a named token for the operator. `expires_on`: the last day it works (it ends when that day ends, UTC);
/// `None`: until revoked.
pub async fn create(db: &Db, actor: &Actor, name: &str, expires_on: Option<NaiveDate>) -> Result<CreatedToken> {
    let (operator_id, _) = operator_of(actor)?;
    let mut checks = Checks::new();
    checks.line("name", name, 200);
    let created_at = now();
    let today = created_at.date_naive();
    let (longest, may_be_open) = expiry_limit(actor);
    let expires_at = match expires_on {
        Some(day) if day < today => {
            checks.fail("expiresOn", "must be today or later");
            None
        }
        Some(day) if day > today + chrono::Days::new(longest) => {
            let most = if may_be_open {
                "three years".to_string()
            } else {
                format!("{longest} days (an owner may choose longer)")
            };
            checks.fail("expiresOn", format!("must be at most {most} ahead"));
            None
        }
        Some(day) => day.succ_opt().and_then(|next| next.and_hms_opt(0, 0, 0)).map(|t| t.and_utc()),
        None if !may_be_open => {
            checks.fail(
                "expiresOn",
                format!("is required: a token lasts at most {longest} days unless an owner makes it"),
            );
            None
        }
        None => None,
    };
    checks.finish()?;
    let never = NaiveDate::from_ymd_opt(NEVER_YEAR, 12, 31)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| Error::Internal(anyhow::anyhow!("no far expiry")))?;
    let name = clean(name);
    let secret = secrets::generate(secrets::ACCESS_TOKEN_PREFIX);
    let mut tx = Change::begin(db, actor).await?;
    let operator: Operator =
        rows::get_operator(tx.conn(), operator_id).await?.ok_or(Error::Unauthorized("no such operator".into()))?;
    let new = NewToken {
        kind: KIND_TOKEN,
        name: Some(&name),
        user_agent: None,
        expires_at: expires_at.unwrap_or(never),
        idle: None,
    };
    let id = identity::insert_token(&mut tx, &operator, &secret, created_at, &new).await?;
    let token = OperatorToken {
        id,
        name: Some(name),
        user_agent: None,
        created_at,
        expires_at,
        last_used_at: None,
        current: false,
    };
    tx.created(&actor.organization_id, &token).await?;
    tx.commit().await?;
    Ok(CreatedToken { token, secret })
}

/// One live token or session of the operator.
pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<OperatorToken> {
    let (operator_id, token_id) = operator_of(actor)?;
    let row = rows::get_operator_token(&mut *db.read().await?, operator_id, id)
        .await?
        .filter(|row| row.expires_at > now())
        .ok_or(Error::NotFound("access token"))?;
    Ok(shown(row, token_id))
}

/// Revokes one of the operator's tokens or sessions: its next request answers 401.
pub async fn revoke(db: &Db, actor: &Actor, id: &str) -> Result<OperatorToken> {
    let (operator_id, token_id) = operator_of(actor)?;
    let mut tx = Change::begin(db, actor).await?;
    let row = rows::get_operator_token(tx.conn(), operator_id, id).await?.ok_or(Error::NotFound("access token"))?;
    rows::revoke_access_token(tx.conn(), id, now()).await?;
    let token = shown(row, token_id);
    tx.deleted(&actor.organization_id, &token).await?;
    tx.commit().await?;
    Ok(token)
}

/// Ends every signed-in session of the operator but the one asking ("sign out everywhere else"). Named tokens
/// stay: scripts are not sessions. Answers how many sessions ended.
pub async fn sign_out_other_sessions(db: &Db, actor: &Actor) -> Result<u64> {
    let (operator_id, token_id) = operator_of(actor)?;
    let mut tx = Change::begin(db, actor).await?;
    let at = now();
    let ending: Vec<OperatorToken> = rows::list_operator_tokens(tx.conn(), operator_id, at)
        .await?
        .into_iter()
        .filter(|row| row.kind == KIND_SESSION && row.id != token_id)
        .map(|row| shown(row, token_id))
        .collect();
    let ended = rows::revoke_other_sessions(tx.conn(), operator_id, token_id, at).await?;
    for session in &ending {
        tx.deleted(&actor.organization_id, session).await?;
    }
    tx.commit().await?;
    Ok(ended)
}
