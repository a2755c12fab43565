//! The authorization step: the request checked, the operator signed in, their consent, the code sent back.

use serde::{Deserialize, Serialize};

use super::super::identity::{self, Operator, Organization};
use super::super::validate::{has_forbidden_chars, FORBIDDEN_CHARS_MESSAGE};
use super::super::{new_id, now, secrets, Error};
use super::{
    OAuthError, Settings, CODE_PREFIX, CODE_TTL, MAX_STATE_LEN, PURGE_AFTER, SCOPE, TICKET_PREFIX, TICKET_TTL,
};
use crate::domain::change::{Change, Writer};
use crate::store::{oauth as rows, Db};

/// The parameters of an OAuth request's form or query, each at most once (RFC 6749 3.1, 3.2), without control
/// characters (the service's rule for every text, [`crate::domain::validate::is_forbidden_char`]). The message says what
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

pub(super) fn parse_scope(scope: Option<&str>) -> Result<String, ()> {
    let scopes: Vec<&str> = scope.unwrap_or("").split_whitespace().collect();
    if scopes.iter().all(|s| *s == SCOPE) {
        Ok(SCOPE.to_string())
    } else {
        Err(())
    }
}

pub(super) fn same_resource(asked: &str, resource: &str) -> bool {
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
        Some(_) => return Err(redirect("invalid_target", "the only resource is this service's assistant endpoint")),
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
    let mut tx = Change::begin_as(db, Writer::Operator { operator_id: operator.id.clone() }).await?;
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
    // The operator who answers is the grant's: read first, to begin the change as them.
    let Some(asked) = rows::grant_by_ticket(&mut *db.read().await?, &digest).await? else { return Ok(None) };
    let mut tx = Change::begin_as(db, Writer::Operator { operator_id: asked.operator_id }).await?;
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
