//! Webhook subscriptions and their delivery log.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::events::EventKind;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSubscription {
    pub id: String,
    pub hotel_id: String,
    pub url: String,
    /// The event kinds delivered; empty: every kind.
    pub events: Vec<EventKind>,
    /// `false` when turned off with PUT or after 20 failed deliveries in a row.
    pub active: bool,
    /// Failed deliveries since the last success; the 20th turns the subscription off.
    pub consecutive_failures: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One delivery attempt.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// Sent as `X-Service-Delivery`.
    pub id: String,
    /// The event's `id` (the same for every subscription that received it).
    pub event_id: String,
    pub event: EventKind,
    pub attempted_at: DateTime<Utc>,
    /// Whether the receiver answered 2xx within 5 seconds.
    pub success: bool,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<i64>,
    /// Why the attempt failed without an answer (timeout, refused connection, address not allowed, …).
    pub error: Option<String>,
    pub duration_ms: i64,
}
