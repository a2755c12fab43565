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
//!   to another type, putting it out of order, deleting it) both check it, under the same lock.
//!
//! Every such write first locks the room types it counts ([`store::reservations::lock_room_types`]), then the
//! physical rooms it touches, then counts, then writes, all in one transaction: writers racing for the same rooms
//! take turns, and the second sees the first's change. SQLite needs no lock: its write transactions are exclusive.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};

use super::super::rooms::Room;
use super::super::{Error, Result};
use super::{ReservationStatus, RoomStatus};
use crate::store::{self, WriteTx};

/// Whether a room of a reservation in `reservation` status, itself in `room` status, holds one physical room of its
/// type on each night of the stay.
pub fn holds(reservation: ReservationStatus, room: RoomStatus) -> bool {
    reservation.holds_inventory() && room == RoomStatus::Confirmed
}

/// Free sellable rooms per room type and night of `[from, to)` (index 0 is `from`), not counting the rooms of
/// `except_reservation`.
pub async fn free_rooms(
    conn: &mut sqlx::AnyConnection,
    room_type_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> Result<HashMap<String, Vec<i64>>> {
    let nights = (to - from).num_days().max(0) as usize;
    let sellable: HashMap<String, i64> =
        store::reservations::sellable_rooms(conn, room_type_ids).await?.into_iter().collect();
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
    tx: &mut WriteTx,
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
            return Err(Error::Conflict(format!("not enough rooms of room type {id} are free on {date}")));
        }
    }
    Ok(())
}

/// Checks, under the room's lock, that `room_id` can be assigned to a room of `room_type_id` of reservation
/// `reservation_id` for the nights `[from, to)`: it is still of that type and sellable (it may have changed since the
/// request was validated), and no other stay that holds inventory has it on one of those nights. (Within one
/// reservation, whose rooms share every night, a room is assigned once: the request's validation sees to that.)
pub async fn assign(
    tx: &mut WriteTx,
    organization_id: &str,
    room_id: &str,
    room_type_id: &str,
    reservation_id: &str,
    (from, to): (NaiveDate, NaiveDate),
) -> Result<()> {
    let engine = tx.engine();
    store::reservations::lock_room(tx.conn(), engine, room_id).await?;
    match store::rooms::get(tx.conn(), organization_id, room_id).await? {
        None => return Err(Error::Conflict(format!("room {room_id} no longer exists"))),
        Some(room) if room.room_type_id != room_type_id => {
            return Err(Error::Conflict(format!("room {room_id} is no longer of the reserved room type")))
        }
        Some(room) if !room.housekeeping_status.sellable() => {
            return Err(Error::Conflict(format!("room {room_id} is out of order")))
        }
        Some(_) => {}
    }
    if store::reservations::room_taken(tx.conn(), room_id, from, to, reservation_id).await? {
        return Err(Error::Conflict(format!("room {room_id} is already assigned to another stay on those nights")));
    }
    Ok(())
}

/// The room `room_id` of the organization, read again under the lock of its room type and its own lock, for a
/// write that may take it out of its type's sellable rooms. 409 if another write moved it to another type between
/// the caller's first read and the lock (rare: the caller may simply retry).
pub async fn lock_room(tx: &mut WriteTx, organization_id: &str, room: &Room) -> Result<Room> {
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
pub async fn release_room(tx: &mut WriteTx, room: &Room, change: &str) -> Result<()> {
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
    let sellable = store::reservations::sellable_rooms(tx.conn(), type_ids).await?.first().map_or(0, |(_, n)| *n);
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
    tx: &mut WriteTx,
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
                return Err(Error::Conflict(format!("rate plan {plan} no longer sells the night of {date}")));
            };
            if rate.stop_sell {
                return Err(Error::Conflict(format!("rate plan {plan} stopped selling the night of {date}")));
            }
            if let Some(cap) = rate.availability {
                let sold = held.get(plan).and_then(|nights| nights.get(n as usize)).copied().unwrap_or(0);
                if sold + want > cap {
                    return Err(Error::Conflict(format!("rate plan {plan} has no allotment left on {date}")));
                }
            }
        }
    }
    Ok(())
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
