//! Authentication extractors.
//!
//! * `Authorization: Basic <base64(secret)>`: an API key. The decoded value is the secret alone: no username and
//!   no colon.
//! * `Authorization: Token <token>`: an operator access token.
//!
//! Anything else, or a credential that does not check out, answers 401.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine as _;

use crate::app::limits::{limit_actor, limit_address};
use crate::app::AppState;
use crate::domain::{identity, Actor, Error};

/// The authenticated caller of a request (either credential kind).
pub struct Principal(pub Actor);

impl FromRequestParts<AppState> for Principal {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if let Some(actor) = parts.extensions.get::<Actor>() {
            return Ok(Principal(actor.clone()));
        }
        let actor =
            authenticate(parts, state).await?.ok_or_else(|| Error::Unauthorized("credentials are required".into()))?;
        limit_actor(parts, state, &actor).await?;
        parts.extensions.insert(actor.clone());
        Ok(Principal(actor))
    }
}

/// The caller if it sent credentials (public endpoints); bad credentials still answer 401.
pub struct MaybePrincipal(pub Option<Actor>);

impl FromRequestParts<AppState> for MaybePrincipal {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // Public endpoints are limited per client address, so that one caller cannot exhaust the service.
        limit_address(parts, state).await?;
        let actor = authenticate(parts, state).await?;
        if let Some(actor) = &actor {
            limit_actor(parts, state, actor).await?;
        }
        Ok(MaybePrincipal(actor))
    }
}

async fn authenticate(parts: &Parts, state: &AppState) -> Result<Option<Actor>, Error> {
    let Some(header) = parts.headers.get(AUTHORIZATION) else {
        return Ok(None);
    };
    let malformed = || Error::Unauthorized("malformed Authorization header".into());
    let value = header.to_str().map_err(|_| malformed())?;
    let (scheme, credential) = value.trim().split_once(' ').ok_or_else(malformed)?;
    let credential = credential.trim();
    if scheme.eq_ignore_ascii_case("basic") {
        let secret = decode_basic(credential).ok_or_else(|| {
            Error::Unauthorized(
                "Basic credentials must be the base64 of the API key secret alone (no username, no colon)".into(),
            )
        })?;
        identity::authenticate_api_key(&state.db, &secret).await.map(Some)
    } else if scheme.eq_ignore_ascii_case("token") {
        identity::authenticate_token(&state.db, credential).await.map(Some)
    } else {
        Err(Error::Unauthorized(
            "unsupported authorization scheme: use Basic (API key) or Token (operator access token)".into(),
        ))
    }
}

/// The API key secret inside Basic credentials, if they are well-formed: strict base64 of non-empty UTF-8 with
/// no colon, white space or control character.
fn decode_basic(credential: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(credential).ok()?;
    let secret = String::from_utf8(bytes).ok()?;
    let well_formed =
        !secret.is_empty() && !secret.contains(':') && !secret.chars().any(|c| c.is_whitespace() || c.is_control());
    well_formed.then_some(secret)
}

#[cfg(test)]
mod tests {
    use super::decode_basic;
    use base64::Engine as _;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn basic_credentials() {
        assert_eq!(decode_basic(&b64("fdk_abc")).as_deref(), Some("fdk_abc"));
        assert_eq!(decode_basic(&b64("user:fdk_abc")), None);
        assert_eq!(decode_basic(&b64("fdk_abc:")), None);
        assert_eq!(decode_basic(&b64("fdk_a\u{0}bc")), None);
        assert_eq!(decode_basic(""), None);
        assert_eq!(decode_basic("not base64!"), None);
    }
}
