//! Changes to a reservation that keep its status: new dates, a room assigned.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::super::HotelPage;
use super::detail::render_detail;
use super::{back_to, guest_title, of_hotel, refusal};
use crate::app::AppState;
use crate::domain::reservations::{write, ReservationPatch, RoomAssignmentIn};
use crate::web::form::{optional, FormErrors};
use crate::web::page::WebResult;
use crate::web::session::{self, Flash, Posted};
use crate::web::view::{self};

#[derive(Deserialize)]
pub(super) struct DatesForm {
    #[serde(rename = "checkInDate", default)]
    check_in: String,
    #[serde(rename = "checkOutDate", default)]
    check_out: String,
}

/// `POST …/dates`: new stay dates (a confirmed stay is rechecked for inventory and its folio rebuilt).
pub(super) async fn change_dates(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<DatesForm>,
) -> WebResult {
    of_hotel(&state, &page, &id).await?;
    let mut errors = FormErrors::default();
    let check_in = errors.date("checkInDate", &posted.form.check_in, true);
    let check_out = errors.date("checkOutDate", &posted.form.check_out, true);
    if let (Some(check_in), Some(check_out)) = (check_in, check_out) {
        let patch = ReservationPatch {
            check_in_date: Some(check_in.to_string()),
            check_out_date: Some(check_out.to_string()),
            ..ReservationPatch::default()
        };
        match write::update(&state.db, &page.session.actor, &id, patch).await {
            Ok(r) => {
                let flash = Flash::success(format!(
                    "The stay is now {} to {}.",
                    view::date_long(r.check_in_date),
                    view::date_long(r.check_out_date)
                ));
                return Ok(session::redirect_with(&page.path(&format!("reservations/{id}")), flash, &state));
            }
            Err(err) => errors.absorb(err)?,
        }
    }
    render_detail(&state, &page, &id, errors, StatusCode::UNPROCESSABLE_ENTITY).await
}

#[derive(Deserialize)]
pub(super) struct AssignForm {
    #[serde(rename = "reservationRoomId")]
    reservation_room_id: String,
    #[serde(rename = "roomId", default)]
    room_id: String,
    back: Option<String>,
}

/// `POST …/rooms`: gives one room of the reservation a physical room (or, with none chosen, takes it away). The
/// domain's overlap rule decides; a room taken on an overlapping night comes back as a message.
pub(super) async fn assign_room(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<AssignForm>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let form = posted.form;
    let back = back_to(form.back.as_deref(), &page, &id);
    let room_id = optional(&form.room_id);
    let patch = ReservationPatch {
        rooms: Some(vec![RoomAssignmentIn { id: form.reservation_room_id, room_id: Some(room_id.clone()) }]),
        ..ReservationPatch::default()
    };
    let guest = guest_title(&line.guest);
    let flash = match write::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(_) if room_id.is_some() => Flash::success(format!("Room assigned to {guest}.")),
        Ok(_) => Flash::success(format!("Room unassigned from {guest}.")),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}
