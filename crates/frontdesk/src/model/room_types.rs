//! Room types: what a guest books.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RoomType {
    pub id: String,
    pub hotel_id: String,
    pub name: String,
    pub description: Option<String>,
    /// Most guests in one room, adults and children together (infants do not count).
    pub max_occupancy: i64,
    pub max_adults: i64,
    pub max_children: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
