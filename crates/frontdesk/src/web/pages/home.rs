//! The dashboard's front door: `/` opens the first hotel's Today page; the hotel switcher lands here too.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::hotels;
use crate::web::assets;
use crate::web::page::{self, MessagePage, WebResult};
use crate::web::session::Session;

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(home)).route("/switch-hotel", get(switch_hotel))
}

async fn home(State(state): State<AppState>, session: Session) -> WebResult {
    let hotels = hotels::list(&state.db, &session.actor).await?;
    Ok(match hotels.first() {
        Some(hotel) => Redirect::to(&format!("/hotels/{}/today", hotel.id)).into_response(),
        None => page::render(
            &MessagePage {
                title: "No hotels yet",
                message: "Your organization has no hotel yet. Create one with POST /api/hotels (see the README), \
                          then come back here.",
                css: assets::url("app.css"),
                link: ("/", "Reload"),
            },
            axum::http::StatusCode::OK,
        ),
    })
}

#[derive(Deserialize)]
struct Switch {
    hotel: String,
    section: Option<String>,
}

/// The sections a switch may land on (anything else lands on Today).
const SECTIONS: [&str; 7] = ["today", "rack", "housekeeping", "requests", "reservations", "guests", "settings"];

async fn switch_hotel(State(state): State<AppState>, session: Session, Query(to): Query<Switch>) -> Response {
    match hotels::get(&state.db, &session.actor, &to.hotel).await {
        Ok(hotel) => {
            let section = to.section.as_deref().filter(|s| SECTIONS.contains(s)).unwrap_or("today");
            Redirect::to(&format!("/hotels/{}/{section}", hotel.id)).into_response()
        }
        Err(err) => page::error_response(err),
    }
}
