//! Operator sign-in: login, logout, me.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::limits::{ClientAddress, SignInLimited};
use crate::app::AppState;
use crate::domain::identity::{self, LoginIn, MeOut, SessionOut};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::Json;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(login)).routes(routes!(logout)).routes(routes!(me))
}

/// Signs an operator in and issues an access token. Failed attempts are counted per account and client address,
/// per address and per account, shared with the dashboard's and the assistant endpoint's sign-in: past a few, each further
/// attempt must wait (429 with `Retry-After`), the wait doubling with each failure.
#[utoipa::path(
    post,
    path = "/api/auth/login",
    tag = "auth",
    request_body = LoginIn,
    responses(
        (status = 200, body = SessionOut),
        (status = 401, description = "Wrong e-mail or password"),
        (status = 429, description = "Too many failed sign-ins: wait `Retry-After` seconds"),
    )
)]
async fn login(
    _: SignInLimited,
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: axum::http::HeaderMap,
    Json(input): Json<LoginIn>,
) -> Result<Json<SessionOut>> {
    let user_agent = headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok());
    identity::login(&state.db, input, &address, state.config.session_limits(), user_agent).await.map(Json)
}

/// Revokes the access token of this request.
#[utoipa::path(
    post,
    path = "/api/auth/logout",
    tag = "auth",
    security(("accessToken" = [])),
    responses(
        (status = 204, description = "The token is revoked"),
        (status = 403, description = "Not an operator access token"),
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
        (status = 403, description = "Not an operator access token"),
    )
)]
async fn me(State(state): State<AppState>, Principal(actor): Principal) -> Result<Json<MeOut>> {
    identity::me(&state.db, &actor).await.map(Json)
}
