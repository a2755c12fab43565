//! The assistant connector's OAuth 2.1 endpoints: metadata (RFC 9728, RFC 8414), registration (RFC 7591), the
//! authorization step with its sign-in and consent pages (the dashboard's templates), the token endpoint and revocation
//! (RFC 7009). The rules live in [`crate::domain::oauth`]; this file parses, renders and redirects.
//!
//! These routes are not part of the REST OpenAPI document, and their errors are OAuth's own JSON
//! (`{error, error_description}`) or HTML pages, marked [`OwnFormat`] so they are not turned into problems.

use std::collections::HashMap;

use askama::Template;
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
use crate::http::auth::{AddressLimited, ClientAddress};
use crate::http::problem::OwnFormat;
use crate::http::AppState;
use crate::web::assets;

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
        Ok(request) => {
            let host = oauth::redirect_host(&request.redirect_uri);
            sign_in_page(&state, &params, (&request.client.name, &host), None)
        }
        Err(err) => authorize_failed(&state, err),
    }
}

/// `POST /oauth/authorize`: the sign-in form. On success, the consent page. Attempts are counted with every other
/// sign-in of the service ([`crate::domain::attempts`]).
async fn sign_in(
    _: AddressLimited,
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    RawForm(body): RawForm,
) -> Response {
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
    let client_host = oauth::redirect_host(&request.redirect_uri);
    let client = (client_name.as_str(), client_host.as_str());
    match oauth::sign_in(&state.db, request, &email, password, &address).await {
        Ok(consent) => consent_page(&state, &consent),
        Err(Error::Unauthorized(_)) => sign_in_page(&state, &params, client, Some("Invalid e-mail or password.")),
        Err(Error::TooManyAttempts { retry_after_secs, .. }) => {
            let message = format!(
                "Too many failed sign-ins. Wait {}, then try again.",
                crate::web::view::wait_words(retry_after_secs)
            );
            let mut page = sign_in_page(&state, &params, client, Some(&message));
            *page.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            crate::web::page::with_retry_after(page, retry_after_secs)
        }
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
// Pages: the dashboard's templates and style, with a policy of their own (no scripts at all; the consent's redirect
// goes to the client's own address, so no `form-action` limit).

#[derive(Template)]
#[template(path = "oauth/error.html")]
struct ErrorPage<'a> {
    title: &'a str,
    css: String,
    message: &'a str,
}

#[derive(Template)]
#[template(path = "oauth/sign_in.html")]
struct SignInPage<'a> {
    title: &'a str,
    css: String,
    client: &'a str,
    /// Where the client's redirect URI points: the one thing about it the client cannot make up.
    client_host: &'a str,
    error: Option<&'a str>,
    action: String,
    hidden: Vec<(&'static str, &'a str)>,
}

#[derive(Template)]
#[template(path = "oauth/consent.html")]
struct ConsentPage<'a> {
    title: &'a str,
    css: String,
    operator: &'a str,
    client: &'a str,
    client_host: &'a str,
    organization: &'a str,
    scope: &'a str,
    ticket: &'a str,
    action: String,
}

fn page(status: StatusCode, template: &impl Template) -> Response {
    let mut response = crate::web::page::render(template, status);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    own(response)
}

fn error_page(status: StatusCode, message: &str) -> Response {
    page(status, &ErrorPage { title: "Cannot connect the assistant", css: assets::url("app.css"), message })
}

/// The authorization request's parameters, re-posted by the sign-in form.
fn hidden_fields(params: &AuthorizeParams) -> Vec<(&'static str, &str)> {
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
    AUTHORIZE_FIELDS.iter().zip(values).filter_map(|(name, value)| value.as_deref().map(|v| (*name, v))).collect()
}

/// The sign-in form for the client `(name, redirect host)`.
fn sign_in_page(state: &AppState, params: &AuthorizeParams, client: (&str, &str), error: Option<&str>) -> Response {
    let template = SignInPage {
        title: "Sign in",
        css: assets::url("app.css"),
        client: client.0,
        client_host: client.1,
        error,
        action: format!("{}/oauth/authorize", state.oauth().issuer),
        hidden: hidden_fields(params),
    };
    page(StatusCode::OK, &template)
}

fn consent_page(state: &AppState, consent: &oauth::Consent) -> Response {
    let template = ConsentPage {
        title: "Allow access?",
        css: assets::url("app.css"),
        operator: &consent.operator.email,
        client: &consent.client_name,
        client_host: &consent.redirect_host,
        organization: &consent.organization.name,
        scope: &consent.scope,
        ticket: &consent.ticket,
        action: format!("{}/oauth/authorize/consent", state.oauth().issuer),
    };
    page(StatusCode::OK, &template)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_what_clients_name_themselves() {
        let page = SignInPage {
            title: "Sign in",
            css: String::new(),
            client: "<script>x</script>",
            client_host: "<b>evil</b>",
            error: None,
            action: "/oauth/authorize".into(),
            hidden: vec![("state", "\"><b>")],
        };
        let html = page.render().unwrap();
        assert!(!html.contains("<script>x") && !html.contains("\"><b>") && !html.contains("<b>evil"), "{html}");
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parameters(b"a=1&b=2").is_ok());
        assert!(parameters(b"a=1&a=2").is_err());
        assert!(parameters(b"a=x%00y").is_err());
        assert!(parameters(b"a%01=x").is_err());
    }
}
