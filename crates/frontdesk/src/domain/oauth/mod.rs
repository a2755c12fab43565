//! The assistant endpoint's OAuth 2.1 authorization server, as MCP's authorization spec asks: dynamic client
//! registration (RFC 7591, public clients only), the authorization code grant with PKCE S256 (RFC 7636; `plain`
//! is refused), exact redirect URI matching, resource indicators (RFC 8707) binding every token to the assistant endpoint,
//! short-lived access tokens, rotating refresh tokens and revocation (RFC 7009).
//!
//! Every secret handed out (sign-in ticket, code, access and refresh token) is 256 random bits, stored only as its
//! SHA-256 digest and compared in constant time, like the service's other tokens ([`super::secrets`]). State lives
//! in the database only, so any number of processes can serve any step.

mod authorization;
mod registration;
mod resource;
mod tokens;

// One file per step of the protocol; their items keep their `oauth::…` paths for the handlers that call them.
pub use authorization::*;
pub use registration::*;
pub use resource::*;
pub use tokens::*;

use chrono::TimeDelta;
use serde::Serialize;

use super::Error;

/// The one scope the assistant endpoint knows: read-only, aggregate access to the operator's organization.
pub const SCOPE: &str = "service:read";
/// How long a sign-in ticket (between the sign-in form and the consent page) lives.
pub const TICKET_TTL: TimeDelta = TimeDelta::minutes(10);
/// How long an authorization code lives; it is also single-use.
pub const CODE_TTL: TimeDelta = TimeDelta::minutes(5);

/// Expired tokens and old authorizations are deleted this long after they stopped mattering.
const PURGE_AFTER: TimeDelta = TimeDelta::days(1);
/// A registered client through which no operator signed in within this long is removed: registration needs no
/// credential, so the registry must not keep whatever anyone registers.
pub const UNUSED_CLIENT_TTL: TimeDelta = TimeDelta::days(1);

pub const ACCESS_TOKEN_PREFIX: &str = "fdo_";
pub const REFRESH_TOKEN_PREFIX: &str = "fdr_";
const CODE_PREFIX: &str = "fdc_";
const TICKET_PREFIX: &str = "fds_";

const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_LEN: usize = 2000;
const MAX_STATE_LEN: usize = 1000;
const MAX_CLIENT_NAME: usize = 200;

/// Where this authorization server and its one protected resource live.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The issuer: the service's public base URL, no trailing slash.
    pub issuer: String,
    /// The protected resource (the assistant endpoint): `<issuer>/mcp`.
    pub resource: String,
    pub access_ttl: TimeDelta,
    pub refresh_ttl: TimeDelta,
}

impl Settings {
    pub fn new(public_base: &str, access_ttl: TimeDelta, refresh_ttl: TimeDelta) -> Settings {
        let issuer = public_base.trim_end_matches('/').to_string();
        Settings { resource: format!("{issuer}/mcp"), issuer, access_ttl, refresh_ttl }
    }
}

/// An OAuth error answer (RFC 6749 section 5.2): `error` is one of the registered codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OAuthError {
    pub error: &'static str,
    pub error_description: String,
}

impl OAuthError {
    pub fn new(error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { error, error_description: description.into() }
    }

    fn internal(err: impl Into<Error>) -> OAuthError {
        let err: Error = err.into();
        tracing::error!(error = %format!("{err:#}"), "OAuth internal error");
        OAuthError::new("server_error", "the service could not complete the request")
    }
}

impl From<crate::store::Error> for OAuthError {
    fn from(err: crate::store::Error) -> Self {
        OAuthError::internal(err)
    }
}

impl From<Error> for OAuthError {
    fn from(err: Error) -> Self {
        OAuthError::internal(err)
    }
}

type OAuthResult<T> = Result<T, OAuthError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(pkce_matches(verifier, challenge));
        assert!(!pkce_matches("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", challenge));
        assert!(!pkce_matches("short", challenge));
        assert!(!pkce_matches(challenge, challenge), "plain: the challenge itself is no verifier");
    }

    #[test]
    fn redirect_uris() {
        assert!(redirect_uri_allowed("https://claude.ai/api/mcp/auth_callback"));
        assert!(redirect_uri_allowed("http://127.0.0.1:33418/callback"));
        assert!(redirect_uri_allowed("http://localhost/cb"));
        assert!(!redirect_uri_allowed("http://evil.example/cb"));
        assert!(!redirect_uri_allowed("https://a.example/cb#frag"));
        assert!(!redirect_uri_allowed("javascript:alert(1)"));
        assert!(!redirect_uri_allowed("/relative"));
    }

    #[test]
    fn scopes() {
        assert_eq!(parse_scope(None), Ok(SCOPE.to_string()));
        assert_eq!(parse_scope(Some("service:read")), Ok(SCOPE.to_string()));
        assert!(parse_scope(Some("service:write")).is_err());
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parameters(b"a=1&b=2").is_ok());
        assert!(parameters(b"a=1&a=2").is_err());
        assert!(parameters(b"a=x%00y").is_err());
        assert!(parameters(b"a%01=x").is_err());
    }
}
