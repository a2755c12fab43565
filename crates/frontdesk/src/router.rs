//! The whole application assembled in one place: the REST API with its OpenAPI document ([`crate::http`]), the
//! assistant endpoint's OAuth endpoints and `/mcp`, the web pages ([`crate::web`], the OAuth pages among them), the
//! metrics on the main listener, and the answer to an unknown path; then the middleware, and serving. This module
//! sits above every surface, so none of them needs to name another (crates.io's `src/router.rs` has the same place).

use std::future::Future;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::app::AppState;
use crate::http::problem::Problem;
use crate::{http, web};

/// The complete application: routes, the OpenAPI document and the middleware stack.
pub fn app(state: AppState) -> Router {
    let config = state.config.clone();
    http::with_middleware(routes(state), &config)
}

/// Every route, with its state, before the middleware.
pub fn routes(state: AppState) -> Router {
    let (router, doc) = http::parts();
    // The assistant endpoint and its OAuth endpoints speak their own protocols: not in the REST document.
    let router =
        router.merge(http::routes::oauth::router()).merge(http::mcp::router(&state)).merge(web::router(&state));
    // Channel managers' webhooks (docs/channels.md): a protocol of their own, not in the REST document.
    let router = router.merge(crate::channels::channex::webhook::router());
    // Serialized once: the document never changes while the process runs.
    let doc = axum::body::Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
    // Not part of the REST contract either; on the main listener only behind --metrics-token (else unknown: 404).
    let router = match state.config.metrics_token.is_some() {
        true => router.merge(http::metrics::main_router()),
        false => router,
    };
    router
        .route(
            "/api/openapi.json",
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc) }
            }),
        )
        .fallback(fallback)
        .with_state(state)
}

/// The path prefixes of the API and the protocol endpoints mounted above: an unknown path under one of them is
/// answered with a problem document, any other with the web's 404 page.
const MACHINE_PREFIXES: [&str; 8] =
    ["/api", "/oauth", "/.well-known", "/mcp", "/healthz", "/readyz", "/metrics", "/channels"];

/// Whether a path belongs to the web pages (as opposed to the API, OAuth, MCP or health endpoints).
fn is_web_path(path: &str) -> bool {
    !MACHINE_PREFIXES.iter().any(|prefix| path == *prefix || path.starts_with(&format!("{prefix}/")))
}

/// The answer to an unknown path: the 404 page for the web, a problem document for the API.
async fn fallback(request: Request) -> Response {
    if is_web_path(request.uri().path()) {
        web::not_found().await
    } else {
        Problem::new(StatusCode::NOT_FOUND, Some("no such endpoint".into())).into_response()
    }
}

/// Serves the application until `shutdown` completes, then stops accepting and lets requests in flight finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_read_timeout = Duration::from_secs(state.config.header_read_timeout_secs);
    http::serve_connections(listener, app(state), shutdown, header_read_timeout).await
}
