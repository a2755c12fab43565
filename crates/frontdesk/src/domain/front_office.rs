//! The front office's views of a hotel: what the dashboard shows the staff every morning. These are reads only,
//! assembled from the same records and rules the REST API serves (every change still goes through
//! [`super::reservations::write`], [`super::guests`] and the other writers).
//!
//! * [`today`]: arrivals, departures, in-house guests, requests waiting, occupancy ahead, housekeeping.
//! * [`rack`]: the room rack (tape chart): each room's stays across a window of nights.
//! * [`search`]: reservations by status, stay window, guest and source, a page at a time.
//! * [`quote`]: what a stay costs under a rate plan, before the reservation is made.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};
use futures::TryStreamExt;

use super::access::{Actor, Scope};
use super::guests::{self, Guest, GuestIn};
use super::hotels;
use super::listing::Page;
use super::reservations::{
    self, inventory, reference, write, Reservation, ReservationIn, ReservationRoom, ReservationStatus, Source,
    StayFilter,
};
use super::room_types::RoomType;
use super::rooms::{HousekeepingStatus, Room};
use super::validate::Checks;
use super::{idempotency, rate_plans, Error, Result};
use crate::store::{self, guests::GuestSearch, Db};

/// A reservation as the front desk lists it: with its guest and rooms.
#[derive(Debug, Clone)]
pub struct StayLine {
    pub reservation: Reservation,
    pub guest: Option<Guest>,
    pub rooms: Vec<ReservationRoom>,
}

/// Booking requests waiting at a hotel.
pub async fn requests_waiting(db: &Db, actor: &Actor, hotel_id: &str) -> Result<i64> {
    actor.require_scope(Scope::ReservationsRead)?;
    let mut conn = db.read().await?;
    Ok(store::reservations::count_in_status(&mut conn, &actor.organization_id, hotel_id, ReservationStatus::Requested)
        .await?)
}

/// The longest stay on record at a hotel bounds how long before a window a stay touching it can start.
async fn check_in_bound(
    conn: &mut sqlx::AnyConnection,
    actor: &Actor,
    hotel_id: &str,
    from: NaiveDate,
) -> Result<NaiveDate> {
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
            guest: r.guest_id.as_ref().and_then(|id| guests.get(id).cloned()),
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
    Ok(TodayBoard { date, arrivals, departures, in_house, requests, occupancy, housekeeping })
}

/// Rooms held and sellable on each night of `[from, to)`, over all room types of the hotel.
async fn occupancy(
    conn: &mut sqlx::AnyConnection,
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
    let sellable: i64 = store::reservations::sellable_rooms(conn, &types).await?.into_iter().map(|(_, n)| n).sum();
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

async fn housekeeping(
    conn: &mut sqlx::AnyConnection,
    actor: &Actor,
    hotel_id: &str,
) -> Result<Vec<(HousekeepingStatus, i64)>> {
    let counts: HashMap<String, i64> =
        store::summaries::rooms_by_status(conn, &actor.organization_id, hotel_id).await?.into_iter().collect();
    Ok(HousekeepingStatus::ALL.into_iter().map(|s| (s, counts.get(s.as_str()).copied().unwrap_or(0))).collect())
}

/// One room's line on the rack.
#[derive(Debug, Clone)]
pub struct RackRoom {
    pub room: Room,
    pub stays: Vec<RackStay>,
}

/// A stay's bar on the rack.
#[derive(Debug, Clone)]
pub struct RackStay {
    pub reservation_id: String,
    pub reservation_room_id: String,
    pub guest_name: String,
    pub status: ReservationStatus,
    pub check_in_date: NaiveDate,
    pub check_out_date: NaiveDate,
    pub room_type_id: String,
}

/// A room type's block on the rack: its rooms and its stays without a room yet.
#[derive(Debug, Clone)]
pub struct RackGroup {
    pub room_type: RoomType,
    pub rooms: Vec<RackRoom>,
    pub unassigned: Vec<RackStay>,
}

#[derive(Debug, Clone)]
pub struct Rack {
    pub from: NaiveDate,
    pub nights: u32,
    pub groups: Vec<RackGroup>,
}

/// The nights a rack may show at once.
pub const RACK_NIGHTS: [u32; 2] = [14, 30];

/// The room rack of a hotel: `nights` nights from `from`.
pub async fn rack(db: &Db, actor: &Actor, hotel_id: &str, from: NaiveDate, nights: u32) -> Result<Rack> {
    actor.require_scope(Scope::ReservationsRead)?;
    if !RACK_NIGHTS.contains(&nights) {
        return Err(Error::Validation(vec![super::FieldError::field("days", "must be 14 or 30")]));
    }
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let to = from.checked_add_days(Days::new(u64::from(nights))).ok_or_else(|| bad_date("from"))?;
    let mut conn = db.read().await?;
    let room_types = store::room_types::list(&mut conn, &actor.organization_id, Some(&hotel.id)).await?;
    let rooms = store::rooms::list(&mut conn, &actor.organization_id, Some(&hotel.id), None).await?;
    let check_in_from = check_in_bound(&mut conn, actor, &hotel.id, from).await?;
    let rows =
        store::reservations::rack_rows(&mut conn, &actor.organization_id, &hotel.id, check_in_from, from, to).await?;
    let mut by_room: HashMap<String, Vec<RackStay>> = HashMap::new();
    let mut unassigned: HashMap<String, Vec<RackStay>> = HashMap::new();
    for row in rows {
        let stay = RackStay {
            reservation_id: row.reservation_id,
            reservation_room_id: row.room.id.clone(),
            guest_name: row.guest_name.map_or_else(|| "No guest".into(), |(first, last)| full_name(&first, &last)),
            status: row.status,
            check_in_date: row.check_in_date,
            check_out_date: row.check_out_date,
            room_type_id: row.room.room_type_id.clone(),
        };
        match row.room.room_id {
            Some(room_id) => by_room.entry(room_id).or_default().push(stay),
            None => unassigned.entry(row.room.room_type_id).or_default().push(stay),
        }
    }
    let groups = room_types
        .into_iter()
        .map(|room_type| RackGroup {
            rooms: rooms
                .iter()
                .filter(|room| room.room_type_id == room_type.id)
                .map(|room| RackRoom { stays: by_room.remove(&room.id).unwrap_or_default(), room: room.clone() })
                .collect(),
            unassigned: unassigned.remove(&room_type.id).unwrap_or_default(),
            room_type,
        })
        .collect();
    Ok(Rack { from, nights, groups })
}

/// "First Last", as the front desk says it.
pub fn guest_name(g: &Guest) -> String {
    full_name(&g.first_name, &g.last_name)
}

fn full_name(first: &str, last: &str) -> String {
    format!("{first} {last}")
}

fn bad_date(field: &str) -> Error {
    Error::Validation(vec![super::FieldError::field(field, "is out of range")])
}

/// The dashboard's reservation search.
#[derive(Debug, Clone, Default)]
pub struct StaySearch {
    pub statuses: Vec<ReservationStatus>,
    /// Stays that check out after this date.
    pub stay_from: Option<NaiveDate>,
    /// Stays that check in on or before this date.
    pub stay_to: Option<NaiveDate>,
    /// A guest's e-mail, or part of their name.
    pub guest: Option<String>,
    pub source: Option<Source>,
    pub sort: StaySort,
    pub descending: bool,
    /// 1-based.
    pub page: i64,
}

/// The orders the dashboard's list offers; each has an index, so every page stays fast however many
/// reservations there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "camelCase")]
pub enum StaySort {
    #[default]
    CheckIn,
    CheckOut,
    Created,
}

impl StaySort {
    pub const ALL: [StaySort; 3] = [StaySort::CheckIn, StaySort::CheckOut, StaySort::Created];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<StaySort> {
        s.parse().ok()
    }

    fn column(self) -> &'static str {
        match self {
            StaySort::CheckIn => "check_in_date",
            StaySort::CheckOut => "check_out_date",
            StaySort::Created => "created_at",
        }
    }
}

/// A page of the dashboard's reservation list. There is no total: counting a million matches would cost more than
/// the page; `has_more` says whether a next page exists.
#[derive(Debug, Clone)]
pub struct StayPage {
    pub lines: Vec<StayLine>,
    pub has_more: bool,
}

pub const SEARCH_PAGE_SIZE: i64 = 50;
/// Most guests a name search matches before their reservations are listed.
const GUEST_MATCHES: i64 = 500;

pub async fn search(db: &Db, actor: &Actor, hotel_id: &str, query: &StaySearch) -> Result<StayPage> {
    actor.require_scope(Scope::ReservationsRead)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let mut filter = StayFilter {
        hotel_id: Some(hotel.id.clone()),
        statuses: query.statuses.clone(),
        source: query.source,
        stay_date_from: query.stay_from,
        stay_date_to: query.stay_to,
        ..StayFilter::default()
    };
    if let Some(from) = query.stay_from {
        filter.check_in_from = Some(check_in_bound(&mut *db.read().await?, actor, &hotel.id, from).await?);
    }
    if let Some(text) = query.guest.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        // A reservation's reference finds that reservation; anything else (a name such as "Schwartz" can be
        // written with a reference's characters) finds guests.
        let reference = match reference::parse(text) {
            Some(reference)
                if store::reservations::reference_taken(&mut *db.read().await?, &actor.organization_id, &reference)
                    .await? =>
            {
                Some(reference)
            }
            _ => None,
        };
        match reference {
            Some(reference) => filter.reference = Some(reference),
            None => {
                let found = find_guests(db, actor, text, GUEST_MATCHES).await?;
                filter.guest_ids = Some(found.into_iter().map(|g| g.id).collect());
            }
        }
    }
    let page = Page {
        limit: Some(SEARCH_PAGE_SIZE + 1),
        skip: (query.page.max(1) - 1).saturating_mul(SEARCH_PAGE_SIZE),
        sort_column: query.sort.column(),
        descending: query.descending,
        projection: None,
        ids: None,
    };
    let mut lines = lines(db, actor, &filter, &page).await?;
    let has_more = lines.len() as i64 > SEARCH_PAGE_SIZE;
    lines.truncate(SEARCH_PAGE_SIZE as usize);
    Ok(StayPage { lines, has_more })
}

/// Fewest digits a search must type to be taken for the end of a phone number.
pub const PHONE_SEARCH_DIGITS: usize = 4;

/// Whether the desk typed a phone number (or its end): at least [`PHONE_SEARCH_DIGITS`] digits, and besides them
/// only the characters people write numbers with.
fn looks_like_phone(text: &str) -> bool {
    text.chars().filter(char::is_ascii_digit).count() >= PHONE_SEARCH_DIGITS
        && text.chars().all(|c| c.is_ascii_digit() || " +-()./".contains(c))
}

/// Guests whose e-mail is `text` (when it has an `@`), whose phone number ends with its digits (when it looks like a
/// phone number), or whose names start with its words ("ana", "silva", "ana sil"): each word must begin the first or
/// the last name.
pub async fn find_guests(db: &Db, actor: &Actor, text: &str, limit: i64) -> Result<Vec<Guest>> {
    actor.require_scope(Scope::GuestsRead)?;
    let text = text.trim();
    let found = if looks_like_phone(text) {
        let search = GuestSearch::PhoneEnd(text.into());
        store::guests::search(&mut *db.read().await?, &actor.organization_id, &search, limit).await?
    } else if text.contains('@') {
        store::guests::search(&mut *db.read().await?, &actor.organization_id, &GuestSearch::Email(text.into()), limit)
            .await?
    } else {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        // The longest word narrows through the index; the others are checked here.
        let Some(key) = words.iter().max_by_key(|w| w.chars().count()).cloned() else { return Ok(Vec::new()) };
        let candidates = store::guests::search(
            &mut *db.read().await?,
            &actor.organization_id,
            &GuestSearch::NamePrefix(key),
            limit.saturating_mul(4),
        )
        .await?;
        let starts = |name: &str, word: &str| name.to_lowercase().starts_with(word);
        let mut matching: Vec<Guest> = candidates
            .into_iter()
            .filter(|g| words.iter().all(|w| starts(&g.first_name, w) || starts(&g.last_name, w)))
            .collect();
        matching.truncate(usize::try_from(limit).unwrap_or(0));
        matching
    };
    Ok(found.into_iter().filter(|g| actor.sees_hotel(g.hotel_id.as_deref())).collect())
}

/// A guest with their stays, newest first.
#[derive(Debug, Clone)]
pub struct GuestRecord {
    pub guest: Guest,
    pub stays: Vec<StayLine>,
}

pub async fn guest_record(db: &Db, actor: &Actor, guest_id: &str) -> Result<GuestRecord> {
    let guest = guests::get(db, actor, guest_id).await?;
    actor.require_scope(Scope::ReservationsRead)?;
    let filter = StayFilter { guest_id: Some(guest.id.clone()), ..StayFilter::default() };
    let page = Page { descending: true, ..by_check_in(100) };
    let stays = lines(db, actor, &filter, &page).await?;
    Ok(GuestRecord { guest, stays })
}

/// One reservation with its guest, for the reservation page.
pub async fn stay(db: &Db, actor: &Actor, reservation_id: &str) -> Result<StayLine> {
    let reservation = reservations::get(db, actor, reservation_id).await?;
    let guest = match &reservation.guest_id {
        Some(id) => store::guests::get(&mut *db.read().await?, &actor.organization_id, id).await?,
        None => None,
    };
    let rooms = reservation.rooms.clone().unwrap_or_default();
    Ok(StayLine { reservation, guest, rooms })
}

/// What a stay costs under a rate plan: the price of each night from its daily rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    pub currency: String,
    pub nights: Vec<(NaiveDate, i64)>,
    /// Nights the plan has no price for (the reservation cannot be priced from the plan then).
    pub missing: Vec<NaiveDate>,
    /// The sum, when every night has a price.
    pub total: Option<i64>,
    /// Rooms of the type still free on every night (physical inventory).
    pub free_rooms: i64,
}

pub async fn quote(
    db: &Db,
    actor: &Actor,
    room_type_id: &str,
    rate_plan_id: &str,
    check_in: NaiveDate,
    check_out: NaiveDate,
) -> Result<Quote> {
    actor.require_scope(Scope::RatesRead)?;
    let mut c = Checks::new();
    if check_out <= check_in {
        c.fail("checkOutDate", "must be after checkInDate");
    } else if (check_out - check_in).num_days() > reservations::MAX_NIGHTS {
        c.fail("checkOutDate", format!("a stay may span at most {} nights", reservations::MAX_NIGHTS));
    }
    c.finish()?;
    let plan = rate_plans::get(db, actor, rate_plan_id).await?;
    if plan.room_type_id.as_ref().is_some_and(|t| t != room_type_id) {
        return Err(Error::Validation(vec![super::FieldError::field(
            "ratePlanId",
            "this rate plan does not price this room type",
        )]));
    }
    let mut conn = db.read().await?;
    let last_night = check_out.pred_opt().unwrap_or(check_out);
    let rates = store::daily_rates::range(&mut conn, &plan.id, &plan.currency, check_in, last_night).await?;
    let priced: HashMap<NaiveDate, i64> = rates.iter().map(|r| (r.date, r.price)).collect();
    let mut nights = Vec::new();
    let mut missing = Vec::new();
    for date in check_in.iter_days().take_while(|d| *d < check_out) {
        match priced.get(&date) {
            Some(price) => nights.push((date, *price)),
            None => missing.push(date),
        }
    }
    let total =
        if missing.is_empty() { nights.iter().try_fold(0i64, |sum, (_, price)| sum.checked_add(*price)) } else { None };
    let free = inventory::free_rooms(&mut conn, &[room_type_id.to_string()], check_in, check_out, None).await?;
    let free_rooms = free.get(room_type_id).and_then(|nights| nights.iter().min().copied()).unwrap_or(0);
    Ok(Quote { currency: plan.currency, nights, missing, total, free_rooms })
}

/// Who a reservation made at the desk is for.
pub enum DeskGuest {
    Existing(String),
    New(GuestIn),
}

/// What sending the desk's reservation form did.
#[derive(Debug)]
pub enum DeskBooking {
    Created(Reservation),
    /// An earlier sending of the same form made this (a double click, a reload, a second tab): nothing new was
    /// written.
    Replayed(Reservation),
    /// The form made a reservation already and has been changed since: it makes no second one.
    FormUsed,
    /// A new guest was asked for with an e-mail that these guests of the organization have: most likely one of
    /// them, so nothing was written; the desk books for one of them, or says it is someone else.
    KnownEmail(Vec<Guest>),
}

/// Who a reservation made at the desk is for, and whether a new guest may share an e-mail with known guests.
pub struct DeskGuestChoice {
    pub guest: DeskGuest,
    /// The desk said a new guest is someone else than the known guests with the same e-mail.
    pub new_despite_email: bool,
}

fn desk_form_key<'a>(actor: &'a Actor, scope: &'a str, form_token: &'a str) -> idempotency::Key<'a> {
    idempotency::Key {
        namespace: idempotency::Namespace::DeskReservation,
        organization_id: &actor.organization_id,
        scope,
        key: form_token,
    }
}

/// Creates a reservation at the desk, with a new guest when one is given: both in one transaction, so a refused
/// reservation leaves no guest behind. Events are recorded as for any writer. `form_token` is the token the form
/// was given when it was shown: the same form sent again answers the reservation it made (the token is the
/// idempotency key, namespace [`idempotency::Namespace::DeskReservation`]); a changed form sent with a used token
/// makes nothing ([`DeskBooking::FormUsed`]), so one form never makes two stays.
pub async fn book_at_desk(
    db: &Db,
    actor: &Actor,
    choice: DeskGuestChoice,
    mut input: ReservationIn,
    form_token: Option<&str>,
) -> Result<DeskBooking> {
    let DeskGuestChoice { guest, new_despite_email } = choice;
    actor.require_scope(Scope::ReservationsWrite)?;
    input.source.get_or_insert(Source::Dashboard);
    let guest_part = match &guest {
        DeskGuest::Existing(id) => format!("existing:{id}"),
        DeskGuest::New(guest) => format!("new:{}", serde_json::to_string(guest).map_err(anyhow::Error::from)?),
    };
    let digest = idempotency::digest(&[&guest_part, &serde_json::to_string(&input).map_err(anyhow::Error::from)?]);
    let scope = idempotency::caller_scope(actor);
    let key = form_token.map(|token| desk_form_key(actor, &scope, token));
    let mut tx = db.begin_write().await?;
    if let Some(key) = &key {
        match idempotency::seen(tx.conn(), key, &digest).await? {
            idempotency::Seen::New => {}
            idempotency::Seen::Same(id) => {
                drop(tx);
                return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
            }
            idempotency::Seen::Different => return Ok(DeskBooking::FormUsed),
        }
    }
    // Asked in the same transaction as the form's token, so that the form sent twice at once is answered as one
    // form, never as a second guest with the first one's e-mail.
    if let (DeskGuest::New(new), false) = (&guest, new_despite_email) {
        if let Some(email) = new.email.as_deref().filter(|e| e.contains('@')) {
            let search = GuestSearch::Email(email.to_string());
            let known: Vec<Guest> = store::guests::search(tx.conn(), &actor.organization_id, &search, 5)
                .await?
                .into_iter()
                .filter(|g| actor.sees_hotel(g.hotel_id.as_deref()))
                .collect();
            if !known.is_empty() {
                // The guest found may be the one this very form made, sent at once from another tab and
                // committed between the token's check above and this one (PostgreSQL reads what committed before
                // each statement): its token, committed with it, says so now.
                if let Some(key) = &key {
                    match idempotency::seen(tx.conn(), key, &digest).await? {
                        idempotency::Seen::Same(id) => {
                            drop(tx);
                            return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
                        }
                        idempotency::Seen::Different => return Ok(DeskBooking::FormUsed),
                        idempotency::Seen::New => {}
                    }
                }
                return Ok(DeskBooking::KnownEmail(known));
            }
        }
    }
    match guest {
        DeskGuest::Existing(id) => input.guest_id = Some(id),
        DeskGuest::New(guest) => {
            actor.require_scope(Scope::GuestsWrite)?;
            input.guest_id = Some(guests::insert(&mut tx, actor, guest).await?.id);
        }
    }
    let reservation = write::insert(&mut tx, actor, input).await?;
    if let Some(key) = &key {
        if idempotency::remember(&mut tx, key, &digest, &reservation.id).await?
            == idempotency::Remembered::TakenMeanwhile
        {
            drop(tx);
            let id = idempotency::replay_after_race(db, key, &digest).await?;
            return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
        }
    }
    tx.commit().await?;
    Ok(DeskBooking::Created(reservation))
}
