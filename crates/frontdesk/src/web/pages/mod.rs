//! The dashboard's pages, one module per area, each with its own `router()`.

pub mod audit;
pub mod guests;
pub mod home;
pub mod housekeeping;
pub mod integrations;
pub mod invoices;
pub mod messages;
pub mod rack;
pub mod rates;
pub mod reports;
pub mod requests;
pub mod reservations;
pub mod settings;
pub mod setup;
pub mod sign_in;
pub mod today;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::page::{self, Chrome, Section, WebError};
use super::session::Session;
use crate::app::AppState;
use crate::domain::hotels::{self, Hotel};

/// A page about one hotel (`/hotels/{hotel_id}/…`): the signed-in operator and the hotel, which must be one of
/// their organization's (the 404 page otherwise).
pub struct HotelPage {
    pub session: Session,
    pub hotel: Hotel,
}

impl FromRequestParts<AppState> for HotelPage {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let session = Session::from_request_parts(parts, state).await?;
        let params = RawPathParams::from_request_parts(parts, state).await.map_err(|_| page::not_found())?;
        let Some((_, hotel_id)) = params.iter().find(|(name, _)| *name == "hotel_id") else {
            return Err(page::not_found());
        };
        let hotel = hotels::get(&state.db, &session.actor, hotel_id).await.map_err(|e| WebError(e).into_response())?;
        Ok(HotelPage { session, hotel })
    }
}

impl HotelPage {
    pub async fn chrome(&self, state: &AppState, section: Section, title: &str) -> Result<Chrome, WebError> {
        Chrome::load(state, &self.session, &self.hotel, section, title).await
    }

    pub fn path(&self, rest: &str) -> String {
        format!("/hotels/{}/{rest}", self.hotel.id)
    }
}

/// A refused action as a message for the next page; errors that are not about the request stay errors.
pub(crate) fn refusal(err: crate::domain::Error) -> Result<crate::web::session::Flash, WebError> {
    let mut errors = crate::web::form::FormErrors::default();
    match errors.absorb(err) {
        Ok(()) => {
            let text = errors.general.clone().unwrap_or_else(|| errors.unplaced(&[]).join("; "));
            Ok(crate::web::session::Flash::error(text))
        }
        Err(other) => Err(WebError(other)),
    }
}
