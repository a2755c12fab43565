//! The public endpoints: availability and booking requests. No credentials needed; an API key is accepted.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::domain::availability::{self, AvailabilityQuery, BookingIn, BookingOut, Offer};
use crate::domain::{Actor, Error, FieldError, Result};
use crate::http::auth::MaybePrincipal;
use crate::http::extract::{Json, Path, Query};
use crate::http::problem::Problem;
use crate::http::AppState;

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
        (status = 400, description = "Invalid dates or occupancy", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "An API key pinned to another hotel", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Hotel not found (or not open to public booking)", body = Problem, content_type = "application/problem+json"),
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
/// to approve. With an `Idempotency-Key` header a retry answers the first result.
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
        (status = 400, description = "A forged or edited offer, or an invalid guest", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "An API key pinned to another hotel", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Hotel not found (or not open to public booking)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The selected offer is no longer available (sold, repriced or expired)", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn book_reservation(
    State(state): State<AppState>,
    MaybePrincipal(caller): MaybePrincipal,
    Path(hotel_id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<BookingIn>,
) -> Result<(StatusCode, Json<BookingOut>)> {
    within_pin(caller.as_ref(), &hotel_id)?;
    let key = match headers.get("idempotency-key").map(|v| v.to_str()) {
        None => None,
        Some(Ok(key)) => Some(key.to_string()),
        Some(Err(_)) => {
            let message = "must be 1 to 200 visible ASCII characters";
            return Err(Error::Validation(vec![FieldError::field("Idempotency-Key", message)]));
        }
    };
    let booked = availability::book(&state.db, &state.offer_key, &hotel_id, key.as_deref(), input).await?;
    Ok((StatusCode::CREATED, Json(booked)))
}
