//! The HTTP surface: the REST API's routes and OpenAPI document, the middleware every answer passes through, and
//! serving connections with graceful shutdown. The REST, OAuth, assistant and web routers are assembled in
//! [`crate::router`].

pub mod auth;
pub mod declared_query;
pub mod extract;
pub mod head_limit;
pub mod headers;
pub mod keep_alive;
pub mod listing;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod problem;
pub mod routes;

use std::future::Future;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, Request, StatusCode};
use axum::middleware::map_response;
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::app::{rate_limit, AppState};
use crate::config::Config;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The routes of every resource and their OpenAPI description.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::health::router())
        .merge(routes::auth::router())
        .merge(routes::api_keys::router())
        .merge(routes::hotels::router())
        .merge(routes::billing::router())
        .merge(routes::folios::router())
        .merge(routes::reports::router())
        .merge(routes::invoices::router())
        .merge(routes::audit_log::router())
        .merge(routes::operators::router())
        .merge(routes::room_types::router())
        .merge(routes::rooms::router())
        .merge(routes::rate_plans::router())
        .merge(routes::daily_rates::router())
        .merge(routes::guests::router())
        .merge(routes::reservations::router())
        .merge(routes::availability::router())
        .merge(routes::webhook_subscriptions::router())
}

/// The routes and the finished OpenAPI document.
pub fn parts() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut doc) = api().split_for_parts();
    openapi::finish(&mut doc);
    let declared = declared_query::DeclaredQueries::of(&doc);
    let router = router.route_layer(axum::middleware::from_fn_with_state(declared, declared_query::refuse_undeclared));
    (router, doc)
}

/// The generated OpenAPI document, as served at `/api/openapi.json`.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    parts().1
}

/// The middleware every answer passes through: body limit, timeout, panic recovery, problem documents for every
/// error, the security headers, compression, request ids and tracing; and, when metrics are served, the request
/// metrics (outermost, so that they time and see the final answer of every other layer).
pub fn with_middleware(router: Router, config: &Config) -> Router {
    let router = with_stack(router, config);
    match config.metrics_enabled() {
        true => router.layer(axum::middleware::from_fn(crate::metrics::track_requests)),
        false => router,
    }
}

fn with_stack(router: Router, config: &Config) -> Router {
    // Innermost first. Each `Router::layer` turns the answer back into an axum response, so the problem
    // mapping sees the bodies of the timeout and panic layers too.
    router
        .layer(DefaultBodyLimit::max(config.body_limit_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(config.request_timeout_secs),
        ))
        .layer(CatchPanicLayer::custom(problem::panic_response))
        .layer(axum::middleware::from_fn(rate_limit::headers))
        .layer(map_response(problem::ensure_problem))
        .layer(axum::middleware::from_fn(head_limit::refuse_large_heads))
        .layer(axum::middleware::map_response_with_state(config.is_https(), headers::secure))
        // gzip or brotli when the client's Accept-Encoding asks, outside every layer that reads or replaces a body
        // (the problem mapping above). Not for answers under 256 bytes (which come out no smaller), images, or event
        // streams (the assistant endpoint's SSE must reach the client as each event is written); a streamed list,
        // whose size is not known beforehand, is compressed.
        .layer(CompressionLayer::new().compress_when(compressible()))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let request_id = req.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or_default();
            tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id)
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(axum::middleware::from_fn(keep_alive::close_when_body_unread))
}

/// Which answers [`CompressionLayer`] compresses: tower-http's default predicate with a larger minimum size.
fn compressible() -> impl tower_http::compression::Predicate {
    use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
    SizeAbove::new(256).and(NotForContentType::GRPC).and(NotForContentType::IMAGES).and(NotForContentType::SSE)
}

/// Serves any router (tests serve a few of their own) the way the service does, with the default header read
/// timeout.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_read_timeout = Duration::from_secs(Config::default().header_read_timeout_secs);
    serve_connections(listener, router, shutdown, header_read_timeout).await
}

/// Accepts connections and serves HTTP/1.1 on each until `shutdown`, then lets the requests in flight finish. What
/// `axum::serve` does, plus a limit on how long a request head may take to arrive (`header_read_timeout`, also how
/// long a kept-alive connection may sit idle): without it a client that sends half a head holds its connection, and
/// the task and buffers behind it, for ever; the request timeout only starts once the head is in.
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    header_read_timeout: Duration,
) -> std::io::Result<()> {
    use axum::extract::ConnectInfo;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt as _;

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            // The client gave up before it was accepted: nothing to do.
            Err(err) if is_connection_error(&err) => continue,
            // Out of file descriptors and the like: wait a moment rather than spin.
            Err(err) => {
                tracing::error!(error = %err, "could not accept a connection");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        // Streamed answers are written in several pieces; without TCP_NODELAY the last one waits for the client's
        // delayed ACK (about 40 ms).
        if let Err(err) = stream.set_nodelay(true) {
            tracing::warn!(error = %err, "could not set TCP_NODELAY");
        }
        let service = router.clone().map_request(move |mut request: axum::extract::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            request
        });
        let connection =
            builder.serve_connection(TokioIo::new(stream), hyper_util::service::TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

fn is_connection_error(err: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(err.kind(), ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset)
}

/// Completes on SIGINT or SIGTERM. The handlers are installed when this is called, not when the future is first
/// polled: the server spawns the task that awaits it and may answer `/readyz` before that task runs, and a SIGTERM
/// sent in between (an orchestrator stopping a pod just started) would kill the process instead of draining it.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (interrupt, terminate) = {
        use tokio::signal::unix::{signal, SignalKind};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |sig: Option<tokio::signal::unix::Signal>| async move {
                match sig {
                    Some(mut sig) => {
                        sig.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = wait(interrupt) => {},
                _ = wait(terminate) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down: finishing requests in flight");
    }
}
