//! A file to download, as the REST API and the dashboard both answer one.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// A PDF file named by `disposition` (`attachment; filename="…"`).
pub fn pdf(disposition: &str, body: Vec<u8>) -> Response {
    let disposition = HeaderValue::from_str(disposition).unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/pdf")),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

/// A CSV file named by `disposition` (`attachment; filename="…"`).
pub fn csv(disposition: &str, body: String) -> Response {
    let disposition = HeaderValue::from_str(disposition).unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8")),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}
