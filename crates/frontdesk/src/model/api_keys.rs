//! API keys as they are listed (never their secret).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::access::Scope;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    /// The hotel this key is pinned to; every request it makes is confined to that hotel.
    pub hotel_id: Option<String>,
    /// Requests per minute this key may make; `null`: the service default.
    pub rate_limit_per_minute: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}
