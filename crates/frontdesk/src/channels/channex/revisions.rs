//! Bookings in: Channex's booking revisions (docs/channex-api-notes.md §4) applied as reservations.
//!
//! A revision is read from Channex itself (the feed, or `GET /booking_revisions/:id` after a webhook: a webhook's
//! payload is never trusted) and applied **once**, keyed by its id: the revision's row (`channel_revisions`) is
//! written in the transaction that writes the reservation, under a lock on the connection, so the same revision
//! coming by webhook and by feed is applied once. Only after the commit is it acknowledged; a failure before sends
//! no acknowledgement, and the next poll of the feed applies it.
//!
//! * `new`: a CONFIRMED reservation, source CHANNEL, the OTA's reservation code as its channel reference, each
//!   room of its mapped room type and rate plan at the price Channex sent, and a guest record made from the
//!   booking's customer. Each room keeps its prices per night (`days`), which its folio charges night by night.
//!   Through the same insert every writer uses. A channel's booking is sold already, so it is
//!   taken even when it does not fit (docs/channels.md, "Bookings that are taken whatever"): a night with no room
//!   free makes it overbooked (`inventory::sold_already`), a room type not mapped puts the room on the hotel's
//!   first room type by name, a rate plan not mapped leaves the room without one; either way the reservation is
//!   flagged for the desk (`reservations::attention`), and the availability the write changed goes out.
//! * `modified`: the booking's reservation takes the new dates and total, by the same rules as PUT (taken also
//!   when the new nights are full, flagged overbooked), and each of its rooms the channel still books takes the
//!   channel's price and prices per night (the folio's nights to come follow; posted ones stay as charged). The
//!   customer's details update the guest record. A change of its rooms (their number or types), which PUT cannot
//!   make, is flagged for the desk with what the channel now books.
//! * `cancelled`: the booking's reservation is cancelled, freeing its nights.
//!
//! A revision that cannot be applied (a hotel without room types, a modification of a booking never taken, a
//! malformed revision) is recorded as `needs_attention` with the reason, nothing of it written, and not
//! acknowledged: it stays in the feed and is tried again.

use std::collections::BTreeMap;

use chrono::{NaiveDate, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::client::{Client, Sent};
use super::CHANNEL;
use crate::channels::ChannelConnection;
use crate::domain::access::Actor;
use crate::domain::change::{Change, Writer};
use crate::domain::guests::{self, GuestIn, GuestPatch};
use crate::domain::reservations::attention::{self, AttentionReason};
use crate::domain::reservations::{self, write, ReservationIn, ReservationPatch, ReservationRoomIn, RoomPrice};
use crate::domain::{money, validate, Error};
use crate::model::channels::ChannelRevision;
use crate::model::reservations::{Reservation, ReservationRoom, ReservationStatus, RoomStatus, Source};
use crate::model::room_types::RoomType;
use crate::store::{self, Db};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Attributes {
    property_id: Option<String>,
    booking_id: Option<String>,
    status: Option<String>,
    unique_id: Option<String>,
    ota_reservation_code: Option<String>,
    ota_name: Option<String>,
    arrival_date: Option<String>,
    departure_date: Option<String>,
    amount: Option<String>,
    currency: Option<String>,
    notes: Option<String>,
    rooms: Option<Vec<Room>>,
    customer: Option<Customer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Room {
    room_type_id: Option<String>,
    rate_plan_id: Option<String>,
    amount: Option<String>,
    /// The room's price per night: date → decimal string (read leniently: a malformed one leaves the amount spread).
    days: Option<Value>,
    occupancy: Option<Occupancy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Occupancy {
    adults: Option<i64>,
    children: Option<i64>,
    infants: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Customer {
    name: Option<String>,
    surname: Option<String>,
    mail: Option<String>,
    phone: Option<String>,
    country: Option<String>,
    language: Option<String>,
}

/// What became of a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// Applied now: the booking's reservation.
    Applied(String),
    /// Applied before (by webhook or feed); whether Channex was told.
    AlreadyApplied { acked: bool },
    /// Not applied, and why.
    NeedsAttention(String),
}

/// The reason a revision cannot be applied, in words.
fn reason(err: Error) -> String {
    match err {
        Error::Validation(errors) | Error::Unprocessable(errors) => errors
            .iter()
            .map(|e| format!("{}{}", e.field.as_deref().map(|f| format!("{f}: ")).unwrap_or_default(), e.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn writer() -> Writer {
    Writer::Channel { channel: CHANNEL.into() }
}

/// Applies `revision` (as Channex answered it) to the connection's hotel, once. Never acknowledges.
pub async fn apply(db: &Db, c: &ChannelConnection, revision: &Value) -> anyhow::Result<Taken> {
    let Some(id) = revision.get("id").and_then(Value::as_str).filter(|id| !id.is_empty() && id.len() <= 100) else {
        return Ok(Taken::NeedsAttention("a revision without an id".into()));
    };
    let attributes: Attributes = match revision.get("attributes").cloned().map(serde_json::from_value) {
        Some(Ok(a)) => a,
        _ => Attributes::default(),
    };
    let booking_id = attributes.booking_id.clone().unwrap_or_default();
    let status = attributes.status.clone().unwrap_or_default();
    let actor = Actor::service(&c.organization_id, writer());
    let mut tx = Change::begin(db, &actor).await?;
    store::channels::lock(tx.conn(), &c.id).await?;
    if let Some(seen) = store::channels::revision(tx.conn(), &c.id, id).await? {
        if seen.outcome == "applied" {
            return Ok(Taken::AlreadyApplied { acked: seen.acked_at.is_some() });
        }
    }
    let outcome = match attributes.property_id.as_deref() {
        Some(property) if property == c.property_id => match status.as_str() {
            "new" => new(&mut tx, &actor, c, &attributes).await,
            "modified" => modified(&mut tx, &actor, c, &booking_id, &attributes).await,
            "cancelled" => cancelled(&mut tx, &actor, c, &booking_id).await,
            other => Err(format!("unknown revision status {other:?}")),
        },
        _ => Err("the revision is not of this connection's property".into()),
    };
    let at = Utc::now();
    let mut record = ChannelRevision {
        revision_id: id.to_string(),
        booking_id: booking_id.chars().take(100).collect(),
        status: status.chars().take(20).collect(),
        reservation_id: None,
        outcome: "applied".into(),
        detail: String::new(),
        recorded_at: at,
        acked_at: None,
    };
    match outcome {
        Ok(reservation_id) => {
            record.reservation_id = Some(reservation_id.clone());
            store::channels::record_revision(tx.conn(), &c.id, &record).await?;
            if !record.booking_id.is_empty() {
                store::channels::link_booking(tx.conn(), &c.hotel_id, CHANNEL, &record.booking_id, &reservation_id)
                    .await?;
            }
            tx.commit().await?;
            Ok(Taken::Applied(reservation_id))
        }
        Err(why) => {
            drop(tx);
            record.outcome = "needs_attention".into();
            record.detail = why.chars().take(1000).collect();
            let mut tx = Change::begin(db, &actor).await?;
            store::channels::record_revision(tx.conn(), &c.id, &record).await?;
            tx.commit().await?;
            tracing::warn!(connection = %c.id, revision = %id, reason = %record.detail, "a Channex booking revision needs attention");
            Ok(Taken::NeedsAttention(record.detail))
        }
    }
}

fn minor(amount: Option<&str>, currency: &str) -> Result<Option<i64>, String> {
    amount.map(|a| money::parse(a, currency).map_err(|e| format!("the amount {a:?}: {e}"))).transpose()
}

/// A room's prices per night (Channex's `days`), where every one reads; `None` otherwise, and the room's amount is
/// spread over the nights. Whether they are the stay's nights and add up to the amount is the folio's check
/// (`ReservationRoom::nightly`).
fn night_prices(days: Option<&Value>, currency: &str) -> Option<BTreeMap<NaiveDate, i64>> {
    let days = days?.as_object().filter(|days| days.len() <= reservations::MAX_NIGHTS as usize)?;
    days.iter()
        .map(|(date, amount)| {
            let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
            Some((date, money::parse(amount.as_str()?, currency).ok()?))
        })
        .collect()
}

async fn new(tx: &mut Change, actor: &Actor, c: &ChannelConnection, a: &Attributes) -> Result<String, String> {
    let room_types = store::channels::room_type_mappings(tx.conn(), &c.id).await.map_err(|e| e.to_string())?;
    let rate_plans = store::channels::rate_plan_mappings(tx.conn(), &c.id).await.map_err(|e| e.to_string())?;
    let currency = a.currency.clone().unwrap_or_default();
    let types = hotel_room_types(tx, c).await?;
    let mut rooms = Vec::new();
    let mut unmapped = Vec::new();
    let mut too_large = Vec::new();
    for room in a.rooms.as_deref().unwrap_or_default() {
        let remote_type = room.room_type_id.as_deref().unwrap_or("null");
        let occupancy = room.occupancy.as_ref();
        let mut party =
            (occupancy.and_then(|o| o.adults), occupancy.and_then(|o| o.children), occupancy.and_then(|o| o.infants));
        let room_type_id = match room_types.iter().find(|m| m.remote_id == remote_type) {
            Some(ours) => {
                // A room type set up in Channex by hand may sell a party ours does not hold: the room is taken
                // with its type's usual party, and the flag says what was booked.
                let here = types.iter().find(|t| t.id == ours.room_type_id);
                if let Some(why) = here.and_then(|here| party_too_large(here, party.0, party.1)) {
                    too_large.push(why);
                    party = (None, None, None);
                }
                ours.room_type_id.clone()
            }
            None => {
                let stand_in = stand_in(&types).ok_or("the hotel has no room types")?;
                // The stand-in type may hold fewer than the channel sold the room for: the room takes the type's
                // usual party, and the flag says what was booked.
                let booked_for = match party {
                    (Some(adults), children, _) => {
                        format!(" (booked for {adults} adult(s), {} child(ren))", children.unwrap_or(0))
                    }
                    _ => String::new(),
                };
                party = (None, None, None);
                unmapped.push(format!(
                    "Channex room type {remote_type:?} is not mapped: the room was put on {}{booked_for}",
                    stand_in.name
                ));
                stand_in.id.clone()
            }
        };
        let plan = room
            .rate_plan_id
            .as_deref()
            .and_then(|id| rate_plans.iter().find(|m| m.remote_id == id && m.room_type_id == room_type_id));
        if let (None, Some(remote_plan)) = (plan, room.rate_plan_id.as_deref()) {
            unmapped.push(format!("Channex rate plan {remote_plan:?} is not mapped: the room has no rate plan"));
        }
        rooms.push(ReservationRoomIn {
            room_type_id,
            rate_plan_id: plan.map(|p| p.rate_plan_id.clone()),
            room_id: None,
            adults: party.0,
            children: party.1,
            infants: party.2,
            price: Some(minor(room.amount.as_deref(), &currency)?.unwrap_or(0)),
            night_prices: night_prices(room.days.as_ref(), &currency),
        });
    }
    let customer = a.customer.as_ref();
    let name = customer
        .map(|c| {
            format!("{} {}", c.name.as_deref().unwrap_or(""), c.surname.as_deref().unwrap_or("")).trim().to_string()
        })
        .unwrap_or_default();
    let guest_id = match customer.and_then(|customer| as_guest(c, customer)) {
        Some(input) => Some(guests::insert(tx, actor, input).await.map_err(reason)?.id),
        None => None,
    };
    let mut notes = format!(
        "{} booking {} (Channex {}). Guest: {name}.",
        a.ota_name.as_deref().unwrap_or("Channel"),
        a.unique_id.as_deref().unwrap_or(""),
        a.booking_id.as_deref().unwrap_or("")
    );
    if let Some(more) = a.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        notes.push_str(&format!("\n{more}"));
    }
    let input = ReservationIn {
        hotel_id: Some(c.hotel_id.clone()),
        guest_id,
        status: Some(ReservationStatus::Confirmed),
        check_in_date: a.arrival_date.clone().unwrap_or_default(),
        check_out_date: a.departure_date.clone().unwrap_or_default(),
        start_time: None,
        end_time: None,
        adults: None,
        children: None,
        infants: None,
        total_price: minor(a.amount.as_deref(), &currency)?,
        currency: a.currency.clone(),
        source: Some(Source::Channel),
        channel_reference: a
            .ota_reservation_code
            .clone()
            .or_else(|| a.unique_id.clone())
            .map(|code| code.chars().filter(|ch| !validate::is_forbidden_in_line(*ch)).take(200).collect()),
        // The channel's texts, without what a reservation's notes refuse (control characters), cut to what they hold.
        notes: Some(notes.chars().filter(|ch| !validate::is_forbidden_char(*ch)).take(5000).collect()),
        rooms,
    };
    let r = write::insert(tx, actor, input).await.map_err(reason)?;
    if !unmapped.is_empty() {
        attention::raise(tx, &c.organization_id, &r, AttentionReason::Unmapped, &unmapped.join("; "))
            .await
            .map_err(reason)?;
    }
    if !too_large.is_empty() {
        attention::raise(tx, &c.organization_id, &r, AttentionReason::Party, &too_large.join("; "))
            .await
            .map_err(reason)?;
    }
    Ok(r.id)
}

/// What the desk is told of a room sold for a party its room type here does not hold; `None` when it fits (or no
/// party was sent: the type's usual one is taken).
fn party_too_large(here: &RoomType, adults: Option<i64>, children: Option<i64>) -> Option<String> {
    let (adults, children) = (adults?, children.unwrap_or(0));
    (!here.fits(adults, children)).then(|| {
        format!(
            "a room of {} was booked for {adults} adult(s), {children} child(ren); it holds at most {} ({} adults, {} \
             children): the room holds its usual party",
            here.name, here.max_occupancy, here.max_adults, here.max_children
        )
    })
}

/// The room type an unmapped room is put on, so that the sold room holds a room somewhere (and the hotel's
/// availability falls): the hotel's first room type by name. A hotel without room types cannot take the booking.
fn stand_in(types: &[RoomType]) -> Option<&RoomType> {
    types.iter().min_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)))
}

async fn hotel_room_types(tx: &mut Change, c: &ChannelConnection) -> Result<Vec<RoomType>, String> {
    store::room_types::list(tx.conn(), &c.organization_id, Some(&c.hotel_id)).await.map_err(|e| e.to_string())
}

/// The booking's customer as a guest record of the hotel, with what of their details is well-formed (a channel's
/// e-mail address or country that we would refuse is left out, not the booking); none without a name.
fn as_guest(c: &ChannelConnection, customer: &Customer) -> Option<GuestIn> {
    // A line of text without what a guest's fields refuse (control characters, line breaks), at most `most` long.
    let clean = |v: &Option<String>, most: usize| {
        v.as_deref()
            .map(|v| validate::clean(&v.chars().filter(|ch| !validate::is_forbidden_in_line(*ch)).collect::<String>()))
            .filter(|v| !v.is_empty())
            .map(|v| v.chars().take(most).collect::<String>())
    };
    let (first, last) = match (clean(&customer.name, 100), clean(&customer.surname, 100)) {
        (Some(first), Some(last)) => (first, last),
        // Channels send some guests with one name only: it is their last name, the first stays a dash.
        (None, Some(only)) | (Some(only), None) => ("-".to_string(), only),
        (None, None) => return None,
    };
    Some(GuestIn {
        hotel_id: Some(c.hotel_id.clone()),
        first_name: first,
        last_name: last,
        email: clean(&customer.mail, 254).filter(|m| validate::is_email(m)),
        phone: clean(&customer.phone, 50),
        street: None,
        postal_code: None,
        city: None,
        country: clean(&customer.country, 3)
            .map(|c| c.to_ascii_uppercase())
            .filter(|c| c.len() == 2 && c.chars().all(|ch| ch.is_ascii_uppercase())),
        language: clean(&customer.language, 35).filter(|l| guests::is_language_tag(l)),
        notes: None,
    })
}

/// A modified booking's customer onto the reservation's guest: the details the channel sends now (what it leaves
/// out is kept), recorded only when something changed. A guest erased at their request stays erased. Answers the
/// guest made when the reservation had none.
async fn update_guest(
    tx: &mut Change,
    actor: &Actor,
    c: &ChannelConnection,
    r: &Reservation,
    customer: &Customer,
) -> Result<Option<String>, String> {
    let Some(now) = as_guest(c, customer) else { return Ok(None) };
    let Some(guest_id) = r.guest_id.as_deref() else {
        return guests::insert(tx, actor, now).await.map(|g| Some(g.id)).map_err(reason);
    };
    let was = guests::visible(tx.conn(), actor, guest_id).await.map_err(reason)?;
    if was.first_name == guests::ANONYMISED_FIRST_NAME && was.last_name == guests::ANONYMISED_LAST_NAME {
        return Ok(None);
    }
    let changed = |new: Option<String>, old: &Option<String>| new.filter(|v| Some(v) != old.as_ref()).map(Some);
    let patch = GuestPatch {
        first_name: Some(now.first_name).filter(|v| *v != was.first_name),
        last_name: Some(now.last_name).filter(|v| *v != was.last_name),
        email: changed(now.email, &was.email),
        phone: changed(now.phone, &was.phone),
        country: changed(now.country, &was.country),
        language: changed(now.language, &was.language),
        ..Default::default()
    };
    let unchanged = patch.first_name.is_none()
        && patch.last_name.is_none()
        && patch.email.is_none()
        && patch.phone.is_none()
        && patch.country.is_none()
        && patch.language.is_none();
    if !unchanged {
        guests::update_within(tx, actor, guest_id, patch).await.map_err(reason)?;
    }
    Ok(None)
}

/// The reservation the booking became.
async fn booked(tx: &mut Change, c: &ChannelConnection, booking_id: &str) -> Result<String, String> {
    // Recorded as the revision's row is, cut to 100 characters.
    let booking_id: String = booking_id.chars().take(100).collect();
    store::channels::reservation_of_booking(tx.conn(), &c.hotel_id, CHANNEL, &booking_id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no reservation was taken for the booking {booking_id:?}"))
}

async fn modified(
    tx: &mut Change,
    actor: &Actor,
    c: &ChannelConnection,
    booking_id: &str,
    a: &Attributes,
) -> Result<String, String> {
    let id = booked(tx, c, booking_id).await?;
    let currency = a.currency.clone().unwrap_or_default();
    let r = reservations::visible(tx.conn(), actor, &id).await.map_err(reason)?;
    let held: Vec<ReservationRoom> = store::reservations::rooms(tx.conn(), &id)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|room| room.status != RoomStatus::Cancelled)
        .collect();
    let mapped = store::channels::room_type_mappings(tx.conn(), &c.id).await.map_err(|e| e.to_string())?;
    let types = hotel_room_types(tx, c).await?;
    // Each room the channel books now, as the room type it is here (an unmapped one: the type `new` put it on),
    // matched to a room of the reservation of that type, in order. A matched room takes the channel's price (and
    // its prices per night); a room left over on either side means the channel changed the rooms.
    let stand_in = stand_in(&types).map(|t| t.id.clone());
    let mut unmatched: Vec<&ReservationRoom> = held.iter().collect();
    let mut prices = Vec::new();
    let mut booked_types = Vec::new();
    for room in a.rooms.as_deref().unwrap_or_default() {
        let remote = room.room_type_id.as_deref().unwrap_or("null");
        let here = mapped.iter().find(|m| m.remote_id == remote).map(|m| m.room_type_id.clone()).or(stand_in.clone());
        booked_types.push(here.clone().unwrap_or_else(|| format!("Channex room type {remote:?}")));
        let Some(position) = unmatched.iter().position(|ours| Some(&ours.room_type_id) == here.as_ref()) else {
            continue;
        };
        let ours = unmatched.remove(position);
        if let Some(price) = minor(room.amount.as_deref(), &currency)? {
            prices.push(RoomPrice {
                room_id: ours.id.clone(),
                price,
                night_prices: night_prices(room.days.as_ref(), &currency),
            });
        }
    }
    let guest_id = match a.customer.as_ref() {
        Some(customer) => update_guest(tx, actor, c, &r, customer).await?,
        None => None,
    };
    let patch = ReservationPatch {
        check_in_date: a.arrival_date.clone(),
        check_out_date: a.departure_date.clone(),
        total_price: minor(a.amount.as_deref(), &currency)?,
        guest_id: guest_id.map(Some),
        room_prices: Some(prices),
        ..Default::default()
    };
    let r = write::update_within(tx, actor, &id, patch).await.map_err(reason)?;
    // A reservation's rooms cannot change type or number by the rules of PUT: a modification that changes what
    // was booked is applied for its dates, prices and total, and the rest is left to the desk, flagged.
    let name = |id: &str| types.iter().find(|t| t.id == id).map_or_else(|| id.to_string(), |t| t.name.clone());
    let mut booked: Vec<String> = booked_types.iter().map(|id| name(id)).collect();
    let mut held: Vec<String> = held.iter().map(|room| name(&room.room_type_id)).collect();
    booked.sort();
    held.sort();
    if booked != held {
        let detail = format!(
            "the channel changed the rooms to {}; the reservation still has {}: change them by hand",
            rooms_in_words(&booked),
            rooms_in_words(&held)
        );
        attention::raise(tx, &c.organization_id, &r, AttentionReason::Changed, &detail).await.map_err(reason)?;
    }
    Ok(r.id)
}

/// "2 x Twin, 1 x Double" of sorted room type names.
fn rooms_in_words(sorted: &[String]) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let n = sorted[i..].iter().take_while(|t| **t == sorted[i]).count();
        words.push(format!("{n} x {}", sorted[i]));
        i += n;
    }
    if words.is_empty() {
        "no rooms".into()
    } else {
        words.join(", ")
    }
}

async fn cancelled(tx: &mut Change, actor: &Actor, c: &ChannelConnection, booking_id: &str) -> Result<String, String> {
    let id = booked(tx, c, booking_id).await?;
    let r = reservations::visible(tx.conn(), actor, &id).await.map_err(reason)?;
    if r.status == ReservationStatus::Cancelled {
        return Ok(id);
    }
    let patch = ReservationPatch { status: Some(ReservationStatus::Cancelled), ..Default::default() };
    write::update_within(tx, actor, &id, patch).await.map(|r| r.id).map_err(reason)
}

/// Acknowledges an applied revision (after its commit), once: the acknowledgement is first taken in the database,
/// so that the webhook and the feed bringing the same revision at once do not both send one; given back if it
/// cannot be sent.
async fn acknowledge(db: &Db, client: &Client, c: &ChannelConnection, id: &str) -> anyhow::Result<()> {
    let now = Utc::now();
    let mut tx = Change::begin_as(db, writer()).await?;
    let taken = store::channels::take_ack(tx.conn(), &c.id, id, now, now - chrono::TimeDelta::minutes(2)).await?;
    tx.commit().await?;
    if !taken {
        return Ok(());
    }
    match client.ack(id).await {
        Sent::Answered(answer) if (200..300).contains(&answer.status) => {}
        other => {
            tracing::warn!(connection = %c.id, revision = %id, answer = ?other, "acknowledging a revision failed; the feed brings it again");
            let mut tx = Change::begin_as(db, writer()).await?;
            store::channels::give_ack_back(tx.conn(), &c.id, id).await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Reads revision `id` from Channex, applies it, and acknowledges it once it is in.
pub async fn take(db: &Db, client: &Client, c: &ChannelConnection, id: &str) -> anyhow::Result<Option<Taken>> {
    let Sent::Answered(answer) = client.revision(id).await else { return Ok(None) };
    let Some(revision) = answer.data.filter(|_| (200..300).contains(&answer.status)) else { return Ok(None) };
    let taken = apply(db, c, &revision).await?;
    // Acknowledged once, also when the feed brings the same revision meanwhile (see `acknowledge`).
    if let (Taken::Applied(_) | Taken::AlreadyApplied { .. }, Some(id)) =
        (&taken, revision.get("id").and_then(Value::as_str))
    {
        acknowledge(db, client, c, id).await?;
    }
    Ok(Some(taken))
}

/// Applies every revision of the connection's feed (oldest first) and acknowledges each one applied; answers how
/// many were in the feed, or `None` when Channex could not be read.
pub async fn poll(db: &Db, client: &Client, c: &ChannelConnection) -> anyhow::Result<Option<usize>> {
    let Sent::Answered(answer) = client.feed(&c.property_id).await else { return Ok(None) };
    let Some(Value::Array(items)) = answer.data.filter(|_| (200..300).contains(&answer.status)) else {
        return Ok(None);
    };
    for revision in &items {
        let taken = apply(db, c, revision).await?;
        // Acknowledged once, also when the webhook brings the same revision meanwhile (see `acknowledge`).
        if let (Taken::Applied(_) | Taken::AlreadyApplied { .. }, Some(id)) =
            (&taken, revision.get("id").and_then(Value::as_str))
        {
            acknowledge(db, client, c, id).await?;
        }
    }
    Ok(Some(items.len()))
}
