//! What every dashboard page shares: the frame around it ([`Chrome`]: who is signed in, the hotel switcher, the
//! navigation, the flash message), rendering a template into an answer, and the error pages.

use askama::Template;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::assets;
use super::session::{self, Flash, Session};
use crate::app::AppState;
use crate::domain::hotels::{self, Hotel};
use crate::domain::{front_office, Error};

/// The dashboard's areas, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Today,
    Rack,
    Rates,
    Housekeeping,
    Requests,
    Reservations,
    Guests,
    Settings,
    Integrations,
}

/// A hotel in the switcher.
#[derive(Debug, Clone)]
pub struct HotelChoice {
    pub id: String,
    pub name: String,
}

/// The frame of a dashboard page.
#[derive(Debug, Clone)]
pub struct Chrome {
    pub title: String,
    pub operator_name: String,
    pub organization_name: String,
    pub hotels: Vec<HotelChoice>,
    /// The hotel the page is about.
    pub hotel: Hotel,
    pub section: Section,
    pub csrf: String,
    pub flash: Option<Flash>,
    /// Booking requests waiting for approval at this hotel (the navigation's badge).
    pub requests_waiting: i64,
    pub css: String,
    pub htmx: String,
    pub js: String,
}

impl Chrome {
    pub async fn load(
        state: &AppState,
        session: &Session,
        hotel: &Hotel,
        section: Section,
        title: impl Into<String>,
    ) -> Result<Chrome, WebError> {
        let hotels = hotels::list(&state.db, &session.actor).await?;
        let requests_waiting = front_office::requests_waiting(&state.db, &session.actor, &hotel.id).await?;
        Ok(Chrome {
            title: title.into(),
            operator_name: session.operator.name.clone(),
            organization_name: session.organization.name.clone(),
            hotels: hotels.into_iter().map(|h| HotelChoice { id: h.id, name: h.name }).collect(),
            hotel: hotel.clone(),
            section,
            csrf: session.csrf.clone(),
            flash: session.flash.clone(),
            requests_waiting,
            css: assets::url("app.css"),
            htmx: assets::url("htmx.min.js"),
            js: assets::url("app.js"),
        })
    }

    /// `aria-current` for the navigation link of this page's section.
    pub fn current(&self, section: Section) -> &'static str {
        if self.section == section {
            "page"
        } else {
            "false"
        }
    }

    /// A path within the current hotel, e.g. `hotel_path("today")`.
    pub fn hotel_path(&self, rest: &str) -> String {
        format!("/hotels/{}/{rest}", self.hotel.id)
    }
}

/// Renders a dashboard page (with its frame) and clears the flash it showed.
pub fn render_page(template: &impl Template, session: &Session, state: &AppState) -> Response {
    let mut response = render(template, StatusCode::OK);
    session::consume_flash(&mut response, session, state);
    response
}

/// Renders a template as an HTML answer with `status`.
pub fn render(template: &impl Template, status: StatusCode) -> Response {
    match template.render() {
        Ok(html) => {
            let mut response = (status, html).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            response
        }
        Err(err) => {
            tracing::error!(error = %err, "a page could not be rendered");
            plain_error(StatusCode::INTERNAL_SERVER_ERROR, "The page could not be shown. Try again later.")
        }
    }
}

/// "Are you sure?": the confirmation a destructive action shows when the browser did not ask (JavaScript off).
/// Its form posts the same fields again, with `confirmed=yes`.
#[derive(Template)]
#[template(path = "confirm.html")]
pub struct ConfirmPage {
    pub chrome: Chrome,
    pub question: String,
    pub detail: String,
    pub action: String,
    pub fields: Vec<(String, String)>,
    pub button: String,
    pub cancel_href: String,
}

/// A page without the dashboard frame: sign-in and error pages.
#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage<'a> {
    pub title: &'a str,
    pub message: &'a str,
    pub css: String,
    /// Where the operator can go from here.
    pub link: (&'a str, &'a str),
}

fn plain_error(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    let page = MessagePage { title, message, css: assets::url("app.css"), link: ("/", "Go to the dashboard") };
    match page.render() {
        Ok(html) => (status, [(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"))], html)
            .into_response(),
        Err(_) => (status, message.to_string()).into_response(),
    }
}

pub fn not_found() -> Response {
    plain_error(
        StatusCode::NOT_FOUND,
        "There is nothing here: the page or record does not exist, or it belongs to another organization.",
    )
}

pub fn forbidden(message: &str) -> Response {
    plain_error(StatusCode::FORBIDDEN, message)
}

pub fn bad_request(message: &str) -> Response {
    plain_error(StatusCode::BAD_REQUEST, message)
}

pub fn unsupported_media_type(message: &str) -> Response {
    plain_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, message)
}

/// An answer that asks to wait `secs` seconds before trying again (`Retry-After`).
pub fn with_retry_after(mut response: Response, secs: u64) -> Response {
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// A domain error that no form handles: the page that explains it.
pub fn error_response(err: Error) -> Response {
    WebError(err).into_response()
}

/// A domain error on its way to becoming a page, so handlers can use `?` on domain results.
#[derive(Debug)]
pub struct WebError(pub Error);

impl From<Error> for WebError {
    fn from(err: Error) -> Self {
        WebError(err)
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        match self.0 {
            Error::NotFound(_) => not_found(),
            Error::Unauthorized(_) => Redirect::to("/sign-in").into_response(),
            Error::Forbidden(message) => forbidden(&message),
            Error::RateLimited(message) => plain_error(StatusCode::TOO_MANY_REQUESTS, &message),
            Error::TooManyAttempts { message, retry_after_secs } => {
                with_retry_after(plain_error(StatusCode::TOO_MANY_REQUESTS, &message), retry_after_secs)
            }
            Error::Conflict(message) => plain_error(StatusCode::CONFLICT, &message),
            Error::BadRequest(message) => bad_request(&message),
            Error::Validation(errors) => {
                let text: Vec<String> = errors
                    .iter()
                    .map(|e| match &e.field {
                        Some(field) => format!("{field}: {}", e.message),
                        None => e.message.clone(),
                    })
                    .collect();
                bad_request(&text.join("; "))
            }
            Error::Internal(err) if crate::store::write_health::is_storage_failure_cause(&err) => {
                tracing::warn!(error = format!("{err:#}"), "the database cannot store writes");
                plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database cannot store anything at the moment. Nothing was changed; try again in a few \
                     minutes.",
                )
            }
            Error::Internal(err) if crate::store::is_unavailable_cause(&err) => {
                tracing::warn!(error = format!("{err:#}"), "the database is unavailable");
                plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database cannot be reached at the moment. Nothing was changed; try again in a few seconds.",
                )
            }
            Error::Internal(err) => {
                tracing::error!(error = format!("{err:#}"), "internal error on a page");
                plain_error(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong on our side. Try again later.")
            }
        }
    }
}

pub type WebResult = Result<Response, WebError>;
