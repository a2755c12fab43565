//! The dashboard's error pages, in a file of their own: the page each refusal and failure shows ([`WebError`], from
//! a domain error), and the plain answers for 400, 403, 404 and 415. They need no session and no frame, so the
//! session and the assets can answer with them without naming the page that frames everything else.

use askama::Template;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::assets;
use crate::domain::Error;

/// A page without the dashboard frame: sign-in and error pages.
#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage<'a> {
    pub title: &'a str,
    pub message: &'a str,
    pub css: String,
    /// Where the operator can go from here.
    pub link: (&'a str, &'a str),
}

pub(super) fn plain_error(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    let page = MessagePage { title, message, css: assets::url("app.css"), link: ("/", "Go to the dashboard") };
    match page.render() {
        Ok(html) => (status, [(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"))], html)
            .into_response(),
        Err(_) => (status, message.to_string()).into_response(),
    }
}

pub fn not_found() -> Response {
    plain_error(
        StatusCode::NOT_FOUND,
        "There is nothing here: the page or record does not exist, or it belongs to another organization.",
    )
}

pub fn forbidden(message: &str) -> Response {
    plain_error(StatusCode::FORBIDDEN, message)
}

pub fn bad_request(message: &str) -> Response {
    plain_error(StatusCode::BAD_REQUEST, message)
}

pub fn unsupported_media_type(message: &str) -> Response {
    plain_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, message)
}

/// An answer that asks to wait `secs` seconds before trying again (`Retry-After`).
pub fn with_retry_after(mut response: Response, secs: u64) -> Response {
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// A domain error that no form handles: the page that explains it.
pub fn error_response(err: Error) -> Response {
    WebError(err).into_response()
}

/// A domain error on its way to becoming a page, so handlers can use `?` on domain results.
#[derive(Debug)]
pub struct WebError(pub Error);

impl From<Error> for WebError {
    fn from(err: Error) -> Self {
        WebError(err)
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        match self.0 {
            Error::NotFound(_) => not_found(),
            Error::Unauthorized(_) => Redirect::to("/sign-in").into_response(),
            Error::Forbidden(message) => forbidden(&message),
            Error::RateLimited(message) => plain_error(StatusCode::TOO_MANY_REQUESTS, &message),
            Error::TooManyAttempts { message, retry_after_secs } => {
                with_retry_after(plain_error(StatusCode::TOO_MANY_REQUESTS, &message), retry_after_secs)
            }
            Error::Conflict(message) => plain_error(StatusCode::CONFLICT, &message),
            Error::BadRequest(message) => bad_request(&message),
            Error::Validation(errors) | Error::Unprocessable(errors) => {
                let text: Vec<String> = errors
                    .iter()
                    .map(|e| match &e.field {
                        Some(field) => format!("{field}: {}", e.message),
                        None => e.message.clone(),
                    })
                    .collect();
                bad_request(&text.join("; "))
            }
            Error::Internal(err) if crate::store::write_health::is_storage_failure_cause(&err) => {
                tracing::warn!(error = format!("{err:#}"), "the database cannot store writes");
                plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database cannot store anything at the moment. Nothing was changed; try again in a few \
                     minutes.",
                )
            }
            Error::Internal(err) if crate::store::is_unavailable_cause(&err) => {
                tracing::warn!(error = format!("{err:#}"), "the database is unavailable");
                plain_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database cannot be reached at the moment. Nothing was changed; try again in a few seconds.",
                )
            }
            Error::Internal(err) => {
                tracing::error!(error = format!("{err:#}"), "internal error on a page");
                plain_error(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong on our side. Try again later.")
            }
        }
    }
}

pub type WebResult = Result<Response, WebError>;
