//! Liveness and readiness.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::http::problem::{Problem, STORAGE_FAILING};

#[derive(Serialize, ToSchema)]
pub struct HealthOut {
    /// `ok`.
    status: &'static str,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz)).routes(routes!(readyz))
}

/// Liveness: the process serves HTTP.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, body = HealthOut)))]
async fn healthz() -> axum::Json<HealthOut> {
    axum::Json(HealthOut { status: "ok" })
}

/// How long readiness waits for the database.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Readiness: the database answers, and takes writes if writes have been failing (a full disk).
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, body = HealthOut),
        (status = 503, description = "The database does not answer, or does not take writes"),
    )
)]
async fn readyz(State(state): State<AppState>) -> Result<axum::Json<HealthOut>, Problem> {
    // Probes have short timeouts of their own; an unreachable database is reported before them, not after the
    // pool's connection wait.
    match tokio::time::timeout(READY_TIMEOUT, state.db.ready()).await {
        Ok(Ok(())) => Ok(axum::Json(HealthOut { status: "ok" })),
        Ok(Err(err)) if err.is_storage_failure() => {
            tracing::warn!(error = %err, "readiness check failed: writes fail");
            Err(Problem::new(StatusCode::SERVICE_UNAVAILABLE, Some(STORAGE_FAILING.into())))
        }
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "readiness check failed");
            Err(Problem::new(StatusCode::SERVICE_UNAVAILABLE, Some("the database does not answer".into())))
        }
        Err(_) => {
            tracing::warn!("readiness check failed: the database did not answer in time");
            Err(Problem::new(StatusCode::SERVICE_UNAVAILABLE, Some("the database does not answer".into())))
        }
    }
}
