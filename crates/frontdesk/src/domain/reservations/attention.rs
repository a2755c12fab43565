//! Reservations that need a person's attention. A channel's booking is sold already (the guest booked and paid on
//! Booking.com), so it is taken even when it does not fit: a night with no room of its type free makes it
//! **overbooked**, a room type or rate plan of the channel's that is not mapped to ours makes it **unmapped**. It is
//! flagged, shown on the Today page and on the stay, and stays flagged until someone at the desk has dealt with it
//! (moved a guest, called the channel) and marks it handled. Raising and handling are audited like any write.

use serde::Serialize;

use super::{visible, Reservation, ReservationStatus};
use crate::domain::access::{Actor, Scope};
use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::{now, Error, Result};
pub use crate::model::reservations::{Attention, AttentionReason};
use crate::store::{self, Db};

/// The states in which a flagged reservation still needs someone: a stay cancelled, a no-show or checked out holds
/// no room any more, so its overbooking or change has resolved itself (its flag stays, handled or not, for the
/// record).
pub const STILL_MATTERS: [ReservationStatus; 3] =
    [ReservationStatus::Requested, ReservationStatus::Confirmed, ReservationStatus::CheckedIn];

pub fn still_matters(r: &Reservation) -> bool {
    STILL_MATTERS.contains(&r.status)
}

/// The flag as the audit log keeps it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Flag<'a> {
    hotel_id: &'a str,
    reservation_id: &'a str,
    reasons: Vec<&'static str>,
    detail: &'a str,
    handled: bool,
}

impl Record for Flag<'_> {
    const KIND: RecordKind = RecordKind::ReservationAttention;

    fn hotel_id(&self) -> Option<&str> {
        Some(self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.reservation_id.to_string()
    }
}

fn flag(a: &Attention) -> Flag<'_> {
    Flag {
        hotel_id: &a.hotel_id,
        reservation_id: &a.reservation_id,
        reasons: a.reasons.iter().map(|r| r.as_str()).collect(),
        detail: &a.detail,
        handled: a.handled_at.is_some(),
    }
}

/// Flags `r` for `reason` inside a change under way. A flag still open keeps its reasons and gains this one (a
/// channel booking can be both unmapped and overbooked); a handled one opens again for something new.
pub(crate) async fn raise(
    tx: &mut Change,
    organization_id: &str,
    r: &Reservation,
    reason: AttentionReason,
    detail: &str,
) -> Result<()> {
    let before = store::reservations::attention::of_reservation(tx.conn(), &r.id).await?;
    let mut after = Attention {
        reservation_id: r.id.clone(),
        hotel_id: r.hotel_id.clone(),
        reasons: vec![reason],
        detail: detail.chars().take(1000).collect(),
        raised_at: now(),
        handled_at: None,
    };
    // A flag that says this already, open or handled, is not raised again: the desk has it, or dealt with it.
    if before.as_ref().is_some_and(|a| a.reasons.contains(&reason) && a.detail.contains(detail)) {
        return Ok(());
    }
    if let Some(open) = before.as_ref().filter(|a| a.handled_at.is_none()) {
        after.reasons = open.reasons.clone();
        if !after.reasons.contains(&reason) {
            after.reasons.push(reason);
        }
        after.detail = format!("{}; {}", open.detail, detail).chars().take(1000).collect();
        after.raised_at = open.raised_at;
    }
    store::reservations::attention::raise(tx.conn(), organization_id, &after).await?;
    match &before {
        Some(before) => tx.updated(organization_id, &flag(before), &flag(&after)).await,
        None => tx.created(organization_id, &flag(&after)).await,
    }
}

/// The reservation's open flag, if it has one (for the stay's page).
pub async fn open_of(db: &Db, actor: &Actor, reservation_id: &str) -> Result<Option<Attention>> {
    let mut conn = db.read().await?;
    let r = visible(&mut conn, actor, reservation_id).await?;
    let flag = store::reservations::attention::of_reservation(&mut conn, reservation_id).await?;
    Ok(flag.filter(|a| a.handled_at.is_none() && still_matters(&r)))
}

/// Marks the reservation's flag handled: the desk has dealt with it. 409 when it has no open flag.
pub async fn mark_handled(db: &Db, actor: &Actor, reservation_id: &str) -> Result<()> {
    actor.require_scope(Scope::ReservationsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let r = visible(tx.conn(), actor, reservation_id).await?;
    let open = store::reservations::attention::of_reservation(tx.conn(), &r.id).await?;
    let Some(before) = open.filter(|a| a.handled_at.is_none()) else {
        return Err(Error::Conflict("this reservation has nothing waiting for attention".into()));
    };
    let at = now();
    store::reservations::attention::handle(tx.conn(), &r.id, at).await?;
    let after = Attention { handled_at: Some(at), ..before.clone() };
    tx.updated(&actor.organization_id, &flag(&before), &flag(&after)).await?;
    tx.commit().await?;
    Ok(())
}
