//! The front desk's rules for a stay in the house, written once for every writer (the REST API, the dashboard, and
//! whatever comes later): each runs inside the write that moves the reservation ([`super::write`]), under the locks
//! of the rooms it looks at.
//!
//! * **Check-in** happens on the stay's dates (from the arrival date to the day before departure, in the hotel's time
//!   zone), with every room assigned, into rooms that are in order and that no other checked-in stay still occupies,
//!   whatever that stay's dates: a guest who stays past the departure date is in the room until checked out.
//! * **Check-out** before the departure date ends the stay today (after its first night when it began today: a stay
//!   has at least one night). The nights not stayed leave the stay, so public availability shows them at once, and
//!   their room charges leave the folio and the reservation's total. After the departure date the dates stay as
//!   booked. The rooms become DIRTY for housekeeping.
//! * **Undo a check-out** on the day it was made, while its rooms have not been given to another stay: the stay is
//!   checked in again, with the dates and charges it had before an early departure.

use chrono::NaiveDate;

use super::inventory;
use super::{Reservation, ReservationRoom, RoomStatus};
use crate::domain::access::Actor;
use crate::domain::change::Change;
use crate::domain::finance::folios;
use crate::domain::hotels::Hotel;
use crate::domain::rooms::{self, HousekeepingStatus};
use crate::domain::{identity, money, now, Error, Result};
use crate::store;
use crate::store::reservations::CheckOut;

/// The last day a stay can be checked in: the day before departure.
pub fn last_check_in_day(r: &Reservation) -> NaiveDate {
    r.check_out_date.pred_opt().unwrap_or(r.check_in_date)
}

/// 409 unless `today` (the hotel's) is a day the stay can be checked in on.
pub fn check_in_day(r: &Reservation, today: NaiveDate) -> Result<()> {
    let last = last_check_in_day(r);
    if today < r.check_in_date {
        return Err(Error::Conflict(format!(
            "this stay can be checked in from {} to {last}; at the hotel it is {today}. To check in early, change the \
             stay's dates first",
            r.check_in_date
        )));
    }
    if today > last {
        return Err(Error::Conflict(format!(
            "this stay could be checked in from {} to {last}; at the hotel it is {today}. A stay that never arrived is \
             a no-show",
            r.check_in_date
        )));
    }
    Ok(())
}

/// The physical rooms assigned to the stay's rooms that are not cancelled, in the order every writer locks them.
fn assigned_rooms(rooms: &[ReservationRoom]) -> Vec<&str> {
    let mut ids: Vec<&str> = rooms
        .iter()
        .filter(|room| room.status != RoomStatus::Cancelled)
        .filter_map(|room| room.room_id.as_deref())
        .collect();
    ids.sort_unstable();
    ids
}

/// CONFIRMED -> CHECKED_IN: on the stay's dates, every room assigned, each in order and free now.
pub(super) async fn check_in(
    tx: &mut Change,
    organization_id: &str,
    r: &Reservation,
    rooms: &[ReservationRoom],
    today: NaiveDate,
) -> Result<()> {
    check_in_day(r, today)?;
    if rooms.iter().any(|room| room.status != RoomStatus::Cancelled && room.room_id.is_none()) {
        return Err(Error::Conflict("every room must be assigned a physical room before check-in".into()));
    }
    for room_id in assigned_rooms(rooms) {
        inventory::room_free_now(tx, organization_id, room_id, &r.id).await?;
    }
    Ok(())
}

/// The day a stay checked out today ends: today, or after its first night when it began today.
pub fn departure_day(r: &Reservation, today: NaiveDate) -> NaiveDate {
    today.max(r.check_in_date.succ_opt().unwrap_or(r.check_out_date))
}

/// What checking a stay out today would do, for the desk to confirm first.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOutPreview {
    /// The departure date the stay will have.
    pub leaves: NaiveDate,
    /// Nights stayed (as the stay will count them).
    pub nights: i64,
    /// Nights given back by an early departure (empty otherwise).
    pub released: Vec<NaiveDate>,
    /// The room charges removed from the folio, in minor units of the folio's currency.
    pub removed: i64,
    /// The folio's total after the check-out.
    pub folio_total: i64,
    /// What the guest still owes after the check-out (the check-out asks for 0, or a reason to leave it open).
    pub balance: i64,
    pub currency: String,
}

/// The preview of [`check_out`] for `r` read with its folio, at the hotel's `today`: the same rule, computed without
/// writing.
pub fn check_out_preview(r: &Reservation, today: NaiveDate) -> CheckOutPreview {
    let leaves = departure_day(r, today).min(r.check_out_date);
    let released: Vec<NaiveDate> = leaves.iter_days().take_while(|d| *d < r.check_out_date).collect();
    let (removed, folio_total, balance, currency) = match &r.folio {
        Some(folio) => {
            let removed = folio.charges.iter().filter(|c| c.date >= leaves && c.source.follows_the_stay() && !c.posted);
            let removed = money::sum(removed.map(|c| c.amount)).unwrap_or(0);
            (removed, folio.total - removed, folio.balance - removed, folio.currency.clone())
        }
        None => (0, 0, 0, r.currency.clone()),
    };
    let nights = (leaves - r.check_in_date).num_days();
    CheckOutPreview { leaves, nights, released, removed, folio_total, balance, currency }
}

/// CHECKED_IN -> CHECKED_OUT: shortens an early departure (see the module's rules), records the check-out and marks
/// the rooms DIRTY. The folio's unposted nights after an early departure go, and every line is posted; the balance
/// must then be 0, unless `on_account` gives a reason to leave it open (409 otherwise, with the balance).
pub(super) async fn check_out(
    tx: &mut Change,
    actor: &Actor,
    hotel: &Hotel,
    r: &mut Reservation,
    rooms: &[ReservationRoom],
    on_account: Option<&str>,
) -> Result<()> {
    let leaves = departure_day(r, hotel.today());
    let mut booked = None;
    if leaves < r.check_out_date {
        booked = Some((r.check_out_date, r.end_time));
        r.check_out_date = leaves;
        r.end_time = hotel.local_instant(leaves, &hotel.check_out_time);
        let removed = folios::leave_early(tx, &actor.organization_id, hotel, &r.id, leaves).await?;
        r.total_price = (r.total_price - removed).max(0);
    }
    folios::settle_at_check_out(tx, &r.id, on_account).await?;
    store::reservations::save_check_out(tx.conn(), &r.id, &CheckOut { checked_out_at: now(), booked }).await?;
    let by = format!("{} (check-out of {})", identity::who(tx.conn(), actor).await?, r.reference);
    for room_id in assigned_rooms(rooms) {
        rooms::mark(tx, actor, room_id, HousekeepingStatus::Dirty, &by).await?;
    }
    Ok(())
}

/// Whether `r` was checked out today at `hotel`, so that the check-out can still be undone.
pub async fn checked_out_today(db: &crate::store::Db, hotel: &Hotel, r: &Reservation) -> Result<bool> {
    if r.status != super::ReservationStatus::CheckedOut {
        return Ok(false);
    }
    let record = store::reservations::check_out(&mut *db.read().await?, &r.id).await?;
    Ok(record.is_some_and(|c| hotel.local_date(c.checked_out_at) == hotel.today()))
}

/// CHECKED_OUT -> CHECKED_IN, the undo of a check-out made by mistake: only on the day it was made, and only while no
/// other stay is checked in to its rooms (and, for an early departure, while the nights it gave back are still free:
/// the caller takes them again under the inventory locks). Answers whether an early departure was reverted (its
/// nights are then charged again).
pub(super) async fn undo_check_out(
    tx: &mut Change,
    organization_id: &str,
    hotel: &Hotel,
    r: &mut Reservation,
    rooms: &[ReservationRoom],
) -> Result<bool> {
    let today = hotel.today();
    let Some(record) = store::reservations::check_out(tx.conn(), &r.id).await? else {
        return Err(Error::Conflict(
            "this stay's check-out was made before check-outs could be undone; it cannot be undone".into(),
        ));
    };
    let day = hotel.local_date(record.checked_out_at);
    if day != today {
        return Err(Error::Conflict(format!(
            "a check-out can be undone only on the day it was made; this one was made on {day}"
        )));
    }
    for room_id in assigned_rooms(rooms) {
        inventory::room_free_now(tx, organization_id, room_id, &r.id).await?;
    }
    store::reservations::delete_check_out(tx.conn(), &r.id).await?;
    let Some((check_out_date, end_time)) = record.booked else { return Ok(false) };
    r.check_out_date = check_out_date;
    r.end_time = end_time;
    if store::folios::head_of(tx.conn(), &r.id).await?.is_some() {
        let charged = folios::room_price_charged(tx, hotel, &r.id).await?;
        folios::follow_the_stay(tx, organization_id, hotel, r, rooms).await?;
        let restored = folios::room_price_charged(tx, hotel, &r.id).await? - charged;
        r.total_price = (r.total_price + restored).clamp(0, money::MAX_AMOUNT);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2027, 3, day).unwrap()
    }

    fn stay(from: u32, to: u32) -> Reservation {
        let at = chrono::Utc::now();
        Reservation {
            id: "r".into(),
            reference: "K7QM3XHD".into(),
            hotel_id: "h".into(),
            guest_id: None,
            status: super::super::ReservationStatus::Confirmed,
            check_in_date: d(from),
            check_out_date: d(to),
            start_time: at,
            end_time: at,
            adults: 2,
            children: 0,
            infants: 0,
            total_price: 0,
            currency: "EUR".into(),
            source: super::super::Source::Api,
            channel_reference: None,
            notes: None,
            created_at: at,
            updated_at: at,
            rooms: None,
            folio: None,
        }
    }

    #[test]
    fn a_stay_is_checked_in_from_arrival_to_the_day_before_departure() {
        let r = stay(10, 13);
        assert!(check_in_day(&r, d(9)).is_err());
        for day in 10..=12 {
            assert!(check_in_day(&r, d(day)).is_ok(), "day {day}");
        }
        assert!(check_in_day(&r, d(13)).is_err());
        let one_night = stay(10, 11);
        assert!(check_in_day(&one_night, d(10)).is_ok());
        assert!(check_in_day(&one_night, d(11)).is_err());
    }

    #[test]
    fn the_preview_counts_the_nights_given_back() {
        let r = stay(10, 14);
        let early = check_out_preview(&r, d(12));
        assert_eq!((early.leaves, early.nights, early.released), (d(12), 2, vec![d(12), d(13)]));
        let on_time = check_out_preview(&r, d(14));
        assert_eq!((on_time.leaves, on_time.nights, on_time.released), (d(14), 4, vec![]));
        let late = check_out_preview(&r, d(16));
        assert_eq!((late.leaves, late.nights), (d(14), 4));
    }

    #[test]
    fn an_early_departure_ends_today_but_keeps_one_night() {
        let r = stay(10, 14);
        assert_eq!(departure_day(&r, d(10)), d(11), "arrived today: one night");
        assert_eq!(departure_day(&r, d(12)), d(12));
        assert_eq!(departure_day(&r, d(14)), d(14), "on the departure date");
        assert_eq!(departure_day(&r, d(16)), d(16), "later: the caller keeps the booked dates");
    }
}
