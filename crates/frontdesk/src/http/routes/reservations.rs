//! Reservations: scopes reservations:read / reservations:write.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::listing::ListParams;
use crate::domain::reservations::{self, write, Reservation, ReservationFilter, ReservationIn, ReservationPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{idempotency_key, Json, Path, Query};
use crate::http::listing;
use crate::http::openapi::Projected;

/// A listed reservation: every field, or those the `fields` parameter names.
type ReservationFields = Projected<Reservation>;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_reservations, create_reservation))
        .routes(routes!(get_reservation, update_reservation, delete_reservation))
        .routes(routes!(approve_reservation))
}

/// The organization's reservations (without rooms). `limit=0` (the default) answers every match, streamed;
/// `X-Total-Count` counts them.
#[utoipa::path(
    get,
    path = "/api/reservations",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(ReservationFilter, ListParams),
    responses(
        (status = 200, body = Vec<ReservationFields>, headers(("X-Total-Count" = i64, description = "Matches in all, before paging"))),
        (status = 403, description = "Lacks reservations:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_reservations(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(filter): Query<ReservationFilter>,
    Query(params): Query<ListParams>,
) -> Result<Response> {
    reservations::list(&state.db, &actor, filter, params).await.map(listing::respond)
}

/// Creates a reservation and its rooms. A CONFIRMED one (the default) takes inventory (409 when a night is full)
/// and gets its folio. With an `Idempotency-Key` header the create can be retried safely: a retry with the same key
/// and the same body answers the reservation the first request made (as it is now, with `Idempotent-Replayed:
/// true`), and the same key with a different body is refused with 409. Keys belong to the caller (the API key or
/// the operator) and are kept for good.
#[utoipa::path(
    post,
    path = "/api/reservations",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retry answer the first result (1 to 200 visible ASCII characters)"),
    ),
    request_body = ReservationIn,
    responses(
        (status = 200, body = Reservation, headers(("Idempotent-Replayed" = bool, description = "`true` when a retry answers what an earlier request with the same Idempotency-Key made"))),
        (status = 403, description = "Lacks reservations:write, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel or guest"),
        (status = 409, description = "No room left on a night, or a physical room is taken, or the Idempotency-Key was used for a different request"),
    )
)]
async fn create_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    headers: HeaderMap,
    Json(input): Json<ReservationIn>,
) -> Result<Response> {
    let Some(key) = idempotency_key(&headers)? else {
        return Ok(Json(write::create(&state.db, &actor, input).await?).into_response());
    };
    let created = write::create_once(&state.db, &actor, input, &key).await?;
    let mut response = Json(created.reservation).into_response();
    if created.replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// One reservation with its rooms and folio.
#[utoipa::path(
    get,
    path = "/api/reservations/{reservationId}",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("reservationId" = String, Path)),
    responses(
        (status = 200, body = Reservation),
        (status = 403, description = "Lacks reservations:read"),
        (status = 404, description = "Missing, or another organization's"),
    )
)]
async fn get_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Reservation>> {
    reservations::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a reservation: fields, dates, room assignments, and its status along the allowed moves.
#[utoipa::path(
    put,
    path = "/api/reservations/{reservationId}",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("reservationId" = String, Path)),
    request_body = ReservationPatch,
    responses(
        (status = 200, body = Reservation),
        (status = 403, description = "Lacks reservations:write"),
        (status = 404, description = "Missing, or another organization's"),
        (status = 409, description = "A move that does not exist, another hotel, a full night or a taken room"),
    )
)]
async fn update_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<ReservationPatch>,
) -> Result<Json<Reservation>> {
    write::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a reservation with its rooms, folio and charges.
#[utoipa::path(
    delete,
    path = "/api/reservations/{reservationId}",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("reservationId" = String, Path)),
    responses(
        (status = 200, description = "The deleted reservation", body = Reservation),
        (status = 403, description = "Lacks reservations:write"),
        (status = 404, description = "Missing, or another organization's"),
    )
)]
async fn delete_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Reservation>> {
    write::delete(&state.db, &actor, &id).await.map(Json)
}

/// Approves a REQUESTED reservation when inventory still suffices: its rooms are confirmed and its folio created.
#[utoipa::path(
    post,
    path = "/api/reservations/{reservationId}/approve",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("reservationId" = String, Path)),
    responses(
        (status = 200, body = Reservation),
        (status = 403, description = "Lacks reservations:write"),
        (status = 404, description = "Missing, or another organization's"),
        (status = 409, description = "Not approvable (not REQUESTED) or inventory changed"),
    )
)]
async fn approve_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Reservation>> {
    write::approve(&state.db, &actor, &id).await.map(Json)
}
