//! API keys: operator access token only.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::api_keys::{self, ApiKey, ApiKeyCreated, ApiKeyIn, ApiKeyPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_api_keys, create_api_key)).routes(routes!(update_api_key, delete_api_key))
}

/// The organization's API keys (never their secrets).
#[utoipa::path(
    get,
    path = "/api/apiKeys",
    tag = "apiKeys",
    security(("accessToken" = [])),
    responses(
        (status = 200, body = Vec<ApiKey>),
        (status = 403, description = "Not an operator access token"),
    )
)]
async fn list_api_keys(State(state): State<AppState>, Principal(actor): Principal) -> Result<Json<Vec<ApiKey>>> {
    api_keys::list(&state.db, &actor).await.map(Json)
}

/// Creates a key. The answer carries its secret, exactly once.
#[utoipa::path(
    post,
    path = "/api/apiKeys",
    tag = "apiKeys",
    security(("accessToken" = [])),
    request_body = ApiKeyIn,
    responses(
        (status = 200, body = ApiKeyCreated),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "The hotel to pin to is not in the organization"),
    )
)]
async fn create_api_key(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<ApiKeyIn>,
) -> Result<Json<ApiKeyCreated>> {
    api_keys::create(&state.db, &actor, input).await.map(Json)
}

/// Renames a key or replaces its scopes. The pin and the secret are immutable.
#[utoipa::path(
    put,
    path = "/api/apiKeys/{apiKeyId}",
    tag = "apiKeys",
    security(("accessToken" = [])),
    params(("apiKeyId" = String, Path, description = "The key's id")),
    request_body = ApiKeyPatch,
    responses(
        (status = 200, body = ApiKey),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such key in the organization"),
    )
)]
async fn update_api_key(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<ApiKeyPatch>,
) -> Result<Json<ApiKey>> {
    api_keys::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a key; its secret stops working at once.
#[utoipa::path(
    delete,
    path = "/api/apiKeys/{apiKeyId}",
    tag = "apiKeys",
    security(("accessToken" = [])),
    params(("apiKeyId" = String, Path, description = "The key's id")),
    responses(
        (status = 200, description = "The deleted key", body = ApiKey),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such key in the organization"),
    )
)]
async fn delete_api_key(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<ApiKey>> {
    api_keys::delete(&state.db, &actor, &id).await.map(Json)
}
