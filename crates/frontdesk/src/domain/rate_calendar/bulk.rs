//! The bulk edit: one change to many nights of many plans, previewed, then applied all or nothing.

use std::collections::HashSet;

use chrono::{Datelike, NaiveDate, Utc, Weekday};

use super::{MAX_BULK_NIGHTS, MAX_PERCENT_HUNDREDTHS};
use crate::domain::access::{Actor, Scope};
use crate::domain::daily_rates::{self, DailyRate, DailyRateIn, Stored, MAX_STAY_NIGHTS};
use crate::domain::hotels::{self};
use crate::domain::{money, now, Error, FieldError, Result};
use crate::store::{self, Db};

/// How a bulk edit changes each night's price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceChange {
    /// The price stays (nights without a rate stay without one).
    Keep,
    /// This price, in minor units; nights without a rate get one.
    Set(i64),
    /// The price plus this amount in minor units (negative lowers it).
    By(i64),
    /// The price changed by this many hundredths of a per cent (`-1250` is −12.5 %), rounded to the nearest minor
    /// unit ([`change_by_percent`]).
    Percent(i64),
}

/// How a bulk edit changes a field that can be empty (`null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change<T> {
    Keep,
    Set(T),
    /// Empties it (no allotment, no minimum or maximum stay).
    Clear,
}

impl<T: Copy> Change<T> {
    /// As a daily-rate entry says it: left out to keep, `Some(None)` to clear.
    fn as_entry(self) -> Option<Option<T>> {
        match self {
            Change::Keep => None,
            Change::Set(value) => Some(Some(value)),
            Change::Clear => Some(None),
        }
    }

    fn apply(self, stored: Option<T>) -> Option<T> {
        match self {
            Change::Keep => stored,
            Change::Set(value) => Some(value),
            Change::Clear => None,
        }
    }
}

/// The most rate plans one change may name (a form posts what it likes: each name costs a look-up).
pub const MAX_BULK_PLANS: usize = 100;

/// One change to many nights: the nights of `from` to `to` (both included) that fall on `weekdays`, of each plan
/// of `rate_plan_ids`. A restriction flag is set (`Some(true)`), cleared (`Some(false)`) or kept (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkEdit {
    pub rate_plan_ids: Vec<String>,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub weekdays: Vec<Weekday>,
    pub price: PriceChange,
    pub availability: Change<i64>,
    pub stop_sell: Option<bool>,
    pub closed_to_arrival: Option<bool>,
    pub closed_to_departure: Option<bool>,
    pub min_stay: Change<i64>,
    pub max_stay: Change<i64>,
}

/// What a bulk edit does (a preview) or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkOutcome {
    /// Nights (plan and date) the edit selects.
    pub selected: usize,
    /// Nights whose record changes (or is created).
    pub changed: usize,
    /// Distinct dates and plans among the changed nights.
    pub days: usize,
    pub plans: usize,
    /// Selected nights already as asked: left alone.
    pub unchanged: usize,
    /// Selected nights without a rate that the edit does not price: left without one.
    pub without_rate: usize,
}

/// `price` changed by `hundredths` hundredths of a per cent, rounded to the nearest minor unit with halves away
/// from zero (prices are never negative, so up): 99.99 + 10 % = 109.989 → 109.99; JPY 1,005 − 10 % = 904.5 → 905.
/// Exact: integers all the way (no floating point). `None` only beyond `i64`.
pub fn change_by_percent(price: i64, hundredths: i64) -> Option<i64> {
    let scaled = i128::from(price) * (10_000 + i128::from(hundredths));
    let rounded = if scaled >= 0 { (scaled + 5_000) / 10_000 } else { (scaled - 5_000) / 10_000 };
    i64::try_from(rounded).ok()
}

impl BulkEdit {
    /// Whether the edit changes anything at all.
    fn changes_something(&self) -> bool {
        self.price != PriceChange::Keep
            || self.availability != Change::Keep
            || self.stop_sell.is_some()
            || self.closed_to_arrival.is_some()
            || self.closed_to_departure.is_some()
            || self.min_stay != Change::Keep
            || self.max_stay != Change::Keep
    }

    /// The dates selected, in order.
    fn dates(&self) -> impl Iterator<Item = NaiveDate> + '_ {
        self.from.iter_days().take_while(|d| *d <= self.to).filter(|d| self.weekdays.contains(&d.weekday()))
    }

    /// The rules of the edit itself, with `today` the hotel's: each message names the field to fix.
    pub fn check(&self, today: NaiveDate) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut fail = |field: &str, message: String| errors.push(FieldError::field(field, message));
        if self.rate_plan_ids.is_empty() {
            fail("ratePlanIds", "Choose at least one rate plan.".into());
        }
        if self.rate_plan_ids.len() > MAX_BULK_PLANS {
            fail("ratePlanIds", format!("Choose at most {MAX_BULK_PLANS} rate plans for one change."));
        }
        if self.weekdays.is_empty() {
            fail("weekdays", "Choose at least one day of the week.".into());
        }
        let (_, last_writable) = daily_rates::writable_window(today);
        if self.from < today {
            fail("from", format!("The range must not start in the past: start on {today} (today) or later."));
        }
        if self.to < self.from {
            fail("to", "The last night must not be before the first.".into());
        } else if self.to > last_writable {
            fail("to", format!("Rates can be set up to {last_writable} (three years ahead)."));
        }
        match self.price {
            PriceChange::Set(price) if price < 0 => fail("price", "A price cannot be negative.".into()),
            PriceChange::Set(price) if !money::in_bounds(price) => {
                fail("price", "The price is too large.".into());
            }
            PriceChange::By(amount) if amount.abs() > money::MAX_AMOUNT => {
                fail("price", "The change is too large.".into());
            }
            PriceChange::Percent(p) if p < -10_000 => {
                fail("price", "A price can fall by 100 % at most.".into());
            }
            PriceChange::Percent(p) if p > MAX_PERCENT_HUNDREDTHS => {
                fail("price", "A price can rise by 1000 % at most.".into());
            }
            _ => {}
        }
        if let Change::Set(n) = self.availability {
            if n < 0 {
                fail("availability", "The rooms to sell cannot be negative.".into());
            }
        }
        for (field, change) in [("minStay", self.min_stay), ("maxStay", self.max_stay)] {
            if let Change::Set(n) = change {
                if !(1..=MAX_STAY_NIGHTS).contains(&n) {
                    fail(field, format!("Enter a number of nights from 1 to {MAX_STAY_NIGHTS}."));
                }
            }
        }
        if let (Change::Set(min), Change::Set(max)) = (self.min_stay, self.max_stay) {
            if min > max {
                fail("minStay", format!("The minimum stay ({min}) is longer than the maximum stay ({max})."));
            }
        }
        if !self.changes_something() {
            errors.push(FieldError {
                field: None,
                index: None,
                message: "Choose at least one change: a price, the rooms to sell or a restriction.".into(),
            });
        }
        let days = self.dates().count();
        if errors.is_empty() && days * self.rate_plan_ids.len() > MAX_BULK_NIGHTS {
            errors.push(FieldError {
                field: None,
                index: None,
                message: format!(
                    "That is {} nights; one change may cover {MAX_BULK_NIGHTS} at most. Choose fewer days or plans.",
                    days * self.rate_plan_ids.len()
                ),
            });
        }
        errors
    }

    /// The daily-rate entries of the edit against what is stored, and what they amount to. A night without a
    /// rate gets one only when the edit sets a price (a price is what makes a record; changing by an amount or a
    /// percentage needs a price to change). Prices that would fall below zero are refused, naming the first night.
    fn entries(&self, stored: &Stored) -> Result<(Vec<DailyRateIn>, BulkOutcome)> {
        let mut outcome = BulkOutcome::default();
        let mut entries = Vec::new();
        let mut refusals = Refusals::default();
        for plan_id in &self.rate_plan_ids {
            let Some(plan) = stored.plans.get(plan_id) else { continue };
            for date in self.dates() {
                outcome.selected += 1;
                let base = stored.record(plan_id, date);
                let price = match (self.price, base) {
                    (PriceChange::Set(price), _) => price,
                    (_, None) => {
                        outcome.without_rate += 1;
                        continue;
                    }
                    (PriceChange::Keep, Some(base)) => base.price,
                    (PriceChange::By(amount), Some(base)) => base.price.saturating_add(amount),
                    (PriceChange::Percent(p), Some(base)) => change_by_percent(base.price, p).unwrap_or(i64::MAX),
                };
                if price < 0 {
                    let was = base.map_or(0, |b| b.price);
                    refusals.add(
                        "price",
                        format!(
                            "{}, {}: the price would fall below zero (it is {}).",
                            date.format("%a %-d %b %Y"),
                            plan.name,
                            money::format(was, &plan.currency)
                        ),
                    );
                } else if !money::in_bounds(price) {
                    refusals.add(
                        "price",
                        format!("{}, {}: the price would be too large.", date.format("%a %-d %b %Y"), plan.name),
                    );
                }
                let min_stay = self.min_stay.apply(base.and_then(|b| b.min_stay));
                let max_stay = self.max_stay.apply(base.and_then(|b| b.max_stay));
                if let (Some(min), Some(max)) = (min_stay, max_stay) {
                    if min > max {
                        // Beside the field the edit sets (or the minimum, when it sets both or neither).
                        let field = if self.max_stay != Change::Keep && self.min_stay == Change::Keep {
                            "maxStay"
                        } else {
                            "minStay"
                        };
                        refusals.add(
                            field,
                            format!(
                                "{}, {}: the minimum stay would be {min} nights and the maximum {max}.",
                                date.format("%a %-d %b %Y"),
                                plan.name
                            ),
                        );
                    }
                }
                entries.push(DailyRateIn {
                    rate_plan_id: plan_id.clone(),
                    date: date.format("%Y-%m-%d").to_string(),
                    price,
                    availability: self.availability.as_entry(),
                    stop_sell: self.stop_sell,
                    closed_to_arrival: self.closed_to_arrival,
                    closed_to_departure: self.closed_to_departure,
                    min_stay: self.min_stay.as_entry(),
                    max_stay: self.max_stay.as_entry(),
                });
            }
        }
        refusals.finish()?;
        Ok((entries, outcome))
    }
}

/// Refusals of many nights: per field, the first night's message and how many more there are.
#[derive(Default)]
struct Refusals {
    by_field: Vec<(String, String, usize)>,
}

impl Refusals {
    fn add(&mut self, field: &str, message: String) {
        match self.by_field.iter_mut().find(|(f, _, _)| f == field) {
            Some((_, _, more)) => *more += 1,
            None => self.by_field.push((field.to_string(), message, 0)),
        }
    }

    fn finish(self) -> Result<()> {
        if self.by_field.is_empty() {
            return Ok(());
        }
        Err(Error::Validation(
            self.by_field
                .into_iter()
                .map(|(field, message, more)| {
                    let message = match more {
                        0 => message,
                        1 => format!("{message} So would 1 more night."),
                        n => format!("{message} So would {n} more nights."),
                    };
                    FieldError::field(field, message)
                })
                .collect(),
        ))
    }
}

/// Whether a record as merged differs from what is stored (the stamp aside).
fn differs(merged: &DailyRate, stored: Option<&DailyRate>) -> bool {
    stored.is_none_or(|s| {
        (s.price, s.availability, s.stop_sell, s.closed_to_arrival, s.closed_to_departure, s.min_stay, s.max_stay)
            != (
                merged.price,
                merged.availability,
                merged.stop_sell,
                merged.closed_to_arrival,
                merged.closed_to_departure,
                merged.min_stay,
                merged.max_stay,
            )
    })
}

/// Checks `edit` against the hotel's today and the stored records and answers what it would change, writing
/// nothing: the preview. The same rules as [`apply`], which may still refuse if the records change meanwhile.
pub async fn preview(db: &Db, actor: &Actor, hotel_id: &str, edit: &BulkEdit) -> Result<BulkOutcome> {
    actor.require_scope(Scope::RatesWrite)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    refuse(edit.check(hotel.today()))?;
    let ids = plan_ids(edit);
    refuse_foreign_plans(db, actor, &hotel.id, &ids).await?;
    let mut conn = db.read().await?;
    let stored = Stored::read(&mut conn, actor, &ids, edit.from, edit.to).await?;
    drop(conn);
    let (_, outcome) = plan(edit, &hotel.id, &stored)?;
    Ok(outcome)
}

/// Applies `edit` in one transaction through the daily rates' one write path: every changed night is written, or,
/// when any night is refused, none. Nights already as asked are not written.
pub async fn apply(db: &Db, actor: &Actor, hotel_id: &str, edit: &BulkEdit) -> Result<BulkOutcome> {
    actor.require_scope(Scope::RatesWrite)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    refuse(edit.check(hotel.today()))?;
    let ids = plan_ids(edit);
    refuse_foreign_plans(db, actor, &hotel.id, &ids).await?;
    let mut tx = crate::domain::change::Change::begin(db, actor).await?;
    let stored = Stored::lock(&mut tx, actor, &ids, edit.from, edit.to).await?;
    let (changed, outcome) = plan(edit, &hotel.id, &stored)?;
    if !changed.is_empty() {
        daily_rates::write_locked(&mut tx, &actor.organization_id, &stored, &changed, Utc::now().date_naive()).await?;
        tx.commit().await?;
    }
    Ok(outcome)
}

fn refuse(errors: Vec<FieldError>) -> Result<()> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Validation(errors))
    }
}

/// Refuses plan ids that are not the hotel's, with one read of its plans, before any plan is read by its id.
async fn refuse_foreign_plans(db: &Db, actor: &Actor, hotel_id: &str, ids: &[&str]) -> Result<()> {
    let own = store::rate_plans::list(&mut *db.read().await?, &actor.organization_id, hotel_id, None).await?;
    if ids.iter().all(|id| own.iter().any(|p| p.id == *id)) {
        Ok(())
    } else {
        Err(Error::Validation(vec![FieldError::field("ratePlanIds", "Choose rate plans of this hotel.")]))
    }
}

fn plan_ids(edit: &BulkEdit) -> Vec<&str> {
    let mut ids: Vec<&str> = edit.rate_plan_ids.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The entries of `edit` that change something, checked by the daily rates' one validation, and the outcome.
fn plan(edit: &BulkEdit, hotel_id: &str, stored: &Stored) -> Result<(Vec<DailyRateIn>, BulkOutcome)> {
    let foreign = edit.rate_plan_ids.iter().any(|id| stored.plans.get(id).is_none_or(|p| p.hotel_id != hotel_id));
    if foreign {
        return Err(Error::Validation(vec![FieldError::field("ratePlanIds", "Choose rate plans of this hotel.")]));
    }
    let (entries, mut outcome) = edit.entries(stored)?;
    let merged = daily_rates::check_and_merge(&entries, stored, Utc::now().date_naive(), now())
        .map_err(|err| name_nights(err, &entries, stored))?;
    let mut changed = Vec::with_capacity(entries.len());
    let (mut days, mut plans) = (HashSet::new(), HashSet::new());
    for (entry, record) in entries.into_iter().zip(&merged) {
        if differs(record, stored.record(&record.rate_plan_id, record.date)) {
            days.insert(record.date);
            plans.insert(record.rate_plan_id.clone());
            changed.push(entry);
        } else {
            outcome.unchanged += 1;
        }
    }
    outcome.changed = changed.len();
    outcome.days = days.len();
    outcome.plans = plans.len();
    Ok((changed, outcome))
}

/// The one validation's refusals (by entry index) as an operator reads them: the night and plan named.
fn name_nights(err: Error, entries: &[DailyRateIn], stored: &Stored) -> Error {
    let Error::Validation(errors) = err else { return err };
    let mut refusals = Refusals::default();
    for e in errors {
        let entry = e.index.and_then(|i| entries.get(i));
        let night = entry.map(|entry| {
            let plan = stored.plans.get(&entry.rate_plan_id).map_or(entry.rate_plan_id.as_str(), |p| p.name.as_str());
            format!("{}, {plan}: ", entry.date)
        });
        refusals.add(&e.field.unwrap_or_default(), format!("{}{}.", night.unwrap_or_default(), e.message));
    }
    match refusals.finish() {
        Ok(()) => Error::Validation(Vec::new()),
        Err(err) => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rate_plans::RatePlan;
    use chrono::{DateTime, Days, Utc};

    /// A Monday a few weeks ahead (within the window rates may be written for) and the days after it.
    fn monday() -> NaiveDate {
        let start = Utc::now().date_naive() + Days::new(21);
        start.iter_days().find(|d| d.weekday() == Weekday::Mon).unwrap()
    }

    fn day(offset: u64) -> NaiveDate {
        monday() + Days::new(offset)
    }

    fn long(d: NaiveDate) -> String {
        d.format("%a %-d %b %Y").to_string()
    }

    fn rate_plan(id: &str) -> RatePlan {
        let at = DateTime::<Utc>::from_timestamp(0, 0).unwrap();
        RatePlan {
            id: id.into(),
            hotel_id: "h".into(),
            room_type_id: None,
            name: format!("Plan {id}"),
            code: None,
            currency: "EUR".into(),
            active: true,
            created_at: at,
            updated_at: at,
        }
    }

    fn record(plan: &str, date: NaiveDate, price: i64) -> DailyRate {
        DailyRate {
            rate_plan_id: plan.into(),
            date,
            price,
            currency: "EUR".into(),
            availability: None,
            stop_sell: false,
            closed_to_arrival: false,
            closed_to_departure: false,
            min_stay: None,
            max_stay: None,
            updated_at: DateTime::<Utc>::from_timestamp(0, 0).unwrap(),
        }
    }

    fn stored(records: Vec<DailyRate>) -> Stored {
        Stored {
            plans: [rate_plan("a"), rate_plan("b")].into_iter().map(|p| (p.id.clone(), p)).collect(),
            records: records.into_iter().map(|r| ((r.rate_plan_id.clone(), r.date), r)).collect(),
        }
    }

    /// Mondays and Saturdays of a week, of plans a and b.
    fn edit(price: PriceChange) -> BulkEdit {
        BulkEdit {
            rate_plan_ids: vec!["a".into(), "b".into()],
            from: day(0),
            to: day(6),
            weekdays: vec![Weekday::Mon, Weekday::Sat],
            price,
            availability: Change::Keep,
            stop_sell: None,
            closed_to_arrival: None,
            closed_to_departure: None,
            min_stay: Change::Keep,
            max_stay: Change::Keep,
        }
    }

    #[test]
    fn percentages_round_to_the_nearest_minor_unit_halves_up() {
        assert_eq!(change_by_percent(9999, 1000), Some(10999)); // 109.989 → 109.99
        assert_eq!(change_by_percent(1005, -1000), Some(905)); // 904.5 → 905
        assert_eq!(change_by_percent(1004, -1000), Some(904)); // 903.6 → 904
        assert_eq!(change_by_percent(12000, -1250), Some(10500));
        assert_eq!(change_by_percent(333, 3333), Some(444)); // 443.9889 → 444
        assert_eq!(change_by_percent(1, -5000), Some(1)); // 0.5 → 1
        assert_eq!(change_by_percent(12000, -10_000), Some(0));
        assert_eq!(change_by_percent(i64::MAX, 10_000), None);
    }

    #[test]
    fn only_the_chosen_weekdays_are_selected() {
        let e = edit(PriceChange::Set(10000));
        assert_eq!(e.dates().collect::<Vec<_>>(), vec![day(0), day(5)]);
        let (entries, outcome) = e.entries(&stored(Vec::new())).unwrap();
        assert_eq!(entries.len(), 4);
        assert_eq!(outcome.selected, 4);
        assert_eq!(outcome.without_rate, 0);
    }

    #[test]
    fn nights_without_a_rate_are_created_only_by_setting_a_price() {
        let s = stored(vec![record("a", day(0), 10000)]);
        for change in [PriceChange::Keep, PriceChange::By(500), PriceChange::Percent(1000)] {
            let mut e = edit(change);
            e.stop_sell = Some(true);
            let (entries, outcome) = e.entries(&s).unwrap();
            assert_eq!(entries.len(), 1, "{change:?}");
            assert_eq!(outcome.without_rate, 3, "{change:?}");
        }
        let (entries, _) = edit(PriceChange::By(-2500)).entries(&s).unwrap();
        assert_eq!(entries[0].price, 7500);
        let (entries, _) = edit(PriceChange::Percent(-1000)).entries(&s).unwrap();
        assert_eq!(entries[0].price, 9000);
    }

    #[test]
    fn a_price_below_zero_refuses_the_whole_edit_naming_the_night() {
        let s = stored(vec![record("a", day(0), 1000), record("b", day(5), 900), record("b", day(0), 5000)]);
        let Err(Error::Validation(errors)) = edit(PriceChange::By(-2000)).entries(&s) else { panic!("refused") };
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field.as_deref(), Some("price"));
        assert!(errors[0].message.contains(&format!("{}, Plan a", long(day(0)))), "{}", errors[0].message);
        assert!(errors[0].message.contains("So would 1 more night."), "{}", errors[0].message);
    }

    #[test]
    fn a_minimum_stay_above_a_stored_maximum_is_refused() {
        let mut limited = record("a", day(5), 1000);
        limited.max_stay = Some(2);
        let s = stored(vec![record("a", day(0), 1000), limited]);
        let mut e = edit(PriceChange::Keep);
        e.min_stay = Change::Set(3);
        let Err(Error::Validation(errors)) = e.entries(&s) else { panic!("refused") };
        assert_eq!(errors[0].field.as_deref(), Some("minStay"));
        assert!(errors[0].message.contains(&long(day(5))), "{}", errors[0].message);
        // Clearing the maximum in the same edit makes it fine.
        e.max_stay = Change::Clear;
        assert!(e.entries(&s).is_ok());
    }

    #[test]
    fn the_edit_itself_is_checked_field_by_field() {
        let today = day(1);
        let fields = |e: &BulkEdit| -> Vec<Option<String>> { e.check(today).into_iter().map(|e| e.field).collect() };
        let mut e = edit(PriceChange::Set(-1));
        e.rate_plan_ids.clear();
        e.weekdays.clear();
        e.min_stay = Change::Set(5);
        e.max_stay = Change::Set(3);
        e.availability = Change::Set(-2);
        let found = fields(&e);
        for field in ["ratePlanIds", "weekdays", "from", "price", "availability", "minStay"] {
            assert!(found.contains(&Some(field.to_string())), "{field} in {found:?}");
        }
        let mut nothing = edit(PriceChange::Keep);
        nothing.from = today;
        assert_eq!(fields(&nothing), vec![None], "nothing to change");
        let mut backwards = edit(PriceChange::Percent(-10_001));
        backwards.from = day(20);
        assert_eq!(fields(&backwards), vec![Some("to".to_string()), Some("price".to_string())]);
    }

    #[test]
    fn nights_already_as_asked_are_not_written() {
        let s = stored(vec![record("a", day(0), 10000), record("a", day(5), 9000)]);
        let mut e = edit(PriceChange::Set(10000));
        e.rate_plan_ids = vec!["a".into()];
        let (changed, outcome) = plan(&e, "h", &s).unwrap();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].date, day(5).to_string());
        assert_eq!(
            (outcome.selected, outcome.changed, outcome.unchanged, outcome.days, outcome.plans),
            (2, 1, 1, 1, 1)
        );
        // A plan of another hotel is refused.
        assert!(plan(&e, "another hotel", &s).is_err());
    }
}
