//! Public availability and booking requests.
//!
//! An offer is a (room type, rate plan) pair that can be sold for the requested stay and party, priced night by
//! night from the daily rates. Its `offerId` is signed by the service (HMAC-SHA256 with a secret kept in the
//! database, so every process shares it), so a caller can neither forge nor edit one; booking recomputes the offer
//! under the inventory lock and refuses (409) if it changed.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use chrono::{Days, NaiveDate, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use utoipa::{IntoParams, ToSchema};

use super::codes::CurrencyCode;
use super::daily_rates::StayRates;
use super::finance::billing::{self, BillingSettings};
use super::finance::city_tax::{self, Night, Party, Pricing};
use super::hotels::Hotel;
use super::rate_plans::RatePlan;
use super::reservations::inventory;
use super::room_types::RoomType;
use super::validate::{parse_date, Checks};
use super::{money, Error, Result};
use crate::store::{self, Db};

pub mod booking_page;
mod copies;
pub use copies::{AvailabilityCopies, SearchAnswer, ANSWER_MAX_AGE};
// Booking requests have a file of their own; their types and `book` keep their `availability::…` paths.

/// Longest stay the public endpoints offer.
pub const MAX_STAY_NIGHTS: i64 = 30;
/// Most guests of one kind in a search.
pub const MAX_PARTY: i64 = 50;
/// How long an offer can be booked after it was shown.
pub const OFFER_TTL: TimeDelta = TimeDelta::minutes(30);

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AvailabilityQuery {
    #[param(format = Date, value_type = String)]
    pub check_in_date: String,
    /// After the check-in date, at most 30 nights later.
    #[param(format = Date, value_type = String)]
    pub check_out_date: String,
    /// Default 2.
    #[param(minimum = 1, maximum = 50)]
    pub adults: Option<i64>,
    /// Default 0.
    #[param(minimum = 0, maximum = 50)]
    pub children: Option<i64>,
    /// Default 0; infants do not count toward occupancy.
    #[param(minimum = 0, maximum = 50)]
    pub infants: Option<i64>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NightlyPrice {
    pub date: NaiveDate,
    pub price: i64,
}

/// A sellable (room type, rate plan) for the requested stay and party.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    /// Opaque and signed; book it with `POST /api/hotels/{hotelId}/book-reservation` within 30 minutes.
    pub offer_id: String,
    pub room_type_id: String,
    pub room_type_name: String,
    pub description: Option<String>,
    pub max_occupancy: i64,
    pub rate_plan_id: String,
    pub rate_plan_name: String,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub nights: i64,
    pub nightly: Vec<NightlyPrice>,
    /// In minor units of `currency`.
    pub total_price: i64,
    /// How many rooms of this offer can still be booked.
    pub available_units: i64,
    /// The city tax the stay will be charged besides its price, where the hotel's city has one (an extension;
    /// docs/money.md).
    pub city_tax: Option<OfferCityTax>,
    /// `totalPrice` and the city tax: what the folio of the stay will charge (an extension).
    pub total_with_taxes: i64,
}

/// The city tax of an offer.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OfferCityTax {
    /// As the hotel names it ("City tax").
    pub name: String,
    /// In minor units of the offer's currency.
    pub amount: i64,
}

/// The city tax of a stay of `nightly` prices for one room and `stay`'s party, by the hotel's rule.
fn city_tax_of(billing: &BillingSettings, nightly: &[NightlyPrice], stay: &Stay) -> Option<OfferCityTax> {
    let rule = billing.city_tax.as_ref()?;
    let nights: Vec<Night> = nightly.iter().map(|n| Night { date: n.date, rooms: 1, room_price: n.price }).collect();
    let party = Party { adults: stay.adults, children: stay.children };
    let pricing =
        Pricing { prices_include_vat: billing.prices_include_vat, accommodation_rate_bp: billing.accommodation_rate() };
    let lines = city_tax::nightly(rule, &nights, party, pricing)?;
    let amount = money::sum(lines.iter().map(|(_, l)| l.gross))?;
    Some(OfferCityTax { name: rule.name.clone(), amount })
}

/// A stay and party, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stay {
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub adults: i64,
    pub children: i64,
    pub infants: i64,
}

impl Stay {
    pub fn nights(&self) -> i64 {
        (self.check_out - self.check_in).num_days()
    }

    fn parse(q: &AvailabilityQuery) -> Result<Stay> {
        let mut c = Checks::new();
        let check_in = parse_date(&mut c, "checkInDate", &q.check_in_date);
        let check_out = parse_date(&mut c, "checkOutDate", &q.check_out_date);
        let (adults, children, infants) = (q.adults.unwrap_or(2), q.children.unwrap_or(0), q.infants.unwrap_or(0));
        c.range("adults", adults, 1, MAX_PARTY);
        c.range("children", children, 0, MAX_PARTY);
        c.range("infants", infants, 0, MAX_PARTY);
        if let (Some(from), Some(to)) = (check_in, check_out) {
            let today = Utc::now().date_naive();
            let horizon = today.checked_add_months(chrono::Months::new(36)).unwrap_or(today);
            let nights = (to - from).num_days();
            if nights < 1 {
                c.fail("checkOutDate", "must be after checkInDate");
            } else if nights > MAX_STAY_NIGHTS {
                c.fail("checkOutDate", format!("a stay may span at most {MAX_STAY_NIGHTS} nights"));
            }
            if from < today.pred_opt().unwrap_or(today) {
                c.fail("checkInDate", "must not be in the past");
            }
            if to > horizon {
                c.fail("checkOutDate", format!("must not be after {horizon}"));
            }
        }
        c.finish()?;
        match (check_in, check_out) {
            (Some(check_in), Some(check_out)) => Ok(Stay { check_in, check_out, adults, children, infants }),
            _ => Err(Error::BadRequest("invalid dates".into())),
        }
    }
}

/// An offer before signing.
#[derive(Debug, Clone)]
pub struct Priced {
    pub room_type: Arc<RoomType>,
    pub plan: Arc<RatePlan>,
    pub nightly: Vec<NightlyPrice>,
    pub total: i64,
    pub units: i64,
}

/// What an `offerId` carries.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Claims {
    pub(crate) h: String,
    pub(crate) t: String,
    pub(crate) p: String,
    pub(crate) i: NaiveDate,
    pub(crate) o: NaiveDate,
    pub(crate) a: i64,
    pub(crate) c: i64,
    pub(crate) n: i64,
    pub(crate) s: i64,
    pub(crate) x: i64,
}

/// The key offers are signed with.
#[derive(Clone)]
pub struct OfferKey(Vec<u8>);

impl std::fmt::Debug for OfferKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OfferKey(…)")
    }
}

impl OfferKey {
    /// The service's offer key ([`crate::domain::service_keys::KeyRing`]).
    pub fn new(key: Vec<u8>) -> OfferKey {
        OfferKey(key)
    }

    fn mac(&self, payload: &str) -> Vec<u8> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(payload.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    fn sign(&self, claims: &Claims) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let payload = b64.encode(serde_json::to_vec(claims).unwrap_or_default());
        let signature = b64.encode(self.mac(&payload));
        format!("{payload}.{signature}")
    }

    /// The claims of a genuine offer id; `None` for anything forged, edited or malformed.
    pub(crate) fn verify(&self, offer_id: &str) -> Option<Claims> {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let (payload, signature) = offer_id.split_once('.')?;
        let signature = b64.decode(signature).ok()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).ok()?;
        mac.update(payload.as_bytes());
        // verify_slice compares in constant time and refuses a signature of another length first.
        mac.verify_slice(&signature).ok()?;
        serde_json::from_slice(&b64.decode(payload).ok()?).ok()
    }
}

/// The hotel behind a public request: 404 when unknown or not open to public booking.
/// Answers (organization, hotel, availability version).
pub(crate) async fn public_hotel(conn: &mut store::Conn, hotel_id: &str) -> Result<(String, Hotel, i64)> {
    open_to_public(store::hotels::get_public(conn, hotel_id).await?)
}

fn open_to_public(found: Option<(String, Hotel, i64)>) -> Result<(String, Hotel, i64)> {
    found.filter(|(_, h, _)| h.public_booking).ok_or(Error::NotFound("hotel"))
}

/// What pricing a stay reads: the sellable room types and rate plans, and for the nights of the stay each plan's
/// rates, each type's free rooms and each plan's rooms held (against its allotment). From the database
/// ([`price`]) or from this process's copy ([`copies`]).
#[derive(Default)]
pub(crate) struct StayInputs {
    room_types: Vec<Arc<RoomType>>,
    rate_plans: Vec<Arc<RatePlan>>,
    rates: HashMap<String, StayRates>,
    free: HashMap<String, Vec<i64>>,
    sold: HashMap<String, Vec<i64>>,
}

/// The room types the party fits and the active plans that price one of them, or just `only` = (room type, rate
/// plan).
fn sellable(
    room_types: &[Arc<RoomType>],
    rate_plans: &[Arc<RatePlan>],
    stay: &Stay,
    only: Option<(&str, &str)>,
) -> (Vec<Arc<RoomType>>, Vec<Arc<RatePlan>>) {
    let types: Vec<Arc<RoomType>> = room_types
        .iter()
        .filter(|t| only.is_none_or(|(rt, _)| rt == t.id) && t.fits(stay.adults, stay.children))
        .cloned()
        .collect();
    let plans: Vec<Arc<RatePlan>> = rate_plans
        .iter()
        .filter(|p| p.active && only.is_none_or(|(_, rp)| rp == p.id))
        .filter(|p| p.room_type_id.as_ref().is_none_or(|id| types.iter().any(|t| t.id == *id)))
        .cloned()
        .collect();
    (types, plans)
}

/// Every sellable (room type, rate plan) of a hotel for `stay`, or just `only` = (room type, rate plan), read from
/// the database (bookings and approvals recheck with this, under their locks).
pub async fn price(
    conn: &mut store::Conn,
    organization_id: &str,
    hotel: &Hotel,
    stay: &Stay,
    only: Option<(&str, &str)>,
    except_reservation: Option<&str>,
) -> Result<Vec<Priced>> {
    let all_types: Vec<Arc<RoomType>> =
        store::room_types::list(conn, organization_id, Some(&hotel.id)).await?.into_iter().map(Arc::new).collect();
    let all_plans: Vec<Arc<RatePlan>> =
        store::rate_plans::list(conn, organization_id, &hotel.id, None).await?.into_iter().map(Arc::new).collect();
    // Only plans that price a type the party fits: the daily rates of the others would be read for nothing.
    let (room_types, rate_plans) = sellable(&all_types, &all_plans, stay, only);
    if room_types.is_empty() || rate_plans.is_empty() {
        return Ok(Vec::new());
    }
    let plan_ids: Vec<&str> = rate_plans.iter().map(|p| p.id.as_str()).collect();
    let rates: HashMap<String, StayRates> =
        store::daily_rates::for_stay(conn, &plan_ids, stay.check_in, stay.check_out)
            .await?
            .into_iter()
            .map(|r| (r.rate_plan_id.clone(), r))
            .collect();
    let type_ids: Vec<String> = room_types.iter().map(|t| t.id.clone()).collect();
    let free = inventory::free_rooms(conn, &type_ids, stay.check_in, stay.check_out, except_reservation).await?;
    let plan_id_strings: Vec<String> = rate_plans.iter().map(|p| p.id.clone()).collect();
    let sold: HashMap<String, Vec<i64>> =
        store::booking::held_by_plan(conn, &plan_id_strings, stay.check_in, stay.check_out, except_reservation)
            .await?
            .into_iter()
            .collect();
    Ok(offers(&StayInputs { room_types, rate_plans, rates, free, sold }, stay))
}

/// The offers `inputs` allow, cheapest first.
fn offers(inputs: &StayInputs, stay: &Stay) -> Vec<Priced> {
    let mut offers = Vec::new();
    for plan in &inputs.rate_plans {
        for room_type in inputs.room_types.iter().filter(|t| plan.room_type_id.as_ref().is_none_or(|id| *id == t.id)) {
            let rates = inputs.rates.get(&plan.id);
            if let Some(priced) = price_one(room_type, plan, stay, rates, &inputs.free, inputs.sold.get(&plan.id)) {
                offers.push(priced);
            }
        }
    }
    offers.sort_by(|a, b| a.total.cmp(&b.total).then_with(|| a.room_type.name.cmp(&b.room_type.name)));
    offers
}

/// The rooms of a type that a rate plan can still sell on one night: the type's free sellable rooms, capped by the
/// plan's allotment for the night (its `availability`; none: no cap) less the rooms already held under the plan.
/// An offer's `availableUnits` is the least of this over its nights; the rates calendar shows it per night.
pub fn night_units(free_rooms: i64, allotment: Option<i64>, held_under_plan: i64) -> i64 {
    allotment.map_or(free_rooms, |cap| (cap - held_under_plan).min(free_rooms))
}

fn price_one(
    room_type: &Arc<RoomType>,
    plan: &Arc<RatePlan>,
    stay: &Stay,
    rates: Option<&StayRates>,
    free: &HashMap<String, Vec<i64>>,
    sold: Option<&Vec<i64>>,
) -> Option<Priced> {
    let rates = rates?;
    if rates.stop_sell {
        return None;
    }
    let nights = stay.nights();
    let mut nightly = Vec::with_capacity(nights as usize);
    let mut units = i64::MAX;
    for n in 0..nights {
        let date = stay.check_in.checked_add_days(Days::new(n as u64))?;
        let rate = rates.nights.get(n as usize).copied().flatten()?;
        // Arrival restrictions are judged on the check-in night.
        if n == 0
            && (rates.closed_to_arrival
                || rates.min_stay.is_some_and(|min| nights < min)
                || rates.max_stay.is_some_and(|max| nights > max))
        {
            return None;
        }
        let physical = free.get(&room_type.id)?.get(n as usize).copied()?;
        let held = sold.and_then(|s| s.get(n as usize)).copied().unwrap_or(0);
        units = units.min(night_units(physical, rate.availability, held));
        nightly.push(NightlyPrice { date, price: rate.price });
    }
    if rates.closed_to_departure || units < 1 {
        return None;
    }
    // A stay whose nights add up beyond what the service can book is not offered.
    let total = money::sum(nightly.iter().map(|n| n.price))?;
    Some(Priced { room_type: room_type.clone(), plan: plan.clone(), nightly, total, units })
}

/// `GET /api/hotels/{hotelId}/availability`: priced from this process's copy of the hotel's rates and inventory
/// (see [`copies`]), of the availability version read at most [`store::recent::MAX_AGE`] ago and never before a
/// write of this process. The same search of the same version within [`copies::ANSWER_MAX_AGE`] gets the same
/// answer again (its offers then expire that much sooner). A busy hotel's searches thus cost no query and little
/// work; bookings and approvals recheck against the database under their locks whatever a search showed.
pub async fn search(
    db: &Db,
    key: &OfferKey,
    copies: &AvailabilityCopies,
    hotel_id: &str,
    query: &AvailabilityQuery,
) -> Result<Arc<SearchAnswer>> {
    let stay = Stay::parse(query)?;
    let (organization_id, hotel, version) = open_to_public(store::hotels::get_public_recent(db, hotel_id).await?)?;
    if let Some(answer) = copies.recent_answer(&hotel.id, version, &stay) {
        return Ok(answer);
    }
    let inputs = copies.stay_inputs(db, &organization_id, &hotel.id, version, &stay).await?;
    let expires = (Utc::now() + OFFER_TTL).timestamp();
    let priced = offers(&inputs, &stay);
    let billing = billing::settings_of(&mut *db.read().await?, &hotel).await?;
    let offers = priced
        .into_iter()
        .map(|p| {
            let claims = Claims {
                h: hotel.id.clone(),
                t: p.room_type.id.clone(),
                p: p.plan.id.clone(),
                i: stay.check_in,
                o: stay.check_out,
                a: stay.adults,
                c: stay.children,
                n: stay.infants,
                s: p.total,
                x: expires,
            };
            let city_tax = city_tax_of(&billing, &p.nightly, &stay);
            Offer {
                offer_id: key.sign(&claims),
                room_type_id: p.room_type.id.clone(),
                room_type_name: p.room_type.name.clone(),
                description: p.room_type.description.clone(),
                max_occupancy: p.room_type.max_occupancy,
                rate_plan_id: p.plan.id.clone(),
                rate_plan_name: p.plan.name.clone(),
                currency: p.plan.currency.clone(),
                nights: stay.nights(),
                total_with_taxes: city_tax.as_ref().and_then(|t| money::sum([p.total, t.amount])).unwrap_or(p.total),
                city_tax,
                nightly: p.nightly,
                total_price: p.total,
                available_units: p.units,
            }
        })
        .collect();
    Ok(copies.keep_answer(&hotel.id, version, stay, offers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        let d = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
        Claims { h: "h".into(), t: "t".into(), p: "p".into(), i: d, o: d, a: 2, c: 0, n: 0, s: 100, x: 1 }
    }

    #[test]
    fn offers_cannot_be_forged_or_edited() {
        let key = OfferKey(b"secret".to_vec());
        let token = key.sign(&claims());
        assert_eq!(key.verify(&token), Some(claims()));
        let (payload, signature) = token.split_once('.').unwrap();
        let mut edited = claims();
        edited.s = 1;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let forged = format!("{}.{signature}", b64.encode(serde_json::to_vec(&edited).unwrap()));
        assert_eq!(key.verify(&forged), None);
        assert_eq!(key.verify(&format!("{payload}.{}", &signature[1..])), None);
        assert_eq!(key.verify("garbage"), None);
        assert_eq!(OfferKey(b"other".to_vec()).verify(&token), None);
    }
}
