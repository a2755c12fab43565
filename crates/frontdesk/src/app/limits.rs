//! Who the client is and counting a request against its limits: the pieces of the REST extractors that the web
//! pages and the assistant endpoint's endpoint use too.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use super::rate_limit::DecisionSlot;
use super::AppState;
use crate::domain::access::Credential;
use crate::domain::attempts::counted_address;
use crate::domain::{Actor, Error};

/// Counts the request against the caller's limit: per API key (its own limit or the default), per operator. For
/// the REST extractors, the dashboard's session and the assistant endpoint's bearer tokens alike.
pub async fn limit_actor(parts: &Parts, state: &AppState, actor: &Actor) -> Result<(), Error> {
    let (bucket, per_minute) = match &actor.credential {
        Credential::ApiKey { key_id, rate_limit_per_minute, .. } => {
            (format!("key:{key_id}"), rate_limit_per_minute.unwrap_or(state.config.rate_limit_per_minute))
        }
        Credential::Operator { operator_id, .. } | Credential::Assistant { operator_id, .. } => {
            (format!("operator:{operator_id}"), state.config.operator_rate_limit_per_minute)
        }
        Credential::System(_) => return Ok(()),
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

/// Counts the request against the client address's limit of public requests (an IPv6 address by its /64,
/// [`counted_address`]): the public API, the booking page, the OAuth endpoints.
pub async fn limit_address(parts: &Parts, state: &AppState) -> Result<(), Error> {
    let network = counted_address(&client_address(parts, state));
    limit(parts, state, &format!("address:{network}"), state.config.public_rate_limit_per_minute).await
}

/// Counts a sign-in request (every way to sign in, and accepting an invitation) against the client address's
/// sign-in limit, before any password is checked and anything is written: a flood of sign-ins is refused by the
/// request limiter, in memory or Redis, not by the database's counts of failures.
pub async fn limit_sign_in(parts: &Parts, state: &AppState) -> Result<(), Error> {
    let network = counted_address(&client_address(parts, state));
    limit(parts, state, &format!("sign-in:{network}"), state.config.sign_in_rate_limit_per_minute).await
}

/// An unauthenticated request (OAuth registration, sign-in and token endpoints), counted against the client
/// address's limit like the public endpoints.
pub struct AddressLimited;

impl FromRequestParts<AppState> for AddressLimited {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        limit_address(parts, state).await?;
        Ok(AddressLimited)
    }
}

/// A sign-in request, counted against the client address's sign-in limit ([`limit_sign_in`]).
pub struct SignInLimited;

impl FromRequestParts<AppState> for SignInLimited {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        limit_sign_in(parts, state).await?;
        Ok(SignInLimited)
    }
}

/// The client's address: from the trusted proxy's header when one is configured ([`forwarded_address`]), else the
/// connection's peer.
pub fn client_address(parts: &Parts, state: &AppState) -> String {
    let config = &state.config;
    let forwarded = config.trusted_proxy_header.as_deref().and_then(|header| {
        let values = parts.headers.get_all(header).iter().map(|v| v.to_str().unwrap_or(""));
        forwarded_address(values, config.trusted_proxy_count)
    });
    match forwarded {
        Some(ip) => ip.to_string(),
        None => parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip().to_string())
            .unwrap_or_else(|| "unknown".into()),
    }
}

/// The client address in a proxy header's values (all its lines, in order) behind `proxies` trusted proxies: the
/// value `proxies` places from the right. Each proxy appends the address it was connected from, so the right-most
/// values are the trusted proxies' own and anything further left is what the client sent, which it chooses freely.
/// `None` (use the connection's peer) when there are fewer values than proxies or the value is not an IP address
/// (an address with a port, `[v6]:port` or `v4:port`, counts as its address).
pub fn forwarded_address<'a>(values: impl Iterator<Item = &'a str>, proxies: u32) -> Option<IpAddr> {
    let list: Vec<&str> = values.flat_map(|v| v.split(',')).map(str::trim).collect();
    let index = list.len().checked_sub(usize::try_from(proxies.max(1)).ok()?)?;
    let value = list[index];
    value.parse::<IpAddr>().ok().or_else(|| value.parse::<SocketAddr>().ok().map(|a| a.ip()))
}

/// The client address of a request ([`client_address`]).
pub struct ClientAddress(pub String);

impl FromRequestParts<AppState> for ClientAddress {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(client_address(parts, state)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_client_address_is_counted_from_the_right() {
        use super::forwarded_address;
        let at = |values: &[&str], proxies| forwarded_address(values.iter().copied(), proxies).map(|ip| ip.to_string());
        // The client put 1.1.1.1 in front; the one proxy appended the address it saw.
        assert_eq!(at(&["1.1.1.1, 203.0.113.7"], 1).as_deref(), Some("203.0.113.7"));
        assert_eq!(at(&["203.0.113.7"], 1).as_deref(), Some("203.0.113.7"));
        assert_eq!(at(&["1.1.1.1", "203.0.113.7"], 1).as_deref(), Some("203.0.113.7"), "across header lines");
        // Two proxies: the second appended the first's address.
        assert_eq!(at(&["1.1.1.1, 203.0.113.7, 10.0.0.2"], 2).as_deref(), Some("203.0.113.7"));
        assert_eq!(at(&["10.0.0.2"], 2), None, "fewer values than proxies");
        assert_eq!(at(&["203.0.113.7:4711"], 1).as_deref(), Some("203.0.113.7"));
        assert_eq!(at(&["[2001:db8::1]:4711"], 1).as_deref(), Some("2001:db8::1"));
        assert_eq!(at(&["2001:db8::1"], 1).as_deref(), Some("2001:db8::1"));
        assert_eq!(at(&["1.1.1.1, unknown"], 1), None, "not an address");
        assert_eq!(at(&["1.1.1.1, "], 1), None);
        assert_eq!(at(&[], 1), None);
    }
}
