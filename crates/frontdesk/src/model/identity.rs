//! Organizations and the operators who sign in to their dashboard.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
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
    /// What the operator may do (docs/roles.md).
    pub role: Role,
    /// The hotels the operator works in; `null`: every hotel of the organization.
    pub hotel_ids: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
}

/// An operator's job, which decides what they may do in the dashboard and with an operator token on the API
/// (docs/roles.md). API keys keep their scopes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::EnumIter,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Role {
    /// Everything, including operators and their roles, API keys, webhooks and the assistant connector.
    Owner,
    /// Everything in their hotels except operators, roles and the organization's integrations.
    Manager,
    /// Reservations, guests, check-in and check-out, room moves and status, folio charges and payments.
    FrontDesk,
    /// The housekeeping board and room status; never a guest's name or contact details.
    Housekeeping,
    /// The rates calendar, rate plans and daily rates; reads reservations.
    Revenue,
    /// Reads reservations, guests, folios, invoices and reports; issues and cancels invoices; corrects lines.
    Accountant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Role> {
        s.parse().ok()
    }

    /// The role's name for people.
    pub fn label(self) -> &'static str {
        match self {
            Role::Owner => "Owner",
            Role::Manager => "Manager",
            Role::FrontDesk => "Front desk",
            Role::Housekeeping => "Housekeeping",
            Role::Revenue => "Revenue",
            Role::Accountant => "Accountant",
        }
    }
}
