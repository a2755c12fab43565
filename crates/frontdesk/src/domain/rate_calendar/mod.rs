//! The rates calendar of the dashboard: a hotel's room types, each with its rate plans, over 14 to 31 nights, each
//! night with its price, the rooms left and its restrictions; and the bulk edit that changes many nights of many
//! plans at once.
//!
//! Nothing here has rules of its own about daily rates: a bulk edit turns into entries of the one write path
//! ([`daily_rates::write_locked`], what `POST /api/dailyRates` runs, without the API's 500-entry limit), checked by
//! the one validation ([`daily_rates::check_and_merge`]), in one transaction: all of it is written or none. The
//! rooms left are [`availability::night_units`], the number public availability offers.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Days, NaiveDate};

use super::access::{Actor, Scope};
use super::availability;
use super::daily_rates::{self, DailyRate, DailyRateIn, DailyRatesIn};
use super::hotels::{self, Hotel};
use super::rate_plans::RatePlan;
use super::reservations::inventory;
use super::room_types::RoomType;
use super::{Error, FieldError, Result};
use crate::store::daily_rates::RateNight;
use crate::store::{self, Db};

mod bulk;
pub use bulk::{apply, change_by_percent, preview, BulkEdit, BulkOutcome, Change, PriceChange};

/// The fewest and most nights the calendar shows at once.
pub const MIN_DAYS: u32 = 14;
pub const MAX_DAYS: u32 = 31;

/// Most nights (rate plans × days) one bulk edit may change: a year of 130 plans. Far above what an operator
/// selects, low enough that one transaction stays short and its memory small.
pub const MAX_BULK_NIGHTS: usize = 50_000;

/// Largest change by a percentage, either way, in hundredths of a per cent (±1000 %).
pub const MAX_PERCENT_HUNDREDTHS: i64 = 100_000;

/// A hotel's rates over `dates`.
#[derive(Debug, Clone)]
pub struct Calendar {
    pub hotel: Hotel,
    /// The hotel's today (its time zone).
    pub today: NaiveDate,
    pub dates: Vec<NaiveDate>,
    pub groups: Vec<CalendarGroup>,
    /// Every rate plan of the hotel, by name (the bulk edit's choices).
    pub plans: Vec<Arc<RatePlan>>,
}

/// A room type and the plans that price it (its own, and those of the whole hotel).
#[derive(Debug, Clone)]
pub struct CalendarGroup {
    pub room_type: RoomType,
    pub rows: Vec<CalendarRow>,
}

#[derive(Debug, Clone)]
pub struct CalendarRow {
    pub plan: Arc<RatePlan>,
    /// One per date of the calendar.
    pub nights: Vec<CalendarNight>,
}

#[derive(Debug, Clone)]
pub struct CalendarNight {
    pub date: NaiveDate,
    /// The night's record; `None`: no rate, so nothing sells that night under the plan.
    pub rate: Option<RateNight>,
    /// What public availability would offer for a stay on this night, restrictions aside: the type's free
    /// sellable rooms capped by the plan's allotment less the rooms held under the plan. `None` without a rate.
    pub rooms_left: Option<i64>,
}

/// The calendar of `hotel_id`: `days` nights from `from`.
pub async fn calendar(db: &Db, actor: &Actor, hotel_id: &str, from: NaiveDate, days: u32) -> Result<Calendar> {
    actor.require_scope(Scope::RatesRead)?;
    if !(MIN_DAYS..=MAX_DAYS).contains(&days) {
        return Err(Error::Validation(vec![FieldError::field(
            "days",
            format!("must be from {MIN_DAYS} to {MAX_DAYS}"),
        )]));
    }
    let hotel = hotels::get(db, actor, hotel_id).await?;
    read(db, actor, hotel, from, days).await
}

/// The calendar of `hotel` (which the caller may see), without the bounds on how many nights a page shows.
async fn read(db: &Db, actor: &Actor, hotel: Hotel, from: NaiveDate, days: u32) -> Result<Calendar> {
    let bad_date = || Error::Validation(vec![FieldError::field("from", "is out of range")]);
    let end = from.checked_add_days(Days::new(u64::from(days))).ok_or_else(bad_date)?;
    let last = end.pred_opt().ok_or_else(bad_date)?;
    let dates: Vec<NaiveDate> = from.iter_days().take(days as usize).collect();
    let mut conn = db.read().await?;
    let room_types = store::room_types::list(&mut conn, &actor.organization_id, Some(&hotel.id)).await?;
    let plans: Vec<Arc<RatePlan>> = store::rate_plans::list(&mut conn, &actor.organization_id, &hotel.id, None)
        .await?
        .into_iter()
        .map(Arc::new)
        .collect();
    let plan_ids: Vec<&str> = plans.iter().map(|p| p.id.as_str()).collect();
    let mut rates: HashMap<String, Vec<Option<RateNight>>> = HashMap::new();
    for night in store::daily_rates::nights_for_plans(&mut conn, &plan_ids, from, last).await? {
        let index = (night.date - from).num_days() as usize;
        let by_night = rates.entry(night.rate_plan_id.clone()).or_insert_with(|| vec![None; dates.len()]);
        if let Some(slot) = by_night.get_mut(index) {
            *slot = Some(night);
        }
    }
    let type_ids: Vec<String> = room_types.iter().map(|t| t.id.clone()).collect();
    let free = inventory::free_rooms(&mut conn, &type_ids, from, end, None).await?;
    let plan_id_strings: Vec<String> = plans.iter().map(|p| p.id.clone()).collect();
    let held: HashMap<String, Vec<i64>> =
        store::booking::held_by_plan(&mut conn, &plan_id_strings, from, end, None).await?.into_iter().collect();
    drop(conn);

    let groups = room_types
        .into_iter()
        .map(|room_type| {
            let rows = plans
                .iter()
                .filter(|plan| plan.room_type_id.as_ref().is_none_or(|id| *id == room_type.id))
                .map(|plan| CalendarRow {
                    plan: plan.clone(),
                    nights: nights(&dates, rates.get(&plan.id), free.get(&room_type.id), held.get(&plan.id)),
                })
                .collect();
            CalendarGroup { room_type, rows }
        })
        .collect();
    Ok(Calendar { today: hotel.today(), hotel, dates, groups, plans })
}

/// One night of one plan: its record and the rooms left of each room type the plan prices.
#[derive(Debug, Clone)]
pub struct PlanNight {
    pub rate: Option<RateNight>,
    /// (room type, rooms left), for a night with a rate.
    pub rooms_left: Vec<(String, i64)>,
}

/// The night `date` of `plan` (a plan the caller may see, as [`crate::domain::rate_plans::get`] answers it).
pub async fn night(db: &Db, actor: &Actor, plan: &RatePlan, date: NaiveDate) -> Result<PlanNight> {
    actor.require_scope(Scope::RatesRead)?;
    let hotel = hotels::get(db, actor, &plan.hotel_id).await?;
    let cal = read(db, actor, hotel, date, 1).await?;
    let mut out = PlanNight { rate: None, rooms_left: Vec::new() };
    for group in &cal.groups {
        for row in group.rows.iter().filter(|row| row.plan.id == plan.id) {
            let Some(night) = row.nights.first() else { continue };
            out.rate = night.rate.clone();
            if let Some(left) = night.rooms_left {
                out.rooms_left.push((group.room_type.name.clone(), left));
            }
        }
    }
    if out.rate.is_none() {
        // A plan whose room type is gone (or a hotel without room types) still has its record.
        let mut conn = db.read().await?;
        out.rate = store::daily_rates::nights_for_plans(&mut conn, &[plan.id.as_str()], date, date).await?.pop();
    }
    Ok(out)
}

/// Saves one night of one plan from the calendar: `POST /api/dailyRates` with one entry ([`daily_rates::upsert`]),
/// for a plan of `hotel_id` (404 otherwise) and a night that is not past at the hotel (the calendar changes
/// tonight and later; the API can still correct the past year).
pub async fn edit_night(db: &Db, actor: &Actor, hotel_id: &str, entry: DailyRateIn) -> Result<DailyRate> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let plan = super::rate_plans::get(db, actor, &entry.rate_plan_id).await?;
    if plan.hotel_id != hotel.id {
        return Err(Error::NotFound("rate plan"));
    }
    let today = hotel.today();
    if super::validate::calendar_date(&entry.date).is_some_and(|date| date < today) {
        return Err(Error::Validation(vec![FieldError {
            field: None,
            index: None,
            message: format!("This night is past ({today} is today at the hotel): it can no longer be changed here."),
        }]));
    }
    let mut written = daily_rates::upsert(db, actor, DailyRatesIn { values: vec![entry] }).await?;
    written.pop().ok_or_else(|| Error::Internal(anyhow::anyhow!("an upsert of one entry answered none")))
}

fn nights(
    dates: &[NaiveDate],
    rates: Option<&Vec<Option<RateNight>>>,
    free: Option<&Vec<i64>>,
    held: Option<&Vec<i64>>,
) -> Vec<CalendarNight> {
    dates
        .iter()
        .enumerate()
        .map(|(i, date)| {
            let rate = rates.and_then(|r| r.get(i)).cloned().flatten();
            let rooms_left = rate.as_ref().map(|rate| {
                let free = free.and_then(|f| f.get(i)).copied().unwrap_or(0);
                let held = held.and_then(|h| h.get(i)).copied().unwrap_or(0);
                availability::night_units(free, rate.availability, held)
            });
            CalendarNight { date: *date, rate, rooms_left }
        })
        .collect()
}
