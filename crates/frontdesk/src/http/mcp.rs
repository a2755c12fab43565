//! `/mcp`: the assistant endpoint's Streamable HTTP endpoint (the SDK's tower service, [`crate::mcp::service`])
//! behind a bearer-token check. Only an OAuth access token issued for this resource is accepted; anything else
//! (none, an API key, an operator session token, a refresh token, an expired or revoked token) answers 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"`, which is how an MCP client discovers where to sign in.

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::problem::Problem;
use super::routes::oauth::PROTECTED_RESOURCE_PATH;
use crate::app::limits::limit_actor;
use crate::app::{AppState, OwnFormat};
use crate::domain::oauth::{self, BearerError};
use crate::mcp::Caller;

pub fn router(state: &AppState) -> Router<AppState> {
    let service = crate::mcp::service(state.db.clone(), state.offer_key.clone(), state.availability.clone());
    Router::new()
        .route_service("/mcp", service)
        .route_layer(from_fn_with_state(state.clone(), bearer))
        // Outside the bearer check: a browser's preflight carries no token.
        .layer(super::routes::oauth::cors())
}

/// The bearer token of `Authorization: Bearer <token>`, if that is what was sent.
fn bearer_token(request: &Request) -> Option<String> {
    let value = request.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

async fn bearer(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let settings = state.oauth();
    let Some(token) = bearer_token(&request) else {
        return challenge(&settings.issuer, None);
    };
    match oauth::authenticate(&state.db, &settings, &token).await {
        Ok(actor) => {
            let (mut parts, body) = request.into_parts();
            if let Err(err) = limit_actor(&parts, &state, &actor).await {
                return err.into_response();
            }
            parts.extensions.insert(Caller(actor));
            let mut response = next.run(Request::from_parts(parts, body)).await;
            // The SDK answers protocol errors (406, 415, JSON-RPC errors) in MCP's own terms.
            response.extensions_mut().insert(OwnFormat);
            response
        }
        Err(BearerError::InvalidToken(reason)) => challenge(&settings.issuer, Some(reason)),
        Err(BearerError::Internal) => Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some("the service could not complete the request".to_string()),
        )
        .into_response(),
    }
}

/// 401 with the challenge MCP's authorization spec asks for (RFC 9728 section 5.1, RFC 6750 section 3).
fn challenge(issuer: &str, invalid: Option<&str>) -> Response {
    let mut value =
        format!(r#"Bearer resource_metadata="{issuer}{PROTECTED_RESOURCE_PATH}", scope="{}""#, oauth::SCOPE);
    if let Some(reason) = invalid {
        value.push_str(&format!(r#", error="invalid_token", error_description="{reason}""#));
    }
    let detail = match invalid {
        Some(reason) => reason.to_string(),
        None => "an OAuth access token for the assistant endpoint is required (Authorization: Bearer …)".into(),
    };
    let mut response = Problem::new(StatusCode::UNAUTHORIZED, Some(detail)).into_response();
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}
