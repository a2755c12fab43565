//! The assistant connector's OAuth 2.1 authorization server, as MCP's authorization spec asks: dynamic client
//! registration (RFC 7591, public clients only), the authorization code grant with PKCE S256 (RFC 7636; `plain`
//! is refused), exact redirect URI matching, resource indicators (RFC 8707) binding every token to the connector,
//! short-lived access tokens, rotating refresh tokens and revocation (RFC 7009).
//!
//! Every secret handed out (sign-in ticket, code, access and refresh token) is 256 random bits, stored only as its
//! SHA-256 digest and compared in constant time, like the service's other tokens ([`super::secrets`]). State lives
//! in the database only, so any number of processes can serve any step.

use base64::Engine as _;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::access::{Actor, Credential};
use super::identity::{self, Operator, Organization};
use super::validate::{has_forbidden_chars, FORBIDDEN_CHARS_MESSAGE};
use super::{new_id, now, secrets, Error};
use crate::store::{oauth as rows, Db};

/// The one scope the connector knows: read-only, aggregate access to the operator's organization.
pub const SCOPE: &str = "service:read";
/// How long a sign-in ticket (between the sign-in form and the consent page) lives.
pub const TICKET_TTL: TimeDelta = TimeDelta::minutes(10);
/// How long an authorization code lives; it is also single-use.
pub const CODE_TTL: TimeDelta = TimeDelta::minutes(5);

/// Expired tokens and old authorizations are deleted this long after they stopped mattering.
const PURGE_AFTER: TimeDelta = TimeDelta::days(1);
/// A registered client through which no operator signed in within this long is removed: registration needs no
/// credential, so the registry must not keep whatever anyone registers.
pub const UNUSED_CLIENT_TTL: TimeDelta = TimeDelta::days(1);

pub const ACCESS_TOKEN_PREFIX: &str = "fdo_";
pub const REFRESH_TOKEN_PREFIX: &str = "fdr_";
const CODE_PREFIX: &str = "fdc_";
const TICKET_PREFIX: &str = "fds_";

const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_LEN: usize = 2000;
const MAX_STATE_LEN: usize = 1000;
const MAX_CLIENT_NAME: usize = 200;

/// Where this authorization server and its one protected resource live.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The issuer: the service's public base URL, no trailing slash.
    pub issuer: String,
    /// The protected resource (the connector): `<issuer>/mcp`.
    pub resource: String,
    pub access_ttl: TimeDelta,
    pub refresh_ttl: TimeDelta,
}

impl Settings {
    pub fn new(public_base: &str, access_ttl: TimeDelta, refresh_ttl: TimeDelta) -> Settings {
        let issuer = public_base.trim_end_matches('/').to_string();
        Settings { resource: format!("{issuer}/mcp"), issuer, access_ttl, refresh_ttl }
    }
}

/// An OAuth error answer (RFC 6749 section 5.2): `error` is one of the registered codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OAuthError {
    pub error: &'static str,
    pub error_description: String,
}

impl OAuthError {
    pub fn new(error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { error, error_description: description.into() }
    }

    fn internal(err: impl Into<Error>) -> OAuthError {
        let err: Error = err.into();
        tracing::error!(error = %format!("{err:#}"), "OAuth internal error");
        OAuthError::new("server_error", "the service could not complete the request")
    }
}

impl From<sqlx::Error> for OAuthError {
    fn from(err: sqlx::Error) -> Self {
        OAuthError::internal(err)
    }
}

type OAuthResult<T> = Result<T, OAuthError>;

// ---------------------------------------------------------------------------------------------------------------
// Registration (RFC 7591)

#[derive(Debug, Deserialize)]
pub struct RegistrationIn {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
    pub scope: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RegistrationOut {
    pub client_id: String,
    pub client_id_issued_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<&'static str>,
    pub response_types: Vec<&'static str>,
    pub token_endpoint_auth_method: &'static str,
    pub scope: &'static str,
}

/// Whether a redirect URI may be registered: an absolute `https` URL, or `http` to a loopback address (native
/// apps, RFC 8252); no fragment.
fn redirect_uri_allowed(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else { return false };
    if url.fragment().is_some() || uri.len() > MAX_URI_LEN {
        return false;
    }
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

pub async fn register(db: &Db, input: RegistrationIn) -> OAuthResult<RegistrationOut> {
    let invalid = |m: &str| OAuthError::new("invalid_client_metadata", m);
    if input.redirect_uris.is_empty() || input.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"),
        ));
    }
    if let Some(bad) = input.redirect_uris.iter().position(|u| !redirect_uri_allowed(u)) {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!(
                "redirect_uris[{bad}] must be an absolute https URL, or http on a loopback address, without a \
                 fragment"
            ),
        ));
    }
    match input.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(_) => return Err(invalid("only public clients are supported: token_endpoint_auth_method must be none")),
    }
    if input.grant_types.as_ref().is_some_and(|g| g.iter().any(|g| g != "authorization_code" && g != "refresh_token")) {
        return Err(invalid("grant_types may only be authorization_code and refresh_token"));
    }
    if input.response_types.as_ref().is_some_and(|r| r.iter().any(|r| r != "code")) {
        return Err(invalid("response_types may only be code"));
    }
    if let Some(scope) = &input.scope {
        parse_scope(Some(scope)).map_err(|_| invalid("the only scope is service:read"))?;
    }
    let name = input.client_name.as_deref().map(super::validate::clean).filter(|n| !n.is_empty());
    let name = match name {
        Some(n) if n.chars().count() > MAX_CLIENT_NAME => {
            return Err(invalid(&format!("client_name may have at most {MAX_CLIENT_NAME} characters")))
        }
        Some(n) if super::validate::has_forbidden_in_line(&n) => {
            return Err(invalid(&format!("client_name {}", super::validate::FORBIDDEN_IN_LINE_MESSAGE)))
        }
        Some(n) => n,
        None => "Unnamed assistant".to_string(),
    };
    let client = rows::ClientRow { id: new_id(), name, redirect_uris: input.redirect_uris, created_at: now() };
    let mut tx = db.begin_write().await?;
    rows::purge_unused_clients(tx.conn(), client.created_at - UNUSED_CLIENT_TTL).await?;
    rows::insert_client(tx.conn(), &client).await?;
    tx.commit().await?;
    Ok(RegistrationOut {
        client_id: client.id,
        client_id_issued_at: client.created_at.timestamp(),
        client_name: client.name,
        redirect_uris: client.redirect_uris,
        grant_types: vec!["authorization_code", "refresh_token"],
        response_types: vec!["code"],
        token_endpoint_auth_method: "none",
        scope: SCOPE,
    })
}

// ---------------------------------------------------------------------------------------------------------------
// Authorization

/// The parameters of an OAuth request's form or query, each at most once (RFC 6749 3.1, 3.2), without control
/// characters (the service's rule for every text, [`super::validate::is_forbidden_char`]). The message says what
/// is wrong.
pub fn parameters(raw: &[u8]) -> Result<std::collections::HashMap<String, String>, String> {
    let mut out = std::collections::HashMap::new();
    for (name, value) in url::form_urlencoded::parse(raw) {
        if has_forbidden_chars(&name) || has_forbidden_chars(&value) {
            return Err(format!("the parameter {} {FORBIDDEN_CHARS_MESSAGE}", name.escape_default()));
        }
        if out.insert(name.to_string(), value.into_owned()).is_some() {
            return Err(format!("the parameter {name} is repeated"));
        }
    }
    Ok(out)
}

/// The parameters of an authorization request, as sent (query of GET, hidden fields of the sign-in form).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// An authorization request that checked out.
#[derive(Debug, Clone)]
pub struct Authorize {
    pub client: rows::ClientRow,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub state: Option<String>,
    pub scope: String,
    pub resource: String,
}

/// Why an authorization request cannot go on.
#[derive(Debug)]
pub enum AuthorizeError {
    /// The client or redirect URI cannot be trusted: shown to the operator, never redirected (RFC 6749 4.1.2.1).
    Show(String),
    /// Sent back to the client's redirect URI.
    Redirect { redirect_uri: String, state: Option<String>, error: OAuthError },
}

fn parse_scope(scope: Option<&str>) -> Result<String, ()> {
    let scopes: Vec<&str> = scope.unwrap_or("").split_whitespace().collect();
    if scopes.iter().all(|s| *s == SCOPE) {
        Ok(SCOPE.to_string())
    } else {
        Err(())
    }
}

fn same_resource(asked: &str, resource: &str) -> bool {
    asked.trim_end_matches('/') == resource.trim_end_matches('/')
}

/// Checks an authorization request: first the client and its exact redirect URI, then everything else.
pub async fn check_authorize(db: &Db, settings: &Settings, p: &AuthorizeParams) -> Result<Authorize, AuthorizeError> {
    let show = |m: &str| AuthorizeError::Show(m.to_string());
    let client_id = p.client_id.as_deref().filter(|c| !c.is_empty()).ok_or_else(|| show("client_id is missing"))?;
    let client = rows::get_client(&mut *db.read().await.map_err(|_| show("the service is unavailable"))?, client_id)
        .await
        .map_err(|_| show("the service is unavailable"))?
        .ok_or_else(|| show("this client is not registered"))?;
    let redirect_uri = match p.redirect_uri.as_deref() {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_string(),
        Some(_) => return Err(show("this redirect URI is not registered for the client")),
        // Optional when exactly one is registered (RFC 6749 3.1.2.3).
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return Err(show("redirect_uri is missing")),
    };
    let state = p.state.clone();
    let redirect = |error: &'static str, description: &str| AuthorizeError::Redirect {
        redirect_uri: redirect_uri.clone(),
        state: state.clone(),
        error: OAuthError::new(error, description),
    };
    if state.as_ref().is_some_and(|s| s.len() > MAX_STATE_LEN) {
        return Err(redirect("invalid_request", "state is too long"));
    }
    if p.response_type.as_deref() != Some("code") {
        return Err(redirect("unsupported_response_type", "response_type must be code"));
    }
    match p.code_challenge_method.as_deref() {
        Some("S256") => {}
        Some("plain") => return Err(redirect("invalid_request", "the plain PKCE method is not accepted: use S256")),
        Some(_) => return Err(redirect("invalid_request", "code_challenge_method must be S256")),
        None => return Err(redirect("invalid_request", "PKCE is required: code_challenge_method=S256")),
    }
    let code_challenge = match p.code_challenge.as_deref() {
        Some(c) if c.len() == 43 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') => c,
        _ => return Err(redirect("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier")),
    };
    let scope =
        parse_scope(p.scope.as_deref()).map_err(|_| redirect("invalid_scope", "the only scope is service:read"))?;
    let resource = match p.resource.as_deref() {
        None => settings.resource.clone(),
        Some(r) if same_resource(r, &settings.resource) => settings.resource.clone(),
        Some(_) => return Err(redirect("invalid_target", "the only resource is this service's connector")),
    };
    Ok(Authorize {
        client,
        redirect_uri: redirect_uri.clone(),
        code_challenge: code_challenge.to_string(),
        state: state.clone(),
        scope,
        resource,
    })
}

/// What the consent page shows after a sign-in, with the ticket that the page posts back.
#[derive(Debug)]
pub struct Consent {
    pub ticket: String,
    pub client_name: String,
    /// Where the answer goes: the host (and port) of the redirect URI. The client chose its name, but not this.
    pub redirect_host: String,
    pub operator: Operator,
    pub organization: Organization,
    pub scope: String,
}

/// The host (and port, when not the scheme's default) a redirect URI sends the operator's answer to.
pub fn redirect_host(redirect_uri: &str) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => redirect_uri.to_string(),
        },
        Err(_) => redirect_uri.to_string(),
    }
}

/// Signs the operator in (from the client `address`, counted like every sign-in) for an authorization request and
/// records it, answering the consent to ask for.
pub async fn sign_in(
    db: &Db,
    request: Authorize,
    email: &str,
    password: String,
    address: &str,
) -> Result<Consent, Error> {
    let operator = identity::sign_in(db, email, password, address).await?;
    let organization = identity::organization(db, &operator.organization_id).await?;
    let ticket = secrets::generate(TICKET_PREFIX);
    let created_at = now();
    let grant = rows::GrantRow {
        id: new_id(),
        client_id: request.client.id.clone(),
        operator_id: operator.id.clone(),
        organization_id: operator.organization_id.clone(),
        redirect_uri: request.redirect_uri,
        code_challenge: request.code_challenge,
        state: request.state,
        scope: request.scope.clone(),
        resource: request.resource,
        ticket_hash: secrets::digest(&ticket),
        ticket_expires_at: created_at + TICKET_TTL,
        ticket_used: false,
        code_hash: None,
        code_expires_at: None,
        code_used: false,
        created_at,
    };
    let mut tx = db.begin_write().await?;
    // Sign-ins are rare and made by people: a good moment to forget what expired (a day ago, so that a late
    // replay still finds its family).
    rows::purge(tx.conn(), created_at - PURGE_AFTER).await?;
    rows::insert_grant(tx.conn(), &grant).await?;
    rows::client_used(tx.conn(), &request.client.id, created_at).await?;
    tx.commit().await?;
    Ok(Consent {
        ticket,
        client_name: request.client.name,
        redirect_host: redirect_host(&grant.redirect_uri),
        operator,
        organization,
        scope: request.scope,
    })
}

/// Where the browser goes after the consent page: the client's redirect URI with these query parameters.
#[derive(Debug)]
pub struct Callback {
    pub redirect_uri: String,
    pub params: Vec<(&'static str, String)>,
}

/// Records the operator's answer on the consent page: a code on approval, `access_denied` otherwise. The ticket
/// is spent either way. `None` when the ticket is unknown, spent or expired.
pub async fn decide(db: &Db, settings: &Settings, ticket: &str, approve: bool) -> Result<Option<Callback>, Error> {
    if !ticket.starts_with(TICKET_PREFIX) {
        return Ok(None);
    }
    let digest = secrets::digest(ticket);
    let mut tx = db.begin_write().await?;
    let Some(grant) = rows::grant_by_ticket(tx.conn(), &digest).await? else { return Ok(None) };
    let at = now();
    if !secrets::digests_match(&grant.ticket_hash, &digest) || grant.ticket_expires_at <= at {
        return Ok(None);
    }
    if !rows::use_ticket(tx.conn(), &grant.id, at).await? {
        return Ok(None);
    }
    let mut params = Vec::new();
    if approve {
        let code = secrets::generate(CODE_PREFIX);
        rows::set_code(tx.conn(), &grant.id, &secrets::digest(&code), at + CODE_TTL).await?;
        params.push(("code", code));
    } else {
        params.push(("error", "access_denied".to_string()));
        params.push(("error_description", "the operator declined".to_string()));
    }
    tx.commit().await?;
    if let Some(state) = grant.state {
        params.push(("state", state));
    }
    params.push(("iss", settings.issuer.clone()));
    Ok(Some(Callback { redirect_uri: grant.redirect_uri, params }))
}

/// The redirect URI with `params` added to its query.
pub fn callback_url(redirect_uri: &str, params: &[(&str, String)]) -> Option<String> {
    let mut url = url::Url::parse(redirect_uri).ok()?;
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in params {
            query.append_pair(name, value);
        }
    }
    Some(url.into())
}

// ---------------------------------------------------------------------------------------------------------------
// Token endpoint

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

fn invalid_grant(description: &str) -> OAuthError {
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

fn client_id(p: &TokenParams) -> OAuthResult<&str> {
    p.client_id.as_deref().filter(|c| !c.is_empty()).ok_or_else(|| {
        OAuthError::new("invalid_client", "client_id is required (public clients authenticate with it alone)")
    })
}

fn check_resource(asked: Option<&str>, bound: &str) -> OAuthResult<()> {
    match asked {
        Some(r) if !same_resource(r, bound) => {
            Err(OAuthError::new("invalid_target", "the only resource is this service's connector"))
        }
        _ => Ok(()),
    }
}

async fn exchange_code(db: &Db, settings: &Settings, p: TokenParams) -> OAuthResult<TokenOut> {
    let client_id = client_id(&p)?;
    let code = p.code.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "code is missing"))?;
    let verifier =
        p.code_verifier.as_deref().ok_or_else(|| OAuthError::new("invalid_request", "code_verifier is missing"))?;
    if !code.starts_with(CODE_PREFIX) {
        return Err(invalid_grant("the code is invalid, expired or already used"));
    }
    let digest = secrets::digest(code);
    let at = now();
    let mut tx = db.begin_write().await?;
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
struct Family {
    id: String,
    client_id: String,
    operator_id: String,
    organization_id: String,
    scope: String,
    resource: String,
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
        }
    }
}

async fn issue(
    tx: &mut crate::store::WriteTx,
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

async fn refresh(db: &Db, settings: &Settings, p: TokenParams) -> OAuthResult<TokenOut> {
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
    let mut tx = db.begin_write().await?;
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
    let mut tx = db.begin_write().await?;
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

// ---------------------------------------------------------------------------------------------------------------
// The protected resource

/// Why a bearer token was refused at the connector.
#[derive(Debug, PartialEq, Eq)]
pub enum BearerError {
    /// Unknown, revoked, expired, of another resource or without the scope.
    InvalidToken(&'static str),
    Internal,
}

/// The operator behind an access token for the connector: the token must be an access token (not a refresh
/// token), unexpired, unrevoked, bound to `settings.resource` and carry `service:read`.
pub async fn authenticate(db: &Db, settings: &Settings, token: &str) -> Result<Actor, BearerError> {
    let invalid = BearerError::InvalidToken("the access token is invalid");
    if !token.starts_with(ACCESS_TOKEN_PREFIX) {
        return Err(invalid);
    }
    let digest = secrets::digest(token);
    let mut conn = db.read().await.map_err(|_| BearerError::Internal)?;
    let row = rows::token_by_hash(&mut conn, &digest).await.map_err(|_| BearerError::Internal)?.ok_or(invalid)?;
    if !secrets::digests_match(&row.token_hash, &digest) || row.kind != "access" || row.revoked {
        return Err(BearerError::InvalidToken("the access token is invalid"));
    }
    if row.expires_at <= Utc::now() {
        return Err(BearerError::InvalidToken("the access token has expired"));
    }
    if !same_resource(&row.resource, &settings.resource) {
        return Err(BearerError::InvalidToken("the access token was issued for another resource"));
    }
    if !row.scope.split_whitespace().any(|s| s == SCOPE) {
        return Err(BearerError::InvalidToken("the access token lacks the scope service:read"));
    }
    Ok(Actor {
        organization_id: row.organization_id,
        hotel_pin: None,
        credential: Credential::Operator { operator_id: row.operator_id, token_id: row.id },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(pkce_matches(verifier, challenge));
        assert!(!pkce_matches("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", challenge));
        assert!(!pkce_matches("short", challenge));
        assert!(!pkce_matches(challenge, challenge), "plain: the challenge itself is no verifier");
    }

    #[test]
    fn redirect_uris() {
        assert!(redirect_uri_allowed("https://claude.ai/api/mcp/auth_callback"));
        assert!(redirect_uri_allowed("http://127.0.0.1:33418/callback"));
        assert!(redirect_uri_allowed("http://localhost/cb"));
        assert!(!redirect_uri_allowed("http://evil.example/cb"));
        assert!(!redirect_uri_allowed("https://a.example/cb#frag"));
        assert!(!redirect_uri_allowed("javascript:alert(1)"));
        assert!(!redirect_uri_allowed("/relative"));
    }

    #[test]
    fn scopes() {
        assert_eq!(parse_scope(None), Ok(SCOPE.to_string()));
        assert_eq!(parse_scope(Some("service:read")), Ok(SCOPE.to_string()));
        assert!(parse_scope(Some("service:write")).is_err());
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parameters(b"a=1&b=2").is_ok());
        assert!(parameters(b"a=1&a=2").is_err());
        assert!(parameters(b"a=x%00y").is_err());
        assert!(parameters(b"a%01=x").is_err());
    }
}
