//! The front office's views of a hotel: what the dashboard shows the staff every morning. These are reads only,
//! assembled from the same records and rules the REST API serves (every change still goes through
//! [`super::reservations::write`], [`super::guests`] and the other writers).
//!
//! * [`today`]: arrivals, departures, in-house guests, requests waiting, occupancy ahead, housekeeping, and the stays
//!   that need attention.
//! * [`rack()`]: the room rack (tape chart): each room's stays across a window of nights.
//! * [`search()`]: reservations by status, stay window, guest and source, a page at a time.
//! * [`quote`]: what a stay costs under a rate plan, before the reservation is made.
//!
//! Where things are: this file holds what the views share ([`StayLine`], the stays of a filter with their guests
//! and rooms) and the Today board; `rack.rs` the rack; `search.rs` the reservation search, the guest search and a
//! guest's record; `desk.rs` the quote and the reservation made at the desk ([`book_at_desk`]).

mod desk;
mod rack;
mod search;

use std::collections::HashMap;

use chrono::{Days, NaiveDate};
use futures::TryStreamExt;

use super::access::{Actor, Scope};
use super::guests::Guest;
use super::hotels;
use super::listing::Page;
use super::reservations::attention::{self, Attention};
use super::reservations::{self, inventory, Reservation, ReservationRoom, ReservationStatus, StayFilter};
use super::rooms::HousekeepingStatus;
use super::Result;
use crate::store::{self, Db};
pub use desk::{book_at_desk, quote, DeskBooking, DeskGuest, DeskGuestChoice, Quote};
pub use rack::{rack, Rack, RackGroup, RackRoom, RackStay, RACK_NIGHTS};
pub use search::{
    find_guests, guest_record, search, stay, GuestRecord, StayPage, StaySearch, StaySort, PHONE_SEARCH_DIGITS,
    SEARCH_PAGE_SIZE,
};

/// A reservation as the front desk lists it: with its guest and rooms.
#[derive(Debug, Clone)]
pub struct StayLine {
    pub reservation: Reservation,
    pub guest: Option<Guest>,
    pub rooms: Vec<ReservationRoom>,
}

/// The guest of a stay as `actor` may see them: whole with `guests:read`; otherwise (the revenue role, a key that
/// reads reservations only) the name alone, without contact details, address or notes.
pub(crate) fn guest_as_seen(actor: &Actor, guest: Guest) -> Guest {
    if actor.require_scope(Scope::GuestsRead).is_ok() {
        return guest;
    }
    guest.name_only()
}

/// Booking requests waiting at a hotel.
pub async fn requests_waiting(db: &Db, actor: &Actor, hotel_id: &str) -> Result<i64> {
    actor.require_scope(Scope::ReservationsRead)?;
    let mut conn = db.read().await?;
    Ok(store::reservations::count_in_status(&mut conn, &actor.organization_id, hotel_id, ReservationStatus::Requested)
        .await?)
}

/// The longest stay on record at a hotel bounds how long before a window a stay touching it can start.
async fn check_in_bound(conn: &mut store::Conn, actor: &Actor, hotel_id: &str, from: NaiveDate) -> Result<NaiveDate> {
    let longest = store::reservations::longest_stay(conn, &actor.organization_id, Some(hotel_id)).await?;
    Ok(from.checked_sub_days(Days::new(longest.max(0) as u64)).unwrap_or(NaiveDate::MIN))
}

/// Reservations matching `filter` with their guests and rooms, in `page`'s order.
pub(crate) async fn lines(db: &Db, actor: &Actor, filter: &StayFilter, page: &Page) -> Result<Vec<StayLine>> {
    let found: Vec<Reservation> =
        store::reservations::list(db, &actor.organization_id, filter, page).await?.try_collect().await?;
    decorate(db, actor, found).await
}

async fn decorate(db: &Db, actor: &Actor, found: Vec<Reservation>) -> Result<Vec<StayLine>> {
    let mut conn = db.read().await?;
    let mut guest_ids: Vec<String> = found.iter().filter_map(|r| r.guest_id.clone()).collect();
    guest_ids.sort();
    guest_ids.dedup();
    let guests: HashMap<String, Guest> = store::guests::by_ids(&mut conn, &actor.organization_id, &guest_ids)
        .await?
        .into_iter()
        .map(|g| (g.id.clone(), g))
        .collect();
    let ids: Vec<String> = found.iter().map(|r| r.id.clone()).collect();
    let mut rooms: HashMap<String, Vec<ReservationRoom>> = HashMap::new();
    for (reservation_id, room) in store::reservations::rooms_of(&mut conn, &ids).await? {
        rooms.entry(reservation_id).or_default().push(room);
    }
    Ok(found
        .into_iter()
        .map(|r| StayLine {
            guest: r.guest_id.as_ref().and_then(|id| guests.get(id).cloned()).map(|g| guest_as_seen(actor, g)),
            rooms: rooms.remove(&r.id).unwrap_or_default(),
            reservation: r,
        })
        .collect())
}

fn by_check_in(limit: i64) -> Page {
    Page { limit: Some(limit), skip: 0, sort_column: "check_in_date", descending: false, projection: None, ids: None }
}

/// Occupancy of one night: rooms held and rooms sellable.
#[derive(Debug, Clone, PartialEq)]
pub struct NightOccupancy {
    pub date: NaiveDate,
    pub occupied: i64,
    pub sellable: i64,
}

impl NightOccupancy {
    /// Percent of sellable rooms occupied (0 when none are sellable).
    pub fn percent(&self) -> i64 {
        if self.sellable <= 0 {
            0
        } else {
            (self.occupied * 100 + self.sellable / 2) / self.sellable
        }
    }
}

/// The front desk's morning page.
#[derive(Debug, Clone)]
pub struct TodayBoard {
    pub date: NaiveDate,
    /// Confirmed stays checking in today, and those already checked in today.
    pub arrivals: Vec<StayLine>,
    /// Stays checking out today: still in house, or already gone.
    pub departures: Vec<StayLine>,
    pub in_house: Vec<StayLine>,
    /// Booking requests waiting for approval, soonest first.
    pub requests: Vec<StayLine>,
    /// Tonight and the 13 nights after.
    pub occupancy: Vec<NightOccupancy>,
    pub housekeeping: Vec<(HousekeepingStatus, i64)>,
    /// Stays flagged as needing a person (a channel's booking taken overbooked or unmapped), oldest first.
    pub attention: Vec<(Attention, StayLine)>,
}

/// How many nights the occupancy outlook covers, tonight included.
pub const OUTLOOK_NIGHTS: u64 = 14;
/// Most lines a list of the today page shows.
const TODAY_LIMIT: i64 = 200;

pub async fn today(db: &Db, actor: &Actor, hotel_id: &str) -> Result<TodayBoard> {
    actor.require_scope(Scope::ReservationsRead)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let date = hotel.today();
    let base = StayFilter { hotel_id: Some(hotel.id.clone()), ..StayFilter::default() };
    let page = by_check_in(TODAY_LIMIT);
    let arrivals = StayFilter {
        check_in_date: Some(date),
        statuses: vec![ReservationStatus::Confirmed, ReservationStatus::CheckedIn],
        ..base.clone()
    };
    let check_in_from = check_in_bound(&mut *db.read().await?, actor, &hotel.id, date).await?;
    let departures = StayFilter {
        check_out_date: Some(date),
        check_in_from: Some(check_in_from),
        stay_date_to: Some(date),
        statuses: vec![ReservationStatus::CheckedIn, ReservationStatus::CheckedOut],
        ..base.clone()
    };
    let in_house = StayFilter { statuses: vec![ReservationStatus::CheckedIn], ..base.clone() };
    let requests = StayFilter { statuses: vec![ReservationStatus::Requested], ..base.clone() };
    let (arrivals, departures, in_house, requests) = futures::try_join!(
        lines(db, actor, &arrivals, &page),
        lines(db, actor, &departures, &page),
        lines(db, actor, &in_house, &page),
        lines(db, actor, &requests, &page),
    )?;
    let mut conn = db.read().await?;
    let end = date.checked_add_days(Days::new(OUTLOOK_NIGHTS)).unwrap_or(date);
    let occupancy = occupancy(&mut conn, actor, &hotel.id, date, end).await?;
    let housekeeping = housekeeping(&mut conn, actor, &hotel.id).await?;
    let flags = store::reservations::attention::open_in_hotel(
        &mut conn,
        &hotel.id,
        &attention::STILL_MATTERS,
        TODAY_LIMIT as u64,
    )
    .await?;
    drop(conn);
    let attention = flagged(db, actor, flags).await?;
    Ok(TodayBoard { date, arrivals, departures, in_house, requests, occupancy, housekeeping, attention })
}

/// Each open flag with its stay, for those the actor may see.
async fn flagged(db: &Db, actor: &Actor, flags: Vec<Attention>) -> Result<Vec<(Attention, StayLine)>> {
    let mut found = Vec::with_capacity(flags.len());
    let mut conn = db.read().await?;
    for flag in &flags {
        match reservations::visible(&mut conn, actor, &flag.reservation_id).await {
            Ok(r) if attention::still_matters(&r) => found.push(r),
            _ => {}
        }
    }
    drop(conn);
    let mut lines: HashMap<String, StayLine> =
        decorate(db, actor, found).await?.into_iter().map(|l| (l.reservation.id.clone(), l)).collect();
    Ok(flags.into_iter().filter_map(|flag| lines.remove(&flag.reservation_id).map(|line| (flag, line))).collect())
}

/// Rooms held and sellable on each night of `[from, to)`, over all room types of the hotel.
async fn occupancy(
    conn: &mut store::Conn,
    actor: &Actor,
    hotel_id: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<NightOccupancy>> {
    let types: Vec<String> = store::room_types::list(conn, &actor.organization_id, Some(hotel_id))
        .await?
        .into_iter()
        .map(|t| t.id)
        .collect();
    let sellable: i64 = inventory::sellable_rooms(conn, &types).await?.into_iter().map(|(_, n)| n).sum();
    let free = inventory::free_rooms(conn, &types, from, to, None).await?;
    Ok(from
        .iter_days()
        .take_while(|d| *d < to)
        .enumerate()
        .map(|(night, date)| {
            let free: i64 = free.values().map(|nights| nights.get(night).copied().unwrap_or(0)).sum();
            NightOccupancy { date, occupied: sellable - free, sellable }
        })
        .collect())
}

async fn housekeeping(conn: &mut store::Conn, actor: &Actor, hotel_id: &str) -> Result<Vec<(HousekeepingStatus, i64)>> {
    let counts: HashMap<String, i64> =
        store::summaries::rooms_by_status(conn, &actor.organization_id, hotel_id).await?.into_iter().collect();
    Ok(HousekeepingStatus::ALL.into_iter().map(|s| (s, counts.get(s.as_str()).copied().unwrap_or(0))).collect())
}

/// "First Last", as the front desk says it.
pub fn guest_name(g: &Guest) -> String {
    full_name(&g.first_name, &g.last_name)
}

fn full_name(first: &str, last: &str) -> String {
    format!("{first} {last}")
}
