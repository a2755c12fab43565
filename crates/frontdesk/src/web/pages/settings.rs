//! A hotel's settings for its public booking page: whether guests can book, the page's address (and a link that
//! opens a search), the sites that may show the page in a frame, and the snippet that embeds it. Saved through
//! `hotels::update`, as `PUT /api/hotels/{id}` saves them.

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;
use chrono::Days;
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::hotels::{self, HotelPatch, MAX_EMBED_ORIGINS};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new().route("/hotels/{hotel_id}/settings", get(show).post(save))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SettingsForm {
    /// `on` when the box is ticked; a browser sends nothing for an unticked box.
    public_booking: Option<String>,
    /// One origin per line.
    embed_origins: String,
}

#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsTemplate {
    chrome: Chrome,
    public_booking: bool,
    embed_origins: String,
    errors: FormErrors,
    booking_url: String,
    search_example: String,
    snippet: String,
    max_origins: usize,
}

fn template(
    chrome: Chrome,
    state: &AppState,
    public_booking: bool,
    embed_origins: String,
    errors: FormErrors,
) -> SettingsTemplate {
    let hotel = &chrome.hotel;
    let booking_url = format!("{}/book/{}", state.config.public_base(), hotel.id);
    let from = hotel.today() + Days::new(30);
    let search_example = format!("{booking_url}?checkInDate={from}&checkOutDate={}&adults=2", from + Days::new(2));
    let title = hotel.name.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    let snippet = format!(
        "<iframe src=\"{booking_url}\" title=\"Book a stay at {title}\" \
         style=\"width: 100%; min-height: 1100px; border: 0\" loading=\"lazy\"></iframe>"
    );
    SettingsTemplate {
        chrome,
        public_booking,
        embed_origins,
        errors,
        booking_url,
        search_example,
        snippet,
        max_origins: MAX_EMBED_ORIGINS,
    }
}

async fn show(State(state): State<AppState>, page: HotelPage) -> WebResult {
    page.session.actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let chrome = page.chrome(&state, Section::Settings, "Booking page settings").await?;
    let origins = page.hotel.booking_embed_origins.join("\n");
    let t = template(chrome, &state, page.hotel.public_booking, origins, FormErrors::default());
    Ok(render_page(&t, &page.session, &state))
}

async fn save(State(state): State<AppState>, page: HotelPage, posted: Posted<SettingsForm>) -> WebResult {
    let form = posted.form;
    let public_booking = form.public_booking.is_some();
    // Host names and schemes are case-insensitive: typed as the operator likes, stored in the form browsers compare.
    let origins: Vec<String> = form.embed_origins.split_whitespace().map(str::to_lowercase).collect();
    let patch = HotelPatch {
        public_booking: Some(public_booking),
        booking_embed_origins: Some(origins),
        ..HotelPatch::default()
    };
    match hotels::update(&state.db, &page.session.actor, &page.hotel.id, patch).await {
        Ok(_) => {
            let flash = Flash::success("Saved the booking page settings.");
            Ok(session::redirect_with(&page.path("settings"), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            let chrome = page.chrome(&state, Section::Settings, "Booking page settings").await?;
            let t = template(chrome, &state, public_booking, form.embed_origins, errors);
            let mut response = render_page(&t, &page.session, &state);
            *response.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}
