//! Rooms: scopes rooms:read / rooms:write.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::rooms::{self, Room, RoomIn, RoomPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_rooms, create_room)).routes(routes!(get_room, update_room, delete_room))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RoomsQuery {
    /// Only this hotel's rooms.
    pub hotel_id: Option<String>,
    /// Only rooms of this room type.
    pub room_type_id: Option<String>,
}

/// Physical rooms, optionally of one hotel or room type.
#[utoipa::path(
    get,
    path = "/api/rooms",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(RoomsQuery),
    responses(
        (status = 200, body = Vec<Room>),
        (status = 403, description = "Lacks rooms:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_rooms(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(query): Query<RoomsQuery>,
) -> Result<Json<Vec<Room>>> {
    rooms::list(&state.db, &actor, query.hotel_id.as_deref(), query.room_type_id.as_deref()).await.map(Json)
}

/// Creates a room.
#[utoipa::path(
    post,
    path = "/api/rooms",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = RoomIn,
    responses(
        (status = 200, body = Room),
        (status = 403, description = "Lacks rooms:write, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel, or no such room type in it"),
    )
)]
async fn create_room(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<RoomIn>,
) -> Result<Json<Room>> {
    rooms::create(&state.db, &actor, input).await.map(Json)
}

/// One room.
#[utoipa::path(
    get,
    path = "/api/rooms/{roomId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomId" = String, Path)),
    responses(
        (status = 200, body = Room),
        (status = 403, description = "Lacks rooms:read"),
        (status = 404, description = "No such room for this credential"),
    )
)]
async fn get_room(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Room>> {
    rooms::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a room; fields left out keep their value.
#[utoipa::path(
    put,
    path = "/api/rooms/{roomId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomId" = String, Path)),
    request_body = RoomPatch,
    responses(
        (status = 200, body = Room),
        (status = 403, description = "Lacks rooms:write"),
        (status = 404, description = "No such room, or no such room type in its hotel"),
    )
)]
async fn update_room(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<RoomPatch>,
) -> Result<Json<Room>> {
    rooms::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a room that no reservation is assigned to.
#[utoipa::path(
    delete,
    path = "/api/rooms/{roomId}",
    tag = "rooms",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("roomId" = String, Path)),
    responses(
        (status = 200, description = "The deleted room", body = Room),
        (status = 403, description = "Lacks rooms:write"),
        (status = 404, description = "No such room for this credential"),
        (status = 409, description = "Reservations are assigned to it"),
    )
)]
async fn delete_room(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Room>> {
    rooms::delete(&state.db, &actor, &id).await.map(Json)
}
