//! Signing in and out of the dashboard.

use askama::Template;
use axum::extract::{FromRequest, FromRequestParts, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::Deserialize;

use crate::app::limits::{client_address, limit_sign_in};
use crate::app::AppState;
use crate::domain::identity::{self, LoginIn};
use crate::domain::{secrets, Error};
use crate::web::assets;
use crate::web::page;
use crate::web::session::{self, Cookie, Flash, Posted, Session};

pub fn router() -> Router<AppState> {
    Router::new().route("/sign-in", get(show).post(sign_in)).route("/sign-out", post(sign_out))
}

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
    if session::cookie(&parts.headers, Cookie::Session.name(&state)).is_some()
        && Session::from_request_parts(&mut parts, &state).await.is_ok()
    {
        return Redirect::to(&next).into_response();
    }
    let notice = Flash::from_headers(&parts.headers, &state).map(|flash| flash.text);
    let mut response = form_page(&state, &next, "", None, notice.clone(), StatusCode::OK);
    if notice.is_some() {
        session::append_cookie(&mut response, &session::clear_cookie(Cookie::Flash, &state));
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
    session::append_cookie(&mut response, &session::set_cookie(Cookie::SignInCsrf, &csrf, 3600, state));
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
    let (parts, body) = request.into_parts();
    let Ok(Form(form)) = Form::<SignInForm>::from_request(Request::from_parts(parts.clone(), body), &state).await
    else {
        return page::bad_request("The sign-in form could not be read.");
    };
    let next = destination(Some(&form.next));
    let expected = session::cookie(&parts.headers, Cookie::SignInCsrf.name(&state)).unwrap_or_default();
    if !session::csrf_matches(&expected, Some(&form.csrf)) {
        let message = "The sign-in form had expired. Please sign in again.".to_string();
        return form_page(&state, &next, &form.email, Some(message), None, StatusCode::FORBIDDEN);
    }
    if let Err(err) = limit_sign_in(&parts, &state).await {
        let message = format!("Too many sign-in requests from your network. {err}");
        return form_page(&state, &next, &form.email, Some(message), None, StatusCode::TOO_MANY_REQUESTS);
    }
    let address = client_address(&parts, &state);
    let login = LoginIn { email: form.email.clone(), password: form.password };
    let user_agent = parts.headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok());
    match identity::login(&state.db, login, &address, state.config.session_limits(), user_agent).await {
        Ok(signed_in) => {
            // The browser's earlier session (another operator's, or one planted in it) ends with this sign-in.
            if let Err(refused) = session::end_earlier_session(&parts.headers, &state, &signed_in.operator).await {
                return refused;
            }
            let mut response = Redirect::to(&next).into_response();
            let max_age = (signed_in.expires_at - chrono::Utc::now()).num_seconds().max(0);
            session::append_cookie(
                &mut response,
                &session::set_cookie(Cookie::Session, &signed_in.token, max_age, &state),
            );
            session::append_cookie(&mut response, &session::clear_cookie(Cookie::SignInCsrf, &state));
            response
        }
        Err(Error::Unauthorized(_)) => {
            let message = "The e-mail or password is not right.".to_string();
            form_page(&state, &next, &form.email, Some(message), None, StatusCode::UNAUTHORIZED)
        }
        Err(Error::TooManyAttempts { retry_after_secs, .. }) => {
            let message = format!(
                "Too many failed sign-ins. Wait {}, then try again.",
                crate::web::view::wait_words(retry_after_secs)
            );
            let page = form_page(&state, &next, &form.email, Some(message), None, StatusCode::TOO_MANY_REQUESTS);
            page::with_retry_after(page, retry_after_secs)
        }
        Err(err) => page::error_response(err),
    }
}

/// Revokes the session's token (it stops working everywhere at once) and forgets the cookie.
async fn sign_out(State(state): State<AppState>, posted: Posted<session::NoFields>) -> Response {
    if let Err(err) = identity::logout(&state.db, &posted.session.actor).await {
        return page::error_response(err);
    }
    let mut response = session::redirect_with("/sign-in", Flash::info("You are signed out."), &state);
    session::append_cookie(&mut response, &session::clear_cookie(Cookie::Session, &state));
    response
}
