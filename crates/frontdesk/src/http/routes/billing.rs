//! A hotel's tax and billing settings (an extension of the contract): read with any credential that sees the hotel,
//! changed with an operator access token.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::finance::billing::{self, BillingPatch, BillingSettings};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_billing, update_billing))
}

/// A hotel's tax and billing settings: VAT rates by category, whether prices include VAT, the city tax and the
/// extras (the defaults, with every VAT rate 0, until the hotel saves its own).
#[utoipa::path(
    get,
    path = "/api/hotels/{hotelId}/billing",
    tag = "billing",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("hotelId" = String, Path, description = "The hotel's id")),
    responses(
        (status = 200, body = BillingSettings),
        (status = 404, description = "No such hotel for this credential"),
    )
)]
async fn get_billing(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<BillingSettings>> {
    billing::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes a hotel's tax and billing settings; fields left out keep their value, a list given replaces the list.
#[utoipa::path(
    put,
    path = "/api/hotels/{hotelId}/billing",
    tag = "billing",
    security(("accessToken" = [])),
    params(("hotelId" = String, Path, description = "The hotel's id")),
    request_body = BillingPatch,
    responses(
        (status = 200, body = BillingSettings),
        (status = 400, description = "Invalid settings; every problem is listed with its field"),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such hotel in the organization"),
    )
)]
async fn update_billing(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<BillingPatch>,
) -> Result<Json<BillingSettings>> {
    billing::update(&state.db, &actor, &id, patch).await.map(Json)
}
