//! Rate plans: scopes rates:read / rates:write.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::rate_plans::{self, RatePlan, RatePlanIn, RatePlanPatch};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_rate_plans, upsert_rate_plan)).routes(routes!(
        get_rate_plan,
        update_rate_plan,
        delete_rate_plan
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RatePlansQuery {
    /// The hotel. A key pinned to a hotel may leave it out, and so may a request that names a `roomTypeId`.
    #[param(required = true)]
    pub hotel_id: Option<String>,
    /// Only plans of this room type.
    pub room_type_id: Option<String>,
}

/// The rate plans of a hotel.
#[utoipa::path(
    get,
    path = "/api/ratePlans",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    params(RatePlansQuery),
    responses(
        (status = 200, body = Vec<RatePlan>),
        (status = 403, description = "Lacks rates:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_rate_plans(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(query): Query<RatePlansQuery>,
) -> Result<Json<Vec<RatePlan>>> {
    rate_plans::list(&state.db, &actor, query.hotel_id.as_deref(), query.room_type_id.as_deref()).await.map(Json)
}

/// Creates a rate plan, or updates the one whose `id` the body names.
#[utoipa::path(
    post,
    path = "/api/ratePlans",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = RatePlanIn,
    responses(
        (status = 200, body = RatePlan),
        (status = 403, description = "Lacks rates:write, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel, room type or rate plan"),
        (status = 409, description = "The hotel already has a plan with this code"),
    )
)]
async fn upsert_rate_plan(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<RatePlanIn>,
) -> Result<Json<RatePlan>> {
    rate_plans::upsert(&state.db, &actor, input).await.map(Json)
}

/// One rate plan.
#[utoipa::path(
    get,
    path = "/api/ratePlans/{ratePlanId}",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("ratePlanId" = String, Path)),
    responses(
        (status = 200, body = RatePlan),
        (status = 403, description = "Lacks rates:read"),
        (status = 404, description = "No such rate plan for this credential"),
    )
)]
async fn get_rate_plan(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<RatePlan>> {
    rate_plans::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a rate plan; fields left out keep their value.
#[utoipa::path(
    put,
    path = "/api/ratePlans/{ratePlanId}",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("ratePlanId" = String, Path)),
    request_body = RatePlanPatch,
    responses(
        (status = 200, body = RatePlan),
        (status = 403, description = "Lacks rates:write"),
        (status = 404, description = "No such rate plan, or no such room type in its hotel"),
        (status = 409, description = "The hotel already has a plan with this code"),
    )
)]
async fn update_rate_plan(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<RatePlanPatch>,
) -> Result<Json<RatePlan>> {
    rate_plans::update(&state.db, &actor, &id, patch).await.map(Json)
}

/// Deletes a rate plan and its daily rates, unless reservations were booked under it.
#[utoipa::path(
    delete,
    path = "/api/ratePlans/{ratePlanId}",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("ratePlanId" = String, Path)),
    responses(
        (status = 200, description = "The deleted rate plan", body = RatePlan),
        (status = 403, description = "Lacks rates:write"),
        (status = 404, description = "No such rate plan for this credential"),
        (status = 409, description = "Reservations were booked under it"),
    )
)]
async fn delete_rate_plan(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<RatePlan>> {
    rate_plans::delete(&state.db, &actor, &id).await.map(Json)
}
