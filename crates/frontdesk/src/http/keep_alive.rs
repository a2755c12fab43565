//! Honest keep-alive. When an answer is produced without reading the whole request body (a 401 before the body is
//! needed, a 404 for an unknown path, a refused content type, a body over the limit), hyper cannot reuse the
//! connection unless the rest of the body happens to be buffered already: it closes the connection after the answer.
//! Unless that answer says `Connection: close`, the client believes the connection is still open, sends its next
//! request on it and sees the connection closed without an answer ("remote end closed connection"), depending on
//! how the body's packets happened to arrive. This layer marks such answers `Connection: close`, so a client opens a
//! new connection instead of losing a request.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::header::CONNECTION;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// Middleware: answers whose request body was not read to its end say `Connection: close`.
pub async fn close_when_body_unread(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let finished = Arc::new(AtomicBool::new(false));
    let body = Body::new(WatchedBody { inner: body, finished: finished.clone() });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if !finished.load(Ordering::Acquire) {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that notes when it has been read to its end.
struct WatchedBody {
    inner: Body,
    finished: Arc<AtomicBool>,
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.finished.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
