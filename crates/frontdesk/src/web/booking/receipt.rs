//! The receipt of a booking request, at a link only the guest was given.

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::super::page::render;
use super::super::view;
use super::{error_page, framed_for, public_hotel, stay_line, Frame, Visitor};
use crate::app::AppState;
use crate::domain::availability::booking_page::{self};
use crate::domain::hotels::Hotel;
use crate::domain::money;
use crate::domain::reservations::ReservationStatus;

pub(super) fn receipt_link(state: &AppState, hotel: &Hotel, reservation_id: &str) -> String {
    let token = booking_page::receipt_token(&state.offer_key, &hotel.id, reservation_id);
    format!("/book/{}/requests/{reservation_id}?token={token}", hotel.id)
}

#[derive(Template)]
#[template(path = "booking/receipt.html")]
pub(super) struct ReceiptPage {
    frame: Frame,
    step: u8,
    receipt: booking_page::Receipt,
    heading: String,
    status_label: &'static str,
    status_class: &'static str,
    next_steps: String,
    stay: String,
    party: String,
    total: String,
}

pub(super) async fn receipt_page(
    State(state): State<AppState>,
    _visitor: Visitor,
    Path((hotel_id, reservation_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Response {
    let hotel = match public_hotel(&state, &hotel_id).await {
        Ok(hotel) => hotel,
        Err(response) => return response,
    };
    let params: Vec<(String, String)> =
        url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes()).into_owned().collect();
    let param = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or("");
    let receipt =
        match booking_page::receipt(&state.db, &state.offer_key, &hotel.id, &reservation_id, param("token")).await {
            Ok(receipt) => receipt,
            Err(err) => return error_page(err, Some(&hotel)),
        };
    let name = receipt.guest_first_name.clone();
    let email = receipt.guest_email.clone();
    let (heading, status_label, status_class, next_steps) = match receipt.status {
        ReservationStatus::Requested => (
            format!("Thank you, {name}: your request has been sent"),
            "Waiting for the hotel",
            "requested",
            format!(
                "{} now checks your request; nothing has been charged. Once the hotel confirms it, your stay is \
                 booked. The hotel has your e-mail address, {email}, to reach you. Quote the reference below with \
                 any question about your request.",
                hotel.name
            ),
        ),
        ReservationStatus::Confirmed | ReservationStatus::CheckedIn | ReservationStatus::CheckedOut => (
            format!("Your stay is confirmed, {name}"),
            "Confirmed by the hotel",
            "confirmed",
            format!("{} has confirmed your stay. We look forward to welcoming you.", hotel.name),
        ),
        ReservationStatus::Cancelled | ReservationStatus::NoShow => (
            format!("Your request was not confirmed, {name}"),
            "Not confirmed",
            "cancelled",
            format!(
                "{} could not confirm this request, or it was cancelled. You can search for other dates.",
                hotel.name
            ),
        ),
    };
    let page = ReceiptPage {
        frame: Frame::new(&hotel, "Your booking request"),
        step: 4,
        stay: stay_line(receipt.check_in, receipt.check_out),
        party: view::party(receipt.adults, receipt.children, receipt.infants),
        total: money::format(receipt.total_price, &receipt.currency),
        receipt,
        heading,
        status_label,
        status_class,
        next_steps,
    };
    framed_for(render(&page, StatusCode::OK), Some(&hotel))
}
