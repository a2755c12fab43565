//! Reservations: scopes reservations:read / reservations:write.

use axum::extract::State;
use axum::response::Response;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::domain::listing::ListParams;
use crate::domain::reservations::{self, write, Reservation, ReservationFilter, ReservationIn, ReservationPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};
use crate::http::listing;
use crate::http::openapi::Projected;
use crate::http::problem::Problem;
use crate::http::AppState;

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
        (status = 403, description = "Lacks reservations:read, or a pinned key names another hotel", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such hotel", body = Problem, content_type = "application/problem+json"),
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
/// and gets its folio.
#[utoipa::path(
    post,
    path = "/api/reservations",
    tag = "reservations",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = ReservationIn,
    responses(
        (status = 200, body = Reservation),
        (status = 403, description = "Lacks reservations:write, or a pinned key names another hotel", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such hotel or guest", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "No room left on a night, or a physical room is taken", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn create_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<ReservationIn>,
) -> Result<Json<Reservation>> {
    write::create(&state.db, &actor, input).await.map(Json)
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
        (status = 403, description = "Lacks reservations:read", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Missing, or another organization's", body = Problem, content_type = "application/problem+json"),
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
        (status = 403, description = "Lacks reservations:write", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Missing, or another organization's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "A move that does not exist, another hotel, a full night or a taken room", body = Problem, content_type = "application/problem+json"),
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
        (status = 403, description = "Lacks reservations:write", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Missing, or another organization's", body = Problem, content_type = "application/problem+json"),
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
        (status = 403, description = "Lacks reservations:write", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "Missing, or another organization's", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not approvable (not REQUESTED) or inventory changed", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn approve_reservation(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Reservation>> {
    write::approve(&state.db, &actor, &id).await.map(Json)
}
