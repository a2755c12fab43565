//! Room types: scopes rooms:read / rooms:write.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::room_types::{self, RoomType, RoomTypeIn, RoomTypePatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_room_types, create_room_type)).routes(routes!(
        get_room_type,
        update_room_type,
        delete_room_type
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RoomTypesQuery {
    /// Only this hotel's room types.
    pub hotel_id: Option<String>,
}

/// Room types, optionally of one hotel.
#[utoipa::path(
    get,
    path = "/api/roomTypes",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(RoomTypesQuery),
    responses(
        (status = 200, body = Vec<RoomType>),
        (status = 403, description = "Lacks rooms:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_room_types(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(query): Query<RoomTypesQuery>,
) -> Result<Json<Vec<RoomType>>> {
    room_types::list(&state.db, &actor, query.hotel_id.as_deref()).await.map(Json)
}

/// Creates a room type.
#[utoipa::path(
    post,
    path = "/api/roomTypes",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = RoomTypeIn,
    responses(
        (status = 200, body = RoomType),
        (status = 403, description = "Lacks rooms:write, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn create_room_type(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<RoomTypeIn>,
) -> Result<Json<RoomType>> {
    room_types::create(&state.db, &actor, input).await.map(Json)
}

/// One room type.
#[utoipa::path(
    get,
    path = "/api/roomTypes/{roomTypeId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomTypeId" = String, Path)),
    responses(
        (status = 200, body = RoomType),
        (status = 403, description = "Lacks rooms:read"),
        (status = 404, description = "No such room type for this credential"),
    )
)]
async fn get_room_type(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<RoomType>> {
    room_types::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a room type; fields left out keep their value.
#[utoipa::path(
    put,
    path = "/api/roomTypes/{roomTypeId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomTypeId" = String, Path)),
    request_body = RoomTypePatch,
    responses(
        (status = 200, body = RoomType),
        (status = 403, description = "Lacks rooms:write"),
        (status = 404, description = "No such room type for this credential"),
    )
)]
async fn update_room_type(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<RoomTypePatch>,
) -> Result<Json<RoomType>> {
    room_types::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a room type that no room, rate plan or reservation uses.
#[utoipa::path(
    delete,
    path = "/api/roomTypes/{roomTypeId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomTypeId" = String, Path)),
    responses(
        (status = 200, description = "The deleted room type", body = RoomType),
        (status = 403, description = "Lacks rooms:write"),
        (status = 404, description = "No such room type for this credential"),
        (status = 409, description = "Rooms, rate plans or reservations still use it"),
    )
)]
async fn delete_room_type(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<RoomType>> {
    room_types::delete(&state.db, &actor, &id).await.map(Json)
}
