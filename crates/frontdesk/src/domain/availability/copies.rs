//! In-memory copies of what public availability searches read: each hotel's room types, rate plans and sellable
//! rooms, and, in pages of 32 days, its daily rates and the rooms held per night.
//!
//! Why: booking engines search on every visitor's click. A week's search of a hotel with a hundred rate plans reads
//! some 800 daily-rate records and counts the rooms held on each night; through SQLite and sqlx that costs several
//! milliseconds, where the same answer from memory takes microseconds.
//!
//! How a copy stays right: `hotels.availability_version` is bumped by database triggers in the same transaction
//! as every change a search depends on (daily rates, rate plans, room types, rooms, rooms held by reservations;
//! migration 0008), so no write path can forget it and several processes on one database see each other's changes.
//! A search reads the version with the hotel (reused for a few milliseconds, see [`crate::store::recent`]) and uses
//! the copy of that version;
//! any other version is dropped and reloaded, page by page as searches need them. A copy is labelled with the
//! version read *before* its data, so it may hold newer data than its label (then it is reloaded once more, for
//! nothing) but never older.
//!
//! Whole answers are kept too, for [`ANSWER_MAX_AGE`]: a popular search (the same dates and party at one hotel)
//! repeated within it is answered with the same offers, already rendered as JSON, as long as the hotel's version is
//! the same. Offers carry the time they expire, so a reused answer's offers expire up to that much sooner.
//!
//! Bookings and approvals never read the copies: they recheck against the database under their locks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;

use chrono::{Datelike, Days, NaiveDate};
use tokio::sync::OnceCell;

use super::super::daily_rates::{NightRate, StayRates};
use super::super::rate_plans::RatePlan;
use super::super::room_types::RoomType;
use super::super::Result;
use super::{Offer, Stay, StayInputs};
use crate::store::{self, Db};

/// Days per page of daily rates and held rooms. A stay of up to 30 nights and its departure date span two pages.
const PAGE_DAYS: i64 = 32;
/// Most hotels with a copy in one process; past it, an arbitrary hotel's copy is dropped for the newcomer.
const MAX_HOTELS: usize = 256;
/// How long a whole answer is reused at most (while its hotel's version holds).
pub const ANSWER_MAX_AGE: Duration = Duration::from_secs(1);
/// Most bytes of offers (counted as their JSON) kept as answers; past it, all are dropped.
const ANSWERS_MAX_BYTES: usize = 32 << 20;

/// The copies of this process, shared by every request (cheap to clone).
#[derive(Clone, Default)]
pub struct AvailabilityCopies {
    hotels: Arc<Mutex<HashMap<String, Arc<HotelCopy>>>>,
    answers: Arc<Mutex<Answers>>,
}

/// Recent whole answers, by hotel and stay.
#[derive(Default)]
struct Answers {
    by_search: HashMap<(String, Stay), (i64, Arc<SearchAnswer>)>,
    bytes: usize,
}

/// The offers a search found, cheapest first, and their JSON (rendered once however often the answer is reused).
pub struct SearchAnswer {
    pub offers: Vec<Offer>,
    computed_at: Instant,
    json: OnceLock<Bytes>,
}

impl SearchAnswer {
    /// The offers as a JSON array.
    pub fn json(&self) -> Bytes {
        self.json.get_or_init(|| Bytes::from(serde_json::to_vec(&self.offers).unwrap_or_default())).clone()
    }
}

struct HotelCopy {
    version: i64,
    catalogue: OnceCell<Catalogue>,
    pages: Mutex<HashMap<i64, Arc<OnceCell<Page>>>>,
}

struct Catalogue {
    room_types: Vec<Arc<RoomType>>,
    /// Active plans only: the others sell nothing.
    rate_plans: Vec<Arc<RatePlan>>,
    sellable_rooms: HashMap<String, i64>,
}

/// One night's record of a rate plan, as pricing reads it.
#[derive(Clone, Copy)]
struct Night {
    rate: NightRate,
    stop_sell: bool,
    closed_to_arrival: bool,
    closed_to_departure: bool,
    min_stay: Option<i64>,
    max_stay: Option<i64>,
}

/// `PAGE_DAYS` days from `first`: each rate plan's records and the rooms held each night, by room type and by plan.
struct Page {
    first: NaiveDate,
    rates: HashMap<String, Vec<Option<Night>>>,
    held_by_room_type: HashMap<String, Vec<i64>>,
    held_by_rate_plan: HashMap<String, Vec<i64>>,
}

impl Page {
    fn index(&self, date: NaiveDate) -> usize {
        (date - self.first).num_days() as usize
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn page_number(date: NaiveDate) -> i64 {
    i64::from(date.num_days_from_ce()).div_euclid(PAGE_DAYS)
}

fn page_start(number: i64) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(i32::try_from(number * PAGE_DAYS).ok()?)
}

impl AvailabilityCopies {
    /// How many hotels have a copy in this process.
    pub fn len(&self) -> usize {
        lock(&self.hotels).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answer of a search of `stay` at `hotel_id` computed from `version` less than [`ANSWER_MAX_AGE`] ago.
    pub(super) fn recent_answer(&self, hotel_id: &str, version: i64, stay: &Stay) -> Option<Arc<SearchAnswer>> {
        let answers = lock(&self.answers);
        let (kept_version, answer) = answers.by_search.get(&(hotel_id.to_string(), *stay))?;
        (*kept_version == version && answer.computed_at.elapsed() < ANSWER_MAX_AGE).then(|| answer.clone())
    }

    /// Keeps `offers` as the answer of `stay` at `hotel_id` of `version`, and answers it.
    pub(super) fn keep_answer(
        &self,
        hotel_id: &str,
        version: i64,
        stay: Stay,
        offers: Vec<Offer>,
    ) -> Arc<SearchAnswer> {
        let answer = Arc::new(SearchAnswer { offers, computed_at: Instant::now(), json: OnceLock::new() });
        // Rendered now, outside the lock: every request that reuses the answer sends these bytes.
        let size = answer.json().len();
        let mut answers = lock(&self.answers);
        if answers.bytes + size > ANSWERS_MAX_BYTES {
            // Nothing here is older than a second: dropping all costs at most one recomputation per popular search.
            answers.by_search.clear();
            answers.bytes = 0;
        }
        let previous = answers.by_search.insert((hotel_id.to_string(), stay), (version, answer.clone()));
        answers.bytes += size;
        if let Some((_, previous)) = previous {
            answers.bytes = answers.bytes.saturating_sub(previous.json().len());
        }
        answer
    }

    /// The copy of `hotel_id` at `version`: the shared one, or a fresh one that replaces an older one.
    fn hotel(&self, hotel_id: &str, version: i64) -> Arc<HotelCopy> {
        let fresh = || Arc::new(HotelCopy { version, catalogue: OnceCell::new(), pages: Mutex::new(HashMap::new()) });
        let mut hotels = lock(&self.hotels);
        match hotels.get(hotel_id) {
            Some(copy) if copy.version == version => copy.clone(),
            // Another search already saw a newer version: this one, which read an older one, keeps to itself.
            Some(copy) if copy.version > version => fresh(),
            found => {
                if found.is_some() {
                    crate::metrics::availability_reloaded();
                }
                if found.is_none() && hotels.len() >= MAX_HOTELS {
                    if let Some(evicted) = hotels.keys().next().cloned() {
                        hotels.remove(&evicted);
                    }
                }
                let copy = fresh();
                hotels.insert(hotel_id.to_string(), copy.clone());
                copy
            }
        }
    }

    /// What pricing `stay` at `hotel_id` reads, from the copy of `version` (loading what it lacks from `db`).
    pub(super) async fn stay_inputs(
        &self,
        db: &Db,
        organization_id: &str,
        hotel_id: &str,
        version: i64,
        stay: &Stay,
    ) -> Result<StayInputs> {
        let copy = self.hotel(hotel_id, version);
        let catalogue = copy.catalogue.get_or_try_init(|| load_catalogue(db, organization_id, hotel_id)).await?;
        let (room_types, rate_plans) = super::sellable(&catalogue.room_types, &catalogue.rate_plans, stay, None);
        if room_types.is_empty() || rate_plans.is_empty() {
            return Ok(StayInputs::default());
        }
        let mut pages = Vec::new();
        for number in page_number(stay.check_in)..=page_number(stay.check_out) {
            let cell = lock(&copy.pages).entry(number).or_default().clone();
            cell.get_or_try_init(|| load_page(db, catalogue, number)).await?;
            pages.push(cell);
        }
        let page_of = |date: NaiveDate| {
            let number = page_number(date) - page_number(stay.check_in);
            pages.get(usize::try_from(number).ok()?).and_then(|cell| cell.get())
        };
        let night = |plan: &str, date: NaiveDate| -> Option<Night> {
            let page = page_of(date)?;
            page.rates.get(plan)?.get(page.index(date)).copied().flatten()
        };
        let nights: Vec<NaiveDate> = stay.check_in.iter_days().take_while(|d| *d < stay.check_out).collect();

        let mut rates = HashMap::new();
        for plan in &rate_plans {
            let records: Vec<Option<Night>> = nights.iter().map(|date| night(&plan.id, *date)).collect();
            let arrival = records.first().copied().flatten();
            let departure = night(&plan.id, stay.check_out);
            // As the database answers it: a plan with no record on any date of the stay has no rates at all.
            if departure.is_none() && records.iter().all(Option::is_none) {
                continue;
            }
            rates.insert(
                plan.id.clone(),
                StayRates {
                    rate_plan_id: plan.id.clone(),
                    nights: records.iter().map(|r| r.map(|r| r.rate)).collect(),
                    closed_to_arrival: arrival.is_some_and(|r| r.closed_to_arrival),
                    min_stay: arrival.and_then(|r| r.min_stay),
                    max_stay: arrival.and_then(|r| r.max_stay),
                    closed_to_departure: departure.is_some_and(|r| r.closed_to_departure),
                    stop_sell: records.iter().flatten().any(|r| r.stop_sell),
                },
            );
        }
        let held = |counts: Option<&Vec<i64>>, page: &Page, date: NaiveDate| {
            counts.and_then(|c| c.get(page.index(date))).copied().unwrap_or(0)
        };
        let mut free = HashMap::new();
        for room_type in &room_types {
            let sellable = catalogue.sellable_rooms.get(&room_type.id).copied().unwrap_or(0);
            let mut by_night = Vec::with_capacity(nights.len());
            for date in &nights {
                let Some(page) = page_of(*date) else { break };
                by_night.push(sellable - held(page.held_by_room_type.get(&room_type.id), page, *date));
            }
            free.insert(room_type.id.clone(), by_night);
        }
        let mut sold = HashMap::new();
        for plan in &rate_plans {
            let mut by_night = Vec::with_capacity(nights.len());
            for date in &nights {
                let Some(page) = page_of(*date) else { break };
                by_night.push(held(page.held_by_rate_plan.get(&plan.id), page, *date));
            }
            sold.insert(plan.id.clone(), by_night);
        }
        Ok(StayInputs { room_types, rate_plans, rates, free, sold })
    }
}

async fn load_catalogue(db: &Db, organization_id: &str, hotel_id: &str) -> Result<Catalogue> {
    crate::metrics::availability_loaded("catalogue");
    let conn = &mut *db.read().await?;
    let room_types: Vec<Arc<RoomType>> =
        store::room_types::list(conn, organization_id, Some(hotel_id)).await?.into_iter().map(Arc::new).collect();
    let rate_plans: Vec<Arc<RatePlan>> = store::rate_plans::list(conn, organization_id, hotel_id, None)
        .await?
        .into_iter()
        .filter(|p| p.active)
        .map(Arc::new)
        .collect();
    let ids: Vec<String> = room_types.iter().map(|t| t.id.clone()).collect();
    let sellable_rooms = super::super::reservations::inventory::sellable_rooms(conn, &ids).await?.into_iter().collect();
    Ok(Catalogue { room_types, rate_plans, sellable_rooms })
}

async fn load_page(db: &Db, catalogue: &Catalogue, number: i64) -> Result<Page> {
    crate::metrics::availability_loaded("page");
    let conn = &mut *db.read().await?;
    let first = page_start(number).ok_or_else(|| super::super::Error::BadRequest("date out of range".into()))?;
    let end = first.checked_add_days(Days::new(PAGE_DAYS as u64)).unwrap_or(first);
    let last = end.pred_opt().unwrap_or(first);
    let plan_ids: Vec<&str> = catalogue.rate_plans.iter().map(|p| p.id.as_str()).collect();
    let mut rates: HashMap<String, Vec<Option<Night>>> = HashMap::new();
    for record in store::daily_rates::nights_for_plans(conn, &plan_ids, first, last).await? {
        let index = (record.date - first).num_days() as usize;
        let nights = rates.entry(record.rate_plan_id).or_insert_with(|| vec![None; PAGE_DAYS as usize]);
        if let Some(slot) = nights.get_mut(index) {
            *slot = Some(Night {
                rate: NightRate { price: record.price, availability: record.availability },
                stop_sell: record.stop_sell,
                closed_to_arrival: record.closed_to_arrival,
                closed_to_departure: record.closed_to_departure,
                min_stay: record.min_stay,
                max_stay: record.max_stay,
            });
        }
    }
    let type_ids: Vec<String> = catalogue.room_types.iter().map(|t| t.id.clone()).collect();
    let held_by_room_type =
        store::reservations::held_rooms(conn, &type_ids, first, end, None).await?.into_iter().collect();
    let plan_ids: Vec<String> = plan_ids.iter().map(|id| id.to_string()).collect();
    let held_by_rate_plan =
        store::booking::held_by_plan(conn, &plan_ids, first, end, None).await?.into_iter().collect();
    Ok(Page { first, rates, held_by_room_type, held_by_rate_plan })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stay(adults: i64) -> Stay {
        let check_in = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        Stay { check_in, check_out: check_in + Days::new(2), adults, children: 0, infants: 0 }
    }

    #[test]
    fn answers_are_reused_only_for_their_hotel_search_version_and_age() {
        let copies = AvailabilityCopies::default();
        let kept = copies.keep_answer("h", 7, stay(2), Vec::new());
        let reused = copies.recent_answer("h", 7, &stay(2)).expect("reused");
        assert!(Arc::ptr_eq(&reused, &kept));
        assert!(copies.recent_answer("h", 8, &stay(2)).is_none(), "the hotel changed since");
        assert!(copies.recent_answer("g", 7, &stay(2)).is_none(), "another hotel");
        assert!(copies.recent_answer("h", 7, &stay(3)).is_none(), "another party");
        std::thread::sleep(ANSWER_MAX_AGE);
        assert!(copies.recent_answer("h", 7, &stay(2)).is_none(), "too old");
    }

    #[test]
    fn kept_answers_are_bounded_in_bytes() {
        let copies = AvailabilityCopies::default();
        let offer = Offer {
            offer_id: "x".repeat(1 << 20),
            room_type_id: String::new(),
            room_type_name: String::new(),
            description: None,
            max_occupancy: 2,
            rate_plan_id: String::new(),
            rate_plan_name: String::new(),
            currency: "EUR".into(),
            nights: 2,
            nightly: Vec::new(),
            total_price: 0,
            available_units: 1,
            city_tax: None,
            total_with_taxes: 0,
        };
        for adults in 1..=50 {
            copies.keep_answer("h", 1, stay(adults), vec![offer.clone()]);
            assert!(lock(&copies.answers).bytes <= ANSWERS_MAX_BYTES);
        }
        assert!(copies.recent_answer("h", 1, &stay(50)).is_some(), "the newest is kept");
    }
}
