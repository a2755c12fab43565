//! What the read-only assistant endpoint (MCP, `src/mcp`) may tell: catalogue, prices, availability and
//! aggregate counts of the caller's organization, never a guest, a reservation or a room allocation.
//!
//! Every answer is built here from an explicit list of fields, so nothing new in a domain record can leak into the
//! assistant endpoint by accident. Counts past [`COUNT_BOUND`] are reported as `"50+"`: a lower bound, not a total.

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};
use serde::{Serialize, Serializer};

use super::availability::{self, AvailabilityCopies, AvailabilityQuery, OfferKey};
use super::daily_rates::{self, DailyRatesQuery};
use super::reservations::ReservationStatus;
use super::validate::{calendar_date, parse_date, Checks};
use super::{hotels, rate_plans, room_types, Actor, Error, Result};
use crate::store::{self, Db};

/// Counts above this answer as `"50+"`.
pub const COUNT_BOUND: i64 = 50;
/// The widest date range one call may ask for, in days (inclusive of both ends).
pub const MAX_RANGE_DAYS: i64 = 366;
/// How many nights ahead the catalogue's lowest and highest prices look.
pub const CATALOGUE_NIGHTS: u64 = 30;

/// A count, exact up to [`COUNT_BOUND`]; above it, the string `"50+"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded(pub i64);

impl Serialize for Bounded {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if self.0 > COUNT_BOUND {
            s.serialize_str(&format!("{COUNT_BOUND}+"))
        } else {
            s.serialize_i64(self.0)
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HotelSummary {
    pub id: String,
    pub name: String,
    pub currency: String,
    pub timezone: String,
}

pub async fn hotels(db: &Db, actor: &Actor) -> Result<Vec<HotelSummary>> {
    Ok(hotels::list(db, actor)
        .await?
        .into_iter()
        .map(|h| HotelSummary { id: h.id, name: h.name, currency: h.currency, timezone: h.timezone })
        .collect())
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomTypeSummary {
    pub id: String,
    pub hotel_id: String,
    pub name: String,
    pub max_occupancy: i64,
    pub max_adults: i64,
    pub max_children: i64,
}

pub async fn room_types(db: &Db, actor: &Actor, hotel_id: &str) -> Result<Vec<RoomTypeSummary>> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    Ok(room_types::list(db, actor, Some(&hotel.id))
        .await?
        .into_iter()
        .map(|t| RoomTypeSummary {
            id: t.id,
            hotel_id: t.hotel_id,
            name: t.name,
            max_occupancy: t.max_occupancy,
            max_adults: t.max_adults,
            max_children: t.max_children,
        })
        .collect())
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RatePlanSummary {
    pub id: String,
    pub hotel_id: String,
    /// `null`: the plan prices every room type of the hotel.
    pub room_type_id: Option<String>,
    pub name: String,
    pub code: Option<String>,
    pub currency: String,
    pub active: bool,
    /// Tonight's price (the hotel's local date), minor units; `null` when none is published.
    pub price_tonight: Option<i64>,
    /// Lowest and highest published nightly price over the next 30 nights, minor units.
    pub lowest_price_next_30_nights: Option<i64>,
    pub highest_price_next_30_nights: Option<i64>,
}

pub async fn rate_plans(
    db: &Db,
    actor: &Actor,
    hotel_id: &str,
    room_type_id: Option<&str>,
) -> Result<Vec<RatePlanSummary>> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    if let Some(room_type_id) = room_type_id {
        if room_types::get(db, actor, room_type_id).await?.hotel_id != hotel.id {
            return Err(Error::NotFound("room type of this hotel"));
        }
    }
    let today = hotel.today();
    let last = today.checked_add_days(Days::new(CATALOGUE_NIGHTS - 1)).unwrap_or(today);
    let plans = rate_plans::list(db, actor, Some(&hotel.id), room_type_id).await?;
    let mut out = Vec::with_capacity(plans.len());
    for plan in plans {
        let rates = daily_rates::list(
            db,
            actor,
            DailyRatesQuery {
                hotel_id: Some(hotel.id.clone()),
                rate_plan_id: plan.id.clone(),
                date_from: today.to_string(),
                date_to: last.to_string(),
            },
        )
        .await?;
        out.push(RatePlanSummary {
            price_tonight: rates.iter().find(|r| r.date == today).map(|r| r.price),
            lowest_price_next_30_nights: rates.iter().map(|r| r.price).min(),
            highest_price_next_30_nights: rates.iter().map(|r| r.price).max(),
            id: plan.id,
            hotel_id: plan.hotel_id,
            room_type_id: plan.room_type_id,
            name: plan.name,
            code: plan.code,
            currency: plan.currency,
            active: plan.active,
        });
    }
    Ok(out)
}

/// A checked `[from, to]` range of at most [`MAX_RANGE_DAYS`] days.
pub fn date_range(from: &str, to: &str) -> Result<(NaiveDate, NaiveDate)> {
    let mut c = Checks::new();
    let first = parse_date(&mut c, "dateFrom", from);
    let last = parse_date(&mut c, "dateTo", to);
    if let (Some(first), Some(last)) = (first, last) {
        if last < first {
            c.fail("dateTo", "must not be before dateFrom");
        } else if (last - first).num_days() >= MAX_RANGE_DAYS {
            c.fail("dateTo", format!("the range may span at most {MAX_RANGE_DAYS} days"));
        }
    }
    c.finish()?;
    match (first, last) {
        (Some(first), Some(last)) => Ok((first, last)),
        _ => Err(Error::BadRequest("invalid dates".into())),
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayPrice {
    pub date: NaiveDate,
    /// Minor units of the plan's currency.
    pub price: i64,
    /// Rooms sellable under the plan that night; `null`: no cap beyond the physical rooms.
    pub availability: Option<Bounded>,
    pub stop_sell: bool,
    pub closed_to_arrival: bool,
    pub closed_to_departure: bool,
    pub min_stay: Option<i64>,
    pub max_stay: Option<i64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DailyPrices {
    pub rate_plan_id: String,
    pub rate_plan_name: String,
    pub hotel_id: String,
    pub currency: String,
    /// Nights without a published price are left out.
    pub days: Vec<DayPrice>,
}

pub async fn daily_prices(db: &Db, actor: &Actor, rate_plan_id: &str, from: &str, to: &str) -> Result<DailyPrices> {
    let (first, last) = date_range(from, to)?;
    let plan = rate_plans::get(db, actor, rate_plan_id).await?;
    let rates = daily_rates::list(
        db,
        actor,
        DailyRatesQuery {
            hotel_id: Some(plan.hotel_id.clone()),
            rate_plan_id: plan.id.clone(),
            date_from: first.to_string(),
            date_to: last.to_string(),
        },
    )
    .await?;
    Ok(DailyPrices {
        rate_plan_id: plan.id,
        rate_plan_name: plan.name,
        hotel_id: plan.hotel_id,
        currency: plan.currency,
        days: rates
            .into_iter()
            .map(|r| DayPrice {
                date: r.date,
                price: r.price,
                availability: r.availability.map(Bounded),
                stop_sell: r.stop_sell,
                closed_to_arrival: r.closed_to_arrival,
                closed_to_departure: r.closed_to_departure,
                min_stay: r.min_stay,
                max_stay: r.max_stay,
            })
            .collect(),
    })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NightPrice {
    pub date: NaiveDate,
    pub price: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableOffer {
    pub room_type_id: String,
    pub room_type_name: String,
    pub rate_plan_id: String,
    pub rate_plan_name: String,
    pub currency: String,
    pub nights: i64,
    pub nightly: Vec<NightPrice>,
    /// Minor units of `currency`.
    pub total_price: i64,
    pub available_units: Bounded,
}

pub struct StayQuery {
    pub check_in_date: String,
    pub check_out_date: String,
    pub adults: Option<i64>,
    pub children: Option<i64>,
    pub infants: Option<i64>,
}

/// What the public availability search offers (without the bookable offer ids: the assistant endpoint cannot book).
pub async fn availability(
    db: &Db,
    key: &OfferKey,
    copies: &AvailabilityCopies,
    actor: &Actor,
    hotel_id: &str,
    stay: StayQuery,
) -> Result<Vec<AvailableOffer>> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    if !hotel.public_booking {
        return Err(Error::BadRequest(
            "availability is computed for hotels open to public booking only; this hotel is not".into(),
        ));
    }
    let query = AvailabilityQuery {
        check_in_date: stay.check_in_date,
        check_out_date: stay.check_out_date,
        adults: stay.adults,
        children: stay.children,
        infants: stay.infants,
    };
    Ok(availability::search(db, key, copies, &hotel.id, &query)
        .await?
        .offers
        .iter()
        .map(|o| AvailableOffer {
            room_type_id: o.room_type_id.clone(),
            room_type_name: o.room_type_name.clone(),
            rate_plan_id: o.rate_plan_id.clone(),
            rate_plan_name: o.rate_plan_name.clone(),
            currency: o.currency.clone(),
            nights: o.nights,
            nightly: o.nightly.iter().map(|n| NightPrice { date: n.date, price: n.price }).collect(),
            total_price: o.total_price,
            available_units: Bounded(o.available_units),
        })
        .collect())
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Housekeeping {
    pub hotel_id: String,
    /// Rooms by housekeeping status: CLEAN, DIRTY, INSPECTED, OUT_OF_ORDER.
    pub rooms_by_status: BTreeMap<&'static str, Bounded>,
    pub total_rooms: Bounded,
}

pub async fn housekeeping(db: &Db, actor: &Actor, hotel_id: &str) -> Result<Housekeeping> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let counts = store::summaries::rooms_by_status(&mut *db.read().await?, &actor.organization_id, &hotel.id).await?;
    let mut by_status: BTreeMap<&'static str, Bounded> =
        super::rooms::HousekeepingStatus::ALL.iter().map(|s| (s.as_str(), Bounded(0))).collect();
    let mut total = 0;
    for (status, n) in counts {
        if let Some(s) = super::rooms::HousekeepingStatus::parse(&status) {
            by_status.insert(s.as_str(), Bounded(n));
        }
        total += n;
    }
    Ok(Housekeeping { hotel_id: hotel.id, rooms_by_status: by_status, total_rooms: Bounded(total) })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleDay {
    pub date: NaiveDate,
    /// Confirmed (or since checked-in / checked-out) reservations arriving that day.
    pub arrivals: Bounded,
    /// Such reservations leaving that day.
    pub departures: Bounded,
    /// Such reservations staying the night of that day.
    pub in_house: Bounded,
    /// Booking requests awaiting staff approval whose stay starts that day.
    pub pending_requests: Bounded,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub hotel_id: String,
    pub days: Vec<ScheduleDay>,
}

pub async fn schedule(db: &Db, actor: &Actor, hotel_id: &str, from: &str, to: &str) -> Result<Schedule> {
    let (first, last) = date_range(from, to)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let counts = store::summaries::stay_counts(
        &mut *db.read().await?,
        &actor.organization_id,
        &hotel.id,
        &first.to_string(),
        &last.to_string(),
        &ReservationStatus::ON_THE_BOOKS,
    )
    .await?;
    let span = usize::try_from((last - first).num_days() + 1).unwrap_or(0);
    let mut days: Vec<[i64; 4]> = vec![[0; 4]; span];
    let index = |d: NaiveDate| usize::try_from((d - first).num_days()).ok().filter(|i| *i < span);
    for c in counts {
        let (Some(check_in), Some(check_out)) = (calendar_date(&c.check_in_date), calendar_date(&c.check_out_date))
        else {
            continue;
        };
        if c.status == "REQUESTED" {
            if let Some(i) = index(check_in) {
                days[i][3] += c.count;
            }
            continue;
        }
        if let Some(i) = index(check_in) {
            days[i][0] += c.count;
        }
        if let Some(i) = index(check_out) {
            days[i][1] += c.count;
        }
        // In house: the nights [check_in, check_out) that fall in the range.
        let start = check_in.max(first);
        let end = check_out.min(last.succ_opt().unwrap_or(last));
        let mut night = start;
        while night < end {
            if let Some(i) = index(night) {
                days[i][2] += c.count;
            }
            night = match night.succ_opt() {
                Some(n) => n,
                None => break,
            };
        }
    }
    Ok(Schedule {
        hotel_id: hotel.id,
        days: days
            .into_iter()
            .enumerate()
            .filter_map(|(i, [arrivals, departures, in_house, pending])| {
                Some(ScheduleDay {
                    date: first.checked_add_days(Days::new(u64::try_from(i).ok()?))?,
                    arrivals: Bounded(arrivals),
                    departures: Bounded(departures),
                    in_house: Bounded(in_house),
                    pending_requests: Bounded(pending),
                })
            })
            .collect(),
    })
}

/// A message for the assistant about a failed call: only the service's own words, never stored data.
pub fn error_message(err: &Error) -> String {
    match err {
        Error::Validation(errors) | Error::Unprocessable(errors) => errors
            .iter()
            .map(|e| match (&e.field, e.index) {
                (Some(f), _) => format!("{f}: {}", e.message),
                (None, Some(i)) => format!("entry {i}: {}", e.message),
                (None, None) => e.message.clone(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        Error::NotFound(what) => format!("{what} not found in your organization"),
        Error::BadRequest(m) | Error::Conflict(m) | Error::Forbidden(m) | Error::Unauthorized(m) => m.clone(),
        Error::RateLimited(m) | Error::TooManyAttempts { message: m, .. } => m.clone(),
        Error::Internal(err) => {
            tracing::error!(error = %format!("{err:#}"), "assistant tool failed");
            "the service could not answer; try again later".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_counts() {
        assert_eq!(serde_json::to_value(Bounded(3)).unwrap(), serde_json::json!(3));
        assert_eq!(serde_json::to_value(Bounded(50)).unwrap(), serde_json::json!(50));
        assert_eq!(serde_json::to_value(Bounded(51)).unwrap(), serde_json::json!("50+"));
    }

    #[test]
    fn ranges() {
        assert!(date_range("2026-01-01", "2026-12-31").is_ok());
        assert!(date_range("2026-01-01", "2027-01-02").is_err());
        assert!(date_range("2026-01-02", "2026-01-01").is_err());
        assert!(date_range("tomorrow", "2026-01-01").is_err());
    }
}
