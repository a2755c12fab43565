//! What the public booking page (`/book/{hotelId}`) needs beyond the API's [`search`](super::search) and
//! [`book`](super::book), which it calls as they are: the hotel it presents, why a search found nothing, a chosen
//! offer checked again (so that a stale one is explained with the offers of now instead of refused), and the
//! receipt a guest keeps of a request.

use base64::Engine as _;
use chrono::{NaiveDate, Utc};
use subtle::ConstantTimeEq;

use super::{public_hotel, search, AvailabilityCopies, AvailabilityQuery, Claims, Offer, OfferKey, Stay};
use crate::domain::change::Writer;
use crate::domain::hotels::Hotel;
use crate::domain::idempotency::Namespace;
use crate::domain::reservations::{self, ReservationStatus};
use crate::domain::{rate_plans, room_types, secrets, Actor, Error, FieldError, Result};
use crate::store::{self, Db};

/// The hotel a booking page presents: 404 when unknown or not open to public booking.
pub async fn hotel(db: &Db, hotel_id: &str) -> Result<Hotel> {
    let (_, hotel, _) = public_hotel(&mut *db.read().await?, hotel_id).await?;
    Ok(hotel)
}

/// The most guests the hotel's room types take (each maximum over all types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartyLimit {
    pub guests: i64,
    pub adults: i64,
    pub children: i64,
}

/// When no room type of the hotel takes `adults` and `children` (infants do not count), the most its rooms take;
/// `None` when some room type fits the party. Tells "the party is too large" from "nothing is free".
pub async fn party_too_large(db: &Db, hotel_id: &str, adults: i64, children: i64) -> Result<Option<PartyLimit>> {
    let mut conn = db.read().await?;
    let (organization_id, hotel, _) = public_hotel(&mut conn, hotel_id).await?;
    let types = store::room_types::list(&mut conn, &organization_id, Some(&hotel.id)).await?;
    if types.is_empty() || types.iter().any(|t| t.fits(adults, children)) {
        return Ok(None);
    }
    Ok(Some(PartyLimit {
        guests: types.iter().map(|t| t.max_occupancy).max().unwrap_or(0),
        adults: types.iter().map(|t| t.max_adults).max().unwrap_or(0),
        children: types.iter().map(|t| t.max_children).max().unwrap_or(0),
    }))
}

/// Why a chosen offer can no longer be booked as shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Stale {
    /// Older than [`super::OFFER_TTL`].
    Expired,
    /// No room of the type (or no allotment of the plan) is left for the stay, or the plan stopped selling it.
    SoldOut,
    /// The total changed: it was `was` (minor units of the offer's currency), it is the total of `now`.
    Repriced { was: i64, now: Box<Offer> },
}

/// A chosen offer, checked again against the hotel's availability of now.
#[derive(Debug, Clone)]
pub struct Rechecked {
    /// The stay and party the offer was made for.
    pub stay: Stay,
    /// Every offer for that stay and party now (empty when the stay can no longer be searched, e.g. it began).
    pub offers: Vec<Offer>,
    /// The room type and rate plan the offer was for (so that the offer of now for the same room can be found when
    /// the chosen one expired).
    pub room_type_id: String,
    pub rate_plan_id: String,
    /// The offer as it stands now, signed afresh (so the guest has the full time to fill in the form), or why it
    /// cannot be had.
    pub chosen: std::result::Result<Offer, Stale>,
}

/// Checks `offer_id` again: a forged, edited or another hotel's offer is a validation error of `offerId`, as in
/// [`super::book`]; a genuine one answers the same search of now and the offer's place in it.
pub async fn recheck(
    db: &Db,
    key: &OfferKey,
    copies: &AvailabilityCopies,
    hotel_id: &str,
    offer_id: &str,
) -> Result<Rechecked> {
    let claims = key
        .verify(offer_id)
        .filter(|claims| claims.h == hotel_id)
        .ok_or_else(|| Error::Validation(vec![FieldError::field("offerId", "not an offer of this hotel")]))?;
    let stay =
        Stay { check_in: claims.i, check_out: claims.o, adults: claims.a, children: claims.c, infants: claims.n };
    let offers = match search(db, key, copies, hotel_id, &query_of(&stay)).await {
        Ok(answer) => answer.offers.clone(),
        // The stay can no longer be searched (it began): nothing can be offered for it.
        Err(Error::Validation(_)) => Vec::new(),
        Err(err) => return Err(err),
    };
    let chosen = judge(&claims, &offers, Utc::now().timestamp());
    Ok(Rechecked { stay, offers, room_type_id: claims.t, rate_plan_id: claims.p, chosen })
}

/// The offer of `claims` among the offers of now (at Unix time `now`), or why it is stale.
fn judge(claims: &Claims, offers: &[Offer], now: i64) -> std::result::Result<Offer, Stale> {
    if claims.x < now {
        return Err(Stale::Expired);
    }
    match offers.iter().find(|o| o.room_type_id == claims.t && o.rate_plan_id == claims.p) {
        None => Err(Stale::SoldOut),
        Some(offer) if offer.total_price != claims.s => {
            Err(Stale::Repriced { was: claims.s, now: Box::new(offer.clone()) })
        }
        Some(offer) => Ok(offer.clone()),
    }
}

/// The search of `stay`, as a query string would state it.
pub fn query_of(stay: &Stay) -> AvailabilityQuery {
    AvailabilityQuery {
        check_in_date: stay.check_in.to_string(),
        check_out_date: stay.check_out.to_string(),
        adults: Some(stay.adults),
        children: Some(stay.children),
        infants: Some(stay.infants),
    }
}

/// A fresh idempotency key for a guest form of the hotel: `bp_`, random, `.`, and a MAC under the offer key, so that
/// the page takes back only keys it gave out (a key chosen by a client could be another guest's).
pub fn form_key(key: &OfferKey, hotel_id: &str) -> String {
    let nonce = secrets::generate("");
    format!("bp_{nonce}.{}", form_key_mac(key, hotel_id, &nonce))
}

fn form_key_mac(key: &OfferKey, hotel_id: &str, nonce: &str) -> String {
    let mac = key.mac(&format!("booking form\u{0}{hotel_id}\u{0}{nonce}"));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&mac[..16])
}

/// Whether `form_key` is one [`form_key`] gave out for the hotel's guest form.
pub fn is_form_key(key: &OfferKey, hotel_id: &str, form_key: &str) -> bool {
    let Some((nonce, mac)) = form_key.strip_prefix("bp_").and_then(|rest| rest.split_once('.')) else {
        return false;
    };
    let expected = form_key_mac(key, hotel_id, nonce);
    !nonce.is_empty() && bool::from(expected.as_bytes().ct_eq(mac.as_bytes()))
}

/// Whether the hotel's guest form with this key was sent before (then with other details, or its request would
/// have been answered): the page says so, and shows nothing of the first request.
pub async fn form_already_sent(db: &Db, hotel_id: &str, form_key: &str) -> Result<bool> {
    let key = store::idempotency::KeyRef { namespace: Namespace::BookingPage.as_str(), scope: hotel_id, key: form_key };
    Ok(store::idempotency::find(&mut *db.read().await?, key).await?.is_some())
}

/// What a guest sees of their booking request, at the link they were given when they sent it.
#[derive(Debug, Clone)]
pub struct Receipt {
    /// The reservation's short reference (the one to quote to the hotel).
    pub reference: String,
    pub status: ReservationStatus,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub nights: i64,
    pub adults: i64,
    pub children: i64,
    pub infants: i64,
    pub room_type: String,
    pub rate_plan: String,
    /// In minor units of `currency`.
    pub total_price: i64,
    pub currency: String,
    pub guest_first_name: String,
    pub guest_email: String,
    /// The expected arrival (local `HH:MM`), when the guest gave one.
    pub arrival_time: Option<String>,
}

/// The token that opens the receipt of `reservation_id`: an HMAC under the offer key, so that only the link
/// handed to the guest who booked shows it (reservation ids alone are not secrets).
pub fn receipt_token(key: &OfferKey, hotel_id: &str, reservation_id: &str) -> String {
    let mac = key.mac(&format!("receipt\u{0}{hotel_id}\u{0}{reservation_id}"));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&mac[..16])
}

/// The receipt of a booking request made on the hotel's booking page or API: 404 unless `token` is the one
/// [`receipt_token`] gave for it.
pub async fn receipt(db: &Db, key: &OfferKey, hotel_id: &str, reservation_id: &str, token: &str) -> Result<Receipt> {
    let expected = receipt_token(key, hotel_id, reservation_id);
    if !bool::from(expected.as_bytes().ct_eq(token.as_bytes())) {
        return Err(Error::NotFound("booking request"));
    }
    let (organization_id, hotel, _) = public_hotel(&mut *db.read().await?, hotel_id).await?;
    // A read, for the guest of the booking page: the rights of the service, no address needed.
    let system = Actor::service(&organization_id, Writer::BookingPage { address: String::new() });
    let r = reservations::get(db, &system, reservation_id).await?;
    if r.hotel_id != hotel.id {
        return Err(Error::NotFound("booking request"));
    }
    let room = r.rooms.as_ref().and_then(|rooms| rooms.first()).ok_or(Error::NotFound("booking request"))?;
    let room_type = room_types::get(db, &system, &room.room_type_id).await?.name;
    let rate_plan = match &room.rate_plan_id {
        Some(id) => rate_plans::get(db, &system, id).await?.name,
        None => String::new(),
    };
    let guest = match &r.guest_id {
        Some(id) => store::guests::get(&mut *db.read().await?, &organization_id, id).await?,
        None => None,
    };
    let tz = hotel.time_zone();
    let arrival = r.start_time.with_timezone(&tz).format("%H:%M").to_string();
    Ok(Receipt {
        reference: r.reference.clone(),
        status: r.status,
        check_in: r.check_in_date,
        check_out: r.check_out_date,
        nights: r.nights(),
        adults: r.adults,
        children: r.children,
        infants: r.infants,
        room_type,
        rate_plan,
        total_price: r.total_price,
        currency: r.currency.clone(),
        guest_first_name: guest.as_ref().map(|g| g.first_name.clone()).unwrap_or_default(),
        guest_email: guest.and_then(|g| g.email).unwrap_or_default(),
        arrival_time: (arrival != hotel.check_in_time).then_some(arrival),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(room_type: &str, plan: &str, total: i64) -> Offer {
        Offer {
            offer_id: "signed".into(),
            room_type_id: room_type.into(),
            room_type_name: room_type.into(),
            description: None,
            max_occupancy: 2,
            rate_plan_id: plan.into(),
            rate_plan_name: plan.into(),
            currency: "EUR".into(),
            nights: 1,
            nightly: Vec::new(),
            total_price: total,
            available_units: 1,
            city_tax: None,
            total_with_taxes: total,
        }
    }

    #[test]
    fn a_chosen_offer_is_judged_against_the_offers_of_now() {
        let d = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
        let claims =
            Claims { h: "h".into(), t: "t".into(), p: "p".into(), i: d, o: d, a: 2, c: 0, n: 0, s: 100, x: 1000 };
        let now = [offer("other", "p", 90), offer("t", "p", 100)];
        assert_eq!(judge(&claims, &now, 999).map(|o| o.total_price), Ok(100));
        assert_eq!(judge(&claims, &now, 1001).map(|o| o.total_price), Err(Stale::Expired));
        assert_eq!(judge(&claims, &now[..1], 999).map(|o| o.total_price), Err(Stale::SoldOut));
        let repriced = [offer("t", "p", 120)];
        let now = Box::new(repriced[0].clone());
        assert_eq!(judge(&claims, &repriced, 999).map(|o| o.total_price), Err(Stale::Repriced { was: 100, now }));
    }

    #[test]
    fn form_keys_are_the_pages_own() {
        let key = OfferKey(b"secret".to_vec());
        let issued = form_key(&key, "hotel");
        assert!(issued.starts_with("bp_"));
        assert!(is_form_key(&key, "hotel", &issued));
        assert_ne!(issued, form_key(&key, "hotel"), "a fresh key each time");
        assert!(!is_form_key(&key, "another hotel", &issued));
        assert!(!is_form_key(&OfferKey(b"other".to_vec()), "hotel", &issued));
        let (nonce, _) = issued.split_once('.').unwrap();
        assert!(!is_form_key(&key, "hotel", &format!("{nonce}.AAAAAAAAAAAAAAAAAAAAAA")));
        for chosen in ["", "bp_", "bp_.", "retry-42", "bp_x", &issued[3..]] {
            assert!(!is_form_key(&key, "hotel", chosen), "{chosen}");
        }
    }

    #[test]
    fn receipt_tokens_belong_to_one_request_of_one_hotel() {
        let key = OfferKey(b"secret".to_vec());
        let token = receipt_token(&key, "hotel", "reservation");
        assert_eq!(token.len(), 22);
        assert_eq!(token, receipt_token(&key, "hotel", "reservation"));
        assert_ne!(token, receipt_token(&key, "hotel", "another"));
        assert_ne!(token, receipt_token(&key, "another hotel", "reservation"));
        assert_ne!(token, receipt_token(&OfferKey(b"other".to_vec()), "hotel", "reservation"));
    }
}
