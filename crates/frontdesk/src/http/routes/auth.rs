//! Operator sign-in: login, logout, me.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::TimeDelta;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::domain::identity::{self, LoginIn, MeOut, SessionOut};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::Json;
use crate::http::problem::Problem;
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(login)).routes(routes!(logout)).routes(routes!(me))
}

/// Signs an operator in and issues an access token.
#[utoipa::path(
    post,
    path = "/api/auth/login",
    tag = "auth",
    request_body = LoginIn,
    responses(
        (status = 200, body = SessionOut),
        (status = 401, description = "Wrong e-mail or password", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn login(State(state): State<AppState>, Json(input): Json<LoginIn>) -> Result<Json<SessionOut>> {
    let ttl = TimeDelta::days(state.config.tokens.token_ttl_days);
    identity::login(&state.db, input, ttl).await.map(Json)
}

/// Revokes the access token of this request.
#[utoipa::path(
    post,
    path = "/api/auth/logout",
    tag = "auth",
    security(("accessToken" = [])),
    responses(
        (status = 204, description = "The token is revoked"),
        (status = 403, description = "Not an operator access token", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn logout(State(state): State<AppState>, Principal(actor): Principal) -> Result<StatusCode> {
    identity::logout(&state.db, &actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The signed-in operator and their organization.
#[utoipa::path(
    get,
    path = "/api/auth/me",
    tag = "auth",
    security(("accessToken" = [])),
    responses(
        (status = 200, body = MeOut),
        (status = 403, description = "Not an operator access token", body = Problem, content_type = "application/problem+json"),
    )
)]
async fn me(State(state): State<AppState>, Principal(actor): Principal) -> Result<Json<MeOut>> {
    identity::me(&state.db, &actor).await.map(Json)
}
