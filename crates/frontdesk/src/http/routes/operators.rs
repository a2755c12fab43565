//! The organization's operators and their roles (an extension of the contract; docs/roles.md). Owners only: with an
//! operator token of an owner; API keys never manage people.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::identity::{self, Operator, RoleIn};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_operators)).routes(routes!(set_operator_role))
}

/// The organization's operators, with their roles and hotels.
#[utoipa::path(
    get,
    path = "/api/operators",
    tag = "operators",
    security(("accessToken" = [])),
    responses(
        (status = 200, body = Vec<Operator>),
        (status = 403, description = "Not an owner's operator token"),
    )
)]
async fn list_operators(State(state): State<AppState>, Principal(actor): Principal) -> Result<Json<Vec<Operator>>> {
    identity::list_operators(&state.db, &actor).await.map(Json)
}

/// Gives an operator a role, for every hotel (`hotelIds` absent or `null`) or some. The organization's last owner
/// keeps the role (409).
#[utoipa::path(
    put,
    path = "/api/operators/{operatorId}/role",
    tag = "operators",
    security(("accessToken" = [])),
    params(("operatorId" = String, Path)),
    request_body = RoleIn,
    responses(
        (status = 200, body = Operator),
        (status = 400, description = "A malformed body"),
        (status = 403, description = "Not an owner's operator token"),
        (status = 404, description = "No such operator, or a hotel that is not the organization's"),
        (status = 409, description = "The operator is the organization's last owner"),
        (status = 422, description = "No such role, or an empty list of hotels"),
    )
)]
async fn set_operator_role(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(input): Json<RoleIn>,
) -> Result<Json<Operator>> {
    identity::operator_of_organization(&state.db, &actor, &id).await?;
    let staffing = input.staffing()?;
    identity::set_role(&state.db, &actor, &id, &staffing).await.map(Json)
}
