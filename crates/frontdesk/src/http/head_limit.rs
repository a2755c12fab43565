//! One limit on the size of a request's headers, whatever the timing. hyper refuses a head that does not fit its read
//! buffer (431, without a body) only while the head is still incomplete in that buffer: a larger head that arrives all
//! at once can be parsed whole and reach the service (seen under load in `tests/it/hardening/connections.rs`). Headers
//! over [`MAX_HEADER_BYTES`] are answered 431 here, with a problem document.

use axum::extract::Request;
use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::problem::Problem;

/// Most bytes of header fields (names, values and their separators) a request may carry.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Middleware: 431 for requests whose headers exceed [`MAX_HEADER_BYTES`].
pub async fn refuse_large_heads(request: Request, next: Next) -> Response {
    let size: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if size <= MAX_HEADER_BYTES {
        return next.run(request).await;
    }
    let detail = format!("the request's header fields take {size} bytes; at most {MAX_HEADER_BYTES} are accepted");
    let mut response = Problem::new(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, detail).into_response();
    // The body, if any, is not read.
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}
