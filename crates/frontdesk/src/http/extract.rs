//! Request extractors whose rejections are problem documents: malformed JSON, unknown fields, wrong types,
//! missing content type, oversized bodies and bad query or path parameters all answer RFC 9457.
//!
//! They are also where the service's rule on control characters is applied to every input at once (see
//! [`crate::domain::validate::is_forbidden_char`]): in a JSON body or a query parameter such a character answers
//! 400 naming the field; in a path it answers 404, as no record's id holds one.

use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::problem::Problem;
use crate::domain::validate::{fields_with_forbidden_chars, has_forbidden_chars, FORBIDDEN_CHARS_MESSAGE};
use crate::domain::FieldError;

/// A JSON body. Rejections: 400 (syntax, types, unknown or missing fields), 413 (too large), 415 (not JSON).
pub struct Json<T>(pub T);

impl<S, T> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(&req) {
            return Err(json_problem(JsonRejection::MissingJsonContentType(Default::default())));
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| Problem::new(e.status(), Some("the request body could not be read (too large?)".into())))?;
        let mut value = read_json(&bytes)?;
        // Serde would also read a struct from a JSON array (by position); every body of this API is an object.
        if !value.is_object() {
            return Err(Problem::new(StatusCode::BAD_REQUEST, Some("the body must be a JSON object".into())));
        }
        let refused = fields_with_forbidden_chars(&value);
        if !refused.is_empty() {
            return Err(validation(
                refused.into_iter().map(|f| FieldError::field(f, FORBIDDEN_CHARS_MESSAGE)).collect(),
            ));
        }
        integral_floats_to_integers(&mut value);
        let value = serde_path_to_error::deserialize(value).map_err(body_problem)?;
        Ok(Json(value))
    }
}

/// The body as a JSON document. A syntax error is `bad-request`; a name repeated within one object is a
/// validation error naming it (serde_json alone keeps the last silently, so two readers of the same body could
/// disagree about what it says).
fn read_json(bytes: &[u8]) -> Result<serde_json::Value, Problem> {
    let not_json = |err: serde_json::Error| {
        Problem::new(
            StatusCode::BAD_REQUEST,
            Some(format!("the body is not valid JSON: {}", strip_position(&err.to_string()))),
        )
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(UniqueNames(value)) => deserializer.end().map(|()| value).map_err(not_json),
        Err(err) if err.inner().classify() == serde_json::error::Category::Data => Err(body_problem(err)),
        Err(err) => Err(not_json(err.into_inner())),
    }
}

/// A JSON value whose objects name each field at most once.
struct UniqueNames(serde_json::Value);

impl<'de> serde::Deserialize<'de> for UniqueNames {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueNamesVisitor).map(UniqueNames)
    }
}

struct UniqueNamesVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueNamesVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueNames(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if fields.contains_key(&name) {
                return Err(serde::de::Error::custom(format_args!("duplicate field `{name}`")));
            }
            let UniqueNames(value) = map.next_value()?;
            fields.insert(name, value);
        }
        Ok(serde_json::Value::Object(fields))
    }
}

fn is_json(req: &Request) -> bool {
    let Some(content_type) = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Ok(mime) = content_type.parse::<mime::Mime>() else {
        return false;
    };
    mime.type_() == "application" && (mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"))
}

/// JSON has one number type, and JSON Schema counts `3.0` as an integer; so does this API.
fn integral_floats_to_integers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            if let Some(f) = n.as_f64() {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    *value = serde_json::Value::from(f as i64);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}

/// A body that is not JSON, or JSON of the wrong shape, naming where it went wrong (`values[3].price: …`).
fn body_problem(err: serde_path_to_error::Error<serde_json::Error>) -> Problem {
    let path = err.path().to_string();
    let inner = err.into_inner();
    let message = strip_position(&inner.to_string());
    validation(vec![field_error(&path, message)])
}

/// The error of a field that did not deserialize. serde reports a missing or repeated field at the object that
/// holds it (`.` for the body or query itself) and names the field only in its message ("missing field `name`"):
/// the field is what a caller needs to see, so it becomes the path.
fn field_error(path: &str, message: String) -> FieldError {
    let named = |prefix: &str| message.strip_prefix(prefix).and_then(|rest| rest.strip_suffix('`')).map(str::to_owned);
    let (name, reason) = if let Some(name) = named("missing field `") {
        (name, "is required")
    } else if let Some(name) = named("duplicate field `") {
        (name, "is given more than once")
    } else {
        return FieldError::field(path, message);
    };
    let field = if path == "." { name } else { format!("{path}.{name}") };
    FieldError::field(field, reason)
}

/// A validation problem listing `errors`, as the domain's validation errors answer.
fn validation(errors: Vec<FieldError>) -> Problem {
    Problem::from(crate::domain::Error::Validation(errors))
}

/// serde_json appends " at line L column C", which means little to a caller who did not format the body by hand.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

fn json_problem(rejection: JsonRejection) -> Problem {
    match rejection {
        JsonRejection::JsonDataError(e) => Problem::new(StatusCode::BAD_REQUEST, Some(source_text(&e))),
        JsonRejection::JsonSyntaxError(e) => {
            Problem::new(StatusCode::BAD_REQUEST, Some(format!("the body is not valid JSON: {}", source_text(&e))))
        }
        JsonRejection::MissingJsonContentType(_) => Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Some("the body must be JSON with Content-Type: application/json".into()),
        ),
        JsonRejection::BytesRejection(e) => {
            Problem::new(e.status(), Some("the request body could not be read (too large?)".into()))
        }
        other => Problem::new(other.status(), Some(other.body_text())),
    }
}

/// The innermost cause of an error, which for serde is the readable part ("unknown field `x`, expected …").
fn source_text(err: &dyn std::error::Error) -> String {
    let mut current = err;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Query parameters. Rejection: 400 `validation` naming the parameter (missing, repeated, of the wrong type), the
/// same shape as every other invalid input.
pub struct Query<T>(pub T);

impl<S, T> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let raw = parts.uri.query().unwrap_or_default();
        let refused: Vec<FieldError> = url::form_urlencoded::parse(raw.as_bytes())
            .filter(|(name, value)| has_forbidden_chars(name) || has_forbidden_chars(value))
            .map(|(name, _)| FieldError::field(name, FORBIDDEN_CHARS_MESSAGE))
            .collect();
        if !refused.is_empty() {
            return Err(validation(refused));
        }
        let pairs = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(raw.as_bytes()));
        serde_path_to_error::deserialize(pairs).map(Query).map_err(|err| {
            let path = err.path().to_string();
            validation(vec![field_error(&path, err.into_inner().to_string())])
        })
    }
}

/// Path parameters. Rejections: 404 for a segment that cannot be an id (not UTF-8, or holding a control
/// character), else 400.
pub struct Path<T>(pub T);

impl<S, T> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let no_such = |name: &str| Problem::new(StatusCode::NOT_FOUND, Some(format!("no record has this {name}")));
        match RawPathParams::from_request_parts(parts, state).await {
            Ok(params) => {
                if let Some((name, _)) = params.iter().find(|(_, value)| has_forbidden_chars(value)) {
                    return Err(no_such(name));
                }
            }
            Err(axum::extract::rejection::RawPathParamsRejection::InvalidUtf8InPathParam(_)) => {
                return Err(no_such("id (ids are UTF-8)"))
            }
            Err(_) => {}
        }
        axum::extract::Path::<T>::from_request_parts(parts, state).await.map(|p| Path(p.0)).map_err(
            |rejection: PathRejection| {
                Problem::new(
                    StatusCode::BAD_REQUEST,
                    Some(format!("invalid path parameter: {}", source_text(&rejection))),
                )
            },
        )
    }
}

/// The `Idempotency-Key` header, if sent: `None` without it, 400 naming it when it is not visible ASCII (its length
/// is the domain's to check, with its other rules).
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Result<Option<String>, crate::domain::Error> {
    match headers.get("idempotency-key").map(|v| v.to_str()) {
        None => Ok(None),
        Some(Ok(key)) => Ok(Some(key.to_string())),
        Some(Err(_)) => Err(crate::domain::Error::Validation(vec![FieldError::field(
            "Idempotency-Key",
            "must be 1 to 200 visible ASCII characters",
        )])),
    }
}
