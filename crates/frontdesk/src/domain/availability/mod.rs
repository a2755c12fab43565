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

use super::attempts::{self, BookingLimits};
use super::codes::CurrencyCode;
use super::daily_rates::StayRates;
use super::hotels::Hotel;
use super::idempotency::{self, Namespace};
use super::rate_plans::RatePlan;
use super::reservations::{inventory, write, ReservationIn, ReservationRoomIn, ReservationStatus, Source};
use super::room_types::RoomType;
use super::validate::{clean, is_email, parse_date, Checks};
use super::{guests, money, now, secrets, Actor, Error, FieldError, Result};
use crate::store::{self, Db};

pub mod booking_page;
mod copies;
pub use copies::{AvailabilityCopies, SearchAnswer, ANSWER_MAX_AGE};

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
struct Claims {
    h: String,
    t: String,
    p: String,
    i: NaiveDate,
    o: NaiveDate,
    a: i64,
    c: i64,
    n: i64,
    s: i64,
    x: i64,
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
    /// The database's offer key, created by the first process that needs it.
    pub async fn load(db: &Db) -> Result<OfferKey> {
        let mut tx = db.begin_write().await?;
        let value =
            store::booking::service_secret(tx.conn(), "offer_signing_key", &secrets::generate(""), now()).await?;
        tx.commit().await?;
        Ok(OfferKey(value.into_bytes()))
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
    fn verify(&self, offer_id: &str) -> Option<Claims> {
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
async fn public_hotel(conn: &mut sqlx::AnyConnection, hotel_id: &str) -> Result<(String, Hotel, i64)> {
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
    conn: &mut sqlx::AnyConnection,
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
                nightly: p.nightly,
                total_price: p.total,
                available_units: p.units,
            }
        })
        .collect();
    Ok(copies.keep_answer(&hotel.id, version, stay, offers))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BookingGuestIn {
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub first_name: String,
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub last_name: String,
    #[schema(
        max_length = 254,
        pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f.][^@\s\x00-\x1f\x7f-\x9f]*\.[^@\s\x00-\x1f\x7f-\x9f]*[^@\s\x00-\x1f\x7f-\x9f.]$"
    )]
    pub email: String,
    #[schema(max_length = 50)]
    pub phone: Option<String>,
    /// ISO 3166-1 alpha-2; kept on a new guest (an existing guest, found by e-mail, is left as it is).
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BookingIn {
    /// An `offerId` from the availability answer.
    pub offer_id: String,
    pub guest: BookingGuestIn,
    #[schema(max_length = 2000)]
    pub notes: Option<String>,
    /// When the guest expects to arrive on the check-in date, local time `HH:MM`; it becomes the reservation's
    /// `startTime` (which otherwise is the hotel's check-in time).
    #[schema(example = "18:30", pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub arrival_time: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BookingOut {
    pub reservation_id: String,
    pub status: ReservationStatus,
}

fn request_digest(input: &BookingIn) -> String {
    let mut text = format!(
        "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        input.offer_id,
        input.guest.first_name,
        input.guest.last_name,
        input.guest.email.to_lowercase(),
        input.guest.phone.as_deref().unwrap_or_default(),
        input.notes.as_deref().unwrap_or_default()
    );
    // Only when given, so that keys remembered before these fields existed still match their retries.
    for (label, value) in [("country", &input.guest.country), ("arrival", &input.arrival_time)] {
        if let Some(value) = value {
            text.push_str(&format!("\u{1f}{label}={value}"));
        }
    }
    secrets::digest(&text)
}

/// Who sends a booking request, and how it is kept from being made twice.
#[derive(Debug, Clone, Copy)]
pub struct BookingFrom<'a> {
    /// Where the request's idempotency key lives: the booking page's form and the API have a namespace each.
    pub namespace: Namespace,
    pub idempotency_key: Option<&'a str>,
    /// A caller of the public: anyone without an API key that may write reservations. Its requests are counted
    /// per client address and guest e-mail ([`attempts::lock_booking_counts`]), and an exact repeat of an open
    /// request (same e-mail, dates and room type) answers that request instead of making another.
    pub public: Option<PublicCaller<'a>>,
}

/// The client of a public booking request.
#[derive(Debug, Clone, Copy)]
pub struct PublicCaller<'a> {
    pub address: &'a str,
    pub limits: BookingLimits,
}

/// `POST /api/hotels/{hotelId}/book-reservation`: a REQUESTED reservation with one unassigned PENDING room, for
/// staff to approve. With an idempotency key, a retry answers the first result instead of booking again.
///
/// The request keeps the guest as typed: a new guest of the hotel with the name and contact given, never an
/// existing guest found by e-mail (that would let anyone attach a request to someone else's record and read their
/// name back). Staff see which guests of the hotel share the e-mail ([`guests::same_email_in_hotel`]).
pub async fn book(
    db: &Db,
    key: &OfferKey,
    hotel_id: &str,
    from: BookingFrom<'_>,
    input: BookingIn,
) -> Result<BookingOut> {
    let claims = key.verify(&input.offer_id).ok_or_else(|| {
        Error::Validation(vec![FieldError::field("offerId", "not an offer of this service (forged or edited)")])
    })?;
    let mut c = Checks::new();
    if claims.h != hotel_id {
        c.fail("offerId", "the offer is for another hotel");
    }
    c.line("guest.firstName", &input.guest.first_name, 100);
    c.line("guest.lastName", &input.guest.last_name, 100);
    if !is_email(&input.guest.email) {
        c.fail("guest.email", "must be an e-mail address");
    }
    c.opt_line("guest.phone", input.guest.phone.as_deref(), 50);
    if let Some(country) = &input.guest.country {
        if country.len() != 2 || !country.chars().all(|ch| ch.is_ascii_uppercase()) {
            c.fail("guest.country", "must be an ISO 3166-1 alpha-2 code such as PT");
        }
    }
    c.opt_text("notes", input.notes.as_deref(), 2000);
    if let Some(arrival) = &input.arrival_time {
        c.clock_time("arrivalTime", arrival);
    }
    if let Some(k) = from.idempotency_key {
        if k.is_empty() || k.len() > 200 {
            c.fail("Idempotency-Key", "must be 1 to 200 characters");
        }
    }
    c.finish()?;
    if claims.x < Utc::now().timestamp() {
        return Err(Error::Conflict("the offer has expired; search availability again".into()));
    }
    let digest = request_digest(&input);

    let mut tx = db.begin_write().await?;
    let (organization_id, hotel, _) = public_hotel(tx.conn(), hotel_id).await?;
    let idempotency = from.idempotency_key.map(|k| idempotency::Key {
        namespace: from.namespace,
        organization_id: &organization_id,
        scope: hotel_id,
        key: k,
    });
    if let Some(k) = &idempotency {
        if let Some(reservation_id) = idempotency::replay(tx.conn(), k, &digest).await? {
            return Ok(BookingOut { reservation_id, status: ReservationStatus::Requested });
        }
    }
    let stay =
        Stay { check_in: claims.i, check_out: claims.o, adults: claims.a, children: claims.c, infants: claims.n };
    let earlier = match from.public {
        Some(caller) => {
            let counts = attempts::lock_booking_counts(&mut tx, hotel_id, caller.address, &input.guest.email).await?;
            let repeat = store::booking::open_public_request(
                tx.conn(),
                &store::booking::PublicRequest {
                    organization_id: &organization_id,
                    hotel_id,
                    email: &input.guest.email,
                    check_in: stay.check_in,
                    check_out: stay.check_out,
                    room_type_id: &claims.t,
                },
            )
            .await?;
            if repeat.is_none() {
                counts.count(&mut tx, caller.limits).await?;
            }
            repeat
        }
        None => None,
    };
    let reservation_id = match earlier {
        Some(reservation_id) => reservation_id,
        None => request_stay(&mut tx, &organization_id, &hotel, &claims, &stay, input).await?,
    };
    let out = BookingOut { reservation_id: reservation_id.clone(), status: ReservationStatus::Requested };
    if let Some(k) = &idempotency {
        if idempotency::remember(&mut tx, k, &digest, &reservation_id).await? == idempotency::Remembered::TakenMeanwhile
        {
            // Another process booked with this key first (PostgreSQL); answer what it answered.
            drop(tx);
            let reservation_id = idempotency::replay_after_race(db, k, &digest).await?;
            return Ok(BookingOut { reservation_id, status: ReservationStatus::Requested });
        }
    }
    tx.commit().await?;
    Ok(out)
}

/// Prices the offer of `claims` again under the inventory lock and makes the request: a new guest as typed and a
/// REQUESTED reservation. 409 when the offer is gone or its price changed.
async fn request_stay(
    tx: &mut store::WriteTx,
    organization_id: &str,
    hotel: &Hotel,
    claims: &Claims,
    stay: &Stay,
    input: BookingIn,
) -> Result<String> {
    let engine = tx.engine();
    store::reservations::lock_room_types(tx.conn(), engine, std::slice::from_ref(&claims.t)).await?;
    let offer = price(tx.conn(), organization_id, hotel, stay, Some((&claims.t, &claims.p)), None)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Error::Conflict("the selected offer is no longer available".into()))?;
    if offer.total != claims.s {
        return Err(Error::Conflict(format!(
            "the price of the selected offer changed from {} to {}; search availability again",
            claims.s, offer.total
        )));
    }
    let system = Actor::system(organization_id);
    let guest_in = guests::GuestIn {
        hotel_id: Some(hotel.id.clone()),
        first_name: clean(&input.guest.first_name),
        last_name: clean(&input.guest.last_name),
        email: Some(clean(&input.guest.email)),
        phone: input.guest.phone.as_deref().map(clean),
        country: input.guest.country.clone(),
        language: None,
        notes: None,
    };
    let guest = guests::insert(tx, &system, guest_in).await?;
    let reservation = write::insert(
        tx,
        &system,
        ReservationIn {
            hotel_id: Some(hotel.id.clone()),
            guest_id: Some(guest.id),
            status: Some(ReservationStatus::Requested),
            check_in_date: stay.check_in.to_string(),
            check_out_date: stay.check_out.to_string(),
            start_time: input.arrival_time.as_deref().map(|arrival| write::instant(hotel, stay.check_in, arrival)),
            end_time: None,
            adults: Some(stay.adults),
            children: Some(stay.children),
            infants: Some(stay.infants),
            total_price: Some(offer.total),
            currency: Some(offer.plan.currency.clone()),
            source: Some(Source::BookingPage),
            channel_reference: None,
            notes: input.notes,
            rooms: vec![ReservationRoomIn {
                room_type_id: offer.room_type.id.clone(),
                rate_plan_id: Some(offer.plan.id.clone()),
                room_id: None,
                adults: Some(stay.adults),
                children: Some(stay.children),
                infants: Some(stay.infants),
                price: Some(offer.total),
            }],
        },
    )
    .await?;
    Ok(reservation.id)
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
