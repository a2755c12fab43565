//! The front desk's booking: what a stay costs under a rate plan ([`quote`]), and the reservation made at the desk
//! ([`book_at_desk`]), with a new guest when one is given.

use std::collections::HashMap;

use chrono::NaiveDate;

use crate::domain::access::{Actor, Scope};
use crate::domain::change::Change;
use crate::domain::guests::{self, Guest, GuestIn};
use crate::domain::reservations::{self, inventory, write, Reservation, ReservationIn, Source};
use crate::domain::validate::Checks;
use crate::domain::{idempotency, rate_plans, Error, FieldError, Result};
use crate::store::{self, guests::GuestSearch, Db};

/// What a stay costs under a rate plan: the price of each night from its daily rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    pub currency: String,
    pub nights: Vec<(NaiveDate, i64)>,
    /// Nights the plan has no price for (the reservation cannot be priced from the plan then).
    pub missing: Vec<NaiveDate>,
    /// The sum, when every night has a price.
    pub total: Option<i64>,
    /// Rooms of the type still free on every night (physical inventory).
    pub free_rooms: i64,
}

pub async fn quote(
    db: &Db,
    actor: &Actor,
    room_type_id: &str,
    rate_plan_id: &str,
    check_in: NaiveDate,
    check_out: NaiveDate,
) -> Result<Quote> {
    actor.require_scope(Scope::RatesRead)?;
    let mut c = Checks::new();
    if check_out <= check_in {
        c.fail("checkOutDate", "must be after checkInDate");
    } else if (check_out - check_in).num_days() > reservations::MAX_NIGHTS {
        c.fail("checkOutDate", format!("a stay may span at most {} nights", reservations::MAX_NIGHTS));
    }
    c.finish()?;
    let plan = rate_plans::get(db, actor, rate_plan_id).await?;
    if plan.room_type_id.as_ref().is_some_and(|t| t != room_type_id) {
        return Err(Error::Validation(vec![FieldError::field(
            "ratePlanId",
            "this rate plan does not price this room type",
        )]));
    }
    let mut conn = db.read().await?;
    let last_night = check_out.pred_opt().unwrap_or(check_out);
    let rates = store::daily_rates::range(&mut conn, &plan.id, &plan.currency, check_in, last_night).await?;
    let priced: HashMap<NaiveDate, i64> = rates.iter().map(|r| (r.date, r.price)).collect();
    let mut nights = Vec::new();
    let mut missing = Vec::new();
    for date in check_in.iter_days().take_while(|d| *d < check_out) {
        match priced.get(&date) {
            Some(price) => nights.push((date, *price)),
            None => missing.push(date),
        }
    }
    let total =
        if missing.is_empty() { nights.iter().try_fold(0i64, |sum, (_, price)| sum.checked_add(*price)) } else { None };
    let free = inventory::free_rooms(&mut conn, &[room_type_id.to_string()], check_in, check_out, None).await?;
    let free_rooms = free.get(room_type_id).and_then(|nights| nights.iter().min().copied()).unwrap_or(0);
    Ok(Quote { currency: plan.currency, nights, missing, total, free_rooms })
}

/// Who a reservation made at the desk is for.
pub enum DeskGuest {
    Existing(String),
    New(Box<GuestIn>),
}

/// What sending the desk's reservation form did.
#[derive(Debug)]
pub enum DeskBooking {
    Created(Reservation),
    /// An earlier sending of the same form made this (a double click, a reload, a second tab): nothing new was
    /// written.
    Replayed(Reservation),
    /// The form made a reservation already and has been changed since: it makes no second one.
    FormUsed,
    /// A new guest was asked for with an e-mail that these guests of the organization have: most likely one of
    /// them, so nothing was written; the desk books for one of them, or says it is someone else.
    KnownEmail(Vec<Guest>),
}

/// Who a reservation made at the desk is for, and whether a new guest may share an e-mail with known guests.
pub struct DeskGuestChoice {
    pub guest: DeskGuest,
    /// The desk said a new guest is someone else than the known guests with the same e-mail.
    pub new_despite_email: bool,
}

fn desk_form_key<'a>(actor: &'a Actor, scope: &'a str, form_token: &'a str) -> idempotency::Key<'a> {
    idempotency::Key {
        namespace: idempotency::Namespace::DeskReservation,
        organization_id: &actor.organization_id,
        scope,
        key: form_token,
    }
}

/// Creates a reservation at the desk, with a new guest when one is given: both in one transaction, so a refused
/// reservation leaves no guest behind. Events are recorded as for any writer. `form_token` is the token the form
/// was given when it was shown: the same form sent again answers the reservation it made (the token is the
/// idempotency key, namespace [`idempotency::Namespace::DeskReservation`]); a changed form sent with a used token
/// makes nothing ([`DeskBooking::FormUsed`]), so one form never makes two stays.
pub async fn book_at_desk(
    db: &Db,
    actor: &Actor,
    choice: DeskGuestChoice,
    mut input: ReservationIn,
    form_token: Option<&str>,
) -> Result<DeskBooking> {
    let DeskGuestChoice { guest, new_despite_email } = choice;
    actor.require_scope(Scope::ReservationsWrite)?;
    input.source.get_or_insert(Source::Dashboard);
    let guest_part = match &guest {
        DeskGuest::Existing(id) => format!("existing:{id}"),
        DeskGuest::New(guest) => format!("new:{}", serde_json::to_string(guest).map_err(anyhow::Error::from)?),
    };
    let digest = idempotency::digest(&[&guest_part, &serde_json::to_string(&input).map_err(anyhow::Error::from)?]);
    let scope = idempotency::caller_scope(actor);
    let key = form_token.map(|token| desk_form_key(actor, &scope, token));
    let mut tx = Change::begin(db, actor).await?;
    if let Some(key) = &key {
        match idempotency::seen(tx.conn(), key, &digest).await? {
            idempotency::Seen::New => {}
            idempotency::Seen::Same(id) => {
                drop(tx);
                return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
            }
            idempotency::Seen::Different => return Ok(DeskBooking::FormUsed),
        }
    }
    // Asked in the same transaction as the form's token, so that the form sent twice at once is answered as one
    // form, never as a second guest with the first one's e-mail.
    if let (DeskGuest::New(new), false) = (&guest, new_despite_email) {
        if let Some(email) = new.email.as_deref().filter(|e| e.contains('@')) {
            let search = GuestSearch::Email(email.to_string());
            let known: Vec<Guest> = store::guests::search(tx.conn(), &actor.organization_id, &search, 5)
                .await?
                .into_iter()
                .filter(|g| actor.sees_hotel(g.hotel_id.as_deref()))
                .collect();
            if !known.is_empty() {
                // The guest found may be the one this very form made, sent at once from another tab and
                // committed between the token's check above and this one (PostgreSQL reads what committed before
                // each statement): its token, committed with it, says so now.
                if let Some(key) = &key {
                    match idempotency::seen(tx.conn(), key, &digest).await? {
                        idempotency::Seen::Same(id) => {
                            drop(tx);
                            return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
                        }
                        idempotency::Seen::Different => return Ok(DeskBooking::FormUsed),
                        idempotency::Seen::New => {}
                    }
                }
                return Ok(DeskBooking::KnownEmail(known));
            }
        }
    }
    match guest {
        DeskGuest::Existing(id) => input.guest_id = Some(id),
        DeskGuest::New(guest) => {
            actor.require_scope(Scope::GuestsWrite)?;
            input.guest_id = Some(guests::insert(&mut tx, actor, *guest).await?.id);
        }
    }
    let reservation = write::insert(&mut tx, actor, input).await?;
    if let Some(key) = &key {
        if idempotency::remember(&mut tx, key, &digest, &reservation.id).await?
            == idempotency::Remembered::TakenMeanwhile
        {
            drop(tx);
            let id = idempotency::replay_after_race(db, key, &digest).await?;
            return Ok(DeskBooking::Replayed(reservations::get(db, actor, &id).await?));
        }
    }
    tx.commit().await?;
    Ok(DeskBooking::Created(reservation))
}
