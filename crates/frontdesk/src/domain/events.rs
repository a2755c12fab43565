//! Webhook events. Every write that changes a guest or a reservation records its event here, inside the write's own
//! transaction (the outbox), so an event is never lost nor sent for a change that rolled back.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::reservations::Reservation;
use super::Result;
use crate::store::outbox::NewEvent;
use crate::store::WriteTx;

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
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
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

/// Records `kind` about `record` (its `data` is the record as GET answers it) in the transaction `tx`, and, for a
/// reservation, the guest messages it calls for ([`super::guest_messages::plan`]): whoever writes a reservation
/// records its event here, so no writer can forget to tell the guest.
pub async fn record<T: Serialize + 'static>(
    tx: &mut WriteTx,
    organization_id: &str,
    hotel_id: Option<&str>,
    kind: EventKind,
    record: &T,
) -> Result<()> {
    let payload = serde_json::to_string(record).map_err(anyhow::Error::from)?;
    tx.record_event(&NewEvent { organization_id, hotel_id, kind: kind.as_str(), payload }).await?;
    if let Some(reservation) = (record as &dyn std::any::Any).downcast_ref::<Reservation>() {
        super::guest_messages::plan(tx, organization_id, kind, reservation).await?;
    }
    Ok(())
}
