//! The token endpoint (codes with PKCE, rotating refresh tokens) and revocation (RFC 7009).

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::super::{new_id, now, secrets};
use super::{
    parse_scope, same_resource, OAuthError, OAuthResult, Settings, ACCESS_TOKEN_PREFIX, CODE_PREFIX,
    REFRESH_TOKEN_PREFIX,
};
use crate::domain::change::{Change, Writer};
use crate::store::{oauth as rows, Db};

#[derive(Debug, Default, Deserialize)]
pub struct TokenParams {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_id: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct TokenOut {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
}

pub(super) fn invalid_grant(description: &str) -> OAuthError {
    OAuthError::new("invalid_grant", description)
}

/// Whether `verifier` is a valid PKCE verifier whose S256 challenge is `challenge` (constant-time comparison).
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    well_formed && secrets::digests_match(&computed, challenge)
}

pub async fn token(db: &Db, settings: &Settings, p: TokenParams) -> OAuthResult<TokenOut> {
    match p.grant_type.as_deref() {
        Some("authorization_code") => exchange_code(db, settings, p).await,
        Some("refresh_token") => refresh(db, settings, p).await,
        Some(_) => {
            Err(OAuthError::new("unsupported_grant_type", "grant_type must be authorization_code or refresh_token"))
        }
        None => Err(OAuthError::new("invalid_request", "grant_type is missing")),
    }
}

pub(super) fn client_id(p: &TokenParams) -> OAuthResult<&str> {
    p.client_id.as_deref().filter(|c| !c.is_empty()).ok_or_else(|| {
        OAuthError::new("invalid_client", "client_id is required (public clients authenticate with it alone)")
    })
}

pub(super) fn check_resource(asked: Option<&str>, bound: &str) -> OAuthResult<()> {
    match asked {
        Some(r) if !same_resource(r, bound) => {
            Err(OAuthError::new("invalid_target", "the only resource is this service's assistant endpoint"))
        }
        _ => Ok(()),
    }
}

pub(super) async fn exchange_code(db: &Db, settings: &Settings, p: TokenParams) -> OAuthResult<TokenOut> {
    let client_id = client_id(&p)?;
    let code = p.code.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "code is missing"))?;
    let verifier =
        p.code_verifier.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "code_verifier is missing"))?;
    if !code.starts_with(CODE_PREFIX) {
        return Err(invalid_grant("the code is invalid, expired or already used"));
    }
    let digest = secrets::digest(code);
    let at = now();
    let mut tx = Change::begin_as(db, Writer::Assistant { client_id: client_id.to_string() }).await?;
    let grant = rows::grant_by_code(tx.conn(), &digest)
        .await?
        .filter(|g| g.code_hash.as_deref().is_some_and(|h| secrets::digests_match(h, &digest)))
        .ok_or_else(|| invalid_grant("the code is invalid, expired or already used"))?;
    if grant.code_used {
        // A code presented twice may have been stolen: what was issued from it is revoked (RFC 6749 4.1.2).
        rows::revoke_family(tx.conn(), &grant.id, at).await?;
        tx.commit().await?;
        return Err(invalid_grant("the code is invalid, expired or already used"));
    }
    if grant.code_expires_at.is_none_or(|e| e <= at) {
        return Err(invalid_grant("the code is invalid, expired or already used"));
    }
    if grant.client_id != client_id {
        return Err(invalid_grant("the code was issued to another client"));
    }
    if p.redirect_uri.as_deref() != Some(grant.redirect_uri.as_str()) {
        return Err(invalid_grant("redirect_uri differs from the authorization request's"));
    }
    if !pkce_matches(verifier, &grant.code_challenge) {
        return Err(invalid_grant("the code_verifier does not match the code_challenge"));
    }
    check_resource(p.resource.as_deref(), &grant.resource)?;
    if !rows::use_code(tx.conn(), &grant.id, at).await? {
        return Err(invalid_grant("the code is invalid, expired or already used"));
    }
    let out = issue(&mut tx, settings, &Family::from(&grant), at).await?;
    tx.commit().await?;
    Ok(out)
}

/// What every token of one grant shares.
pub(super) struct Family {
    id: String,
    client_id: String,
    operator_id: String,
    organization_id: String,
    scope: String,
    resource: String,
    /// When the operator allowed the connection; `None`: now (the code is being exchanged).
    granted_at: Option<DateTime<Utc>>,
}

impl From<&rows::GrantRow> for Family {
    fn from(g: &rows::GrantRow) -> Self {
        Family {
            id: g.id.clone(),
            client_id: g.client_id.clone(),
            operator_id: g.operator_id.clone(),
            organization_id: g.organization_id.clone(),
            scope: g.scope.clone(),
            resource: g.resource.clone(),
            granted_at: None,
        }
    }
}

pub(super) async fn issue(
    tx: &mut Change,
    settings: &Settings,
    family: &Family,
    at: DateTime<Utc>,
) -> OAuthResult<TokenOut> {
    let access = secrets::generate(ACCESS_TOKEN_PREFIX);
    let refresh = secrets::generate(REFRESH_TOKEN_PREFIX);
    for (kind, secret, ttl) in [("access", &access, settings.access_ttl), ("refresh", &refresh, settings.refresh_ttl)] {
        rows::insert_token(
            tx.conn(),
            &rows::TokenRow {
                id: new_id(),
                token_hash: secrets::digest(secret),
                kind: kind.to_string(),
                family_id: family.id.clone(),
                client_id: family.client_id.clone(),
                operator_id: family.operator_id.clone(),
                organization_id: family.organization_id.clone(),
                scope: family.scope.clone(),
                resource: family.resource.clone(),
                created_at: at,
                expires_at: at + ttl,
                used: false,
                revoked: false,
                granted_at: family.granted_at.unwrap_or(at),
                last_used_at: None,
            },
        )
        .await?;
    }
    Ok(TokenOut {
        access_token: access,
        token_type: "Bearer",
        expires_in: settings.access_ttl.num_seconds(),
        refresh_token: refresh,
        scope: family.scope.clone(),
    })
}

pub(super) async fn refresh(db: &Db, settings: &Settings, p: TokenParams) -> OAuthResult<TokenOut> {
    let client_id = client_id(&p)?;
    let token =
        p.refresh_token.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "refresh_token is missing"))?;
    let invalid = || invalid_grant("the refresh token is invalid, expired or revoked");
    if !token.starts_with(REFRESH_TOKEN_PREFIX) {
        return Err(invalid());
    }
    if p.scope.is_some() && parse_scope(p.scope.as_deref()).is_err() {
        return Err(OAuthError::new("invalid_scope", "the only scope is service:read"));
    }
    let digest = secrets::digest(token);
    let at = now();
    let mut tx = Change::begin_as(db, Writer::Assistant { client_id: client_id.to_string() }).await?;
    let row = rows::token_by_hash(tx.conn(), &digest)
        .await?
        .filter(|t| t.kind == "refresh" && secrets::digests_match(&t.token_hash, &digest))
        .ok_or_else(invalid)?;
    if row.client_id != client_id {
        return Err(invalid());
    }
    if row.revoked {
        return Err(invalid());
    }
    if row.used {
        // A rotated refresh token came back: someone holds a copy. Everything of its family is revoked.
        rows::revoke_family(tx.conn(), &row.family_id, at).await?;
        tx.commit().await?;
        return Err(invalid());
    }
    if row.expires_at <= at {
        return Err(invalid());
    }
    check_resource(p.resource.as_deref(), &row.resource)?;
    if !rows::use_token(tx.conn(), &row.id, at).await? {
        return Err(invalid());
    }
    let family = Family {
        id: row.family_id,
        client_id: row.client_id,
        operator_id: row.operator_id,
        organization_id: row.organization_id,
        scope: row.scope,
        resource: row.resource,
        granted_at: Some(row.granted_at),
    };
    let out = issue(&mut tx, settings, &family, at).await?;
    tx.commit().await?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------------------------
// Revocation (RFC 7009)

#[derive(Debug, Default, Deserialize)]
pub struct RevokeParams {
    pub token: Option<String>,
    pub token_type_hint: Option<String>,
    pub client_id: Option<String>,
}

/// Revokes a token of the client: a refresh token takes its whole family with it, an access token only itself.
/// Unknown tokens, and tokens of another client, are ignored (the answer is the same).
pub async fn revoke(db: &Db, p: RevokeParams) -> OAuthResult<()> {
    let token = p.token.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "token is missing"))?;
    let client_id = p.client_id.as_deref().filter(|c| !c.is_empty()).ok_or_else(|| {
        OAuthError::new("invalid_client", "client_id is required (public clients authenticate with it alone)")
    })?;
    if !(token.starts_with(ACCESS_TOKEN_PREFIX) || token.starts_with(REFRESH_TOKEN_PREFIX)) {
        return Ok(());
    }
    let digest = secrets::digest(token);
    let at = now();
    let mut tx = Change::begin_as(db, Writer::Assistant { client_id: client_id.to_string() }).await?;
    let Some(row) = rows::token_by_hash(tx.conn(), &digest).await? else { return Ok(()) };
    if !secrets::digests_match(&row.token_hash, &digest) || row.client_id != client_id {
        return Ok(());
    }
    match row.kind.as_str() {
        "refresh" => rows::revoke_family(tx.conn(), &row.family_id, at).await?,
        _ => rows::revoke_token(tx.conn(), &row.id, at).await?,
    }
    tx.commit().await?;
    Ok(())
}
