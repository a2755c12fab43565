//! The dashboard's front door: `/` opens the first hotel's Today page (or, without a hotel, the setup of one); the
//! hotel switcher lands here too.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::hotels;
use crate::web::page::{self, WebResult};
use crate::web::session::Session;

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(home)).route("/switch-hotel", get(switch_hotel))
}

async fn home(State(state): State<AppState>, session: Session) -> WebResult {
    let hotels = hotels::list(&state.db, &session.actor).await?;
    // An organization without a hotel begins by setting one up.
    // Housekeeping starts at its board: it reads no reservations, which the Today page is made of.
    let start = match session.actor.require_scope(crate::domain::Scope::ReservationsRead) {
        Ok(()) => "today",
        Err(_) => "housekeeping",
    };
    let to = match hotels.first() {
        Some(hotel) => format!("/hotels/{}/{start}", hotel.id),
        None => "/setup/hotels".to_string(),
    };
    Ok(Redirect::to(&to).into_response())
}

#[derive(Deserialize)]
struct Switch {
    hotel: String,
    section: Option<String>,
}

/// The sections a switch may land on (anything else lands on Today).
const SECTIONS: [&str; 10] = [
    "today",
    "rack",
    "rates",
    "housekeeping",
    "requests",
    "reservations",
    "guests",
    "reports",
    "settings",
    "integrations",
];

async fn switch_hotel(State(state): State<AppState>, session: Session, Query(to): Query<Switch>) -> Response {
    match hotels::get(&state.db, &session.actor, &to.hotel).await {
        Ok(hotel) => {
            let section = to.section.as_deref().filter(|s| SECTIONS.contains(s)).unwrap_or("today");
            Redirect::to(&format!("/hotels/{}/{section}", hotel.id)).into_response()
        }
        Err(err) => page::error_response(err),
    }
}
