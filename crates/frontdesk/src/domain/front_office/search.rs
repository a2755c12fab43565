//! Finding stays and guests: the dashboard's reservation search, the guest search, a guest's record and one stay.

use chrono::NaiveDate;

use super::{by_check_in, check_in_bound, lines, StayLine};
use crate::domain::access::{Actor, Scope};
use crate::domain::guests::{self, Guest};
use crate::domain::hotels;
use crate::domain::listing::Page;
use crate::domain::reservations::{self, reference, ReservationStatus, Source, StayFilter};
use crate::domain::Result;
use crate::store::{self, guests::GuestSearch, Db};

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
    }
    .map(|g| super::guest_as_seen(actor, g));
    let rooms = reservation.rooms.clone().unwrap_or_default();
    Ok(StayLine { reservation, guest, rooms })
}
