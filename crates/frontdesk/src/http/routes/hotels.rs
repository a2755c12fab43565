//! Hotels: read with any credential of the organization, created and changed with an operator access token.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::hotels::{self, Hotel, HotelIn, HotelPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_hotels, create_hotel)).routes(routes!(get_hotel, update_hotel))
}

/// The organization's hotels (a pinned key sees its own only).
#[utoipa::path(
    get,
    path = "/api/hotels",
    tag = "hotels",
    security(("apiKey" = []), ("accessToken" = [])),
    responses((status = 200, body = Vec<Hotel>))
)]
async fn list_hotels(State(state): State<AppState>, Principal(actor): Principal) -> Result<Json<Vec<Hotel>>> {
    hotels::list(&state.db, &actor).await.map(Json)
}

/// Creates a hotel.
#[utoipa::path(
    post,
    path = "/api/hotels",
    tag = "hotels",
    security(("accessToken" = [])),
    request_body = HotelIn,
    responses(
        (status = 200, body = Hotel),
        (status = 403, description = "Not an operator access token"),
    )
)]
async fn create_hotel(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<HotelIn>,
) -> Result<Json<Hotel>> {
    hotels::create(&state.db, &actor, input).await.map(Json)
}

/// One hotel.
#[utoipa::path(
    get,
    path = "/api/hotels/{hotelId}",
    tag = "hotels",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("hotelId" = String, Path, description = "The hotel's id")),
    responses(
        (status = 200, body = Hotel),
        (status = 404, description = "No such hotel for this credential"),
    )
)]
async fn get_hotel(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Hotel>> {
    hotels::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a hotel; fields left out keep their value.
#[utoipa::path(
    put,
    path = "/api/hotels/{hotelId}",
    tag = "hotels",
    security(("accessToken" = [])),
    params(("hotelId" = String, Path, description = "The hotel's id")),
    request_body = HotelPatch,
    responses(
        (status = 200, body = Hotel),
        (status = 400, description = "Invalid fields; every problem is listed with its field"),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such hotel in the organization"),
        (status = 409, description = "A new currency for a hotel whose folios already hold money"),
    )
)]
async fn update_hotel(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<HotelPatch>,
) -> Result<Json<Hotel>> {
    hotels::update(&state.db, &actor, &id, patch).await.map(Json)
}
