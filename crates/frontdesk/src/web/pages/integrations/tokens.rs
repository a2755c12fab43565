//! The signed-in operator's access tokens: named tokens for scripts and back-office tools (`Authorization: Token
//! …`; optional expiry; the token shown once), and the browser sessions signing in started, with "sign out
//! everywhere else". Through `domain::operator_tokens`. Each operator sees only their own.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use super::{field, secret_response, when, when_or, Frame, Nav, SecretPage, Tab};
use crate::app::AppState;
use crate::domain::operator_tokens::{self, OperatorToken};
use crate::web::form::{self, FormErrors};
use crate::web::page::{render_page, Chrome, ConfirmPage, Section, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};
use crate::web::step_up::StepUpForm;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations/tokens", get(list).post(create))
        .route("/hotels/{hotel_id}/integrations/tokens/sign-out-others", post(sign_out_others))
        .route("/hotels/{hotel_id}/integrations/tokens/{token_id}/revoke", post(revoke))
}

/// A token or session as the lists show it.
pub struct TokenRow {
    pub id: String,
    pub label: String,
    pub revoke_href: String,
    pub created: String,
    pub expires: String,
    pub last_used: String,
    pub current: bool,
}

fn token_row(frame: &Frame, t: &OperatorToken) -> TokenRow {
    let hotel = &frame.chrome.hotel;
    let label = match (&t.name, &t.user_agent) {
        (Some(name), _) => name.clone(),
        (None, Some(agent)) => agent.clone(),
        (None, None) => "A browser (it did not say which)".to_string(),
    };
    TokenRow {
        id: t.id.clone(),
        label,
        revoke_href: frame.path(&format!("tokens/{}/revoke", t.id)),
        created: when(hotel, t.created_at),
        expires: when_or(hotel, t.expires_at, "never (until revoked)"),
        last_used: when_or(hotel, t.last_used_at, "not yet"),
        current: t.current,
    }
}

#[derive(Template)]
#[template(path = "integrations/tokens.html")]
struct ListPage {
    chrome: Chrome,
    nav: Nav,
    tokens: Vec<TokenRow>,
    sessions: Vec<TokenRow>,
    errors: FormErrors,
    typed_name: String,
    expires_on: String,
    min_date: String,
    max_date: String,
    /// Whether the operator must choose an expiry (anyone but an owner), at most `longest_days` ahead.
    expiry_required: bool,
    longest_days: u64,
    idle_hours: i64,
}

async fn list_page(
    state: &AppState,
    page: &HotelPage,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::Tokens, "Access tokens").await?;
    let listed = operator_tokens::list(&state.db, &page.session.actor).await?;
    let today = chrono::Utc::now().date_naive();
    let (longest, may_be_open) = operator_tokens::expiry_limit(&page.session.actor);
    let t = ListPage {
        tokens: listed.tokens.iter().map(|t| token_row(&frame, t)).collect(),
        sessions: listed.sessions.iter().map(|t| token_row(&frame, t)).collect(),
        errors,
        typed_name: form.map(|f| field(f, "name").to_string()).unwrap_or_default(),
        expires_on: form.map(|f| field(f, "expiresOn").to_string()).unwrap_or_default(),
        min_date: today.to_string(),
        max_date: (today + chrono::Days::new(longest)).to_string(),
        expiry_required: !may_be_open,
        longest_days: longest,
        idle_hours: state.config.session_limits().idle.map_or(0, |idle| idle.num_hours()),
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn list(State(state): State<AppState>, page: HotelPage) -> WebResult {
    list_page(&state, &page, None, FormErrors::default()).await
}

async fn create(
    State(state): State<AppState>,
    page: HotelPage,
    form: StepUpForm<HashMap<String, String>>,
) -> WebResult {
    let posted = match form.confirmed(&state, "Creating an access token").await {
        Ok(posted) => posted,
        Err(asked) => return Ok(asked),
    };
    let f = posted.form;
    let mut errors = FormErrors::default();
    let expires_on = errors.date("expiresOn", field(&f, "expiresOn"), false);
    if errors.is_empty() {
        match operator_tokens::create(&state.db, &page.session.actor, field(&f, "name"), expires_on).await {
            Ok(created) => {
                let frame = Frame::load(&state, &page, Tab::Tokens, "Access token created").await?;
                let name = created.token.name.clone().unwrap_or_default();
                let t = SecretPage {
                    heading: format!("Access token “{name}” created"),
                    label: "Access token".into(),
                    usage: vec![format!("Authorization: Token {}", created.secret)],
                    note: "The token acts as you on the API (every scope, and webhook subscriptions) until it expires \
                           or you revoke it. Copy it now: it is shown only on this page, never again."
                        .into(),
                    secret: created.secret,
                    back_href: frame.path("tokens"),
                    back_label: "Back to access tokens".into(),
                    chrome: frame.chrome,
                    nav: frame.nav,
                };
                return secret_response(&t, &page.session, &state);
            }
            Err(err) => errors.absorb(err)?,
        }
    }
    let mut response = list_page(&state, &page, Some(&f), errors).await?;
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

/// Revokes a named token or ends a session (the operator's own only; this very session is signed out through the
/// top bar's button instead).
async fn revoke(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let actor = &page.session.actor;
    let token = operator_tokens::get(&state.db, actor, &id).await?;
    let back = page.path("integrations/tokens");
    if token.current {
        let flash = Flash::error("This is the session you are using: sign out with the button at the top instead.");
        return Ok(session::redirect_with(&back, flash, &state));
    }
    let what = match &token.name {
        Some(name) => format!("the access token “{name}”"),
        None => "this browser session".to_string(),
    };
    if !form::confirmed(posted.form.get("confirmed").map(String::as_str)) {
        let frame = Frame::load(&state, &page, Tab::Tokens, "Please confirm").await?;
        let t = ConfirmPage {
            frame: frame.chrome.into(),
            question: format!("Revoke {what}?"),
            detail: "Its next request is refused (401): a script using it stops, a browser is signed out.".into(),
            action: frame_path(&page, &format!("tokens/{id}/revoke")),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, revoke {what}"),
            cancel_href: back,
        };
        return Ok(render_page(&t, &page.session, &state));
    }
    operator_tokens::revoke(&state.db, actor, &id).await?;
    Ok(session::redirect_with(&back, Flash::success(format!("Revoked {what}.")), &state))
}

fn frame_path(page: &HotelPage, rest: &str) -> String {
    page.path(&format!("integrations/{rest}"))
}

async fn sign_out_others(
    State(state): State<AppState>,
    page: HotelPage,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let ended = operator_tokens::sign_out_other_sessions(&state.db, &page.session.actor).await?;
    let text = match ended {
        0 => "There was no other session to sign out.".to_string(),
        1 => "Signed out 1 other session.".to_string(),
        n => format!("Signed out {n} other sessions."),
    };
    Ok(session::redirect_with(&page.path("integrations/tokens"), Flash::success(text), &state))
}
