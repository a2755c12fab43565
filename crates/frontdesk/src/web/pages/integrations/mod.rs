//! Integrations: what connects other systems to the organization. API keys ([`api_keys`]), webhook subscriptions
//! ([`webhooks`]), the operator's own access tokens and sessions ([`tokens`]) and the assistants connected through
//! the assistant endpoint's sign-in ([`assistants`]). Each page calls the domain functions the REST routes call.
//!
//! The pages live under a hotel (`/hotels/{id}/integrations/…`) so that the dashboard's frame (switcher, tabs) stays
//! the same, but what they list is the organization's: keys, subscriptions of every hotel, the operator's tokens.
//! A record of another organization answers the 404 page, whichever hotel the URL names.
//!
//! A secret (an API key's, a subscription's signing secret, a named token) is shown once: the POST that made it is
//! answered with the page that shows it (no redirect that a reload could repeat, `Cache-Control: no-store`), and no
//! page shows it again.

pub mod api_keys;
pub mod assistants;
pub mod channels;
pub mod tokens;
pub mod webhooks;

use askama::Template;
use axum::http::{header, HeaderValue};
use axum::response::Redirect;
use axum::routing::get;
use axum::Router;
use chrono::{DateTime, Utc};

use super::HotelPage;
use crate::app::AppState;
use crate::domain::hotels::Hotel;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations", get(overview))
        .merge(api_keys::router())
        .merge(webhooks::router())
        .merge(tokens::router())
        .merge(assistants::router())
        .merge(channels::router())
}

/// The area opens on its first page.
async fn overview(page: HotelPage) -> Redirect {
    Redirect::to(&page.path("integrations/api-keys"))
}

/// The pages of the area, for its own navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    ApiKeys,
    Webhooks,
    Tokens,
    Assistants,
    Channels,
}

/// The frame of an Integrations page: the dashboard's, plus the area's own navigation.
pub struct Frame {
    pub chrome: Chrome,
    pub nav: Nav,
}

impl Frame {
    pub async fn load(state: &AppState, page: &HotelPage, tab: Tab, title: &str) -> Result<Frame, WebError> {
        let chrome = page.chrome(state, Section::Integrations, title).await?;
        let nav = Nav { tab, base: chrome.hotel_path("integrations") };
        Ok(Frame { chrome, nav })
    }

    pub fn path(&self, rest: &str) -> String {
        self.nav.path(rest)
    }
}

/// The area's navigation: which of its pages this is, and where they are.
pub struct Nav {
    pub tab: Tab,
    base: String,
}

impl Nav {
    /// `aria-current` for the area's navigation.
    pub fn current(&self, tab: Tab) -> &'static str {
        if self.tab == tab {
            "page"
        } else {
            "false"
        }
    }

    pub fn path(&self, rest: &str) -> String {
        format!("{}/{rest}", self.base)
    }
}

/// A moment as people of the hotel read it: `25 Nov 2026, 17:40 CET`, in the hotel's time zone.
pub fn when(hotel: &Hotel, at: DateTime<Utc>) -> String {
    at.with_timezone(&hotel.time_zone()).format("%-d %b %Y, %H:%M %Z").to_string()
}

/// [`when`], or `never` for a moment that has not happened.
pub fn when_or(hotel: &Hotel, at: Option<DateTime<Utc>>, none: &str) -> String {
    at.map_or_else(|| none.to_string(), |at| when(hotel, at))
}

/// The page that shows a secret, once.
#[derive(Template)]
#[template(path = "integrations/secret.html")]
pub struct SecretPage {
    pub chrome: Chrome,
    pub nav: Nav,
    pub heading: String,
    /// What the secret is ("API key secret", "Signing secret", "Access token").
    pub label: String,
    pub secret: String,
    /// How to use it, one line each (shown as code).
    pub usage: Vec<String>,
    pub note: String,
    pub back_href: String,
    pub back_label: String,
}

/// Answers the POST that made a secret with the page showing it: never cached, never redirected to, so neither a
/// reload nor the back button brings it back from anywhere but this one answer.
pub fn secret_response(page: &SecretPage, session: &crate::web::session::Session, state: &AppState) -> WebResult {
    let mut response = render_page(page, session, state);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Reads a checkbox form field: a browser sends a ticked box's name with `on` and nothing for an unticked one.
pub fn ticked(form: &std::collections::HashMap<String, String>, name: &str) -> bool {
    form.get(name).is_some_and(|v| !v.is_empty())
}

/// A form field's text, or empty.
pub fn field<'a>(form: &'a std::collections::HashMap<String, String>, name: &str) -> &'a str {
    form.get(name).map(String::as_str).unwrap_or("")
}

/// A checkbox of a set of choices (an API key's scopes, a subscription's events): named `{prefix}-{value}`.
pub struct Checkbox {
    pub name: String,
    pub label: &'static str,
    pub checked: bool,
}

/// One checkbox per value of `all`, ticked for those in `chosen`; `name` is the value as the form names it.
pub fn checkboxes<T: Copy + PartialEq>(
    all: impl IntoIterator<Item = T>,
    prefix: &str,
    name: impl Fn(T) -> &'static str,
    chosen: &[T],
) -> Vec<Checkbox> {
    all.into_iter()
        .map(|value| Checkbox {
            name: format!("{prefix}-{}", name(value)),
            label: name(value),
            checked: chosen.contains(&value),
        })
        .collect()
}

/// The values of `all` whose checkbox (see [`checkboxes`]) the posted `form` ticked.
pub fn ticked_values<T: Copy>(
    all: impl IntoIterator<Item = T>,
    prefix: &str,
    name: impl Fn(T) -> &'static str,
    form: &std::collections::HashMap<String, String>,
) -> Vec<T> {
    all.into_iter().filter(|value| ticked(form, &format!("{prefix}-{}", name(*value)))).collect()
}
