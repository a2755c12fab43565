//! Booking requests: a REQUESTED reservation for staff to approve, made from a signed offer that is priced again
//! under the inventory lock, once per idempotency key, within the limits of public callers.

use chrono::Utc;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::attempts::{self, BookingLimits};
use super::availability::{price, public_hotel, Claims, OfferKey, Stay};
use super::hotels::Hotel;
use super::idempotency::{self, Namespace};
use super::reservations::{write, ReservationIn, ReservationRoomIn, ReservationStatus, Source};
use super::validate::{carries_address, clean, is_email, Checks};
use super::{guests, secrets, Actor, Error, FieldError, Result};
use crate::domain::change::{Change, Writer};
use crate::store::{self, Db};

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

pub(super) fn request_digest(input: &BookingIn) -> String {
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
    /// Who sends it: the booking page's or the public API's guest (`Writer::BookingPage`), or a trusted
    /// integration.
    pub writer: &'a Writer,
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
    check_request(&input, &claims.h, hotel_id, from.idempotency_key)?;
    if claims.x < Utc::now().timestamp() {
        return Err(Error::Conflict("the offer has expired; search availability again".into()));
    }
    let digest = request_digest(&input);

    let mut tx = Change::begin_as(db, from.writer.clone()).await?;
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

/// The checks a booking request passes on its own: the offer is for this hotel; the guest's name, e-mail, phone and
/// country, the notes, the arrival time and the idempotency key are well-formed.
pub(super) fn check_request(
    input: &BookingIn,
    offer_hotel: &str,
    hotel_id: &str,
    idempotency_key: Option<&str>,
) -> Result<()> {
    let mut c = Checks::new();
    if offer_hotel != hotel_id {
        c.fail("offerId", "the offer is for another hotel");
    }
    c.line("guest.firstName", &input.guest.first_name, 100);
    c.line("guest.lastName", &input.guest.last_name, 100);
    // A request from the public sends the hotel's e-mail to the address given, opening with the name given: a name
    // that carries an address would put a stranger's link in the hotel's mail.
    for (field, name) in [("guest.firstName", &input.guest.first_name), ("guest.lastName", &input.guest.last_name)] {
        if carries_address(name) {
            c.fail(field, "must be a name, without a web or e-mail address");
        }
    }
    if !is_email(&input.guest.email) {
        c.fail("guest.email", "must be an e-mail address such as ana@example.com");
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
    if let Some(k) = idempotency_key {
        if k.is_empty() || k.len() > 200 {
            c.fail("Idempotency-Key", "must be 1 to 200 characters");
        }
    }
    c.finish()
}

/// Prices the offer of `claims` again under the inventory lock and makes the request: a new guest as typed and a
/// REQUESTED reservation. 409 when the offer is gone or its price changed.
pub(super) async fn request_stay(
    tx: &mut Change,
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
    // The rights of the service, acting as whoever sent the request.
    let system = Actor::service(organization_id, tx.writer().clone());
    let guest_in = guests::GuestIn {
        hotel_id: Some(hotel.id.clone()),
        first_name: clean(&input.guest.first_name),
        last_name: clean(&input.guest.last_name),
        email: Some(clean(&input.guest.email)),
        phone: input.guest.phone.as_deref().map(clean),
        country: input.guest.country.clone(),
        street: None,
        postal_code: None,
        city: None,
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
            start_time: input.arrival_time.as_deref().map(|arrival| hotel.local_instant(stay.check_in, arrival)),
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
                // The offer's nights each at their own price, as the folio will charge them (its city tax too).
                night_prices: Some(offer.nightly.iter().map(|night| (night.date, night.price)).collect()),
            }],
        },
    )
    .await?;
    Ok(reservation.id)
}
