//! The public endpoints: availability and booking requests. No credentials needed; an API key is accepted.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::limits::ClientAddress;
use crate::app::AppState;
use crate::domain::availability::{self, AvailabilityQuery, Offer};
use crate::domain::booking_requests::{self, BookingFrom, BookingIn, BookingOut, PublicCaller};
use crate::domain::change::Writer;
use crate::domain::idempotency::Namespace;
use crate::domain::{Actor, Result, Scope};
use crate::http::auth::MaybePrincipal;
use crate::http::extract::{idempotency_key, Json, Path, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(availability)).routes(routes!(book_reservation))
}

/// Anyone may ask, but an API key pinned to a hotel that names another one is refused (403), as everywhere.
fn within_pin(caller: Option<&Actor>, hotel_id: &str) -> Result<()> {
    caller.map_or(Ok(()), |actor| actor.resolve_hotel(Some(hotel_id)).map(drop))
}

/// Sanitized room-type offers for the dates and party, priced and counted by the server.
#[utoipa::path(
    get,
    path = "/api/hotels/{hotelId}/availability",
    tag = "public",
    security((), ("apiKey" = [])),
    params(("hotelId" = String, Path), AvailabilityQuery),
    responses(
        (status = 200, body = Vec<Offer>),
        (status = 400, description = "Invalid dates or occupancy"),
        (status = 403, description = "An API key pinned to another hotel"),
        (status = 404, description = "Hotel not found (or not open to public booking)"),
    )
)]
async fn availability(
    State(state): State<AppState>,
    MaybePrincipal(caller): MaybePrincipal,
    Path(hotel_id): Path<String>,
    Query(query): Query<AvailabilityQuery>,
) -> Result<Response> {
    within_pin(caller.as_ref(), &hotel_id)?;
    let answer = availability::search(&state.db, &state.offer_key, &state.availability, &hotel_id, &query).await?;
    // The answer's JSON, rendered once however many searches it answers.
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], answer.json()).into_response())
}

/// Revalidates the selected offer, then creates a REQUESTED reservation with one unassigned PENDING room for staff
/// to approve. With an `Idempotency-Key` header a retry answers the first result. Without an API key that may write
/// reservations, requests are limited per client address and per guest e-mail for each hotel (429 with
/// `Retry-After`), and an exact repeat of a request still waiting (same e-mail, dates and room type) answers that
/// request.
#[utoipa::path(
    post,
    path = "/api/hotels/{hotelId}/book-reservation",
    tag = "public",
    security((), ("apiKey" = [])),
    params(
        ("hotelId" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retry answer the first result (1 to 200 characters)"),
    ),
    request_body = BookingIn,
    responses(
        (status = 201, description = "Request created", body = BookingOut),
        (status = 400, description = "A forged or edited offer, or an invalid guest"),
        (status = 403, description = "An API key pinned to another hotel"),
        (status = 404, description = "Hotel not found (or not open to public booking)"),
        (status = 409, description = "The selected offer is no longer available (sold, repriced or expired), or the Idempotency-Key was used for another request"),
        (status = 429, description = "Too many booking requests for this hotel from this address or for this e-mail: wait `Retry-After` seconds"),
    )
)]
async fn book_reservation(
    State(state): State<AppState>,
    MaybePrincipal(caller): MaybePrincipal,
    ClientAddress(address): ClientAddress,
    Path(hotel_id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<BookingIn>,
) -> Result<(StatusCode, Json<BookingOut>)> {
    within_pin(caller.as_ref(), &hotel_id)?;
    let key = idempotency_key(&headers)?;
    // An integration trusted to write reservations is not the public.
    let trusted = caller.as_ref().is_some_and(|actor| actor.require_scope(Scope::ReservationsWrite).is_ok());
    let writer = match (&caller, trusted) {
        (Some(actor), true) => Writer::for_actor(actor),
        _ => Writer::BookingPage { address: address.clone() },
    };
    let from = BookingFrom {
        writer: &writer,
        namespace: Namespace::BookReservation,
        idempotency_key: key.as_deref(),
        public: (!trusted).then(|| PublicCaller { address: &address, limits: state.config.booking_limits() }),
    };
    let booked = booking_requests::book(&state.db, &state.offer_key, &hotel_id, from, input).await?;
    Ok((StatusCode::CREATED, Json(booked)))
}
