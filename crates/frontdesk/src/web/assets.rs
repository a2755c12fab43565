//! Static files compiled into the binary. Pages link them as `/assets/<name>?v=<digest of the content>`, so a
//! browser may keep them for a year: a changed file gets a new URL. The favicon is one of them (every page links it
//! in `templates/base.html`), so no browser asks for `/favicon.ico`.

use std::sync::LazyLock;

use axum::extract::Query;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::app::AppState;

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const FILES: [Asset; 4] = [
    Asset { name: "app.css", content_type: "text/css; charset=utf-8", body: include_bytes!("../../assets/app.css") },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../assets/app.js"),
    },
    Asset { name: "favicon.svg", content_type: "image/svg+xml", body: include_bytes!("../../assets/favicon.svg") },
    Asset {
        name: "htmx.min.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../assets/htmx.min.js"),
    },
];

/// Each file's content digest (hex, shortened), computed once.
static VERSIONS: LazyLock<Vec<String>> =
    LazyLock::new(|| FILES.iter().map(|f| hex::encode(&Sha256::digest(f.body)[..8])).collect());

fn find(name: &str) -> Option<(&'static Asset, &'static str)> {
    FILES.iter().zip(VERSIONS.iter()).find(|(f, _)| f.name == name).map(|(f, v)| (f, v.as_str()))
}

/// The URL of an asset, versioned by its content.
pub fn url(name: &str) -> String {
    match find(name) {
        Some((_, version)) => format!("/assets/{name}?v={version}"),
        None => format!("/assets/{name}"),
    }
}

/// The favicon's URL, for the page frame every page shares.
pub fn favicon_url() -> &'static str {
    static URL: LazyLock<String> = LazyLock::new(|| url("favicon.svg"));
    &URL
}

pub fn router() -> Router<AppState> {
    Router::new().route("/assets/{name}", get(serve))
}

#[derive(Deserialize)]
struct Version {
    v: Option<String>,
}

async fn serve(
    axum::extract::Path(name): axum::extract::Path<String>,
    Query(version): Query<Version>,
    headers: HeaderMap,
) -> Response {
    let Some((asset, current)) = find(&name) else {
        // Assets are fetched by pages, not read: a bare 404, without the error page (which names its own assets).
        return StatusCode::NOT_FOUND.into_response();
    };
    // Weak: the same file is sent gzip-compressed, brotli-compressed or as it is (`http::with_stack`), and a strong
    // tag would promise the same bytes.
    let quoted = format!("\"{current}\"");
    let etag = format!("W/{quoted}");
    let cache = if version.v.as_deref() == Some(current) {
        "public, max-age=31536000, immutable"
    } else {
        "public, max-age=300"
    };
    let known = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim().trim_start_matches("W/") == quoted));
    let mut response = if known {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.content_type)], asset.body).into_response()
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, etag);
    }
    response
}
