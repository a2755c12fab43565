//! The assistant endpoint's OAuth 2.1 endpoints that clients call: metadata (RFC 9728, RFC 8414), registration
//! (RFC 7591), the token endpoint and revocation (RFC 7009). The authorization step, with its sign-in and consent
//! pages, is a page of the web ([`crate::web::oauth`]). The rules live in [`crate::domain::oauth`]; this file parses
//! and answers.
//!
//! These routes are not part of the REST OpenAPI document, and their errors are OAuth's own JSON
//! (`{error, error_description}`), marked [`OwnFormat`] so they are not turned into problems.

use axum::body::Bytes;
use axum::extract::{RawForm, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::app::limits::AddressLimited;
use crate::app::{AppState, OwnFormat};
use crate::domain::oauth::{self, parameters, OAuthError, RevokeParams, TokenParams};
use crate::domain::validate::{fields_with_forbidden_chars, FORBIDDEN_CHARS_MESSAGE};

pub fn router() -> Router<AppState> {
    // What a client running in a browser calls itself (metadata, registration, tokens): open to any origin, as no
    // cookie or ambient credential is involved. The sign-in and consent pages ([`crate::web::oauth`]) are
    // navigations, not fetches.
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(protected_resource))
        .route("/.well-known/oauth-protected-resource/mcp", get(protected_resource))
        .route("/.well-known/oauth-authorization-server", get(authorization_server))
        .route("/oauth/register", post(register))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .layer(cors())
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

/// The path of the protected resource metadata (the `resource_metadata` of the assistant endpoint's 401 challenge).
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

/// RFC 9728: where the assistant endpoint's tokens come from and what they may carry.
async fn protected_resource(State(state): State<AppState>) -> Response {
    let s = state.oauth();
    own(Json(json!({
        "resource": s.resource,
        "authorization_servers": [s.issuer],
        "scopes_supported": [oauth::SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "Frontdesk assistant endpoint (read-only)",
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
