//! Folios: what a stay is charged. Today one room charge per room and night, made when a reservation is
//! confirmed and made again when its dates, rooms or prices change (`reservations::write`, `reservations::stay`);
//! the ledger of extras, payments and taxes builds on this module.

use chrono::Days;

use super::money;
use super::new_id;
pub use crate::model::reservations::{Folio, FolioCharge};
use crate::model::reservations::{Reservation, ReservationRoom, RoomStatus};

/// One room charge per room and night: each room's price spread evenly over the nights (the remainder on the
/// first nights, so the charges add up to the price exactly).
pub(crate) fn room_charges(r: &Reservation, rooms: &[ReservationRoom]) -> Folio {
    let folio_id = new_id();
    let nights = r.nights().max(1);
    let mut charges = Vec::new();
    let billable: Vec<&ReservationRoom> = rooms.iter().filter(|room| room.status != RoomStatus::Cancelled).collect();
    for (n, room) in billable.iter().enumerate() {
        let base = room.price / nights;
        let remainder = room.price % nights;
        for night in 0..nights {
            let date = r.check_in_date.checked_add_days(Days::new(night as u64)).unwrap_or(r.check_in_date);
            charges.push(FolioCharge {
                id: new_id(),
                folio_id: folio_id.clone(),
                date,
                description: format!("Room {} of {}, night of {date}", n + 1, billable.len()),
                amount: base + i64::from(night < remainder),
                currency: r.currency.clone(),
            });
        }
    }
    // Each room's price is an amount and so is their sum (checked when the rooms were priced), so is the total.
    let total = money::sum(charges.iter().map(|c| c.amount)).unwrap_or(money::MAX_AMOUNT);
    Folio { id: folio_id, currency: r.currency.clone(), total, charges }
}
