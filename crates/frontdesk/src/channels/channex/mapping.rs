//! Our availability and rates as Channex's ARI request bodies (docs/channex-api-notes.md §2), as pure functions.
//!
//! * Availability belongs to Channex's room type: one value per mapped room type and run of nights with the same
//!   count of rooms free (`date`, or `date_from`/`date_to` inclusive).
//! * Rates and restrictions belong to Channex's rate plan, which has exactly one room type: our plan for every room
//!   type is one Channex plan per room type (titled apart: [`rate_plan_titles`]). Each night is sent whole (rate,
//!   `min_stay_arrival`, `max_stay`, closed to arrival and departure, stop-sell), so a run of equal nights is one
//!   value and what Channex holds is exactly ours. Prices are per room (`sell_mode: per_room`); occupancy-based
//!   prices are a later step. Prices go as decimal strings in major units (`"456.23"`), never floats.
//! * A night Channex cannot sell becomes `stop_sell: true`: a plan turned off, a night without a price (or a price
//!   of 0, which Channex refuses), a plan's own cap of 0 rooms. A cap above 0 cannot be sent (Channex's
//!   `max_availability` is read-only): the room type's availability is what channels sell.
//! * Fields are omitted, never `null` (Channex warns about explicit nulls).

use std::collections::{HashMap, HashSet};

use chrono::{Days, NaiveDate};
use serde::Serialize;

use crate::domain::daily_rates::DailyRate;
use crate::domain::money;

/// One value of `POST /availability`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AvailabilityValue {
    pub property_id: String,
    pub room_type_id: String,
    #[serde(flatten)]
    pub dates: Dates,
    pub availability: i64,
}

/// One night, or a run of nights (inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Dates {
    One { date: String },
    Range { date_from: String, date_to: String },
}

impl Dates {
    fn of(from: NaiveDate, to: NaiveDate) -> Dates {
        if from == to {
            Dates::One { date: day(from) }
        } else {
            Dates::Range { date_from: day(from), date_to: day(to) }
        }
    }
}

fn day(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// What one rate plan sells on one night, as Channex is told it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restrictions {
    /// Decimal string in major units; omitted when there is no price above 0 (the night is stop-sell then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    pub min_stay_arrival: i64,
    /// 0: no maximum.
    pub max_stay: i64,
    pub closed_to_arrival: bool,
    pub closed_to_departure: bool,
    pub stop_sell: bool,
}

/// One value of `POST /restrictions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestrictionValue {
    pub property_id: String,
    pub rate_plan_id: String,
    #[serde(flatten)]
    pub dates: Dates,
    #[serde(flatten)]
    pub restrictions: Restrictions,
}

/// The body of both ARI calls: `{"values": [...]}` at the top level.
#[derive(Debug, Serialize)]
pub struct Values<'a, T> {
    pub values: &'a [T],
}

/// Runs of consecutive nights with equal values, in order: `(first, last, value)`.
pub fn runs<T: PartialEq + Clone>(nights: &[(NaiveDate, T)]) -> Vec<(NaiveDate, NaiveDate, T)> {
    let mut out: Vec<(NaiveDate, NaiveDate, T)> = Vec::new();
    for (night, value) in nights {
        if let Some(last) = out.last_mut() {
            if last.1 + Days::new(1) == *night && last.2 == *value {
                last.1 = *night;
                continue;
            }
        }
        out.push((*night, *night, value.clone()));
    }
    out
}

/// The availability values for `counts` (our room type → its free rooms per night, nights in order) of the room
/// types mapped in `room_types` (ours → Channex's), in the order of the mapping.
pub fn availability_values(
    property_id: &str,
    room_types: &[(String, String)],
    counts: &HashMap<String, Vec<(NaiveDate, i64)>>,
) -> Vec<AvailabilityValue> {
    let mut values = Vec::new();
    for (ours, theirs) in room_types {
        let Some(nights) = counts.get(ours) else { continue };
        for (from, to, availability) in runs(nights) {
            values.push(AvailabilityValue {
                property_id: property_id.to_string(),
                room_type_id: theirs.clone(),
                dates: Dates::of(from, to),
                availability,
            });
        }
    }
    values
}

/// What a night of a plan is, as Channex is told it: `record` is the night's daily rate (none: nothing is sold
/// that night), `active` whether the plan is on.
pub fn night(active: bool, record: Option<&DailyRate>, currency: &str) -> Restrictions {
    let Some(r) = record else {
        return Restrictions {
            rate: None,
            min_stay_arrival: 1,
            max_stay: 0,
            closed_to_arrival: false,
            closed_to_departure: false,
            stop_sell: true,
        };
    };
    let priced = r.price > 0;
    Restrictions {
        rate: priced.then(|| money::input_value(r.price, currency)),
        min_stay_arrival: r.min_stay.unwrap_or(1).max(1),
        max_stay: r.max_stay.unwrap_or(0).max(0),
        closed_to_arrival: r.closed_to_arrival,
        closed_to_departure: r.closed_to_departure,
        stop_sell: !active || !priced || r.stop_sell || r.availability == Some(0),
    }
}

/// A mapped (rate plan, room type): Channex's plan id, and the plan's nights.
pub struct PlanInput<'a> {
    pub remote_id: &'a str,
    pub active: bool,
    pub currency: &'a str,
    pub nights: &'a [(NaiveDate, Option<DailyRate>)],
}

/// The restriction values of `plans`, each run of equal nights one value.
pub fn restriction_values(property_id: &str, plans: &[PlanInput<'_>]) -> Vec<RestrictionValue> {
    let mut values = Vec::new();
    for plan in plans {
        let nights: Vec<(NaiveDate, Restrictions)> = plan
            .nights
            .iter()
            .map(|(date, record)| (*date, night(plan.active, record.as_ref(), plan.currency)))
            .collect();
        for (from, to, restrictions) in runs(&nights) {
            values.push(RestrictionValue {
                property_id: property_id.to_string(),
                rate_plan_id: plan.remote_id.to_string(),
                dates: Dates::of(from, to),
                restrictions,
            });
        }
    }
    values
}

/// Titles for the Channex rate plans made from ours, unique within the property as Channex requires: a plan of
/// one room type keeps its name; a plan for every room type becomes one plan per room type, named
/// `<plan> · <room type>`; a title already taken gets ` (2)`, ` (3)`… Input: (plan id, plan name, room type id,
/// room type name, whether the plan is for every room type), in order, and the titles the property has already;
/// output: the titles in the same order.
pub fn rate_plan_titles(pairs: &[(&str, &str, &str, &str, bool)], already: &[&str]) -> Vec<String> {
    let mut taken: HashSet<String> = already.iter().map(|t| t.to_lowercase()).collect();
    let mut out = Vec::with_capacity(pairs.len());
    for (_, plan_name, _, room_type_name, for_every_type) in pairs {
        let base = if *for_every_type { format!("{plan_name} · {room_type_name}") } else { plan_name.to_string() };
        let mut title = base.clone();
        let mut n = 2;
        while !taken.insert(title.to_lowercase()) {
            title = format!("{base} ({n})");
            n += 1;
        }
        out.push(title);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, day).unwrap()
    }

    fn rate(day: u32, price: i64) -> DailyRate {
        DailyRate {
            rate_plan_id: "p".into(),
            date: d(day),
            price,
            currency: "USD".into(),
            availability: None,
            stop_sell: false,
            closed_to_arrival: false,
            closed_to_departure: false,
            min_stay: None,
            max_stay: None,
            updated_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn equal_consecutive_nights_collapse_into_ranges() {
        let nights = vec![(d(1), 3), (d(2), 3), (d(3), 2), (d(5), 2), (d(6), 2)];
        assert_eq!(runs(&nights), vec![(d(1), d(2), 3), (d(3), d(3), 2), (d(5), d(6), 2)]);
        let counts = HashMap::from([("ours".to_string(), nights)]);
        let values = availability_values("P", &[("ours".into(), "theirs".into())], &counts);
        assert_eq!(
            serde_json::to_value(Values { values: &values }).unwrap(),
            json!({"values": [
                {"property_id": "P", "room_type_id": "theirs", "date_from": "2026-11-01", "date_to": "2026-11-02", "availability": 3},
                {"property_id": "P", "room_type_id": "theirs", "date": "2026-11-03", "availability": 2},
                {"property_id": "P", "room_type_id": "theirs", "date_from": "2026-11-05", "date_to": "2026-11-06", "availability": 2},
            ]})
        );
    }

    #[test]
    fn nights_carry_price_restrictions_and_stop_sell() {
        let mut capped = rate(2, 45623);
        capped.availability = Some(0);
        let mut restricted = rate(3, 33300);
        restricted.min_stay = Some(3);
        restricted.max_stay = Some(7);
        restricted.closed_to_arrival = true;
        let nights = vec![(d(1), Some(rate(1, 45623))), (d(2), Some(capped)), (d(3), Some(restricted)), (d(4), None)];
        let values =
            restriction_values("P", &[PlanInput { remote_id: "R", active: true, currency: "USD", nights: &nights }]);
        assert_eq!(
            serde_json::to_value(&values).unwrap(),
            json!([
                {"property_id": "P", "rate_plan_id": "R", "date": "2026-11-01", "rate": "456.23", "min_stay_arrival": 1,
                 "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false, "stop_sell": false},
                {"property_id": "P", "rate_plan_id": "R", "date": "2026-11-02", "rate": "456.23", "min_stay_arrival": 1,
                 "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false, "stop_sell": true},
                {"property_id": "P", "rate_plan_id": "R", "date": "2026-11-03", "rate": "333.00", "min_stay_arrival": 3,
                 "max_stay": 7, "closed_to_arrival": true, "closed_to_departure": false, "stop_sell": false},
                {"property_id": "P", "rate_plan_id": "R", "date": "2026-11-04", "min_stay_arrival": 1,
                 "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false, "stop_sell": true},
            ])
        );
        let off = restriction_values(
            "P",
            &[PlanInput { remote_id: "R", active: false, currency: "JPY", nights: &nights[..1] }],
        );
        assert_eq!(off[0].restrictions.rate.as_deref(), Some("45623"), "JPY has no minor unit");
        assert!(off[0].restrictions.stop_sell, "a plan turned off sells nothing");
    }

    #[test]
    fn a_plan_for_every_room_type_gets_one_unique_title_per_room_type() {
        let pairs = [
            ("a", "BAR", "t", "Twin", true),
            ("a", "BAR", "d", "Double", true),
            ("b", "BAR · Twin", "t", "Twin", false),
            ("c", "Promo", "d", "Double", false),
        ];
        assert_eq!(rate_plan_titles(&pairs, &[]), ["BAR · Twin", "BAR · Double", "BAR · Twin (2)", "Promo"]);
        assert_eq!(
            rate_plan_titles(&pairs, &["promo"]),
            ["BAR · Twin", "BAR · Double", "BAR · Twin (2)", "Promo (2)"],
            "a title the property has already (in any case) is taken"
        );
    }
}
