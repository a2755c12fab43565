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

use std::net::SocketAddr;

use axum::extract::ConnectInfo;

use super::rate_limit::DecisionSlot;
use super::AppState;
use crate::domain::access::Credential;
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
        limit_caller(parts, state, &actor).await?;
        parts.extensions.insert(actor.clone());
        Ok(Principal(actor))
    }
}

/// Counts the request against the caller's limit: per API key (its own limit or the default), per operator.
async fn limit_caller(parts: &Parts, state: &AppState, actor: &Actor) -> Result<(), Error> {
    let (bucket, per_minute) = match &actor.credential {
        Credential::ApiKey { key_id, rate_limit_per_minute, .. } => {
            (format!("key:{key_id}"), rate_limit_per_minute.unwrap_or(state.config.rate_limit_per_minute))
        }
        Credential::Operator { operator_id, .. } => {
            (format!("operator:{operator_id}"), state.config.operator_rate_limit_per_minute)
        }
        Credential::System => return Ok(()),
    };
    limit(parts, state, &bucket, per_minute).await
}

/// Counts the request against `bucket`, allowing `per_minute` (429 once it is spent).
pub async fn limit(parts: &Parts, state: &AppState, bucket: &str, per_minute: u32) -> Result<(), Error> {
    let Some(limiter) = &state.limiter else { return Ok(()) };
    let decision = limiter.check(bucket, per_minute).await;
    if let Some(slot) = parts.extensions.get::<DecisionSlot>() {
        slot.record(decision);
    }
    if decision.allowed {
        Ok(())
    } else {
        Err(Error::RateLimited(format!(
            "rate limit of {} requests per minute exceeded; retry in {} s",
            decision.limit, decision.retry_after
        )))
    }
}

/// Counts a request of an actor authenticated elsewhere (the connector's bearer tokens) against its limit.
pub async fn limit_actor(parts: &Parts, state: &AppState, actor: &Actor) -> Result<(), Error> {
    limit_caller(parts, state, actor).await
}

/// An unauthenticated request (OAuth registration, sign-in and token endpoints), counted against the client
/// address's limit like the public endpoints.
pub struct AddressLimited;

impl FromRequestParts<AppState> for AddressLimited {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let address = client_address(parts, state);
        limit(parts, state, &format!("address:{address}"), state.config.public_rate_limit_per_minute).await?;
        Ok(AddressLimited)
    }
}

/// The client's address: the trusted proxy's header when one is configured, else the connection's peer.
pub fn client_address(parts: &Parts, state: &AppState) -> String {
    if let Some(header) = &state.config.trusted_proxy_header {
        if let Some(first) = parts
            .headers
            .get(header.as_str())
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            return first.to_string();
        }
    }
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The caller if it sent credentials (public endpoints); bad credentials still answer 401.
pub struct MaybePrincipal(pub Option<Actor>);

impl FromRequestParts<AppState> for MaybePrincipal {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // Public endpoints are limited per client address, so that one caller cannot exhaust the service.
        let address = client_address(parts, state);
        limit(parts, state, &format!("address:{address}"), state.config.public_rate_limit_per_minute).await?;
        let actor = authenticate(parts, state).await?;
        if let Some(actor) = &actor {
            limit_caller(parts, state, actor).await?;
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
