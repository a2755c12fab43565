//! Reservations: the list with its filters, one reservation with its rooms, folio and guest, every move the state
//! machine allows (approve, decline, cancel, check in with room assignment, check out, no-show), date changes,
//! room assignments and the form that makes a reservation at the desk.
//!
//! Every write calls the same domain function as the REST route (`reservations::write::…`), so the same rules
//! apply and the same webhook events are recorded.
//!
//! One file per action: [`list`], [`detail`], [`status`] (the moves), [`changes`] (dates, rooms), [`folio`]
//! (charges, payments, corrections, refunds), [`new`] (the desk's form); the helpers they share are here.

mod changes;
mod detail;
mod folio;
mod list;
mod new;
mod status;

use axum::routing::{get, post};
use axum::Router;

use super::{refusal, HotelPage};
use crate::app::AppState;
use crate::domain::front_office::{self};
use crate::domain::guests::Guest;
use crate::domain::Error;
use crate::web::page::WebError;
use crate::web::session;

use changes::{assign_room, change_dates};
use detail::detail;
use folio::{add_charge, city_tax, correct_charge, print, refund_payment, take_payment};
use list::list;
use new::{create, new_form, quote_fragment};
use status::{approve, attention_handled, check_out_page, move_status};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/reservations", get(list).post(create))
        .route("/hotels/{hotel_id}/reservations/new", get(new_form))
        .route("/hotels/{hotel_id}/reservations/quote", get(quote_fragment))
        .route("/hotels/{hotel_id}/reservations/{id}", get(detail))
        .route("/hotels/{hotel_id}/reservations/{id}/check-out", get(check_out_page))
        .route("/hotels/{hotel_id}/reservations/{id}/status", post(move_status))
        .route("/hotels/{hotel_id}/reservations/{id}/approve", post(approve))
        .route("/hotels/{hotel_id}/reservations/{id}/attention", post(attention_handled))
        .route("/hotels/{hotel_id}/reservations/{id}/dates", post(change_dates))
        .route("/hotels/{hotel_id}/reservations/{id}/rooms", post(assign_room))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/charges", post(add_charge))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/payments", post(take_payment))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/allowances", post(correct_charge))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/refunds", post(refund_payment))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/city-tax", post(city_tax))
        .route("/hotels/{hotel_id}/reservations/{id}/folio/print", get(print))
}

fn guest_title(guest: &Option<Guest>) -> String {
    guest.as_ref().map(front_office::guest_name).unwrap_or_else(|| "no guest".into())
}

/// The page to return to after an action: the `back` the form names (a path of this site), else the reservation.
fn back_to(back: Option<&str>, page: &HotelPage, id: &str) -> String {
    back.filter(|b| session::is_local_path(b))
        .map(str::to_string)
        .unwrap_or_else(|| format!("/hotels/{}/reservations/{id}", page.hotel.id))
}

/// The reservation of this hotel, or the 404 page (an id of another hotel or organization shows nothing).
async fn of_hotel(state: &AppState, page: &HotelPage, id: &str) -> Result<front_office::StayLine, WebError> {
    let line = front_office::stay(&state.db, &page.session.actor, id).await?;
    if line.reservation.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("reservation")));
    }
    Ok(line)
}
