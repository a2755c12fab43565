//! Rate plans.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::codes::CurrencyCode;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RatePlan {
    pub id: String,
    pub hotel_id: String,
    /// The room type priced; `null` prices every room type of the hotel.
    pub room_type_id: Option<String>,
    pub name: String,
    /// A short code unique within the hotel (e.g. `BAR`), for channel mapping.
    pub code: Option<String>,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Inactive plans are not offered.
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
