//! Inventory: a physical room of a type is sold at most once a night.
//!
//! Confirmed rooms of confirmed or checked-in reservations take inventory (`holds_inventory` on the stored room).
//! Every write that takes inventory first locks the room types it needs ([`store::reservations::lock_room_types`]),
//! then counts, then writes, all in one transaction: two writers racing for the last room take turns, and the
//! second sees the first's room. SQLite needs no lock: its write transactions are exclusive.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};

use super::super::{Error, Result};
use crate::store::{self, WriteTx};

/// Free sellable rooms per room type and night of `[from, to)` (index 0 is `from`), not counting the rooms of
/// `except_reservation`. May be negative where a type is oversold (rooms put out of order after sale).
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

/// Checks, under the room's lock, that `room_id` is not assigned to another stay on a night of `[from, to)`.
pub async fn assign(
    tx: &mut WriteTx,
    room_id: &str,
    reservation_room_id: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<()> {
    let engine = tx.engine();
    store::reservations::lock_room(tx.conn(), engine, room_id).await?;
    if store::reservations::room_taken(tx.conn(), room_id, from, to, reservation_room_id).await? {
        return Err(Error::Conflict(format!("room {room_id} is already assigned to another stay on those nights")));
    }
    Ok(())
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
