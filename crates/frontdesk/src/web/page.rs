//! What every dashboard page shares: the frame around it ([`Chrome`]: who is signed in, the hotel switcher, the
//! navigation, the flash message) and rendering a template into an answer. The error pages are `errors.rs`'s.

use askama::Template;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::assets;
use super::errors::plain_error;
pub use super::errors::{
    bad_request, error_response, forbidden, not_found, unsupported_media_type, with_retry_after, MessagePage, WebError,
    WebResult,
};
use super::session::{self, Flash, Session};
use crate::app::AppState;
use crate::domain::front_office;
use crate::domain::hotels::{self, Hotel};

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
    Reports,
    Settings,
    Integrations,
}

/// A hotel in the switcher.
#[derive(Debug, Clone)]
pub struct HotelChoice {
    pub id: String,
    pub name: String,
}

/// The sections of the navigation an operator's role may use (docs/roles.md): a page the role may not use is not
/// offered, and its address answers 403 all the same (the domain decides).
#[derive(Debug, Clone, Copy)]
pub struct ShownSections {
    pub reservations: bool,
    pub rates: bool,
    pub housekeeping: bool,
    pub guests: bool,
    pub reports: bool,
    pub setup: bool,
    pub integrations: bool,
    /// Actions within sections: booking a stay, adding a guest, changing prices and restrictions.
    pub book: bool,
    pub add_guests: bool,
    pub change_rates: bool,
    pub audit: bool,
}

impl ShownSections {
    pub fn of(actor: &crate::domain::Actor) -> ShownSections {
        use crate::domain::access::Task;
        use crate::domain::Scope;
        let scope = |s: Scope| actor.require_scope(s).is_ok();
        ShownSections {
            reservations: scope(Scope::ReservationsRead),
            rates: scope(Scope::RatesRead),
            housekeeping: scope(Scope::RoomsRead),
            guests: scope(Scope::GuestsRead),
            reports: scope(Scope::FoliosRead),
            setup: actor.require(Task::ConfigureHotel).is_ok(),
            integrations: actor.require(Task::Administer).is_ok(),
            book: scope(Scope::ReservationsWrite),
            add_guests: scope(Scope::GuestsWrite),
            change_rates: scope(Scope::RatesWrite),
            audit: scope(Scope::AuditRead),
        }
    }
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
    /// The sections the operator's role may use: the navigation shows only these.
    pub shown: ShownSections,
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
        // A role that reads no reservations (housekeeping) has no requests to be told of.
        let requests_waiting = match session.actor.require_scope(crate::domain::Scope::ReservationsRead) {
            Ok(()) => front_office::requests_waiting(&state.db, &session.actor, &hotel.id).await?,
            Err(_) => 0,
        };
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
            shown: ShownSections::of(&session.actor),
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

/// "Are you sure?": the confirmation a destructive action shows when the browser did not ask (JavaScript off), on
/// any page of the dashboard, setup's too. Its form posts the same fields again, with `confirmed=yes`.
#[derive(Template)]
#[template(path = "confirm.html")]
pub struct ConfirmPage {
    pub frame: ConfirmFrame,
    pub question: String,
    pub detail: String,
    pub action: String,
    pub fields: Vec<(String, String)>,
    pub button: String,
    pub cancel_href: String,
}

/// What the confirmation page shows around its question: the organization and who is signed in.
pub struct ConfirmFrame {
    pub title: String,
    pub organization_name: String,
    pub operator_name: String,
    pub csrf: String,
    pub css: String,
    pub js: String,
}

impl From<Chrome> for ConfirmFrame {
    fn from(c: Chrome) -> ConfirmFrame {
        ConfirmFrame {
            title: c.title,
            organization_name: c.organization_name,
            operator_name: c.operator_name,
            csrf: c.csrf,
            css: c.css,
            js: c.js,
        }
    }
}
