//! `GET /metrics`: on the main listener behind `Authorization: Bearer <--metrics-token>`, or on the separate
//! `--metrics-listen` address without a token. Not part of the REST contract (not in the OpenAPI document).

use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::problem::Problem;
use crate::app::AppState;
use crate::metrics::Access;

/// The Prometheus text exposition format.
pub const CONTENT_TYPE_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `/metrics` for the main listener (merged only when `--metrics-token` is set).
pub fn main_router() -> Router<AppState> {
    Router::new().route("/metrics", get(guarded))
}

/// The whole router of the `--metrics-listen` address: `/metrics` without a token, 404 for anything else.
pub fn listener_router(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(open))
        .fallback(|| async { Problem::new(StatusCode::NOT_FOUND, Some("no such endpoint".to_string())) })
        .with_state(state)
}

async fn guarded(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(metrics) = &state.metrics else { return not_found() };
    match metrics.access(&headers) {
        Access::Granted => text(metrics.render(&state.db, &state.availability, redis_up(&state)).await),
        Access::Refused => refused(),
        Access::NotServed => not_found(),
    }
}

async fn open(State(state): State<AppState>) -> Response {
    match &state.metrics {
        Some(metrics) => text(metrics.render(&state.db, &state.availability, redis_up(&state)).await),
        None => not_found(),
    }
}

fn redis_up(state: &AppState) -> Option<bool> {
    state.limiter.as_ref().and_then(|limiter| limiter.redis_up())
}

fn text(body: String) -> Response {
    ([(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_TEXT))], body).into_response()
}

fn not_found() -> Response {
    Problem::new(StatusCode::NOT_FOUND, Some("no such endpoint".to_string())).into_response()
}

fn refused() -> Response {
    let detail = "the metrics token is required (Authorization: Bearer <token>)".to_string();
    let mut response = Problem::new(StatusCode::UNAUTHORIZED, Some(detail)).into_response();
    response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="metrics""#));
    response
}
