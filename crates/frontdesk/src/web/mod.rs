//! The web pages: the operator dashboard (and, on the same foundation, the public booking page).
//!
//! Pages are rendered on the server from askama templates compiled into the binary (`templates/`), with CSS and
//! the vendored htmx embedded too (`assets/`). Every page works without JavaScript: forms post and redirect after
//! the post; htmx and `assets/app.js` only make some steps quicker.
//!
//! Handlers here are as thin as the REST ones: they parse a form, call the same [`crate::domain`] functions the
//! API calls (so every rule and every webhook event is the same whoever writes), and render the answer.
//!
//! * [`session`]: sign-in state (an operator access token in an `HttpOnly` cookie), CSRF tokens, flash messages.
//! * [`step_up`]: the password asked again before a dangerous action.
//! * [`page`]: the page frame every dashboard page shares ([`page::Chrome`]), rendering, error pages.
//! * [`form`]: reading posted forms and turning domain validation errors into messages beside their fields.
//! * [`assets`]: embedded static files with cache headers.
//! * [`pages`]: one module per area of the dashboard, each with its own `router()`.
//! * [`booking`]: the public booking page (`/book/{hotelId}`): no operator session, its own frame and framing
//!   policy.
//! * [`oauth`]: the assistant endpoint's sign-in and consent pages (`/oauth/authorize`), with a policy of their own.
//! * [`view`]: what several pages show the same way (stays, catalogues, wait times).

pub mod assets;
pub mod booking;
pub mod errors;
pub mod form;
pub mod oauth;
pub mod page;
pub mod pages;
pub mod session;
pub mod step_up;
pub mod view;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;

use crate::app::{AppState, OwnFormat};

/// Every web route. Mounted at `/` beside the REST API under `/api` ([`crate::router`]).
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(pages::sign_in::router())
        .merge(pages::home::router())
        .merge(pages::today::router())
        .merge(pages::reports::router())
        .merge(pages::invoices::router())
        .merge(pages::audit::router())
        .merge(pages::rack::router())
        .merge(pages::rates::router())
        .merge(pages::housekeeping::router())
        .merge(pages::requests::router())
        .merge(pages::reservations::router())
        .merge(pages::guests::router())
        .merge(pages::settings::router())
        .merge(pages::setup::router(state))
        .merge(pages::integrations::router())
        .merge(pages::messages::router())
        .merge(booking::router())
        .merge(assets::router())
        .layer(axum::middleware::from_fn_with_state(state.clone(), refuse_control_characters))
        .layer(axum::middleware::from_fn_with_state(state.clone(), same_origin_writes))
        .layer(axum::middleware::map_response(html_headers))
        // After the layers, so outside them: the OAuth pages check their own parameters and state their own policy.
        .merge(oauth::router())
}

/// Refuses state-changing requests that another site's page makes the browser send (CSRF), before any handler
/// runs: the browser's `Sec-Fetch-Site` and `Origin` say where a request comes from, and only this origin may
/// post. Forms also carry a per-session token (see [`session`]) for browsers that send neither header.
async fn same_origin_writes(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if fetch_site.is_some_and(|site| site != "same-origin" && site != "none") {
        return page::forbidden("This form was sent from another site, so it was not accepted.");
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        if !session::is_own_origin(&state, headers, origin) {
            return page::forbidden("This form was sent from another site, so it was not accepted.");
        }
    }
    next.run(request).await
}

/// The service's rule on text ([`crate::domain::validate::is_forbidden_char`]: no control characters but tab, line
/// feed and carriage return) for every web request at once, before any handler reads it: a path segment holding one
/// (or not UTF-8) names no page or record (404); a query parameter or posted form field holding one is refused (400).
/// Pages take only forms: a body of any other type is refused (415), as its fields would escape the rule while the
/// handlers still read it as a form.
async fn refuse_control_characters(State(state): State<AppState>, request: Request, next: Next) -> Response {
    use crate::domain::validate::has_forbidden_chars;
    let odd_segment = request.uri().path().split('/').any(|segment| {
        percent_encoding::percent_decode_str(segment).decode_utf8().map_or(true, |s| has_forbidden_chars(&s))
    });
    if odd_segment {
        return page::not_found();
    }
    let refused =
        |raw: &[u8]| url::form_urlencoded::parse(raw).any(|(k, v)| has_forbidden_chars(&k) || has_forbidden_chars(&v));
    const MESSAGE: &str = "A field holds a control character, which no text here may contain. Remove it and try again.";
    if request.uri().query().is_some_and(|q| refused(q.as_bytes())) {
        return page::bad_request(MESSAGE);
    }
    let content_type = request.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("?"));
    let is_form = content_type.is_some_and(|v| {
        v.parse::<mime::Mime>().is_ok_and(|m| m.essence_str() == mime::APPLICATION_WWW_FORM_URLENCODED.essence_str())
    });
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) && content_type.is_none() {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, state.config.body_limit_bytes).await else {
        return page::bad_request("The form could not be read.");
    };
    if !is_form && !bytes.is_empty() {
        return page::unsupported_media_type("Pages take forms only (application/x-www-form-urlencoded).");
    }
    if refused(&bytes) {
        return page::bad_request(MESSAGE);
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// The content policy of every web answer: scripts and styles from this origin only, no framing, no referrer
/// leaking ids to other sites. An answer that states its own policy states its own framing too: the booking page
/// lets the sites a hotel names frame it ([`booking`]), which `X-Frame-Options: DENY` would forbid. Web answers
/// are marked [`OwnFormat`]: their errors are pages, not problem documents.
async fn html_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
               connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(csp));
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response.extensions_mut().insert(OwnFormat);
    response
}

/// The 404 page, with the headers of every web answer: what an unknown path outside the API and the protocol
/// endpoints is answered with ([`crate::router`] decides which paths those are).
pub async fn not_found() -> Response {
    html_headers(page::not_found()).await
}
