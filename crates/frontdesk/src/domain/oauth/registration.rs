//! Dynamic client registration (RFC 7591): public clients only, exact redirect URIs.

use serde::{Deserialize, Serialize};

use super::super::{new_id, now};
use super::{
    parse_scope, OAuthError, OAuthResult, MAX_CLIENT_NAME, MAX_REDIRECT_URIS, MAX_URI_LEN, SCOPE, UNUSED_CLIENT_TTL,
};
use crate::domain::change::{Change, Writer};
use crate::store::{oauth as rows, Db};

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
pub(super) fn redirect_uri_allowed(uri: &str) -> bool {
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
    let name = input.client_name.as_deref().map(super::super::validate::clean).filter(|n| !n.is_empty());
    let name = match name {
        Some(n) if n.chars().count() > MAX_CLIENT_NAME => {
            return Err(invalid(&format!("client_name may have at most {MAX_CLIENT_NAME} characters")))
        }
        Some(n) if super::super::validate::has_forbidden_in_line(&n) => {
            return Err(invalid(&format!("client_name {}", super::super::validate::FORBIDDEN_IN_LINE_MESSAGE)))
        }
        Some(n) => n,
        None => "Unnamed assistant".to_string(),
    };
    let client = rows::ClientRow { id: new_id(), name, redirect_uris: input.redirect_uris, created_at: now() };
    let mut tx = Change::begin_as(db, Writer::Assistant { client_id: client.id.clone() }).await?;
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
