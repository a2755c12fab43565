//! The scopes an API key carries.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A per-resource permission carried by an API key. Operators hold every scope.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    ToSchema,
    strum::IntoStaticStr,
    strum::EnumString,
)]
pub enum Scope {
    #[serde(rename = "reservations:read")]
    #[strum(serialize = "reservations:read")]
    ReservationsRead,
    #[serde(rename = "reservations:write")]
    #[strum(serialize = "reservations:write")]
    ReservationsWrite,
    #[serde(rename = "guests:read")]
    #[strum(serialize = "guests:read")]
    GuestsRead,
    #[serde(rename = "guests:write")]
    #[strum(serialize = "guests:write")]
    GuestsWrite,
    #[serde(rename = "rates:read")]
    #[strum(serialize = "rates:read")]
    RatesRead,
    #[serde(rename = "rates:write")]
    #[strum(serialize = "rates:write")]
    RatesWrite,
    #[serde(rename = "rooms:read")]
    #[strum(serialize = "rooms:read")]
    RoomsRead,
    #[serde(rename = "rooms:write")]
    #[strum(serialize = "rooms:write")]
    RoomsWrite,
    /// Reading folios with their lines and balance (an extension).
    #[serde(rename = "folios:read")]
    #[strum(serialize = "folios:read")]
    FoliosRead,
    /// Charging, correcting and charging fees on folios (an extension).
    #[serde(rename = "folios:write")]
    #[strum(serialize = "folios:write")]
    FoliosWrite,
    /// Recording payments and refunds (an extension).
    #[serde(rename = "payments:write")]
    #[strum(serialize = "payments:write")]
    PaymentsWrite,
    /// Issuing and cancelling invoices, and sending them (an extension; reading them takes `folios:read`).
    #[serde(rename = "invoices:write")]
    #[strum(serialize = "invoices:write")]
    InvoicesWrite,
    /// Reading the audit log (an extension).
    #[serde(rename = "audit:read")]
    #[strum(serialize = "audit:read")]
    AuditRead,
}

impl Scope {
    pub const ALL: [Scope; 13] = [
        Scope::ReservationsRead,
        Scope::ReservationsWrite,
        Scope::GuestsRead,
        Scope::GuestsWrite,
        Scope::RatesRead,
        Scope::RatesWrite,
        Scope::RoomsRead,
        Scope::RoomsWrite,
        Scope::FoliosRead,
        Scope::FoliosWrite,
        Scope::PaymentsWrite,
        Scope::InvoicesWrite,
        Scope::AuditRead,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}
