//! Daily rates: a rate plan's price, availability and restrictions for one night (ARI).

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::codes::CurrencyCode;

/// The ARI record of one rate plan and night.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DailyRate {
    pub rate_plan_id: String,
    pub date: NaiveDate,
    /// Price of the night in minor units of `currency`.
    pub price: i64,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Rooms sellable under this plan that night (an allotment); `null`: no cap beyond the physical rooms.
    pub availability: Option<i64>,
    /// Nothing sells that night under this plan.
    pub stop_sell: bool,
    /// No stay under this plan may start this night.
    pub closed_to_arrival: bool,
    /// No stay under this plan may end on this date.
    pub closed_to_departure: bool,
    /// Fewest nights of a stay that starts this night.
    pub min_stay: Option<i64>,
    /// Most nights of a stay that starts this night.
    pub max_stay: Option<i64>,
    pub updated_at: DateTime<Utc>,
}
