//! The assistant connector's OAuth 2.1 endpoints: metadata (RFC 9728, RFC 8414), registration (RFC 7591), the
//! authorization step with its server-rendered sign-in and consent pages, the token endpoint and revocation
//! (RFC 7009). The rules live in [`crate::domain::oauth`]; this file parses, renders and redirects.
//!
//! These routes are not part of the REST OpenAPI document, and their errors are OAuth's own JSON
//! (`{error, error_description}`) or HTML pages, marked [`OwnFormat`] so they are not turned into problems.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{RawForm, RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::domain::oauth::{self, AuthorizeError, AuthorizeParams, OAuthError, RevokeParams, TokenParams};
use crate::domain::validate::{fields_with_forbidden_chars, has_forbidden_chars, FORBIDDEN_CHARS_MESSAGE};
use crate::domain::Error;
use crate::http::auth::AddressLimited;
use crate::http::problem::OwnFormat;
use crate::http::AppState;

pub fn router() -> Router<AppState> {
    // What a client running in a browser calls itself (metadata, registration, tokens): open to any origin, as no
    // cookie or ambient credential is involved. The sign-in and consent pages are navigations, not fetches.
    let machine = Router::new()
        .route("/.well-known/oauth-protected-resource", get(protected_resource))
        .route("/.well-known/oauth-protected-resource/mcp", get(protected_resource))
        .route("/.well-known/oauth-authorization-server", get(authorization_server))
        .route("/oauth/register", post(register))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .layer(cors());
    Router::new()
        .route("/oauth/authorize", get(authorize).post(sign_in))
        .route("/oauth/authorize/consent", post(consent))
        .merge(machine)
}

/// CORS for the endpoints browser-based MCP clients fetch (and `/mcp`): any origin, no credentials; the challenge
/// header is readable.
pub fn cors() -> tower_http::cors::CorsLayer {
    use axum::http::{HeaderName, Method};
    tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([header::WWW_AUTHENTICATE, HeaderName::from_static("mcp-session-id")])
        .max_age(std::time::Duration::from_secs(3600))
}

/// The path of the protected resource metadata (the `resource_metadata` of the connector's 401 challenge).
pub const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";

fn own(mut response: Response) -> Response {
    response.extensions_mut().insert(OwnFormat);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn oauth_error(err: OAuthError) -> Response {
    let status = match err.error {
        "invalid_client" => StatusCode::UNAUTHORIZED,
        "server_error" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    own((status, Json(err)).into_response())
}

/// RFC 9728: where the connector's tokens come from and what they may carry.
async fn protected_resource(State(state): State<AppState>) -> Response {
    let s = state.oauth();
    own(Json(json!({
        "resource": s.resource,
        "authorization_servers": [s.issuer],
        "scopes_supported": [oauth::SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "Frontdesk assistant connector (read-only)",
    }))
    .into_response())
}

/// RFC 8414.
async fn authorization_server(State(state): State<AppState>) -> Response {
    let s = state.oauth();
    let issuer = &s.issuer;
    own(Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "registration_endpoint": format!("{issuer}/oauth/register"),
        "revocation_endpoint": format!("{issuer}/oauth/revoke"),
        "scopes_supported": [oauth::SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response())
}

async fn register(_: AddressLimited, State(state): State<AppState>, body: Bytes) -> Response {
    let document = serde_json::from_slice::<serde_json::Value>(&body).ok();
    if let Some(field) = document.as_ref().and_then(|d| fields_with_forbidden_chars(d).into_iter().next()) {
        return oauth_error(OAuthError::new(
            "invalid_client_metadata",
            format!("{} {FORBIDDEN_CHARS_MESSAGE}", field.escape_default()),
        ));
    }
    let input = match document.map(serde_json::from_value::<oauth::RegistrationIn>) {
        Some(Ok(input)) => input,
        _ => {
            return oauth_error(OAuthError::new(
                "invalid_client_metadata",
                "the body must be a JSON object of client metadata",
            ))
        }
    };
    match oauth::register(&state.db, input).await {
        Ok(out) => own((StatusCode::CREATED, Json(out)).into_response()),
        Err(err) => oauth_error(err),
    }
}

/// Form or query parameters, each at most once (RFC 6749 3.1, 3.2), without control characters (the service's
/// rule for every text, [`crate::domain::validate::is_forbidden_char`]).
fn parameters(raw: &[u8]) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
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

const AUTHORIZE_FIELDS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "scope",
    "resource",
];

fn authorize_params(map: &mut HashMap<String, String>) -> AuthorizeParams {
    let mut take = |k: &str| map.remove(k);
    AuthorizeParams {
        response_type: take("response_type"),
        client_id: take("client_id"),
        redirect_uri: take("redirect_uri"),
        code_challenge: take("code_challenge"),
        code_challenge_method: take("code_challenge_method"),
        state: take("state"),
        scope: take("scope"),
        resource: take("resource"),
    }
}

/// `GET /oauth/authorize`: checks the request, then shows the sign-in form.
async fn authorize(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let mut map = match parameters(query.unwrap_or_default().as_bytes()) {
        Ok(map) => map,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, &message),
    };
    let params = authorize_params(&mut map);
    match oauth::check_authorize(&state.db, &state.oauth(), &params).await {
        Ok(request) => sign_in_page(&state, &params, &request.client.name, None),
        Err(err) => authorize_failed(&state, err),
    }
}

/// `POST /oauth/authorize`: the sign-in form. On success, the consent page.
async fn sign_in(_: AddressLimited, State(state): State<AppState>, RawForm(body): RawForm) -> Response {
    let mut map = match parameters(&body) {
        Ok(map) => map,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, &message),
    };
    let email = map.remove("email").unwrap_or_default();
    let password = map.remove("password").unwrap_or_default();
    let params = authorize_params(&mut map);
    let request = match oauth::check_authorize(&state.db, &state.oauth(), &params).await {
        Ok(request) => request,
        Err(err) => return authorize_failed(&state, err),
    };
    let client_name = request.client.name.clone();
    match oauth::sign_in(&state.db, request, &email, password).await {
        Ok(consent) => consent_page(&state, &consent),
        Err(Error::Unauthorized(_)) => sign_in_page(&state, &params, &client_name, Some("Invalid e-mail or password.")),
        Err(err) => {
            tracing::error!(error = %format!("{err:#}"), "OAuth sign-in failed");
            error_page(StatusCode::INTERNAL_SERVER_ERROR, "The service could not sign you in. Try again later.")
        }
    }
}

/// `POST /oauth/authorize/consent`: the operator's answer; back to the client with a code or `access_denied`.
async fn consent(State(state): State<AppState>, RawForm(body): RawForm) -> Response {
    let map = match parameters(&body) {
        Ok(map) => map,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, &message),
    };
    let ticket = map.get("ticket").map(String::as_str).unwrap_or_default();
    let approve = map.get("decision").map(String::as_str) == Some("allow");
    match oauth::decide(&state.db, &state.oauth(), ticket, approve).await {
        Ok(Some(callback)) => match oauth::callback_url(&callback.redirect_uri, &callback.params) {
            Some(url) => redirect(&url),
            None => error_page(StatusCode::BAD_REQUEST, "The client's redirect URI is not usable."),
        },
        Ok(None) => error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in has expired or was already answered. Start again from your assistant.",
        ),
        Err(err) => {
            tracing::error!(error = %format!("{err:#}"), "OAuth consent failed");
            error_page(StatusCode::INTERNAL_SERVER_ERROR, "The service could not record your answer. Try again later.")
        }
    }
}

fn authorize_failed(state: &AppState, err: AuthorizeError) -> Response {
    match err {
        AuthorizeError::Show(message) => error_page(StatusCode::BAD_REQUEST, &message),
        AuthorizeError::Redirect { redirect_uri, state: client_state, error } => {
            let mut params = vec![("error", error.error.to_string()), ("error_description", error.error_description)];
            if let Some(s) = client_state {
                params.push(("state", s));
            }
            params.push(("iss", state.oauth().issuer));
            match oauth::callback_url(&redirect_uri, &params) {
                Some(url) => redirect(&url),
                None => error_page(StatusCode::BAD_REQUEST, "The client's redirect URI is not usable."),
            }
        }
    }
}

fn redirect(url: &str) -> Response {
    match HeaderValue::from_str(url) {
        Ok(location) => own((StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()),
        Err(_) => error_page(StatusCode::BAD_REQUEST, "The client's redirect URI is not usable."),
    }
}

async fn token(_: AddressLimited, State(state): State<AppState>, RawForm(body): RawForm) -> Response {
    let mut map = match parameters(&body) {
        Ok(map) => map,
        Err(message) => return oauth_error(OAuthError::new("invalid_request", message)),
    };
    let mut take = |k: &str| map.remove(k);
    let params = TokenParams {
        grant_type: take("grant_type"),
        code: take("code"),
        redirect_uri: take("redirect_uri"),
        client_id: take("client_id"),
        code_verifier: take("code_verifier"),
        refresh_token: take("refresh_token"),
        resource: take("resource"),
        scope: take("scope"),
    };
    match oauth::token(&state.db, &state.oauth(), params).await {
        Ok(out) => own((StatusCode::OK, [(header::PRAGMA, "no-cache")], Json(out)).into_response()),
        Err(err) => oauth_error(err),
    }
}

async fn revoke(_: AddressLimited, State(state): State<AppState>, RawForm(body): RawForm) -> Response {
    let mut map = match parameters(&body) {
        Ok(map) => map,
        Err(message) => return oauth_error(OAuthError::new("invalid_request", message)),
    };
    let params = RevokeParams {
        token: map.remove("token"),
        token_type_hint: map.remove("token_type_hint"),
        client_id: map.remove("client_id"),
    };
    match oauth::revoke(&state.db, params).await {
        Ok(()) => own(StatusCode::OK.into_response()),
        Err(err) => oauth_error(err),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Pages

/// Text for HTML: `& < > " '` escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\"><title>{title} · Frontdesk</title><style>body{{font-family:\
         system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#222}}label{{display:block;\
         margin:.8rem 0 .2rem}}input[type=email],input[type=password]{{width:100%;padding:.5rem;box-sizing:\
         border-box}}button{{margin:1rem .5rem 0 0;padding:.5rem 1rem}}.error{{color:#a00}}.scope{{font-family:\
         monospace}}</style></head><body><h1>{title}</h1>{body}</body></html>",
        title = escape(title),
    );
    let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    own(response)
}

fn error_page(status: StatusCode, message: &str) -> Response {
    page(status, "Cannot connect the assistant", &format!("<p class=\"error\">{}</p>", escape(message)))
}

fn hidden_fields(params: &AuthorizeParams) -> String {
    let values = [
        &params.response_type,
        &params.client_id,
        &params.redirect_uri,
        &params.code_challenge,
        &params.code_challenge_method,
        &params.state,
        &params.scope,
        &params.resource,
    ];
    AUTHORIZE_FIELDS
        .iter()
        .zip(values)
        .filter_map(|(name, value)| {
            value.as_ref().map(|v| format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", escape(v)))
        })
        .collect()
}

fn sign_in_page(state: &AppState, params: &AuthorizeParams, client_name: &str, error: Option<&str>) -> Response {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", escape(e))).unwrap_or_default();
    let body = format!(
        "<p><strong>{client}</strong> wants read-only access to your organization's Frontdesk data. Sign in as an \
         operator to continue.</p>{error}<form method=\"post\" action=\"{action}\">{hidden}\
         <label for=\"email\">E-mail</label><input id=\"email\" type=\"email\" name=\"email\" autocomplete=\"username\" \
         required autofocus><label for=\"password\">Password</label><input id=\"password\" type=\"password\" \
         name=\"password\" autocomplete=\"current-password\" required><button type=\"submit\">Sign in</button></form>",
        client = escape(client_name),
        hidden = hidden_fields(params),
        action = escape(&format!("{}/oauth/authorize", state.oauth().issuer)),
    );
    page(StatusCode::OK, "Sign in", &body)
}

fn consent_page(state: &AppState, consent: &oauth::Consent) -> Response {
    let body = format!(
        "<p>Signed in as {operator}.</p><p><strong>{client}</strong> asks to read data of the organization \
         <strong>{org}</strong> with the scope <span class=\"scope\">{scope}</span>: hotels, room types, rate plans \
         and prices, availability, and counts of arrivals, departures, stays, requests and housekeeping. It never \
         sees guests or individual reservations, and it cannot change anything.</p>\
         <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"ticket\" \
         value=\"{ticket}\"><button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
        operator = escape(&consent.operator.email),
        client = escape(&consent.client_name),
        org = escape(&consent.organization.name),
        scope = escape(&consent.scope),
        ticket = escape(&consent.ticket),
        action = escape(&format!("{}/oauth/authorize/consent", state.oauth().issuer)),
    );
    page(StatusCode::OK, "Allow access?", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parameters(b"a=1&b=2").is_ok());
        assert!(parameters(b"a=1&a=2").is_err());
        assert!(parameters(b"a=x%00y").is_err());
        assert!(parameters(b"a%01=x").is_err());
    }
}
