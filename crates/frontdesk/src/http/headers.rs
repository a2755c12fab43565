//! Headers every answer carries, whatever produced it (a handler, a rejection, the timeout, a panic):
//!
//! * `X-Content-Type-Options: nosniff`: a browser never reads a JSON answer (or anything else) as another type.
//! * `Cache-Control: no-store` unless the answer says otherwise (static assets, the booking page's guest form): guest
//!   lists, tokens and reservations must not stay in a shared or browser cache.
//! * `Strict-Transport-Security` when the public URL is https: browsers keep to https for a year, so that no first
//!   plain-http request can be intercepted.

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::Response;

/// HSTS: a year, this host only (the service cannot know its sibling hosts).
const HSTS: HeaderValue = HeaderValue::from_static("max-age=31536000");

/// Middleware (`map_response_with_state`, with whether the service is served over https).
pub async fn secure(State(https): State<bool>, mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    if https {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HSTS);
    }
    response
}
