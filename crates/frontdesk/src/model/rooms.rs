//! Physical rooms and their housekeeping states.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum HousekeepingStatus {
    Clean,
    Dirty,
    Inspected,
    OutOfOrder,
}

impl HousekeepingStatus {
    pub const ALL: [HousekeepingStatus; 4] = [Self::Clean, Self::Dirty, Self::Inspected, Self::OutOfOrder];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub id: String,
    pub hotel_id: String,
    pub room_type_id: String,
    /// The room's number or name, unique within the hotel.
    pub name: String,
    pub floor: Option<i64>,
    pub housekeeping_status: HousekeepingStatus,
    /// When the housekeeping status last changed (`null` if it never has since the room was created).
    pub housekeeping_changed_at: Option<DateTime<Utc>>,
    /// Who changed it last: an operator's name, `API key <name>`, `check-out of <reference>`, or `Frontdesk`.
    pub housekeeping_changed_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
