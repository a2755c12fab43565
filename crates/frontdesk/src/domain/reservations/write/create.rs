//! Creating a reservation: its own checks, its rooms checked against the catalogue and priced, then written with
//! its inventory, folio and webhook event.

use std::collections::BTreeMap;

use chrono::NaiveDate;

use super::super::reference;
use super::super::{
    Reservation, ReservationIn, ReservationRoom, ReservationRoomIn, ReservationStatus, RoomStatus, Source, MAX_ROOMS,
};
use super::{check_counts, check_room, hold, room_error, stay_dates, wrote, Wrote, SHARED_ROOM};
use crate::domain::access::{Actor, Scope};
use crate::domain::change::Change;
use crate::domain::hotels::{self, Hotel};
use crate::domain::reservations::attention::{self, AttentionReason};
use crate::domain::reservations::inventory;
use crate::domain::validate::Checks;
use crate::domain::{guests, idempotency, money, new_id, now, rate_plans, room_types, Error, FieldError, Result};
use crate::store::{self, Db};

pub async fn create(db: &Db, actor: &Actor, input: ReservationIn) -> Result<Reservation> {
    actor.require_scope(Scope::ReservationsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let r = insert(&mut tx, actor, input).await?;
    tx.commit().await?;
    Ok(r)
}

/// What a create with an idempotency key answers: the reservation, and whether an earlier request with the same key
/// made it (this request is a retry; nothing new was written).
#[derive(Debug)]
pub struct Created {
    pub reservation: Reservation,
    pub replayed: bool,
}

/// Creates a reservation once per idempotency key of the caller (`POST /api/reservations` with `Idempotency-Key`):
/// a retry with the same key and the same request answers the reservation the first one made, as it is now; the same
/// key with a different request is refused (409). The key is remembered in the transaction that creates the
/// reservation, so a create that fails leaves the key unused.
pub async fn create_once(db: &Db, actor: &Actor, input: ReservationIn, key: &str) -> Result<Created> {
    actor.require_scope(Scope::ReservationsWrite)?;
    idempotency::check_key(key)
        .map_err(|message| Error::Validation(vec![FieldError::field("Idempotency-Key", message)]))?;
    let digest = idempotency::digest(&[&serde_json::to_string(&input).map_err(anyhow::Error::from)?]);
    let scope = idempotency::caller_scope(actor);
    let k = idempotency::Key {
        namespace: idempotency::Namespace::Reservations,
        organization_id: &actor.organization_id,
        scope: &scope,
        key,
    };
    let replayed = |id: String| async move {
        let reservation = super::super::get(db, actor, &id).await.map_err(|err| match err {
            Error::NotFound(_) => Error::Conflict(
                "this idempotency key created a reservation that has been deleted since; send the request with a new \
                 key to create it again"
                    .into(),
            ),
            other => other,
        })?;
        Ok(Created { reservation, replayed: true })
    };
    let mut tx = Change::begin(db, actor).await?;
    if let Some(id) = idempotency::replay(tx.conn(), &k, &digest).await? {
        drop(tx);
        return replayed(id).await;
    }
    let reservation = insert(&mut tx, actor, input).await?;
    if idempotency::remember(&mut tx, &k, &digest, &reservation.id).await? == idempotency::Remembered::TakenMeanwhile {
        // Another process created with this key first (PostgreSQL): answer what it made.
        drop(tx);
        return replayed(idempotency::replay_after_race(db, &k, &digest).await?).await;
    }
    tx.commit().await?;
    Ok(Created { reservation, replayed: false })
}

/// Creates a reservation inside a write that is already under way (the booking request creates its reservation
/// together with its guest this way). Three steps: the input's own checks ([`check_new`]), the rooms checked against
/// the hotel's catalogue and priced ([`price_rooms`]), then the reservation written ([`persist_new`]).
pub async fn insert(tx: &mut Change, actor: &Actor, input: ReservationIn) -> Result<Reservation> {
    let (status, check_in, check_out) = check_new(&input)?;
    let hotel = hotels::require_named(tx.conn(), actor, input.hotel_id.as_deref()).await?;
    if let Some(guest_id) = &input.guest_id {
        guests::visible(tx.conn(), actor, guest_id).await?;
    }
    let room_status = if status == ReservationStatus::Confirmed { RoomStatus::Confirmed } else { RoomStatus::Pending };
    let stay = (check_in, check_out);
    let (rooms, currency, rooms_total) = price_rooms(tx, actor, &hotel, &input, stay, room_status).await?;

    let at = now();
    let r = Reservation {
        id: new_id(),
        reference: String::new(),
        hotel_id: hotel.id.clone(),
        guest_id: input.guest_id,
        status,
        check_in_date: check_in,
        check_out_date: check_out,
        start_time: input.start_time.unwrap_or_else(|| hotel.local_instant(check_in, &hotel.check_in_time)),
        end_time: input.end_time.unwrap_or_else(|| hotel.local_instant(check_out, &hotel.check_out_time)),
        adults: input.adults.unwrap_or_else(|| rooms.iter().map(|r| r.adults).sum()),
        children: input.children.unwrap_or_else(|| rooms.iter().map(|r| r.children).sum()),
        infants: input.infants.unwrap_or_else(|| rooms.iter().map(|r| r.infants).sum()),
        total_price: input.total_price.or(rooms_total).unwrap_or_default(),
        currency: currency.unwrap_or_else(|| hotel.currency.clone()),
        source: input.source.unwrap_or(Source::Api),
        channel_reference: input.channel_reference,
        notes: input.notes,
        created_at: at,
        updated_at: at,
        rooms: None,
        folio: None,
    };
    check_counts(&r)?;
    persist_new(tx, actor, &hotel, r, rooms).await
}

/// The checks a new reservation's input passes on its own, before anything is read: the stay's dates, the status it
/// is created in, the number of rooms, the texts, instants and currency.
fn check_new(input: &ReservationIn) -> Result<(ReservationStatus, NaiveDate, NaiveDate)> {
    let mut c = Checks::new();
    let dates = stay_dates(&mut c, &input.check_in_date, &input.check_out_date);
    let status = input.status.unwrap_or(ReservationStatus::Confirmed);
    if !status.creatable() {
        c.fail("status", "a reservation is created REQUESTED or CONFIRMED");
    }
    if input.rooms.is_empty() {
        c.fail("rooms", "a reservation needs at least one room");
    } else if input.rooms.len() > MAX_ROOMS {
        c.fail("rooms", format!("at most {MAX_ROOMS} rooms"));
    }
    c.opt_text("channelReference", input.channel_reference.as_deref(), 200);
    c.opt_text("notes", input.notes.as_deref(), 5000);
    if let Some(at) = input.start_time {
        c.instant("startTime", at);
    }
    if let Some(at) = input.end_time {
        c.instant("endTime", at);
    }
    if let Some(currency) = &input.currency {
        c.currency("currency", currency);
    }
    c.finish()?;
    let Some((check_in, check_out)) = dates else { return Err(Error::BadRequest("invalid stay dates".into())) };
    Ok((status, check_in, check_out))
}

/// The rooms of a new reservation, each checked against the hotel's room types, rate plans and rooms and priced
/// (its own price, or its rate plan's prices for the stay's nights); the currency (the input's, else the first rate
/// plan's) and the rooms' total. Every problem is reported at once, by room.
async fn price_rooms(
    tx: &mut Change,
    actor: &Actor,
    hotel: &Hotel,
    input: &ReservationIn,
    stay: (NaiveDate, NaiveDate),
    room_status: RoomStatus,
) -> Result<(Vec<ReservationRoom>, Option<String>, Option<i64>)> {
    // The rooms of one stay share every night: one physical room can be assigned to only one of them.
    let mut errors: Vec<FieldError> = input
        .rooms
        .iter()
        .enumerate()
        .filter(|(i, room)| {
            room.room_id.is_some() && input.rooms[..*i].iter().any(|earlier| earlier.room_id == room.room_id)
        })
        .map(|(i, _)| room_error(i, "roomId", SHARED_ROOM))
        .collect();
    let mut rooms = Vec::with_capacity(input.rooms.len());
    let mut currency = input.currency.clone();
    for (i, room) in input.rooms.iter().enumerate() {
        let priced = price_room(tx, actor, hotel, (i, room), stay, &mut currency, &mut errors).await?;
        if let Some((room_type_id, plan_id, (adults, children, infants), (price, night_prices))) = priced {
            rooms.push(ReservationRoom {
                id: new_id(),
                room_type_id,
                rate_plan_id: plan_id,
                room_id: room.room_id.clone(),
                status: room_status,
                adults,
                children,
                infants,
                price,
                night_prices,
            });
        }
    }
    // The rooms' prices add up to the reservation's total (when not given) and to its folio: both must be amounts.
    let rooms_total = money::sum(rooms.iter().map(|r| r.price));
    if rooms_total.is_none() && errors.is_empty() {
        errors.push(FieldError::field(
            "rooms",
            format!("the rooms' prices add up to more than {} minor units", money::MAX_AMOUNT),
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    Ok((rooms, currency, rooms_total))
}

/// The priced party of a room: its room type, rate plan, party, and price with its night prices.
type PricedRoom = (String, Option<String>, (i64, i64, i64), (i64, Option<BTreeMap<NaiveDate, i64>>));

/// Room `i` of a new reservation checked and priced: its room type, rate plan, party (adults, children, infants)
/// and price; `None` when its room type is not the hotel's (nothing more can be checked). Problems go to `errors`;
/// the first rate plan met sets the `currency` when the input gave none.
async fn price_room(
    tx: &mut Change,
    actor: &Actor,
    hotel: &Hotel,
    (i, room): (usize, &ReservationRoomIn),
    (check_in, check_out): (NaiveDate, NaiveDate),
    currency: &mut Option<String>,
    errors: &mut Vec<FieldError>,
) -> Result<Option<PricedRoom>> {
    let room_type = match room_types::visible(tx.conn(), actor, &room.room_type_id).await {
        Ok(t) if t.hotel_id == hotel.id => t,
        Ok(_) | Err(Error::NotFound(_)) => {
            errors.push(room_error(i, "roomTypeId", "no such room type in the reservation's hotel"));
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut plan = None;
    if let Some(plan_id) = &room.rate_plan_id {
        match rate_plans::visible(tx.conn(), actor, plan_id).await {
            Ok(p) if p.hotel_id == hotel.id && p.room_type_id.as_ref().is_none_or(|t| *t == room_type.id) => {
                currency.get_or_insert_with(|| p.currency.clone());
                plan = Some(p);
            }
            Ok(_) | Err(Error::NotFound(_)) => {
                errors.push(room_error(i, "ratePlanId", "no such rate plan for this room type and hotel"))
            }
            Err(e) => return Err(e),
        }
    }
    let adults = room.adults.unwrap_or(room_type.max_adults.min(2));
    let children = room.children.unwrap_or(0);
    let infants = room.infants.unwrap_or(0);
    if adults < 1 || children < 0 || infants < 0 {
        errors.push(room_error(i, "adults", "a room needs at least one adult and no negative counts"));
    } else if !room_type.fits(adults, children) {
        errors.push(room_error(i, "adults", format!("the party does not fit room type {}", room_type.name)));
    }
    let mut night_prices = None;
    let price = match (room.price, &plan) {
        (Some(price), _) if !money::in_bounds(price) => {
            errors.push(room_error(i, "price", money::out_of_bounds_message()));
            0
        }
        (Some(price), _) => {
            night_prices = room.night_prices.clone();
            price
        }
        (None, Some(plan)) => {
            let last_night = check_out.pred_opt().unwrap_or(check_out);
            let rates = store::daily_rates::range(tx.conn(), &plan.id, &plan.currency, check_in, last_night).await?;
            if rates.len() as i64 != (check_out - check_in).num_days() {
                errors.push(room_error(i, "price", "required: the rate plan has no price for every night"));
            }
            night_prices = Some(rates.iter().map(|rate| (rate.date, rate.price)).collect());
            money::sum(rates.iter().map(|r| r.price)).unwrap_or_else(|| {
                errors.push(room_error(
                    i,
                    "price",
                    format!("the rate plan's prices for these nights add up to more than {}", money::MAX_AMOUNT),
                ));
                0
            })
        }
        (None, None) => {
            errors.push(room_error(i, "price", "required when no rate plan is given"));
            0
        }
    };
    if let Some(room_id) = &room.room_id {
        if let Some(problem) = check_room(tx, actor, &hotel.id, &room_type.id, room_id).await? {
            errors.push(room_error(i, "roomId", problem));
        }
    }
    Ok(Some((room_type.id, plan.map(|p| p.id), (adults, children, infants), (price, night_prices))))
}

/// Writes a new reservation that passed its checks: its reference, the inventory it holds, its rooms, its folio
/// when confirmed, and its webhook event.
async fn persist_new(
    tx: &mut Change,
    actor: &Actor,
    hotel: &Hotel,
    mut r: Reservation,
    rooms: Vec<ReservationRoom>,
) -> Result<Reservation> {
    r.reference = new_reference(tx, &actor.organization_id).await?;
    let mut overbooked = None;
    if r.status.holds_inventory() {
        overbooked = hold(tx, actor, &r, &rooms, hotel.today()).await?;
    }
    store::reservations::insert(tx.conn(), &actor.organization_id, &r).await?;
    let holds = |room: &ReservationRoom| inventory::holds(r.status, room.status);
    store::reservations::save_rooms(tx.conn(), &r, rooms.iter().enumerate(), holds).await?;
    if let Some(full) = overbooked {
        attention::raise(tx, &actor.organization_id, &r, AttentionReason::Overbooked, &full).await?;
    }
    if r.status == ReservationStatus::Confirmed {
        r.folio =
            Some(crate::domain::finance::folios::follow_the_stay(tx, &actor.organization_id, hotel, &r, &rooms).await?);
    }
    r.rooms = Some(rooms);
    wrote(tx, &actor.organization_id, Wrote::Created, &r).await?;
    Ok(r)
}

/// A reference no reservation of the organization has yet. (A draw is taken about once in 650,000 at a million
/// reservations; ten in a row would mean the random source is broken.)
async fn new_reference(tx: &mut Change, organization_id: &str) -> Result<String> {
    for _ in 0..10 {
        let drawn = reference::draw();
        if !store::reservations::reference_taken(tx.conn(), organization_id, &drawn).await? {
            return Ok(drawn);
        }
    }
    Err(Error::Internal(anyhow::anyhow!("ten reservation references drawn in a row were all taken")))
}
