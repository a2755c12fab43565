//! The audit log's entries: who changed which record, when, and how (docs/audit-log.md). Entries are written by the
//! one door for writes (`domain::change`) in the transaction of the change, and never changed afterwards.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One record written by one committed change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Ordered by time: the list's default order is the order the entries were written.
    pub id: String,
    /// When the change committed (to the microsecond; every entry of one change has the same).
    pub at: DateTime<Utc>,
    /// The change the entry belongs to: one write (one request, one job step) makes one change, which may write
    /// several records (a reservation and its folio).
    pub change_id: String,
    /// The hotel the record belongs to; `null` for records of the whole organization.
    pub hotel_id: Option<String>,
    pub actor: AuditActor,
    /// `reservation`, `guest`, `folio`, `payment`, `invoice`, `room`, `rate_plan`, `daily_rate`, …
    pub record_kind: String,
    /// The record's id (a bulk change of daily rates: the first rate plan's id; `summary` names them all).
    pub record_id: String,
    /// `created`, `updated` or `deleted`.
    pub action: String,
    /// The fields that changed, with their values before and after. A guest's contact details are listed as
    /// changed without their values; secrets are never listed.
    pub fields: Vec<FieldChange>,
    /// A bulk change (an ARI batch, a bulk rate edit): what it changed, in one entry instead of one per night.
    pub summary: Option<BulkSummary>,
}

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditActor {
    /// `operator`, `api_key`, `booking_page`, `assistant`, `channel`, `visitor`, `job` or `command_line`.
    pub kind: String,
    /// The operator's, the API key's or the assistant's id; the job's or the channel's name.
    pub id: Option<String>,
    /// The operator's or the API key's name when the change was made ("end of day" for that job).
    pub name: Option<String>,
    /// The operator's role when the change was made.
    pub role: Option<String>,
    /// The client address of a booking-page guest or of someone signing in.
    pub address: Option<String>,
}

/// One field of a record: what it was and what it became. `before` is absent for a created record, `after` for a
/// deleted one. A `redacted` field changed, and its values are not kept (a guest's contact details).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldChange {
    /// The field's name as the record's JSON has it; a nested field is dotted (`folio.balance`).
    pub field: String,
    /// Any JSON value: text, a number, true or false, a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// What a bulk change of many records of one kind did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkSummary {
    /// How many records were written.
    pub count: u64,
    /// How many of them were new.
    pub created: u64,
    /// The records they belong to (the rate plans of daily rates).
    pub parents: Vec<String>,
    /// The first and last date written.
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    /// The fields that changed in at least one record.
    pub fields: Vec<String>,
}
