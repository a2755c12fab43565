//! Bookings in: Channex's booking revisions (docs/channex-api-notes.md §4) applied as reservations.
//!
//! A revision is read from Channex itself (the feed, or `GET /booking_revisions/:id` after a webhook: a webhook's
//! payload is never trusted) and applied **once**, keyed by its id: the revision's row (`channel_revisions`) is
//! written in the transaction that writes the reservation, under a lock on the connection, so the same revision
//! coming by webhook and by feed is applied once. Only after the commit is it acknowledged; a failure before sends
//! no acknowledgement, and the next poll of the feed applies it.
//!
//! * `new`: a CONFIRMED reservation, source CHANNEL, the OTA's reservation code as its channel reference, each
//!   room of a mapped room type (and rate plan, when mapped) at the price Channex sent, the guest's name in its
//!   notes. Through the same insert every writer uses.
//! * `modified`: the booking's reservation takes the new dates and total, by the same rules as PUT.
//! * `cancelled`: the booking's reservation is cancelled, freeing its nights.
//!
//! A revision that cannot be applied (a room type not mapped, no room free, a modification of a booking never
//! taken, a malformed revision) is recorded as `needs_attention` with the reason, nothing of it written, and not
//! acknowledged: it stays in the feed and is tried again.

use chrono::Utc;
use serde::Deserialize;
use serde_json::Value;

use super::client::{Client, Sent};
use super::CHANNEL;
use crate::channels::ChannelConnection;
use crate::domain::access::Actor;
use crate::domain::change::{Change, Writer};
use crate::domain::reservations::{self, write, ReservationIn, ReservationPatch, ReservationRoomIn};
use crate::domain::{money, Error};
use crate::model::channels::ChannelRevision;
use crate::model::reservations::{ReservationStatus, Source};
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

async fn new(tx: &mut Change, actor: &Actor, c: &ChannelConnection, a: &Attributes) -> Result<String, String> {
    let room_types = store::channels::room_type_mappings(tx.conn(), &c.id).await.map_err(|e| e.to_string())?;
    let rate_plans = store::channels::rate_plan_mappings(tx.conn(), &c.id).await.map_err(|e| e.to_string())?;
    let currency = a.currency.clone().unwrap_or_default();
    let mut rooms = Vec::new();
    for room in a.rooms.as_deref().unwrap_or_default() {
        let Some(ours) = room.room_type_id.as_deref().and_then(|id| room_types.iter().find(|m| m.remote_id == id))
        else {
            return Err(format!("the room type {:?} is not mapped", room.room_type_id.as_deref().unwrap_or("null")));
        };
        let plan = room
            .rate_plan_id
            .as_deref()
            .and_then(|id| rate_plans.iter().find(|m| m.remote_id == id && m.room_type_id == ours.room_type_id));
        let occupancy = room.occupancy.as_ref();
        rooms.push(ReservationRoomIn {
            room_type_id: ours.room_type_id.clone(),
            rate_plan_id: plan.map(|p| p.rate_plan_id.clone()),
            room_id: None,
            adults: occupancy.and_then(|o| o.adults),
            children: occupancy.and_then(|o| o.children),
            infants: occupancy.and_then(|o| o.infants),
            price: Some(minor(room.amount.as_deref(), &currency)?.unwrap_or(0)),
        });
    }
    let guest = a
        .customer
        .as_ref()
        .map(|c| {
            format!("{} {}", c.name.as_deref().unwrap_or(""), c.surname.as_deref().unwrap_or("")).trim().to_string()
        })
        .unwrap_or_default();
    let mut notes = format!(
        "{} booking {} (Channex {}). Guest: {guest}.",
        a.ota_name.as_deref().unwrap_or("Channel"),
        a.unique_id.as_deref().unwrap_or(""),
        a.booking_id.as_deref().unwrap_or("")
    );
    if let Some(more) = a.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        notes.push_str(&format!("\n{more}"));
    }
    let input = ReservationIn {
        hotel_id: Some(c.hotel_id.clone()),
        guest_id: None,
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
        channel_reference: a.ota_reservation_code.clone().or_else(|| a.unique_id.clone()),
        notes: Some(notes.chars().take(5000).collect()),
        rooms,
    };
    write::insert(tx, actor, input).await.map(|r| r.id).map_err(reason)
}

/// The reservation the booking became.
async fn booked(tx: &mut Change, c: &ChannelConnection, booking_id: &str) -> Result<String, String> {
    store::channels::reservation_of_booking(tx.conn(), &c.id, booking_id)
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
    let patch = ReservationPatch {
        check_in_date: a.arrival_date.clone(),
        check_out_date: a.departure_date.clone(),
        total_price: minor(a.amount.as_deref(), &currency)?,
        ..Default::default()
    };
    write::update_within(tx, actor, &id, patch).await.map(|r| r.id).map_err(reason)
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
