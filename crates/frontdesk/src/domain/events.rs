//! Webhook events. Every write that changes a guest or a reservation records its event here, inside the write's own
//! transaction (the outbox), so an event is never lost nor sent for a change that rolled back.

use serde::Serialize;

use super::reservations::Reservation;
use super::Result;
pub use crate::model::events::EventKind;
use crate::store::outbox::NewEvent;
use crate::store::WriteTx;

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
