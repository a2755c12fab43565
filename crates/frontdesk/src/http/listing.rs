//! List answers: a JSON array streamed record by record, with `X-Total-Count`, and an optional projection.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Serialize;

use crate::domain::listing::Listing;

pub const TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

/// Streams `listing` as a JSON array. A failure after the first byte cannot change the status any more: the
/// answer is cut off instead (the client sees an incomplete body, never a silently shortened list).
pub fn respond<T: Serialize + Send + 'static>(listing: Listing<T>) -> Response {
    let Listing { total, items, projection } = listing;
    let mut first = true;
    // Records that are ready together go out as one piece: fewer, larger writes.
    let items = items.ready_chunks(256).map(move |records| {
        let mut chunk = Vec::new();
        for record in records {
            let record = record.map_err(|err| {
                tracing::error!(error = %err, "a list stream failed");
                std::io::Error::other("the list could not be completed")
            })?;
            if !first {
                chunk.push(b',');
            }
            first = false;
            match &projection {
                None => serde_json::to_writer(&mut chunk, &record),
                Some(fields) => serde_json::to_value(&record)
                    .and_then(|value| serde_json::to_writer(&mut chunk, &project(value, fields))),
            }
            .map_err(std::io::Error::other)?;
        }
        Ok::<_, std::io::Error>(Bytes::from(chunk))
    });
    let body = futures::stream::once(async { Ok(Bytes::from_static(b"[")) })
        .chain(items)
        .chain(futures::stream::once(async { Ok(Bytes::from_static(b"]")) }));
    let mut response = (StatusCode::OK, Body::from_stream(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(TOTAL_COUNT, HeaderValue::from(total));
    response
}

/// Keeps only the named fields of a record.
fn project(value: serde_json::Value, fields: &[String]) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            serde_json::Value::Object(map.into_iter().filter(|(key, _)| fields.iter().any(|f| f == key)).collect())
        }
        other => other,
    }
}
