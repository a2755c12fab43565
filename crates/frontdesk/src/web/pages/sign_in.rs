//! Signing in and out of the dashboard.

use askama::Template;
use axum::extract::{FromRequest, FromRequestParts, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use chrono::TimeDelta;
use serde::Deserialize;

use crate::domain::identity::{self, LoginIn};
use crate::domain::{secrets, Error};
use crate::http::AppState;
use crate::web::assets;
use crate::web::page;
use crate::web::session::{self, Flash, Posted, Session};

pub fn router() -> Router<AppState> {
    Router::new().route("/sign-in", get(show).post(sign_in)).route("/sign-out", post(sign_out))
}

/// Sign-in attempts allowed per e-mail address and minute (a burst of this many, then one every few seconds), so
/// that one account's password cannot be guessed quickly from many addresses.
const ATTEMPTS_PER_EMAIL_PER_MINUTE: u32 = 10;

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage {
    css: String,
    csrf: String,
    next: String,
    email: String,
    error: Option<String>,
    notice: Option<String>,
}

#[derive(Deserialize)]
struct Wanted {
    next: Option<String>,
}

/// Where to go after signing in: a path of this site, else the dashboard's home.
fn destination(next: Option<&str>) -> String {
    next.filter(|n| session::is_local_path(n)).unwrap_or("/").to_string()
}

async fn show(State(state): State<AppState>, Query(wanted): Query<Wanted>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let next = destination(wanted.next.as_deref());
    // Already signed in: straight on.
    if session::cookie(&parts.headers, session::SESSION_COOKIE).is_some()
        && Session::from_request_parts(&mut parts, &state).await.is_ok()
    {
        return Redirect::to(&next).into_response();
    }
    let notice = Flash::from_headers(&parts.headers).map(|flash| flash.text);
    let mut response = form_page(&state, &next, "", None, notice.clone(), StatusCode::OK);
    if notice.is_some() {
        session::append_cookie(&mut response, &session::clear_cookie(session::FLASH_COOKIE, &state));
    }
    response
}

/// The sign-in form, with a fresh token doubled in a cookie (there is no session to derive one from yet).
fn form_page(
    state: &AppState,
    next: &str,
    email: &str,
    error: Option<String>,
    notice: Option<String>,
    status: StatusCode,
) -> Response {
    let csrf = secrets::generate("");
    let page = SignInPage {
        css: assets::url("app.css"),
        csrf: csrf.clone(),
        next: next.to_string(),
        email: email.to_string(),
        error,
        notice,
    };
    let mut response = page::render(&page, status);
    session::append_cookie(&mut response, &session::set_cookie(session::SIGN_IN_CSRF_COOKIE, &csrf, 3600, state));
    response
}

#[derive(Deserialize)]
struct SignInForm {
    #[serde(rename = "_csrf", default)]
    csrf: String,
    #[serde(default)]
    next: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

async fn sign_in(State(state): State<AppState>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let Ok(Form(form)) = Form::<SignInForm>::from_request(Request::from_parts(parts.clone(), body), &state).await
    else {
        return page::bad_request("The sign-in form could not be read.");
    };
    let next = destination(Some(&form.next));
    let expected = session::cookie(&parts.headers, session::SIGN_IN_CSRF_COOKIE).unwrap_or_default();
    if !session::csrf_matches(&expected, Some(&form.csrf)) {
        let message = "The sign-in form had expired. Please sign in again.".to_string();
        return form_page(&state, &next, &form.email, Some(message), None, StatusCode::FORBIDDEN);
    }
    if let Err(Error::RateLimited(_)) = limit_attempts(&mut parts, &state, &form.email).await {
        let message = "Too many sign-in attempts. Wait a minute, then try again.".to_string();
        return form_page(&state, &next, &form.email, Some(message), None, StatusCode::TOO_MANY_REQUESTS);
    }
    let ttl = TimeDelta::days(state.config.tokens.token_ttl_days);
    let login = LoginIn { email: form.email.clone(), password: form.password };
    match identity::login(&state.db, login, ttl).await {
        Ok(signed_in) => {
            let mut response = Redirect::to(&next).into_response();
            let max_age = (signed_in.expires_at - chrono::Utc::now()).num_seconds().max(0);
            session::append_cookie(
                &mut response,
                &session::set_cookie(session::SESSION_COOKIE, &signed_in.token, max_age, &state),
            );
            session::append_cookie(&mut response, &session::clear_cookie(session::SIGN_IN_CSRF_COOKIE, &state));
            response
        }
        Err(Error::Unauthorized(_)) => {
            let message = "The e-mail or password is not right.".to_string();
            form_page(&state, &next, &form.email, Some(message), None, StatusCode::UNAUTHORIZED)
        }
        Err(err) => page::error_response(err),
    }
}

/// Counts a sign-in attempt against the client's address (the public limit) and against the e-mail tried.
async fn limit_attempts(parts: &mut axum::http::request::Parts, state: &AppState, email: &str) -> Result<(), Error> {
    use crate::http::auth::{client_address, limit};
    let address = client_address(parts, state);
    limit(parts, state, &format!("sign-in-address:{address}"), state.config.public_rate_limit_per_minute).await?;
    let email = email.trim().to_lowercase();
    limit(parts, state, &format!("sign-in-email:{email}"), ATTEMPTS_PER_EMAIL_PER_MINUTE).await
}

/// Revokes the session's token (it stops working everywhere at once) and forgets the cookie.
async fn sign_out(State(state): State<AppState>, posted: Posted<session::NoFields>) -> Response {
    if let Err(err) = identity::logout(&state.db, &posted.session.actor).await {
        return page::error_response(err);
    }
    let mut response = session::redirect_with("/sign-in", Flash::info("You are signed out."), &state);
    session::append_cookie(&mut response, &session::clear_cookie(session::SESSION_COOKIE, &state));
    response
}
