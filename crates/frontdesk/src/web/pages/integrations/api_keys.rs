//! API keys: list, create (scopes read-only by default, optional hotel pin; the secret shown once), edit scopes,
//! name and rate limit, revoke. Through `domain::api_keys`, as `/api/apiKeys` is.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use base64::Engine as _;

use super::{checkboxes, field, secret_response, ticked_values, when, when_or, Checkbox, Frame, Nav, SecretPage, Tab};
use crate::app::AppState;
use crate::domain::access::Scope;
use crate::domain::api_keys::{self, ApiKey, ApiKeyIn, ApiKeyPatch, MAX_RATE_LIMIT};
use crate::domain::hotels::{self, Hotel};
use crate::web::form::{self, FormErrors};
use crate::web::page::{render_page, Chrome, ConfirmPage, Section, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};
use crate::web::step_up::StepUpForm;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations/api-keys", get(list).post(create))
        .route("/hotels/{hotel_id}/integrations/api-keys/{key_id}", get(edit).post(save))
        .route("/hotels/{hotel_id}/integrations/api-keys/{key_id}/revoke", post(revoke))
}

fn scope_boxes(chosen: &[Scope]) -> Vec<Checkbox> {
    checkboxes(Scope::ALL, "scope", Scope::as_str, chosen)
}

fn scopes_ticked(form: &HashMap<String, String>) -> Vec<Scope> {
    ticked_values(Scope::ALL, "scope", Scope::as_str, form)
}

/// A key as the list shows it.
pub struct KeyRow {
    pub name: String,
    pub href: String,
    pub scopes: String,
    pub pin: String,
    pub created: String,
    pub last_used: String,
    pub rate_limit: String,
}

fn rate_limit_words(limit: Option<i64>) -> String {
    limit.map_or_else(|| "service default".to_string(), |n| format!("{n} a minute"))
}

fn key_row(frame: &Frame, hotels: &[Hotel], key: &ApiKey) -> KeyRow {
    let hotel = &frame.chrome.hotel;
    KeyRow {
        name: key.name.clone(),
        href: frame.path(&format!("api-keys/{}", key.id)),
        scopes: key.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
        pin: pin_words(hotels, key.hotel_id.as_deref()),
        created: when(hotel, key.created_at),
        last_used: when_or(hotel, key.last_used_at, "never"),
        rate_limit: rate_limit_words(key.rate_limit_per_minute),
    }
}

fn pin_words(hotels: &[Hotel], pin: Option<&str>) -> String {
    match pin {
        None => "every hotel".to_string(),
        Some(id) => hotels.iter().find(|h| h.id == id).map_or_else(|| id.to_string(), |h| h.name.clone()),
    }
}

#[derive(Template)]
#[template(path = "integrations/api_keys.html")]
struct ListPage {
    chrome: Chrome,
    nav: Nav,
    keys: Vec<KeyRow>,
    hotels: Vec<(String, String)>,
    errors: FormErrors,
    typed_name: String,
    pin: String,
    rate_limit: String,
    scopes: Vec<Checkbox>,
}

async fn list_page(
    state: &AppState,
    page: &HotelPage,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::ApiKeys, "API keys").await?;
    let actor = &page.session.actor;
    let hotels = hotels::list(&state.db, actor).await?;
    let keys = api_keys::list(&state.db, actor).await?;
    let t = ListPage {
        keys: keys.iter().map(|k| key_row(&frame, &hotels, k)).collect(),
        hotels: hotels.iter().map(|h| (h.id.clone(), h.name.clone())).collect(),
        errors,
        typed_name: form.map(|f| field(f, "name").to_string()).unwrap_or_default(),
        pin: form.map(|f| field(f, "hotelId").to_string()).unwrap_or_default(),
        rate_limit: form.map(|f| field(f, "rateLimitPerMinute").to_string()).unwrap_or_default(),
        // New keys start read-only: the read scopes are ticked until the operator says otherwise.
        scopes: scope_boxes(&form.map_or_else(|| Scope::DEFAULT.to_vec(), scopes_ticked)),
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn list(State(state): State<AppState>, page: HotelPage) -> WebResult {
    list_page(&state, &page, None, FormErrors::default()).await
}

/// Reads the rate limit field: blank is the service default.
fn rate_limit(errors: &mut FormErrors, value: &str) -> Option<i64> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    Some(errors.count("rateLimitPerMinute", value, 0, 1, MAX_RATE_LIMIT))
}

async fn create(
    State(state): State<AppState>,
    page: HotelPage,
    form: StepUpForm<HashMap<String, String>>,
) -> WebResult {
    let posted = match form.confirmed(&state, "Creating an API key").await {
        Ok(posted) => posted,
        Err(asked) => return Ok(asked),
    };
    let f = posted.form;
    let mut errors = FormErrors::default();
    let limit = rate_limit(&mut errors, field(&f, "rateLimitPerMinute"));
    let scopes = scopes_ticked(&f);
    if scopes.is_empty() {
        errors.add("scopes", "Choose at least one scope.");
    }
    if !errors.is_empty() {
        return refused(&state, &page, &f, errors).await;
    }
    let input = ApiKeyIn {
        name: field(&f, "name").to_string(),
        scopes,
        hotel_id: form::optional(field(&f, "hotelId")),
        rate_limit_per_minute: limit,
    };
    match api_keys::create(&state.db, &page.session.actor, input).await {
        Ok(created) => {
            let frame = Frame::load(&state, &page, Tab::ApiKeys, "API key created").await?;
            let t = SecretPage {
                heading: format!("API key “{}” created", created.key.name),
                label: "API key secret".into(),
                usage: vec![format!(
                    "Authorization: Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(&created.secret)
                )],
                note: "Copy the secret now and keep it where your integration keeps credentials: it is shown only \
                       on this page, never again. Send it as HTTP Basic credentials: the base64 of the secret alone, \
                       with no user name and no colon."
                    .into(),
                secret: created.secret,
                back_href: frame.path("api-keys"),
                back_label: "Back to API keys".into(),
                chrome: frame.chrome,
                nav: frame.nav,
            };
            secret_response(&t, &page.session, &state)
        }
        Err(err) => {
            errors.absorb(err)?;
            refused(&state, &page, &f, errors).await
        }
    }
}

async fn refused(state: &AppState, page: &HotelPage, f: &HashMap<String, String>, errors: FormErrors) -> WebResult {
    let mut response = list_page(state, page, Some(f), errors).await?;
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

#[derive(Template)]
#[template(path = "integrations/api_key.html")]
struct EditPage {
    chrome: Chrome,
    nav: Nav,
    row: KeyRow,
    errors: FormErrors,
    typed_name: String,
    rate_limit: String,
    scopes: Vec<Checkbox>,
}

async fn edit_page(
    state: &AppState,
    page: &HotelPage,
    key: &ApiKey,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::ApiKeys, &format!("API key {}", key.name)).await?;
    let hotels = hotels::list(&state.db, &page.session.actor).await?;
    let t = EditPage {
        row: key_row(&frame, &hotels, key),
        errors,
        typed_name: form.map_or_else(|| key.name.clone(), |f| field(f, "name").to_string()),
        rate_limit: form.map_or_else(
            || key.rate_limit_per_minute.map(|n| n.to_string()).unwrap_or_default(),
            |f| field(f, "rateLimitPerMinute").to_string(),
        ),
        scopes: scope_boxes(&form.map_or_else(|| key.scopes.clone(), scopes_ticked)),
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn edit(State(state): State<AppState>, page: HotelPage, Path((_, id)): Path<(String, String)>) -> WebResult {
    let key = api_keys::get(&state.db, &page.session.actor, &id).await?;
    edit_page(&state, &page, &key, None, FormErrors::default()).await
}

async fn save(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let key = api_keys::get(&state.db, &page.session.actor, &id).await?;
    let f = posted.form;
    let mut errors = FormErrors::default();
    let limit = rate_limit(&mut errors, field(&f, "rateLimitPerMinute"));
    let scopes = scopes_ticked(&f);
    if scopes.is_empty() {
        errors.add("scopes", "Choose at least one scope.");
    }
    if errors.is_empty() {
        let patch = ApiKeyPatch {
            name: Some(field(&f, "name").to_string()),
            scopes: Some(scopes),
            rate_limit_per_minute: Some(limit),
        };
        match api_keys::update(&state.db, &page.session.actor, &id, patch).await {
            Ok(saved) => {
                let flash = Flash::success(format!("Saved the API key “{}”.", saved.name));
                return Ok(session::redirect_with(&page.path("integrations/api-keys"), flash, &state));
            }
            Err(err) => errors.absorb(err)?,
        }
    }
    let mut response = edit_page(&state, &page, &key, Some(&f), errors).await?;
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

async fn revoke(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let key = api_keys::get(&state.db, &page.session.actor, &id).await?;
    let href = page.path(&format!("integrations/api-keys/{id}"));
    if !form::confirmed(posted.form.get("confirmed").map(String::as_str)) {
        let frame = Frame::load(&state, &page, Tab::ApiKeys, "Please confirm").await?;
        let t = ConfirmPage {
            frame: frame.chrome.into(),
            question: format!("Revoke the API key “{}”?", key.name),
            detail: "Every request made with its secret is refused (401) from now on. This cannot be undone: a new \
                     key has a new secret."
                .into(),
            action: format!("{href}/revoke"),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, revoke the API key “{}”", key.name),
            cancel_href: href,
        };
        return Ok(render_page(&t, &page.session, &state));
    }
    let key = api_keys::delete(&state.db, &page.session.actor, &id).await?;
    let flash = Flash::success(format!("Revoked the API key “{}”.", key.name));
    Ok(session::redirect_with(&page.path("integrations/api-keys"), flash, &state))
}
