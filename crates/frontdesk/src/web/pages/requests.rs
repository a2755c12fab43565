//! Booking requests: what guests asked for on the booking page or through the public API, waiting for staff to
//! approve (the same recheck under lock as `POST /api/reservations/{id}/approve`) or decline.

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office::{self, StaySearch};
use crate::domain::reservations::ReservationStatus;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view::{Catalog, StayRow};

pub fn router() -> Router<AppState> {
    Router::new().route("/hotels/{hotel_id}/requests", get(inbox))
}

#[derive(Template)]
#[template(path = "requests.html")]
struct InboxTemplate {
    chrome: Chrome,
    rows: Vec<StayRow>,
    more: bool,
}

async fn inbox(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let search = StaySearch { statuses: vec![ReservationStatus::Requested], page: 1, ..StaySearch::default() };
    let found = front_office::search(&state.db, &page.session.actor, &page.hotel.id, &search).await?;
    let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    let template = InboxTemplate {
        chrome: page.chrome(&state, Section::Requests, "Booking requests").await?,
        rows: StayRow::rows(&found.lines, &catalog),
        more: found.has_more,
    };
    Ok(render_page(&template, &page.session, &state))
}
