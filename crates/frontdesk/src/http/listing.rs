//! List answers: a JSON array streamed record by record, with `X-Total-Count`, and an optional projection.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Serialize;

use crate::domain::listing::{ListItems, Listing};

pub const TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

/// Answers `listing` as a JSON array: a page in one piece, a stream record by record. A failure after the first byte
/// of a stream cannot change the status any more: the answer is cut off instead (the client sees an incomplete body,
/// never a silently shortened list).
pub fn respond<T: Serialize + Send + 'static>(listing: Listing<T>) -> Response {
    let Listing { total, items, projection } = listing;
    let body = match items {
        ListItems::Page(records) => match page_json(&records, projection.as_deref()) {
            Ok(json) => Body::from(json),
            Err(err) => return crate::domain::Error::Internal(err.into()).into_response(),
        },
        ListItems::Streamed(items) => streamed(items, projection),
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(TOTAL_COUNT, HeaderValue::from(total));
    response
}

fn write_record<T: Serialize>(out: &mut Vec<u8>, record: &T, projection: Option<&[String]>) -> serde_json::Result<()> {
    match projection {
        None => serde_json::to_writer(out, record),
        Some(fields) => {
            serde_json::to_value(record).and_then(|value| serde_json::to_writer(out, &project(value, fields)))
        }
    }
}

fn page_json<T: Serialize>(records: &[T], projection: Option<&[String]>) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(records.len() * 512 + 2);
    out.push(b'[');
    for (n, record) in records.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_record(&mut out, record, projection)?;
    }
    out.push(b']');
    Ok(out)
}

fn streamed<T: Serialize + Send + 'static>(
    items: futures::stream::BoxStream<'static, crate::domain::Result<T>>,
    projection: Option<Vec<String>>,
) -> Body {
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
            write_record(&mut chunk, &record, projection.as_deref()).map_err(std::io::Error::other)?;
        }
        Ok::<_, std::io::Error>(Bytes::from(chunk))
    });
    let body = futures::stream::once(async { Ok(Bytes::from_static(b"[")) })
        .chain(items)
        .chain(futures::stream::once(async { Ok(Bytes::from_static(b"]")) }));
    Body::from_stream(body)
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
