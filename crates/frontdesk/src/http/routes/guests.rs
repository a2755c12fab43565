//! Guests: scopes guests:read / guests:write.

use axum::extract::State;
use axum::response::Response;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::guests::{self, Guest, GuestFilter, GuestIn, GuestPatch};
use crate::domain::listing::ListParams;
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};
use crate::http::listing;
use crate::http::openapi::Projected;

/// A listed guest: every field, or those the `fields` parameter names.
type GuestFields = Projected<Guest>;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_guests, create_guest))
        .routes(routes!(get_guest, update_guest, delete_guest))
        .routes(routes!(anonymise_guest))
}

/// The organization's guests. `limit=0` (the default) answers every match, streamed; `X-Total-Count` counts them.
#[utoipa::path(
    get,
    path = "/api/guests",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    params(GuestFilter, ListParams),
    responses(
        (status = 200, body = Vec<GuestFields>, headers(("X-Total-Count" = i64, description = "Matches in all, before paging"))),
        (status = 403, description = "Lacks guests:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_guests(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(filter): Query<GuestFilter>,
    Query(params): Query<ListParams>,
) -> Result<Response> {
    guests::list(&state.db, &actor, filter, params).await.map(listing::respond)
}

/// Creates a guest.
#[utoipa::path(
    post,
    path = "/api/guests",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = GuestIn,
    responses(
        (status = 200, body = Guest),
        (status = 403, description = "Lacks guests:write, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn create_guest(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<GuestIn>,
) -> Result<Json<Guest>> {
    guests::create(&state.db, &actor, input).await.map(Json)
}

/// One guest.
#[utoipa::path(
    get,
    path = "/api/guests/{guestId}",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("guestId" = String, Path)),
    responses(
        (status = 200, body = Guest),
        (status = 403, description = "Lacks guests:read"),
        (status = 404, description = "Missing, or another organization's"),
    )
)]
async fn get_guest(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Guest>> {
    guests::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a guest; fields left out keep their value.
#[utoipa::path(
    put,
    path = "/api/guests/{guestId}",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("guestId" = String, Path)),
    request_body = GuestPatch,
    responses(
        (status = 200, body = Guest),
        (status = 403, description = "Lacks guests:write"),
        (status = 404, description = "Missing, or another organization's (or the named hotel is)"),
    )
)]
async fn update_guest(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<GuestPatch>,
) -> Result<Json<Guest>> {
    guests::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a guest who has no reservations.
#[utoipa::path(
    delete,
    path = "/api/guests/{guestId}",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("guestId" = String, Path)),
    responses(
        (status = 200, description = "The deleted guest", body = Guest),
        (status = 403, description = "Lacks guests:write"),
        (status = 404, description = "Missing, or another organization's"),
        (status = 409, description = "The guest has reservations"),
    )
)]
async fn delete_guest(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Guest>> {
    guests::delete(&state.db, &actor, &id).await.map(Json)
}

/// Erases a guest's personal data: the name becomes "Anonymised guest"; e-mail, phone, address, country, language
/// and notes are cleared, with the notes of their reservations and the addresses of the e-mails sent to them.
/// Issued invoices stay as issued (they must be kept for ten years).
#[utoipa::path(
    post,
    path = "/api/guests/{guestId}/anonymise",
    tag = "guests",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("guestId" = String, Path)),
    responses(
        (status = 200, description = "The guest as now stored", body = Guest),
        (status = 403, description = "Lacks guests:write"),
        (status = 404, description = "Missing, or another organization's"),
    )
)]
async fn anonymise_guest(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Guest>> {
    guests::anonymise(&state.db, &actor, &id).await.map(Json)
}
