//! Inventory: a physical room of a type is sold at most once a night.
//!
//! The rules, each stated once here and nowhere else:
//! * which reservation rooms take inventory ([`holds`]): the confirmed rooms of confirmed or checked-in
//!   reservations, one physical room of their type on each night of the stay (the store records the answer with
//!   each room as `holds_inventory`, so that counting is one query);
//! * which physical rooms can be sold: those whose housekeeping status is sellable (not out of order; see
//!   [`crate::domain::rooms::HousekeepingStatus::sellable`]);
//! * the invariant: on every night, the rooms a type holds never exceed its sellable rooms. Writes that take
//!   inventory ([`take`]) and writes that take a room out of its type's sellable rooms ([`release_room`]: moving it
//!   to another type, putting it out of order, deleting it) both check it, under the same lock. One exception: a
//!   booking sold already elsewhere ([`sold_already`]: a channel's) is taken even when it breaks it, and flagged.
//!
//! Every such write first locks the room types it counts ([`store::reservations::lock_room_types`]), then the
//! physical rooms it touches, then counts, then writes, all in one transaction: writers racing for the same rooms
//! take turns, and the second sees the first's change. SQLite needs no lock: its write transactions are exclusive.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};

use super::super::{Error, Result};
use super::{ReservationStatus, RoomStatus};
use crate::domain::change::{Change, Writer};
use crate::model::rooms::{HousekeepingStatus, Room};
use crate::store;

/// Whether a room of a reservation in `reservation` status, itself in `room` status, holds one physical room of its
/// type on each night of the stay.
pub fn holds(reservation: ReservationStatus, room: RoomStatus) -> bool {
    reservation.holds_inventory() && room == RoomStatus::Confirmed
}

/// Whether `writer`'s bookings are sold already, elsewhere: a channel's booking was bought and paid on the channel
/// before it reaches us, so refusing it would not undo the sale, only hide it from the desk. Such a booking is
/// never refused for want of rooms: it takes its rooms and is flagged overbooked (`attention`), and the channel is
/// told that nothing is left. Every other writer is refused (409).
pub fn sold_already(writer: &Writer) -> bool {
    matches!(writer, Writer::Channel { .. })
}

/// Sellable physical rooms per room type (those in a housekeeping status that can be sold: not out of order).
pub async fn sellable_rooms(conn: &mut store::Conn, room_type_ids: &[String]) -> Result<Vec<(String, i64)>> {
    let sellable: Vec<HousekeepingStatus> = HousekeepingStatus::ALL.into_iter().filter(|s| s.sellable()).collect();
    Ok(store::reservations::rooms_in_status(conn, room_type_ids, &sellable).await?)
}

/// Free sellable rooms per room type and night of `[from, to)` (index 0 is `from`), not counting the rooms of
/// `except_reservation`.
pub async fn free_rooms(
    conn: &mut store::Conn,
    room_type_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> Result<HashMap<String, Vec<i64>>> {
    let nights = (to - from).num_days().max(0) as usize;
    let sellable: HashMap<String, i64> = sellable_rooms(conn, room_type_ids).await?.into_iter().collect();
    let mut free: HashMap<String, Vec<i64>> =
        room_type_ids.iter().map(|id| (id.clone(), vec![sellable.get(id).copied().unwrap_or(0); nights])).collect();
    for (room_type, held) in store::reservations::held_rooms(conn, room_type_ids, from, to, except_reservation).await? {
        let Some(counts) = free.get_mut(&room_type) else { continue };
        for (count, held) in counts.iter_mut().zip(held) {
            *count -= held;
        }
    }
    Ok(free)
}

/// Checks, under the room-type locks, that one more room of each listed type (a type listed twice needs two)
/// fits every night of `[from, to)`. 409 naming the first night that is full.
pub async fn take(
    tx: &mut Change,
    organization_id: &str,
    room_types: &[String],
    from: NaiveDate,
    to: NaiveDate,
    reservation_id: &str,
) -> Result<()> {
    let mut needed: HashMap<String, i64> = HashMap::new();
    for room_type in room_types {
        *needed.entry(room_type.clone()).or_default() += 1;
    }
    let mut ids: Vec<String> = needed.keys().cloned().collect();
    ids.sort();
    let engine = tx.engine();
    store::reservations::lock_room_types(tx.conn(), engine, &ids).await?;
    let free = free_rooms(tx.conn(), &ids, from, to, Some(reservation_id)).await?;
    for id in &ids {
        let want = needed[id];
        if let Some(night) = free.get(id).and_then(|nights| nights.iter().position(|free| *free < want)) {
            let date = from.checked_add_days(Days::new(night as u64)).unwrap_or(from);
            let name = match store::room_types::get(tx.conn(), organization_id, id).await? {
                Some(room_type) => room_type.name,
                None => "of this type".to_string(),
            };
            return Err(Error::Conflict(format!("not enough {name} rooms are free on the night of {date}")));
        }
    }
    Ok(())
}

/// The stay a physical room is assigned to: its reservation, its nights `[from, to)`, and the hotel's today.
#[derive(Debug, Clone, Copy)]
pub struct Stay<'a> {
    pub reservation_id: &'a str,
    pub nights: (NaiveDate, NaiveDate),
    pub today: NaiveDate,
}

impl Stay<'_> {
    /// Whether tonight is one of the stay's nights.
    pub fn includes_tonight(&self) -> bool {
        self.nights.0 <= self.today && self.today < self.nights.1
    }
}

/// Checks, under the room's lock, that `room_id` can be assigned to a room of `room_type_id` of `stay`: it is still
/// of that type and sellable (it may have changed since the request was validated), no other stay that holds
/// inventory has it on one of those nights, and, when the stay includes tonight, no guest who stayed past the
/// departure date is still in it. (A guest due to leave today may still be in the room: the desk assigns tonight's
/// arrival to it in the morning, and the check-in waits for the check-out: see [`room_free_now`].) (Within one
/// reservation, whose rooms share every night, a room is assigned once: the request's validation sees to that.)
pub async fn assign(
    tx: &mut Change,
    organization_id: &str,
    room_id: &str,
    room_type_id: &str,
    stay: &Stay<'_>,
) -> Result<()> {
    let room = locked_sellable_room(tx, organization_id, room_id).await?;
    if stay.includes_tonight() {
        let occupant = store::reservations::occupant(tx.conn(), room_id, stay.reservation_id).await?;
        if let Some(occupant) = occupant.filter(|o| o.check_out_date < stay.today) {
            return Err(occupied(&room, &occupant));
        }
    }
    if room.room_type_id != room_type_id {
        return Err(Error::Conflict(format!("room {} is no longer of the reserved room type", room.name)));
    }
    let (from, to) = stay.nights;
    if store::reservations::room_taken(tx.conn(), room_id, from, to, stay.reservation_id).await? {
        return Err(Error::Conflict(format!(
            "room {} is already assigned to another stay on some of the nights from {from} to {to}",
            room.name
        )));
    }
    Ok(())
}

/// The room, locked (PostgreSQL; SQLite's write transactions are exclusive) and read again: 409 when it no longer
/// exists or is out of order.
async fn locked_sellable_room(tx: &mut Change, organization_id: &str, room_id: &str) -> Result<Room> {
    let engine = tx.engine();
    store::reservations::lock_room(tx.conn(), engine, room_id).await?;
    match store::rooms::get(tx.conn(), organization_id, room_id).await? {
        None => Err(Error::Conflict("a room assigned to this stay no longer exists".into())),
        Some(room) if !room.housekeeping_status.sellable() => {
            Err(Error::Conflict(format!("room {} is out of order", room.name)))
        }
        Some(room) => Ok(room),
    }
}

/// A room holds one stay at a time: checks, under the room's lock, that `room_id` is in order and that no checked-in
/// stay other than `reservation_id` is in it, whatever that stay's dates (a guest who stays past the departure date
/// is still in the room until checked out). 409 naming the stay otherwise. Two writers racing for one room take
/// turns on the lock, and the second sees the first's check-in.
pub async fn room_free_now(
    tx: &mut Change,
    organization_id: &str,
    room_id: &str,
    reservation_id: &str,
) -> Result<Room> {
    let room = locked_sellable_room(tx, organization_id, room_id).await?;
    if let Some(occupant) = store::reservations::occupant(tx.conn(), room_id, reservation_id).await? {
        return Err(occupied(&room, &occupant));
    }
    Ok(room)
}

fn occupied(room: &Room, occupant: &store::reservations::Occupant) -> Error {
    Error::Conflict(format!(
        "room {} is occupied: the guest of reservation {} is checked in there (departure booked for {}); check them \
         out first or choose another room",
        room.name, occupant.reference, occupant.check_out_date
    ))
}

/// The room `room_id` of the organization, read again under the lock of its room type and its own lock, for a
/// write that may take it out of its type's sellable rooms. 409 if another write moved it to another type between
/// the caller's first read and the lock (rare: the caller may simply retry).
pub async fn lock_room(tx: &mut Change, organization_id: &str, room: &Room) -> Result<Room> {
    let engine = tx.engine();
    store::reservations::lock_room_types(tx.conn(), engine, std::slice::from_ref(&room.room_type_id)).await?;
    store::reservations::lock_room(tx.conn(), engine, &room.id).await?;
    let locked = store::rooms::get(tx.conn(), organization_id, &room.id).await?.ok_or(Error::NotFound("room"))?;
    if locked.room_type_id != room.room_type_id {
        return Err(Error::Conflict("the room changed type while this request ran; try again".into()));
    }
    Ok(locked)
}

/// Checks, under the locks of [`lock_room`], that `room` may stop counting as a sellable room of its type (it moves
/// to another type, goes out of order or is deleted): no stay that holds inventory has it assigned, and on every
/// night the type's other sellable rooms still cover the rooms it holds. 409 naming the reason otherwise.
pub async fn release_room(tx: &mut Change, room: &Room, change: &str) -> Result<()> {
    if let Some(reservation) = store::reservations::held_assignment(tx.conn(), &room.id).await? {
        return Err(Error::Conflict(format!(
            "room {} cannot {change}: it is assigned to reservation {reservation}, which holds it; assign the stay \
             another room first",
            room.name
        )));
    }
    if !room.housekeeping_status.sellable() {
        return Ok(());
    }
    let type_ids = std::slice::from_ref(&room.room_type_id);
    let sellable = sellable_rooms(tx.conn(), type_ids).await?.first().map_or(0, |(_, n)| *n);
    let stays = store::reservations::held_stays(tx.conn(), &room.room_type_id).await?;
    if let Some(night) = first_night_over(&stays, sellable - 1) {
        return Err(Error::Conflict(format!(
            "room {} cannot {change}: its room type would have fewer sellable rooms than confirmed stays on {night}",
            room.name
        )));
    }
    Ok(())
}

/// The first night on which more of `stays` (check-in, check-out) overlap than `capacity`, if any.
fn first_night_over(stays: &[(NaiveDate, NaiveDate)], capacity: i64) -> Option<NaiveDate> {
    // +1 on each check-in night, -1 on each check-out date (not a night of the stay); on one date the departures
    // come first, so that back-to-back stays share a room.
    let mut changes: Vec<(NaiveDate, i64)> = stays.iter().flat_map(|&(from, to)| [(from, 1), (to, -1)]).collect();
    changes.sort_unstable();
    let mut held = 0;
    changes.into_iter().find_map(|(date, change)| {
        held += change;
        (held > capacity).then_some(date)
    })
}

/// Checks, under the rate plans' locks, that the plans of the confirmed `rooms` still sell every night of the stay:
/// a daily rate exists, it is not stop-sell, and its allotment (`availability`, when set) has room after what other
/// stays hold under the plan. Approval of a booking request runs this on top of [`take`].
pub async fn take_allotments(
    tx: &mut Change,
    organization_id: &str,
    rooms: &[(String, NaiveDate, NaiveDate)],
    reservation_id: &str,
) -> Result<()> {
    let mut needed: HashMap<String, i64> = HashMap::new();
    for (plan, _, _) in rooms {
        *needed.entry(plan.clone()).or_default() += 1;
    }
    let Some((_, from, to)) = rooms.first().cloned() else { return Ok(()) };
    let mut ids: Vec<&str> = needed.keys().map(String::as_str).collect();
    ids.sort_unstable();
    let engine = tx.engine();
    store::rate_plans::lock_many(tx.conn(), engine, organization_id, &ids).await?;
    let last_night = to.pred_opt().unwrap_or(from);
    let rates = store::daily_rates::for_plans(tx.conn(), &ids, from, last_night).await?;
    let owned: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    let held: HashMap<String, Vec<i64>> =
        store::booking::held_by_plan(tx.conn(), &owned, from, to, Some(reservation_id)).await?.into_iter().collect();
    let nights = (to - from).num_days();
    for (plan, want) in &needed {
        for n in 0..nights {
            let date = from.checked_add_days(Days::new(n as u64)).unwrap_or(from);
            let Some(rate) = rates.iter().find(|r| r.rate_plan_id == *plan && r.date == date) else {
                return Err(Error::Conflict(format!(
                    "{} no longer sells the night of {date}",
                    plan_name(tx, organization_id, plan).await?
                )));
            };
            if rate.stop_sell {
                return Err(Error::Conflict(format!(
                    "{} stopped selling the night of {date}",
                    plan_name(tx, organization_id, plan).await?
                )));
            }
            if let Some(cap) = rate.availability {
                let sold = held.get(plan).and_then(|nights| nights.get(n as usize)).copied().unwrap_or(0);
                if sold + want > cap {
                    return Err(Error::Conflict(format!(
                        "{} has no allotment left on {date}",
                        plan_name(tx, organization_id, plan).await?
                    )));
                }
            }
        }
    }
    Ok(())
}

/// "rate plan <name>", for messages (people know plans by name, not by id).
async fn plan_name(tx: &mut Change, organization_id: &str, plan_id: &str) -> Result<String> {
    Ok(match store::rate_plans::get(tx.conn(), organization_id, plan_id).await? {
        Some(plan) => format!("rate plan {}", plan.name),
        None => "the rate plan".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2027, 3, day).unwrap()
    }

    #[test]
    fn the_first_overfull_night_is_found() {
        let stays = [(d(1), d(4)), (d(3), d(5)), (d(4), d(6)), (d(10), d(11))];
        assert_eq!(first_night_over(&stays, 2), None, "back-to-back stays share a room");
        assert_eq!(first_night_over(&stays, 1), Some(d(3)));
        assert_eq!(first_night_over(&stays, 0), Some(d(1)));
        assert_eq!(first_night_over(&[], 0), None);
        assert_eq!(first_night_over(&stays, -1), Some(d(1)));
    }

    #[test]
    fn only_confirmed_rooms_of_held_stays_hold() {
        for reservation in ReservationStatus::ALL {
            for room in [RoomStatus::Pending, RoomStatus::Confirmed, RoomStatus::Cancelled] {
                let expected = matches!(reservation, ReservationStatus::Confirmed | ReservationStatus::CheckedIn)
                    && room == RoomStatus::Confirmed;
                assert_eq!(holds(reservation, room), expected, "{reservation:?} {room:?}");
            }
        }
    }
}
