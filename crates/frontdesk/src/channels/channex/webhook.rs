//! `POST /channels/channex/{hotelId}`: Channex's booking webhook (docs/channex-api-notes.md §5).
//!
//! Channex signs nothing; the webhook is registered with a secret header (`X-Channex-Webhook-Secret`), which is
//! checked against the connection's digest in constant time: without it, or with another, the answer is 401 and
//! nothing is applied (an unknown hotel answers the same). The payload is only a trigger: the revision it names is
//! read back from Channex by id ([`revisions::take`]); a payload without one makes the feed be read. Channex retries
//! a webhook only on 5xx: a revision that could not be read from Channex answers 502 (and the feed poll is the
//! safety net either way); one that needs attention is recorded and answers 200.

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::Value;

use super::client::Client;
use super::revisions;
use super::CHANNEL;
use crate::app::AppState;
use crate::channels::ConnectionState;
use crate::domain::secrets;
use crate::store;

/// The header the secret comes in.
pub const SECRET_HEADER: &str = "x-channex-webhook-secret";

pub fn router() -> Router<AppState> {
    Router::new().route("/channels/channex/{hotel_id}", post(receive))
}

fn http() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| Client::http(Duration::from_secs(20)).unwrap_or_default())
}

async fn receive(
    State(state): State<AppState>,
    Path(hotel_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    // Not a hotel id at all: answered as an unknown hotel is, before anything reaches the database.
    if uuid::Uuid::parse_str(&hotel_id).is_err() {
        return (StatusCode::UNAUTHORIZED, "unauthorized");
    }
    let connection = match state.db.read().await {
        Ok(mut conn) => store::channels::of_hotel(&mut conn, &hotel_id, CHANNEL).await,
        Err(_) => return (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
    };
    let Ok(connection) = connection else { return (StatusCode::SERVICE_UNAVAILABLE, "unavailable") };
    let given = headers.get(SECRET_HEADER).and_then(|v| v.to_str().ok()).map(secrets::digest);
    let Some(c) = connection.filter(|c| match (&c.webhook_secret_digest, &given) {
        (Some(expected), Some(given)) => secrets::digests_match(expected, given),
        _ => false,
    }) else {
        return (StatusCode::UNAUTHORIZED, "unauthorized");
    };
    if c.state != ConnectionState::Active {
        // Taken from the feed once the connection is active again.
        return (StatusCode::OK, "ok");
    }
    let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let revision_id = ["revision_id", "booking_revision_id"]
        .iter()
        .find_map(|name| payload.get("payload").and_then(|p| p.get(*name)).and_then(Value::as_str))
        .filter(|id| !id.is_empty() && id.len() <= 100 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    let Ok(api_key) = state.webhooks.secret_box.open(&c.api_key_sealed) else {
        return (StatusCode::OK, "ok");
    };
    let client = Client::new(http().clone(), &c.base_url, &api_key);
    let outcome = match revision_id {
        Some(id) => revisions::take(&state.db, &client, &c, id).await.map(|t| t.is_some()),
        None => revisions::poll(&state.db, &client, &c).await.map(|n| n.is_some()),
    };
    match outcome {
        Ok(true) => (StatusCode::OK, "ok"),
        Ok(false) => (StatusCode::BAD_GATEWAY, "the revision could not be read from Channex"),
        Err(err) => {
            tracing::warn!(error = %format!("{err:#}"), "applying a Channex webhook failed");
            (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        }
    }
}
