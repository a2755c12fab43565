//! Organizations and the operators who sign in to their dashboard.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// A dashboard user of one organization.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Operator {
    pub id: String,
    pub organization_id: String,
    pub email: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}
