//! The assistant endpoint's OAuth authorization step (`/oauth/authorize`): the operator signs in and allows or
//! refuses the client, which is sent back to its redirect URI with a code or `access_denied`. The rules live in
//! [`crate::domain::oauth`]; this file parses, renders and redirects. The endpoints clients call (metadata,
//! registration, tokens) are in `http::routes::oauth`.
//!
//! These pages are mounted beside the dashboard's, not under its layers: they state their own policy (no scripts at
//! all; the consent's redirect goes to the client's own address, so no `form-action` limit), check their parameters
//! themselves ([`oauth::parameters`]), and answer in HTML marked [`OwnFormat`] so they are not turned into problems.

use askama::Template;
use axum::extract::{RawForm, RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::collections::HashMap;

use super::{assets, page, view};
use crate::app::limits::{AddressLimited, ClientAddress, SignInLimited};
use crate::app::{AppState, OwnFormat};
use crate::domain::oauth::{self, parameters, AuthorizeError, AuthorizeParams};
use crate::domain::Error;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/oauth/authorize", get(authorize).post(sign_in))
        .route("/oauth/authorize/consent", post(consent))
}

fn own(mut response: Response) -> Response {
    response.extensions_mut().insert(OwnFormat);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
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
    _: SignInLimited,
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
            let message =
                format!("Too many failed sign-ins. Wait {}, then try again.", view::wait_words(retry_after_secs));
            let mut page = sign_in_page(&state, &params, client, Some(&message));
            *page.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            page::with_retry_after(page, retry_after_secs)
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

// ---------------------------------------------------------------------------------------------------------------
// Pages: the dashboard's templates and style, with a policy of their own.

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

fn oauth_page(status: StatusCode, template: &impl Template) -> Response {
    let mut response = page::render(template, status);
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
    oauth_page(status, &ErrorPage { title: "Cannot connect the assistant", css: assets::url("app.css"), message })
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
    oauth_page(StatusCode::OK, &template)
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
    oauth_page(StatusCode::OK, &template)
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
}
