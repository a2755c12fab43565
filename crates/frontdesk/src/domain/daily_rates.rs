//! Daily rates: the ARI record of one rate plan and night. Price, inventory and restrictions are read and written
//! together; a batch is all-or-nothing; fields an entry leaves out keep their stored value.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Months, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::access::{Actor, Scope};
use super::validate::{calendar_date, parse_date, Checks};
use super::{hotels, money, not_null, now, nullable, rate_plans, Error, FieldError, Result};
use crate::domain::change::{Change, ChannelChangeKind, Record, RecordKind};
pub use crate::model::daily_rates::DailyRate;
pub use crate::store::daily_rates::{NightRate, StayRates};
use crate::store::{self, Db};

/// Most entries in one `POST /api/dailyRates`.
pub const MAX_BATCH: usize = 500;
/// Longest stay a restriction can name, in nights.
pub const MAX_STAY_NIGHTS: i64 = 365;
/// Widest range one read may ask for, in days (about three years).
pub const MAX_READ_DAYS: i64 = 1100;

/// One entry of a batch upsert. Only `ratePlanId`, `date` and `price` are required; every other field left out
/// keeps its stored value (or its default for a new record), and `null` clears a nullable one.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailyRateIn {
    pub rate_plan_id: String,
    /// The night, `YYYY-MM-DD`: from one year back to three years ahead.
    #[schema(format = Date, value_type = String)]
    pub date: String,
    #[schema(minimum = 0, maximum = 1000000000000_i64)]
    pub price: i64,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>, minimum = 0)]
    pub availability: Option<Option<i64>>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub stop_sell: Option<bool>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub closed_to_arrival: Option<bool>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub closed_to_departure: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 365)]
    pub min_stay: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 365)]
    pub max_stay: Option<Option<i64>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailyRatesIn {
    /// 1 to 500 entries, each (ratePlanId, date) at most once.
    #[schema(min_items = 1, max_items = 500)]
    pub values: Vec<DailyRateIn>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DailyRatesQuery {
    /// The hotel; a key pinned to a hotel may leave it out.
    #[param(required = true)]
    pub hotel_id: Option<String>,
    pub rate_plan_id: String,
    /// First night, inclusive.
    #[param(format = Date, value_type = String)]
    pub date_from: String,
    /// Last night, inclusive; at most about three years after `dateFrom`.
    #[param(format = Date, value_type = String)]
    pub date_to: String,
}

/// The records of one rate plan over `[dateFrom, dateTo]`, by date.
pub async fn list(db: &Db, actor: &Actor, query: DailyRatesQuery) -> Result<Vec<DailyRate>> {
    actor.require_scope(Scope::RatesRead)?;
    let mut c = Checks::new();
    let from = parse_date(&mut c, "dateFrom", &query.date_from);
    let to = parse_date(&mut c, "dateTo", &query.date_to);
    if let (Some(from), Some(to)) = (from, to) {
        if to < from {
            c.fail("dateTo", "must not be before dateFrom");
        } else if (to - from).num_days() >= MAX_READ_DAYS {
            c.fail("dateTo", format!("the range may span at most {MAX_READ_DAYS} days"));
        }
    }
    c.finish()?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(Error::BadRequest("invalid dates".into()));
    };
    let mut conn = db.read().await?;
    let hotel = hotels::require_named(&mut conn, actor, query.hotel_id.as_deref()).await?;
    let plan = rate_plans::visible(&mut conn, actor, &query.rate_plan_id).await?;
    if plan.hotel_id != hotel.id {
        return Err(Error::NotFound("rate plan"));
    }
    Ok(store::daily_rates::range(&mut conn, &plan.id, &plan.currency, from, to).await?)
}

fn entry_error(index: usize, field: &str, message: impl Into<String>) -> FieldError {
    FieldError { field: Some(field.to_string()), index: Some(index), message: message.into() }
}

/// The nights a rate may be written for: one year back to three years ahead.
pub fn writable_window(today: NaiveDate) -> (NaiveDate, NaiveDate) {
    let first = today.checked_sub_months(Months::new(12)).unwrap_or(today);
    let last = today.checked_add_months(Months::new(36)).unwrap_or(today);
    (first, last)
}

/// `POST /api/dailyRates`: a batch of at most [`MAX_BATCH`] entries (the API's limit, which keeps one call's
/// request and transaction small), written all or nothing through [`write`].
pub async fn upsert(db: &Db, actor: &Actor, input: DailyRatesIn) -> Result<Vec<DailyRate>> {
    actor.require_scope(Scope::RatesWrite)?;
    if input.values.is_empty() {
        return Err(Error::Validation(vec![FieldError::field("values", "must hold at least one entry")]));
    }
    if input.values.len() > MAX_BATCH {
        return Err(Error::Validation(vec![FieldError::field(
            "values",
            format!("at most {MAX_BATCH} entries per call, got {}", input.values.len()),
        )]));
    }
    let mut tx = Change::begin(db, actor).await?;
    let written = write(&mut tx, actor, &input.values).await?;
    tx.commit().await?;
    Ok(written)
}

/// The one write path of daily rates, whoever writes (the API's batches, the dashboard's cells and bulk edits):
/// locks the plans named, reads their stored records, checks and merges every entry ([`check_and_merge`]) and
/// writes them in `tx`, all or nothing. It sets no limit on the number of entries: callers that need one (the
/// API) check it first. Daily rates have no webhook event kind (the contract's events are about reservations
/// and guests); public availability sees the change through the hotel's availability version, which the
/// database's triggers bump in this same transaction (migration 0008), and through [`crate::store::recent`],
/// which reuses no answer read before a write of this process commits.
pub async fn write(tx: &mut Change, actor: &Actor, values: &[DailyRateIn]) -> Result<Vec<DailyRate>> {
    actor.require_scope(Scope::RatesWrite)?;
    let mut plan_ids: Vec<&str> = values.iter().map(|v| v.rate_plan_id.as_str()).collect();
    plan_ids.sort_unstable();
    plan_ids.dedup();
    let today = Utc::now().date_naive();
    let (first, last) = writable_window(today);
    // The records of the nights the batch may write (entries outside the window are refused anyway).
    let dates: Vec<NaiveDate> =
        values.iter().filter_map(|v| calendar_date(&v.date)).filter(|d| (first..=last).contains(d)).collect();
    let from = dates.iter().min().copied().unwrap_or(today);
    let to = dates.iter().max().copied().unwrap_or(today);
    let stored = Stored::lock(tx, actor, &plan_ids, from, to).await?;
    write_locked(tx, &actor.organization_id, &stored, values, today).await
}

/// The end of [`write`] for a caller that has already locked and read what `values` name, in `tx`, with
/// [`Stored::lock`] (the dashboard's bulk edit, which reads the stored records to compute its entries).
pub async fn write_locked(
    tx: &mut Change,
    organization_id: &str,
    stored: &Stored,
    values: &[DailyRateIn],
    today: NaiveDate,
) -> Result<Vec<DailyRate>> {
    let at = now();
    let merged = check_and_merge(values, stored, today, at)?;
    store::daily_rates::upsert(tx.conn(), &merged, at).await?;
    for night in &merged {
        let hotel_id = stored.plans.get(&night.rate_plan_id).map(|p| p.hotel_id.as_str());
        let after = NightOfPlan { hotel_id, rate: night };
        match stored.record(&night.rate_plan_id, night.date) {
            Some(before) => tx.updated(organization_id, &NightOfPlan { hotel_id, rate: before }, &after).await?,
            None => tx.created(organization_id, &after).await?,
        }
    }
    // Channels are told the nights written, per rate plan (docs/channels.md).
    let mut nights: HashMap<&str, (NaiveDate, NaiveDate)> = HashMap::new();
    for night in &merged {
        let range = nights.entry(night.rate_plan_id.as_str()).or_insert((night.date, night.date));
        *range = (range.0.min(night.date), range.1.max(night.date));
    }
    for (plan_id, (from, to)) in nights {
        let Some(plan) = stored.plans.get(plan_id) else { continue };
        tx.channel_dirty(&plan.hotel_id, Some(plan_id), from, to, ChannelChangeKind::Rates).await?;
    }
    Ok(merged)
}

/// A night's record as a change reports it: with the hotel of its plan. Nights are written many at a time, so the
/// audit log sums up a change's nights per hotel (plans, dates, fields) instead of listing each.
#[derive(Serialize)]
struct NightOfPlan<'a> {
    #[serde(skip)]
    hotel_id: Option<&'a str>,
    #[serde(flatten)]
    rate: &'a DailyRate,
}

impl Record for NightOfPlan<'_> {
    const KIND: RecordKind = RecordKind::DailyRate;

    fn hotel_id(&self) -> Option<&str> {
        self.hotel_id
    }

    fn record_id(&self) -> String {
        format!("{}:{}", self.rate.rate_plan_id, self.rate.date)
    }

    fn bulk_key(&self) -> Option<(&str, NaiveDate)> {
        Some((&self.rate.rate_plan_id, self.rate.date))
    }

    /// The fields as their JSON names them (`updatedAt` is never listed); a created night lists what it has.
    fn changed_fields(&self, before: Option<&Self>) -> Option<Vec<&'static str>> {
        let is = self.rate;
        let was = before.map(|b| b.rate);
        let mut names = Vec::new();
        let mut differs = |name: &'static str, changed: bool, present: bool| {
            if (was.is_some() && changed) || (was.is_none() && present) {
                names.push(name);
            }
        };
        let changed = |f: &dyn Fn(&DailyRate) -> bool| was.is_some_and(|w| !f(w));
        differs("currency", changed(&|w| w.currency == is.currency), true);
        differs("date", changed(&|w| w.date == is.date), true);
        differs("price", changed(&|w| w.price == is.price), true);
        differs("ratePlanId", changed(&|w| w.rate_plan_id == is.rate_plan_id), true);
        differs("availability", changed(&|w| w.availability == is.availability), is.availability.is_some());
        differs("stopSell", changed(&|w| w.stop_sell == is.stop_sell), true);
        differs("closedToArrival", changed(&|w| w.closed_to_arrival == is.closed_to_arrival), true);
        differs("closedToDeparture", changed(&|w| w.closed_to_departure == is.closed_to_departure), true);
        differs("minStay", changed(&|w| w.min_stay == is.min_stay), is.min_stay.is_some());
        differs("maxStay", changed(&|w| w.max_stay == is.max_stay), is.max_stay.is_some());
        Some(names)
    }
}

/// What a batch is checked and merged against: the rate plans it may write (the caller's, keyed by id) and
/// their stored records over the batch's dates.
#[derive(Debug, Default)]
pub struct Stored {
    pub plans: HashMap<String, rate_plans::RatePlan>,
    pub records: HashMap<(String, NaiveDate), DailyRate>,
}

impl Stored {
    /// The plans among `plan_ids` that `actor` may write, locked until `tx` ends (so that writers of the same
    /// plans' rates take turns), and their records from `from` to `to` (inclusive).
    pub async fn lock(
        tx: &mut Change,
        actor: &Actor,
        plan_ids: &[&str],
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Stored> {
        actor.require_scope(Scope::RatesWrite)?;
        let engine = tx.engine();
        let plans = store::rate_plans::lock_many(tx.conn(), engine, &actor.organization_id, plan_ids).await?;
        Self::read_records(tx.conn(), actor, plans, from, to).await
    }

    /// The same without locks, for answering what a write would do (a preview).
    pub async fn read(
        conn: &mut store::Conn,
        actor: &Actor,
        plan_ids: &[&str],
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Stored> {
        actor.require_scope(Scope::RatesRead)?;
        let mut plans = Vec::with_capacity(plan_ids.len());
        for id in plan_ids {
            plans.extend(store::rate_plans::get(conn, &actor.organization_id, id).await?);
        }
        Self::read_records(conn, actor, plans, from, to).await
    }

    async fn read_records(
        conn: &mut store::Conn,
        actor: &Actor,
        plans: Vec<rate_plans::RatePlan>,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<Stored> {
        let plans: HashMap<String, rate_plans::RatePlan> =
            plans.into_iter().filter(|p| actor.sees_hotel(Some(&p.hotel_id))).map(|p| (p.id.clone(), p)).collect();
        let known: Vec<&str> = plans.keys().map(String::as_str).collect();
        let records = store::daily_rates::for_plans(conn, &known, from, to)
            .await?
            .into_iter()
            .map(|mut r| {
                // The store leaves the currency to the caller, who holds the plans: a record compared with what a
                // batch makes of it (the audit log's fields) must not differ by it.
                if let Some(plan) = plans.get(&r.rate_plan_id) {
                    r.currency.clone_from(&plan.currency);
                }
                ((r.rate_plan_id.clone(), r.date), r)
            })
            .collect();
        Ok(Stored { plans, records })
    }

    /// The stored record of a plan and night.
    pub fn record(&self, rate_plan_id: &str, date: NaiveDate) -> Option<&DailyRate> {
        self.records.get(&(rate_plan_id.to_string(), date))
    }
}

/// The one validation of daily-rate entries: each entry's own rules (a calendar date within the writable window
/// of `today`, a price within bounds, no negative allotment, stays of 1 to 365 nights, each (plan, date) once), a
/// plan the caller may write, and, merged with the stored record (fields an entry leaves out keep their stored
/// value, or the default for a new record), a minimum stay no longer than the maximum. Answers the records to
/// write, stamped `at`, in the order of `values`, or every entry's errors by index.
pub fn check_and_merge(
    values: &[DailyRateIn],
    stored: &Stored,
    today: NaiveDate,
    at: DateTime<Utc>,
) -> Result<Vec<DailyRate>> {
    let (first, last) = writable_window(today);
    let mut errors = Vec::new();
    let mut merged = Vec::with_capacity(values.len());
    let mut seen = HashSet::with_capacity(values.len());
    for (index, entry) in values.iter().enumerate() {
        let before = errors.len();
        let date = calendar_date(&entry.date);
        match date {
            None => errors.push(entry_error(index, "date", "must be a calendar date YYYY-MM-DD")),
            // The write window lies within the dates any input may name (validate::date_bounds).
            Some(d) if d < first || d > last => {
                errors.push(entry_error(index, "date", format!("must be between {first} and {last}")))
            }
            Some(_) => {}
        }
        if !money::in_bounds(entry.price) {
            errors.push(entry_error(index, "price", money::out_of_bounds_message()));
        }
        if entry.availability.flatten().is_some_and(|a| a < 0) {
            errors.push(entry_error(index, "availability", "must not be negative"));
        }
        for (field, value) in [("minStay", entry.min_stay.flatten()), ("maxStay", entry.max_stay.flatten())] {
            if value.is_some_and(|v| !(1..=MAX_STAY_NIGHTS).contains(&v)) {
                errors.push(entry_error(index, field, format!("must be between 1 and {MAX_STAY_NIGHTS} nights")));
            }
        }
        if let Some(date) = date {
            if !seen.insert((entry.rate_plan_id.as_str(), date)) {
                errors.push(entry_error(index, "date", "this (ratePlanId, date) appears earlier in the batch"));
            }
        }
        let passed = errors.len() == before;
        let Some(plan) = stored.plans.get(&entry.rate_plan_id) else {
            errors.push(entry_error(index, "ratePlanId", "no such rate plan for this credential"));
            continue;
        };
        let (Some(date), true) = (date, passed) else { continue };
        let base = stored.record(&plan.id, date);
        let rate = DailyRate {
            rate_plan_id: plan.id.clone(),
            date,
            price: entry.price,
            currency: plan.currency.clone(),
            availability: entry.availability.unwrap_or_else(|| base.and_then(|b| b.availability)),
            stop_sell: entry.stop_sell.unwrap_or_else(|| base.is_some_and(|b| b.stop_sell)),
            closed_to_arrival: entry.closed_to_arrival.unwrap_or_else(|| base.is_some_and(|b| b.closed_to_arrival)),
            closed_to_departure: entry
                .closed_to_departure
                .unwrap_or_else(|| base.is_some_and(|b| b.closed_to_departure)),
            min_stay: entry.min_stay.unwrap_or_else(|| base.and_then(|b| b.min_stay)),
            max_stay: entry.max_stay.unwrap_or_else(|| base.and_then(|b| b.max_stay)),
            updated_at: at,
        };
        if let (Some(min), Some(max)) = (rate.min_stay, rate.max_stay) {
            if min > max {
                errors.push(entry_error(index, "minStay", format!("minStay {min} exceeds maxStay {max}")));
            }
        }
        merged.push(rate);
    }
    if !errors.is_empty() {
        return Err(Error::Validation(sorted(errors)));
    }
    Ok(merged)
}

fn sorted(mut errors: Vec<FieldError>) -> Vec<FieldError> {
    errors.sort_by_key(|e| e.index);
    errors
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::domain::audit::entry;
    use crate::domain::change::Action;

    /// A change made to a night.
    type Change = Box<dyn Fn(&mut DailyRate)>;

    fn night() -> DailyRate {
        DailyRate {
            rate_plan_id: "plan".into(),
            date: NaiveDate::from_ymd_opt(2026, 12, 24).unwrap_or_default(),
            price: 12_000,
            currency: "EUR".into(),
            availability: None,
            stop_sell: false,
            closed_to_arrival: false,
            closed_to_departure: false,
            min_stay: Some(2),
            max_stay: None,
            updated_at: Utc.timestamp_opt(0, 0).single().unwrap_or_default(),
        }
    }

    /// The names the JSON comparison lists, at the top level (what a summary keeps).
    fn by_json(before: Option<&NightOfPlan>, after: &NightOfPlan) -> Vec<String> {
        let json = |n: &NightOfPlan| serde_json::to_value(n).unwrap_or_default();
        let action = if before.is_some() { Action::Updated } else { Action::Created };
        let mut names: Vec<String> = entry::fields(action, before.map(json).as_ref(), Some(&json(after)), &[])
            .into_iter()
            .map(|f| f.field)
            .collect();
        names.sort();
        names
    }

    fn typed(before: Option<&NightOfPlan>, after: &NightOfPlan) -> Vec<String> {
        let mut names: Vec<String> =
            after.changed_fields(before).unwrap_or_default().into_iter().map(str::to_owned).collect();
        names.sort();
        names
    }

    #[test]
    fn a_nights_changed_fields_are_those_its_json_lists() {
        let was = night();
        let changes: Vec<Change> = vec![
            Box::new(|_| {}),
            Box::new(|n| n.price += 1),
            Box::new(|n| n.availability = Some(3)),
            Box::new(|n| n.min_stay = None),
            Box::new(|n| {
                n.stop_sell = true;
                n.closed_to_arrival = true;
                n.closed_to_departure = true;
                n.max_stay = Some(7);
            }),
            Box::new(|n| n.currency = "CHF".into()),
            Box::new(|n| n.updated_at = Utc::now()),
        ];
        for change in changes {
            let mut is = night();
            change(&mut is);
            let before = NightOfPlan { hotel_id: Some("h"), rate: &was };
            let after = NightOfPlan { hotel_id: Some("h"), rate: &is };
            assert_eq!(typed(Some(&before), &after), by_json(Some(&before), &after), "{is:?}");
            assert_eq!(typed(None, &after), by_json(None, &after), "created {is:?}");
        }
        assert_eq!(
            typed(None, &NightOfPlan { hotel_id: None, rate: &was }).len(),
            8,
            "a created night lists all it has"
        );
    }
}
