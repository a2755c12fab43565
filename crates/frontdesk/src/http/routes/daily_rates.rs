//! Daily rates (the ARI surface): scopes rates:read / rates:write.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::daily_rates::{self, DailyRate, DailyRatesIn, DailyRatesQuery};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_daily_rates, upsert_daily_rates))
}

/// The daily rates of one rate plan over a date range (inclusive), by date.
#[utoipa::path(
    get,
    path = "/api/dailyRates",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    params(DailyRatesQuery),
    responses(
        (status = 200, body = Vec<DailyRate>),
        (status = 403, description = "Lacks rates:read, or a pinned key names another hotel"),
        (status = 404, description = "No such hotel, or no such rate plan in it"),
    )
)]
async fn list_daily_rates(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(query): Query<DailyRatesQuery>,
) -> Result<Json<Vec<DailyRate>>> {
    daily_rates::list(&state.db, &actor, query).await.map(Json)
}

/// Upserts up to 500 daily rates, all or nothing, keyed on (ratePlanId, date). Fields an entry leaves out keep
/// their stored value. A bad entry answers 400 listing every offending entry by index, and nothing is written.
#[utoipa::path(
    post,
    path = "/api/dailyRates",
    tag = "rates",
    security(("apiKey" = []), ("accessToken" = [])),
    request_body = DailyRatesIn,
    responses(
        (status = 200, description = "The upserted records, in the order sent", body = Vec<DailyRate>),
        (status = 403, description = "Lacks rates:write"),
    )
)]
async fn upsert_daily_rates(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<DailyRatesIn>,
) -> Result<Json<Vec<DailyRate>>> {
    daily_rates::upsert(&state.db, &actor, input).await.map(Json)
}
