//! RFC 9457 problem documents: the one shape every error answer takes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::app::OwnFormat;
use crate::domain::{Error, FieldError};

pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error answer (RFC 9457, `application/problem+json`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// A URI identifying the kind of problem, e.g. `urn:frontdesk:problem:validation`.
    #[serde(rename = "type")]
    pub type_: String,
    /// A short summary of the kind of problem.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong in this occurrence, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For validation problems: every offending field or batch entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldError>>,
}

impl Problem {
    pub fn new(status: StatusCode, detail: impl Into<Option<String>>) -> Problem {
        Problem {
            type_: format!("urn:frontdesk:problem:{}", slug(status)),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            errors: None,
        }
    }
}

fn slug(status: StatusCode) -> String {
    match status {
        StatusCode::BAD_REQUEST => "bad-request".into(),
        StatusCode::UNAUTHORIZED => "unauthorized".into(),
        StatusCode::FORBIDDEN => "forbidden".into(),
        StatusCode::NOT_FOUND => "not-found".into(),
        StatusCode::METHOD_NOT_ALLOWED => "method-not-allowed".into(),
        StatusCode::REQUEST_TIMEOUT => "request-timeout".into(),
        StatusCode::CONFLICT => "conflict".into(),
        StatusCode::PAYLOAD_TOO_LARGE => "payload-too-large".into(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported-media-type".into(),
        StatusCode::TOO_MANY_REQUESTS => "rate-limited".into(),
        StatusCode::INTERNAL_SERVER_ERROR => "internal".into(),
        StatusCode::SERVICE_UNAVAILABLE => "unavailable".into(),
        other => format!("http-{}", other.as_u16()),
    }
}

/// What a request is told while the database cannot be reached.
pub const UNAVAILABLE: &str = "the database is not reachable at the moment; nothing was changed, try again shortly";

/// What a request is told while the database cannot store writes (its disk is full or failing).
pub const STORAGE_FAILING: &str =
    "the database cannot store anything at the moment (its disk is full or failing); nothing was changed, try again \
     shortly";

/// Seconds a client is asked to wait before retrying a 503.
const RETRY_AFTER_SECS: &str = "5";

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECS));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(r#"Basic realm="frontdesk", Token realm="frontdesk""#),
            );
        }
        response
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let retry_after = match &self {
            Error::TooManyAttempts { retry_after_secs, .. } => Some(*retry_after_secs),
            _ => None,
        };
        let mut response = Problem::from(self).into_response();
        if let Some(secs) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<Error> for Problem {
    fn from(err: Error) -> Problem {
        let (status, detail) = match &err {
            Error::Unauthorized(m) => (StatusCode::UNAUTHORIZED, m.clone()),
            Error::Forbidden(m) => (StatusCode::FORBIDDEN, m.clone()),
            Error::NotFound(_) => (StatusCode::NOT_FOUND, err.to_string()),
            Error::Conflict(m) => (StatusCode::CONFLICT, m.clone()),
            Error::BadRequest(m) => (StatusCode::BAD_REQUEST, m.clone()),
            Error::RateLimited(m) => (StatusCode::TOO_MANY_REQUESTS, m.clone()),
            Error::TooManyAttempts { message, .. } => (StatusCode::TOO_MANY_REQUESTS, message.clone()),
            Error::Validation(errors) => {
                let mut problem = Problem::new(StatusCode::BAD_REQUEST, Some(summary(errors)));
                problem.type_ = "urn:frontdesk:problem:validation".into();
                problem.title = "The request is invalid".into();
                problem.errors = Some(errors.clone());
                return problem;
            }
            Error::Unprocessable(errors) => {
                let mut problem = Problem::new(StatusCode::UNPROCESSABLE_ENTITY, Some(summary(errors)));
                problem.type_ = "urn:frontdesk:problem:unprocessable".into();
                problem.title = "The request cannot be carried out".into();
                problem.errors = Some(errors.clone());
                return problem;
            }
            Error::Internal(err) if crate::store::write_health::is_storage_failure_cause(err) => {
                tracing::warn!(error = format!("{err:#}"), "the database cannot store writes");
                (StatusCode::SERVICE_UNAVAILABLE, STORAGE_FAILING.to_string())
            }
            Error::Internal(err) if crate::store::is_unavailable_cause(err) => {
                tracing::warn!(error = format!("{err:#}"), "the database is unavailable");
                (StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE.to_string())
            }
            Error::Internal(err) => {
                tracing::error!(error = format!("{err:#}"), "internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, "the service could not complete the request".to_string())
            }
        };
        Problem::new(status, Some(detail))
    }
}

fn summary(errors: &[FieldError]) -> String {
    match errors {
        [one] => match (&one.field, one.index) {
            (Some(field), _) => format!("{field}: {}", one.message),
            (None, Some(index)) => format!("entry {index}: {}", one.message),
            (None, None) => one.message.clone(),
        },
        many => format!("{} fields are invalid", many.len()),
    }
}

/// Turns any error answer that is not yet a problem document (axum's 405, a timeout's 408, a body limit's 413)
/// into one, keeping its status and headers. Answers marked [`OwnFormat`] pass unchanged.
pub async fn ensure_problem(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || response.extensions().get::<OwnFormat>().is_some() {
        return response;
    }
    let is_problem =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if is_problem {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let detail = match status {
        StatusCode::METHOD_NOT_ALLOWED => Some("this method is not allowed on this path".to_string()),
        StatusCode::NOT_FOUND => Some("no such endpoint".to_string()),
        StatusCode::PAYLOAD_TOO_LARGE => Some("the request body is too large".to_string()),
        StatusCode::REQUEST_TIMEOUT => Some("the request took too long".to_string()),
        _ => None,
    };
    let fresh = Problem::new(status, detail).into_response();
    let (fresh_parts, body) = fresh.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    for (name, value) in fresh_parts.headers.iter() {
        parts.headers.insert(name, value.clone());
    }
    Response::from_parts(parts, body)
}

/// The answer to a panic in a handler: a 500 problem, while the service keeps serving.
pub fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR, Some("the service could not complete the request".to_string()))
        .into_response()
}
