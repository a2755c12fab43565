//! The kinds of webhook event.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What happened to which kind of record; the `event` of a delivery and the names a subscription picks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
pub enum EventKind {
    #[serde(rename = "reservation.created")]
    #[strum(serialize = "reservation.created")]
    ReservationCreated,
    #[serde(rename = "reservation.updated")]
    #[strum(serialize = "reservation.updated")]
    ReservationUpdated,
    #[serde(rename = "reservation.deleted")]
    #[strum(serialize = "reservation.deleted")]
    ReservationDeleted,
    #[serde(rename = "guest.created")]
    #[strum(serialize = "guest.created")]
    GuestCreated,
    #[serde(rename = "guest.updated")]
    #[strum(serialize = "guest.updated")]
    GuestUpdated,
    #[serde(rename = "guest.deleted")]
    #[strum(serialize = "guest.deleted")]
    GuestDeleted,
    /// A folio's lines changed (an extension: sent only to subscriptions that name it).
    #[serde(rename = "folio.updated")]
    #[strum(serialize = "folio.updated")]
    FolioUpdated,
    /// A payment was recorded (an extension: sent only to subscriptions that name it).
    #[serde(rename = "payment.created")]
    #[strum(serialize = "payment.created")]
    PaymentCreated,
    /// An invoice or a cancellation invoice was issued (an extension: sent only to subscriptions that name it).
    #[serde(rename = "invoice.created")]
    #[strum(serialize = "invoice.created")]
    InvoiceCreated,
}

impl EventKind {
    pub const ALL: [EventKind; 9] = [
        Self::ReservationCreated,
        Self::ReservationUpdated,
        Self::ReservationDeleted,
        Self::GuestCreated,
        Self::GuestUpdated,
        Self::GuestDeleted,
        Self::FolioUpdated,
        Self::PaymentCreated,
        Self::InvoiceCreated,
    ];

    /// The contract's six kinds, which a subscription with an empty event list receives.
    pub const CONTRACT: [EventKind; 6] = [
        Self::ReservationCreated,
        Self::ReservationUpdated,
        Self::ReservationDeleted,
        Self::GuestCreated,
        Self::GuestUpdated,
        Self::GuestDeleted,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        s.parse().ok()
    }
}
