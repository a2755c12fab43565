//! The dashboard's sign-in state.
//!
//! A session is an operator access token (the contract's "session token issued by the dashboard"), kept in an
//! `HttpOnly`, `SameSite=Lax` cookie (`Secure`, and named with the `__Host-` prefix, when the public URL is https:
//! see [`Cookie`]), so page scripts never see it. It ends when signed out (the token is revoked), after
//! `--session-idle-timeout-hours` unused, and when the operator's password changes. A request without a valid
//! session is sent to the sign-in page, which returns the operator to the page they asked for.
//!
//! CSRF: besides the origin check of every write ([`super::same_origin_writes`]), each form carries a token
//! derived from the session token (a keyed digest: stateless, different for every session, unknowable without the
//! cookie). The sign-in form, which has no session yet, uses a random token doubled in a cookie.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::errors;
use crate::app::AppState;
use crate::domain::change::Writer;
use crate::domain::identity::{self, Operator, Organization};
use crate::domain::{Actor, Error};

/// The dashboard's cookies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cookie {
    /// The session token.
    Session,
    /// The sign-in form's CSRF token.
    SignInCsrf,
    /// A message for the next page.
    Flash,
}

impl Cookie {
    /// The cookie's name. Over https it carries the `__Host-` prefix: browsers then take the cookie only when it is
    /// `Secure`, for the whole site and without `Domain`, so neither a page of another subdomain nor a plain-http
    /// answer can plant or replace it. Browsers keep such cookies only over https, so a service on plain http
    /// (development) uses the bare names.
    pub fn name(self, state: &AppState) -> &'static str {
        match (self, state.config.is_https()) {
            (Cookie::Session, true) => "__Host-fd_session",
            (Cookie::Session, false) => "fd_session",
            (Cookie::SignInCsrf, true) => "__Host-fd_signin",
            (Cookie::SignInCsrf, false) => "fd_signin",
            (Cookie::Flash, true) => "__Host-fd_flash",
            (Cookie::Flash, false) => "fd_flash",
        }
    }
}
/// The form field that carries the CSRF token.
pub const CSRF_FIELD: &str = "_csrf";

/// A signed-in operator.
#[derive(Debug, Clone)]
pub struct Session {
    pub actor: Actor,
    pub operator: Operator,
    pub organization: Organization,
    /// The token every form of this session must send back in [`CSRF_FIELD`].
    pub csrf: String,
    /// A message left by the previous request (after a redirect), shown once.
    pub flash: Option<Flash>,
}

impl FromRequestParts<AppState> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if let Some(session) = parts.extensions.get::<Session>() {
            return Ok(session.clone());
        }
        let to_sign_in = || Redirect::to(&sign_in_url(parts)).into_response();
        let Some(token) = cookie(&parts.headers, Cookie::Session.name(state)) else {
            return Err(to_sign_in());
        };
        let actor = match identity::authenticate_token(&state.db, &token).await {
            Ok(actor) => actor,
            Err(Error::Unauthorized(_)) => return Err(expired(to_sign_in(), state)),
            Err(err) => return Err(errors::error_response(err)),
        };
        crate::app::limits::limit_actor(parts, state, &actor).await.map_err(errors::error_response)?;
        let me = identity::me(&state.db, &actor).await.map_err(errors::error_response)?;
        let session = Session {
            actor,
            operator: me.operator,
            organization: me.organization,
            csrf: csrf_for(&token),
            flash: Flash::from_headers(&parts.headers, state),
        };
        parts.extensions.insert(session.clone());
        Ok(session)
    }
}

/// The sign-in page, remembering where the operator was going (only paths of this site: never an open redirect).
fn sign_in_url(parts: &Parts) -> String {
    let wanted = match parts.method {
        axum::http::Method::GET => parts.uri.path_and_query().map(|p| p.as_str().to_string()),
        // After a form was posted, return to the page the form was on.
        _ => referer_path(&parts.headers),
    };
    match wanted.filter(|p| is_local_path(p) && p != "/") {
        Some(next) => {
            format!("/sign-in?next={}", url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>())
        }
        None => "/sign-in".to_string(),
    }
}

pub(crate) fn referer_path(headers: &HeaderMap) -> Option<String> {
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let url = url::Url::parse(referer).ok()?;
    Some(match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    })
}

/// A path on this site: starts with one `/` (not `//host`, not `/\host`), no scheme, no control characters.
pub fn is_local_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && !path.starts_with("/\\")
        && !path.chars().any(|c| c.is_control() || c == '\\')
}

/// A session that ended (expired or revoked): its cookie is cleared on the way to the sign-in page.
fn expired(mut response: Response, state: &AppState) -> Response {
    append_cookie(&mut response, &clear_cookie(Cookie::Session, state));
    append_cookie(&mut response, &flash_cookie(&Flash::info("Your session has ended. Please sign in again."), state));
    response
}

/// The CSRF token of a session: a digest of its token under a fixed label. Knowing it reveals nothing of the
/// token, and only someone holding the cookie can compute it.
pub fn csrf_for(session_token: &str) -> String {
    let digest = Sha256::new().chain_update(b"frontdesk dashboard csrf\0").chain_update(session_token).finalize();
    hex::encode(&digest[..16])
}

/// Compares a token sent with a form to the expected one, in constant time.
pub fn csrf_matches(expected: &str, sent: Option<&str>) -> bool {
    let sent = sent.unwrap_or("");
    !expected.is_empty() && sent.len() == expected.len() && bool::from(sent.as_bytes().ct_eq(expected.as_bytes()))
}

/// Whether `origin` (an `Origin` header) is this service's own: the public URL's origin when one is configured,
/// else the origin the request was addressed to.
pub fn is_own_origin(state: &AppState, headers: &HeaderMap, origin: &str) -> bool {
    let expected = match &state.config.public_url {
        Some(public) => url::Url::parse(public).ok().map(|u| u.origin().ascii_serialization()),
        None => headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(|host| format!("http://{host}")),
    };
    expected.is_some_and(|expected| expected.eq_ignore_ascii_case(origin))
}

/// A form posted by a signed-in operator, with its CSRF token checked. `T` reads the form's fields (unknown fields,
/// such as the token itself, are ignored).
pub struct Posted<T> {
    pub session: Session,
    pub form: T,
}

impl<T> FromRequest<AppState> for Posted<T>
where
    T: DeserializeOwned,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (_, session, bytes) = read_form(req, state).await?;
        let form = serde_urlencoded::from_bytes(&bytes)
            .map_err(|err| errors::bad_request(&format!("The form could not be read: {err}.")))?;
        Ok(Posted { session, form })
    }
}

/// A form posted by a signed-in operator, its CSRF token checked: the request's parts, the session and the body.
pub async fn read_form(req: Request, state: &AppState) -> Result<(Parts, Session, axum::body::Bytes), Response> {
    let (mut parts, body) = req.into_parts();
    let session = Session::from_request_parts(&mut parts, state).await?;
    let bytes = axum::body::to_bytes(body, state.config.body_limit_bytes)
        .await
        .map_err(|_| errors::bad_request("The form could not be read."))?;
    let token = url::form_urlencoded::parse(&bytes).find(|(k, _)| k == CSRF_FIELD).map(|(_, v)| v.into_owned());
    if !csrf_matches(&session.csrf, token.as_deref()) {
        return Err(errors::forbidden(
            "This form has expired or did not come from the dashboard. Go back, reload the page and try again.",
        ));
    }
    Ok((parts, session, bytes))
}

/// A form with nothing to read but its CSRF token (sign-out).
#[derive(Debug, serde::Deserialize)]
pub struct NoFields {}

/// A cookie's value from the request's `Cookie` headers.
/// Ends the session the browser held before `operator` signed in (its session cookie, whoever's it was): a
/// session planted in the browser, or left there, must not outlive the sign-in that replaces it.
pub async fn end_earlier_session(headers: &HeaderMap, state: &AppState, operator: &Operator) -> Result<(), Response> {
    let Some(earlier) = cookie(headers, Cookie::Session.name(state)) else { return Ok(()) };
    let writer = Writer::Operator { operator_id: operator.id.clone() };
    identity::end_replaced_session(&state.db, writer, &earlier).await.map_err(errors::error_response)
}

pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

/// `Set-Cookie` for a value only the server reads: `HttpOnly`, `SameSite=Lax`, whole site, `Secure` over https.
pub fn set_cookie(cookie: Cookie, value: &str, max_age_secs: i64, state: &AppState) -> String {
    let name = cookie.name(state);
    let secure = if state.config.is_https() { "; Secure" } else { "" };
    format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}")
}

pub fn clear_cookie(cookie: Cookie, state: &AppState) -> String {
    set_cookie(cookie, "", 0, state)
}

pub fn append_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// A one-time message shown on the next page: the outcome of a form after its redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub kind: FlashKind,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashKind {
    Success,
    Info,
    /// The action was refused (a conflict such as "inventory changed").
    Error,
}

impl Flash {
    pub fn success(text: impl Into<String>) -> Flash {
        Flash { kind: FlashKind::Success, text: text.into() }
    }

    pub fn info(text: impl Into<String>) -> Flash {
        Flash { kind: FlashKind::Info, text: text.into() }
    }

    pub fn error(text: impl Into<String>) -> Flash {
        Flash { kind: FlashKind::Error, text: text.into() }
    }

    /// The CSS class of the message.
    pub fn class(&self) -> &'static str {
        match self.kind {
            FlashKind::Success => "success",
            FlashKind::Info => "info",
            FlashKind::Error => "error",
        }
    }

    /// Refusals interrupt (`alert`); other outcomes are announced politely (`status`).
    pub fn role(&self) -> &'static str {
        match self.kind {
            FlashKind::Error => "alert",
            _ => "status",
        }
    }

    pub fn from_headers(headers: &HeaderMap, state: &AppState) -> Option<Flash> {
        let raw = cookie(headers, Cookie::Flash.name(state))?;
        let decoded: String = url::form_urlencoded::parse(format!("f={raw}").as_bytes()).next()?.1.into_owned();
        let (kind, text) = decoded.split_once(':')?;
        let kind = match kind {
            "s" => FlashKind::Success,
            "e" => FlashKind::Error,
            _ => FlashKind::Info,
        };
        // Only a short line of text: the cookie is the browser's, so it is never trusted as markup (templates
        // escape it) nor allowed to grow.
        Some(Flash { kind, text: text.chars().take(300).collect() })
    }
}

fn flash_cookie(flash: &Flash, state: &AppState) -> String {
    let kind = match flash.kind {
        FlashKind::Success => "s",
        FlashKind::Info => "i",
        FlashKind::Error => "e",
    };
    let value: String = url::form_urlencoded::byte_serialize(format!("{kind}:{}", flash.text).as_bytes()).collect();
    set_cookie(Cookie::Flash, &value, 60, state)
}

/// Redirects (303, so the browser follows with a GET) to `to`, with a message for the next page.
pub fn redirect_with(to: &str, flash: Flash, state: &AppState) -> Response {
    let mut response = Redirect::to(to).into_response();
    append_cookie(&mut response, &flash_cookie(&flash, state));
    response
}

/// Clears the flash cookie once its message is on a page.
pub fn consume_flash(response: &mut Response, session: &Session, state: &AppState) {
    if session.flash.is_some() {
        append_cookie(response, &clear_cookie(Cookie::Flash, state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_followed_after_sign_in() {
        assert!(is_local_path("/hotels/1/today?x=1"));
        assert!(!is_local_path("//evil.example/"));
        assert!(!is_local_path("/\\evil.example/"));
        assert!(!is_local_path("https://evil.example/"));
        assert!(!is_local_path("/x\r\nSet-Cookie: a=b"));
    }

    #[test]
    fn csrf_tokens_differ_per_session_and_compare_exactly() {
        let a = csrf_for("fdt_a");
        assert_ne!(a, csrf_for("fdt_b"));
        assert!(csrf_matches(&a, Some(&a)));
        assert!(!csrf_matches(&a, Some(&a[..10])));
        assert!(!csrf_matches(&a, None));
        assert!(!csrf_matches("", Some("")));
    }
}
