//! Every change to a reservation: create, update (state moves, dates, room assignments), approve and delete. Each
//! runs in one write transaction that also records the webhook event, so nothing is ever half-written.
//!
//! Creating is in [`create`] (validate, price, persist); changing, approving and deleting are here, with the steps
//! both share (dates, inventory, room checks, folios).

mod create;

// The create path lives in its own file; its functions stay `write::create`, `write::insert`, … for their callers.
pub use create::{create, create_once, insert, Created};

use chrono::NaiveDate;

use super::attention::{self, AttentionReason};
use super::{
    full, visible, Reservation, ReservationPatch, ReservationRoom, ReservationStatus, RoomAssignmentIn, RoomPrice,
    RoomStatus, MAX_NIGHTS,
};
use super::{inventory, stay};
use crate::domain::access::{Actor, Scope};
use crate::domain::change::{Action, Change, ChannelChangeKind, Writer};
use crate::domain::finance::folios;
use crate::domain::hotels::{self, Hotel};
use crate::domain::validate::{parse_date, Checks};
use crate::domain::{guest_messages, guests, money, now, Error, FieldError, Result};
use crate::store::{self, Db};

/// Validated stay dates: dates an input may name, check-out after check-in, at most [`MAX_NIGHTS`] nights.
fn stay_dates(c: &mut Checks, check_in: &str, check_out: &str) -> Option<(NaiveDate, NaiveDate)> {
    let from = parse_date(c, "checkInDate", check_in);
    let to = parse_date(c, "checkOutDate", check_out);
    let (from, to) = (from?, to?);
    let nights = (to - from).num_days();
    if nights < 1 {
        c.fail("checkOutDate", "must be after checkInDate");
        return None;
    }
    if nights > MAX_NIGHTS {
        c.fail("checkOutDate", format!("a stay may span at most {MAX_NIGHTS} nights"));
        return None;
    }
    Some((from, to))
}

const SHARED_ROOM: &str = "is assigned to another room of this reservation (they share every night)";

fn room_error(index: usize, field: &str, message: impl Into<String>) -> FieldError {
    FieldError::field(format!("rooms[{index}].{field}"), message)
}

/// Takes inventory for the rooms of `r` that hold it and checks their assignments (`today` is the hotel's: a room
/// given to a stay that includes tonight must be free now). A booking sold already elsewhere (a channel's) that
/// does not fit is taken all the same ([`inventory::sold_already`]): the answer is then why it is overbooked, for the
/// caller to flag once the reservation is written.
async fn hold(
    tx: &mut Change,
    actor: &Actor,
    r: &Reservation,
    rooms: &[ReservationRoom],
    today: NaiveDate,
) -> Result<Option<String>> {
    let organization_id = &actor.organization_id;
    let held: Vec<&ReservationRoom> = rooms.iter().filter(|room| inventory::holds(r.status, room.status)).collect();
    let types: Vec<String> = held.iter().map(|room| room.room_type_id.clone()).collect();
    let overbooked = match inventory::take(tx, organization_id, &types, r.check_in_date, r.check_out_date, &r.id).await
    {
        Err(Error::Conflict(full)) if inventory::sold_already(&Writer::for_actor(actor)) => Some(full),
        taken => taken.map(|()| None)?,
    };
    let mut assigned: Vec<(&String, &String)> =
        held.iter().filter_map(|room| room.room_id.as_ref().map(|id| (id, &room.room_type_id))).collect();
    // Rooms are locked in one order by every writer, so that two writers never wait on each other in a cycle.
    assigned.sort();
    for (room_id, room_type_id) in assigned {
        let stay = inventory::Stay { reservation_id: &r.id, nights: (r.check_in_date, r.check_out_date), today };
        inventory::assign(tx, organization_id, room_id, room_type_id, &stay).await?;
    }
    Ok(overbooked)
}

/// A physical room to assign: the actor's, of the reservation's hotel and of the reservation room's type.
async fn check_room(
    tx: &mut Change,
    actor: &Actor,
    hotel_id: &str,
    room_type_id: &str,
    room_id: &str,
) -> Result<Option<String>> {
    let room = store::rooms::get(tx.conn(), &actor.organization_id, room_id).await?;
    Ok(match room {
        None => Some("no such room".into()),
        Some(room) if room.hotel_id != hotel_id => Some("must be a room of the reservation's hotel".into()),
        Some(room) if room.room_type_id != room_type_id => Some("must be a room of the reserved room type".into()),
        Some(room) if !room.housekeeping_status.sellable() => {
            return Err(Error::Conflict(format!("room {} is out of order and cannot be assigned", room.name)))
        }
        Some(_) => None,
    })
}

fn check_counts(r: &Reservation) -> Result<()> {
    let mut c = Checks::new();
    for (field, value) in [("adults", r.adults), ("children", r.children), ("infants", r.infants)] {
        c.range(field, value, 0, 1000);
    }
    c.amount("totalPrice", r.total_price);
    c.finish()
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: ReservationPatch) -> Result<Reservation> {
    actor.require_scope(Scope::ReservationsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let r = visible(tx.conn(), actor, id).await?;
    let r = change(&mut tx, actor, r, patch).await?;
    tx.commit().await?;
    Ok(r)
}

/// Changes a reservation inside a change under way (a channel's booking revision), by the same rules as PUT.
pub(crate) async fn update_within(
    tx: &mut Change,
    actor: &Actor,
    id: &str,
    patch: ReservationPatch,
) -> Result<Reservation> {
    let r = visible(tx.conn(), actor, id).await?;
    change(tx, actor, r, patch).await
}

/// Marks a reservation a no-show inside a change under way (the end of day), by the state machine's rules: its
/// inventory and the nights to come are released, and its event recorded.
pub(crate) async fn no_show_within(tx: &mut Change, actor: &Actor, id: &str) -> Result<Reservation> {
    let r = visible(tx.conn(), actor, id).await?;
    let patch = ReservationPatch { status: Some(ReservationStatus::NoShow), ..Default::default() };
    change(tx, actor, r, patch).await
}

/// Approves a REQUESTED reservation: inventory is rechecked under lock, each pending room is confirmed and the
/// folio created; otherwise 409 and nothing changes.
pub async fn approve(db: &Db, actor: &Actor, id: &str) -> Result<Reservation> {
    actor.require_scope(Scope::ReservationsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let r = visible(tx.conn(), actor, id).await?;
    if r.status != ReservationStatus::Requested {
        return Err(Error::Conflict(format!(
            "only a REQUESTED reservation can be approved; this one is {}",
            r.status.as_str()
        )));
    }
    let patch = ReservationPatch { status: Some(ReservationStatus::Confirmed), ..Default::default() };
    let r = change(&mut tx, actor, r, patch).await?;
    tx.commit().await?;
    Ok(r)
}

/// Applies a patch inside `tx`: the one place where a reservation's state, dates, rooms and folio change. In steps:
/// the fields, the room assignments, the status move with the front desk's rules ([`stay`]), inventory, then the
/// writes and the event.
async fn change(tx: &mut Change, actor: &Actor, mut r: Reservation, patch: ReservationPatch) -> Result<Reservation> {
    let mut as_it_was = r.clone();
    if patch.hotel_id.as_deref().is_some_and(|h| h != r.hotel_id) {
        return Err(Error::Conflict("a reservation cannot move to another hotel".into()));
    }
    // The hotel of the reservation, whatever the actor's pin (checked on the reservation already).
    let service = Actor::service(&actor.organization_id, tx.writer().clone());
    let hotel = hotels::require_named(tx.conn(), &service, Some(&r.hotel_id)).await?;
    let today = hotel.today();
    let mut rooms = store::reservations::rooms(tx.conn(), &r.id).await?;
    // The reservation as it was, with its rooms, as the audit log compares it with what it becomes.
    as_it_was.rooms = Some(rooms.clone());
    let stored = Stored { rooms: rooms.clone(), status: r.status, dates: (r.check_in_date, r.check_out_date) };
    let before = r.status;
    let mut dates_changed = apply_fields(tx, actor, &hotel, &mut r, &patch).await?;
    let reassigned = apply_assignments(tx, actor, &r, &mut rooms, patch.rooms.as_deref().unwrap_or_default()).await?;
    let repriced = apply_room_prices(&mut rooms, patch.room_prices.as_deref().unwrap_or_default())?;

    // Whether the stay's lines of the folio are to be made anew, when this change alters the bill.
    let mut remake_folio = false;
    if let Some(to) = patch.status.filter(|to| *to != before) {
        if !before.can_move_to(to) {
            return Err(Error::Conflict(format!("a {} reservation cannot become {}", before.as_str(), to.as_str())));
        }
        r.status = to;
        for room in &mut rooms {
            room.status = room.status.after(to);
        }
        match (before, to) {
            (ReservationStatus::Confirmed, ReservationStatus::CheckedIn) => {
                stay::check_in(tx, &actor.organization_id, &r, &rooms, today).await?;
            }
            (ReservationStatus::CheckedIn, ReservationStatus::CheckedOut) => {
                stay::check_out(tx, actor, &hotel, &mut r, &rooms, patch.on_account_reason.as_deref()).await?;
            }
            (ReservationStatus::CheckedOut, ReservationStatus::CheckedIn) => {
                dates_changed |= stay::undo_check_out(tx, &actor.organization_id, &hotel, &mut r, &rooms).await?;
            }
            // A stay that will not be: its nights to come are no longer charged (a fee may be, by hand).
            (_, ReservationStatus::Cancelled | ReservationStatus::NoShow) => {
                folios::release(tx, &actor.organization_id, &r.id).await?;
            }
            _ => {}
        }
    }

    let newly_held = r.status.holds_inventory() && !before.holds_inventory();
    let mut overbooked = None;
    if r.status.holds_inventory() && (newly_held || dates_changed || reassigned) {
        overbooked = hold(tx, actor, &r, &rooms, today).await?;
    }
    if before == ReservationStatus::Requested && r.status == ReservationStatus::Confirmed {
        // Approving a booking request: the offer's rate plan must still sell those nights.
        let planned: Vec<(String, NaiveDate, NaiveDate)> = rooms
            .iter()
            .filter(|room| room.status == RoomStatus::Confirmed)
            .filter_map(|room| room.rate_plan_id.clone().map(|plan| (plan, r.check_in_date, r.check_out_date)))
            .collect();
        inventory::take_allotments(tx, &actor.organization_id, &planned, &r.id).await?;
        remake_folio = true;
    } else if (dates_changed || repriced || patch.adults.is_some() || patch.children.is_some())
        && matches!(r.status, ReservationStatus::Confirmed | ReservationStatus::CheckedIn)
        && before != ReservationStatus::CheckedOut
    {
        remake_folio = store::folios::head_of(tx.conn(), &r.id).await?.is_some();
    }
    let at = now();
    r.updated_at = at;
    store::reservations::update(tx.conn(), &actor.organization_id, &r).await?;
    let holds = |room: &ReservationRoom| inventory::holds(r.status, room.status);
    store::reservations::save_rooms(tx.conn(), &r, stored.changed(&r, &rooms), holds).await?;
    if remake_folio {
        folios::follow_the_stay(tx, &actor.organization_id, &hotel, &r, &rooms).await?;
    }
    if let Some(full) = overbooked {
        attention::raise(tx, &actor.organization_id, &r, AttentionReason::Overbooked, &full).await?;
    }
    let r = full(tx.conn(), r).await?;
    wrote(tx, &actor.organization_id, Wrote::Updated(&as_it_was), &r).await?;
    Ok(r)
}

/// A reservation's rooms as stored before a change, to write only the rooms the change touched: a new note or price
/// rewrites no room row (each is several index entries, and on PostgreSQL a new row version).
struct Stored {
    rooms: Vec<ReservationRoom>,
    status: ReservationStatus,
    dates: (NaiveDate, NaiveDate),
}

impl Stored {
    /// The rooms (with their positions) whose stored row differs from what `r` and `rooms` say now: the room itself,
    /// the stay dates every row carries, or whether it holds inventory.
    fn changed<'a>(
        &'a self,
        r: &'a Reservation,
        rooms: &'a [ReservationRoom],
    ) -> impl Iterator<Item = (usize, &'a ReservationRoom)> + 'a {
        let dates_moved = (r.check_in_date, r.check_out_date) != self.dates;
        rooms.iter().enumerate().filter(move |(position, room)| {
            let Some(stored) = self.rooms.get(*position) else { return true };
            dates_moved
                || stored != *room
                || inventory::holds(self.status, stored.status) != inventory::holds(r.status, room.status)
        })
    }
}

/// Applies the patch's plain fields (dates, times, guest, party, price, texts) to `r`, validated. Answers whether
/// the stay dates changed.
async fn apply_fields(
    tx: &mut Change,
    actor: &Actor,
    hotel: &Hotel,
    r: &mut Reservation,
    patch: &ReservationPatch,
) -> Result<bool> {
    let mut c = Checks::new();
    let mut dates_changed = false;
    if patch.check_in_date.is_some() || patch.check_out_date.is_some() {
        let check_in = patch.check_in_date.clone().unwrap_or_else(|| r.check_in_date.to_string());
        let check_out = patch.check_out_date.clone().unwrap_or_else(|| r.check_out_date.to_string());
        if let Some((from, to)) = stay_dates(&mut c, &check_in, &check_out) {
            dates_changed = (from, to) != (r.check_in_date, r.check_out_date);
            r.check_in_date = from;
            r.check_out_date = to;
        }
    }
    c.opt_text("channelReference", patch.channel_reference.as_ref().and_then(|v| v.as_deref()), 200);
    c.opt_text("notes", patch.notes.as_ref().and_then(|v| v.as_deref()), 5000);
    if let Some(at) = patch.start_time {
        c.instant("startTime", at);
    }
    if let Some(at) = patch.end_time {
        c.instant("endTime", at);
    }
    c.finish()?;
    if dates_changed && !matches!(r.status, ReservationStatus::Requested | ReservationStatus::Confirmed) {
        return Err(Error::Conflict(format!("the dates of a {} reservation cannot change", r.status.as_str())));
    }
    if dates_changed || patch.start_time.is_some() {
        r.start_time = patch.start_time.unwrap_or_else(|| hotel.local_instant(r.check_in_date, &hotel.check_in_time));
    }
    if dates_changed || patch.end_time.is_some() {
        r.end_time = patch.end_time.unwrap_or_else(|| hotel.local_instant(r.check_out_date, &hotel.check_out_time));
    }
    if let Some(guest_id) = &patch.guest_id {
        if let Some(guest_id) = guest_id {
            guests::visible(tx.conn(), actor, guest_id).await?;
        }
        r.guest_id = guest_id.clone();
    }
    if let Some(v) = patch.adults {
        r.adults = v;
    }
    if let Some(v) = patch.children {
        r.children = v;
    }
    if let Some(v) = patch.infants {
        r.infants = v;
    }
    if let Some(v) = patch.total_price {
        r.total_price = v;
    }
    if let Some(v) = &patch.channel_reference {
        r.channel_reference = v.clone();
    }
    if let Some(v) = &patch.notes {
        r.notes = v.clone();
    }
    check_counts(r)?;
    Ok(dates_changed)
}

/// Applies new room prices to `rooms` (each checked to be an amount and one of the reservation's rooms). Answers
/// whether a price changed, so that the folio's nights to come follow it (posted nights keep what they charged).
fn apply_room_prices(rooms: &mut [ReservationRoom], prices: &[RoomPrice]) -> Result<bool> {
    let mut errors = Vec::new();
    let mut repriced = false;
    for (i, new) in prices.iter().enumerate() {
        let Some(room) = rooms.iter_mut().find(|room| room.id == new.room_id) else {
            errors.push(room_error(i, "id", "no such room in this reservation"));
            continue;
        };
        if !money::in_bounds(new.price) {
            errors.push(room_error(i, "price", money::out_of_bounds_message()));
            continue;
        }
        repriced |= room.price != new.price || room.night_prices != new.night_prices;
        room.price = new.price;
        room.night_prices = new.night_prices.clone();
    }
    if errors.is_empty() {
        Ok(repriced)
    } else {
        Err(Error::Validation(errors))
    }
}

/// Applies room assignments to `rooms` (validated: a room of the hotel and of the reserved type, one per stay room).
/// Answers whether an assignment changed; inventory and the rooms' occupancy are checked later, under lock.
async fn apply_assignments(
    tx: &mut Change,
    actor: &Actor,
    r: &Reservation,
    rooms: &mut [ReservationRoom],
    assignments: &[RoomAssignmentIn],
) -> Result<bool> {
    let mut errors = Vec::new();
    let mut reassigned = false;
    for (i, assignment) in assignments.iter().enumerate() {
        let Some(room) = rooms.iter_mut().find(|room| room.id == assignment.id) else {
            errors.push(room_error(i, "id", "no such room in this reservation"));
            continue;
        };
        if let Some(room_id) = &assignment.room_id {
            if let Some(room_id) = room_id {
                if let Some(problem) = check_room(tx, actor, &r.hotel_id, &room.room_type_id, room_id).await? {
                    errors.push(room_error(i, "roomId", problem));
                }
            }
            reassigned |= room.room_id != *room_id;
            room.room_id = room_id.clone();
        }
    }
    for (i, assignment) in assignments.iter().enumerate() {
        let Some(Some(room_id)) = &assignment.room_id else { continue };
        let holders = rooms.iter().filter(|r| r.status != RoomStatus::Cancelled && r.room_id.as_ref() == Some(room_id));
        if holders.count() > 1 {
            errors.push(room_error(i, "roomId", SHARED_ROOM));
        }
    }
    if errors.is_empty() {
        Ok(reassigned)
    } else {
        Err(Error::Validation(errors))
    }
}

/// Deletes a reservation with its rooms, folio and charges; answers it as it was.
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<Reservation> {
    actor.require_scope(Scope::ReservationsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let r = visible(tx.conn(), actor, id).await?;
    let r = full(tx.conn(), r).await?;
    if folios::keeps_money(&mut tx, &r.id).await? {
        return Err(Error::Conflict(
            "the reservation's folio has posted lines or payments, which are kept by law; cancel the reservation instead"
                .into(),
        ));
    }
    store::reservations::delete(tx.conn(), &actor.organization_id, id).await?;
    wrote(&mut tx, &actor.organization_id, Wrote::Deleted, &r).await?;
    tx.commit().await?;
    Ok(r)
}

/// What a write did to a reservation.
pub(super) enum Wrote<'a> {
    Created,
    /// Updated; the reservation as it was.
    Updated(&'a Reservation),
    Deleted,
}

/// Says what a write did to a reservation (its event comes from the door), and plans the guest e-mails it calls
/// for: every write of a reservation ends here, so none forgets to tell the guest.
pub(super) async fn wrote(tx: &mut Change, organization_id: &str, wrote: Wrote<'_>, r: &Reservation) -> Result<()> {
    let action = match wrote {
        Wrote::Created => {
            tx.created(organization_id, r).await?;
            Action::Created
        }
        Wrote::Updated(before) => {
            tx.updated(organization_id, before, r).await?;
            Action::Updated
        }
        Wrote::Deleted => {
            tx.deleted(organization_id, r).await?;
            Action::Deleted
        }
    };
    channels_see(tx, &wrote, r).await?;
    guest_messages::plan(tx, organization_id, action, r).await
}

/// Records the nights whose availability channels must be told again: those of the stay (as it was and as it is)
/// when the write may have taken or released rooms (its status, dates or rooms changed).
async fn channels_see(tx: &mut Change, wrote: &Wrote<'_>, r: &Reservation) -> Result<()> {
    let mut from = r.check_in_date;
    let mut to = r.check_out_date;
    if let Wrote::Updated(before) = wrote {
        let same = before.status == r.status
            && before.check_in_date == r.check_in_date
            && before.check_out_date == r.check_out_date
            && before.rooms.is_some()
            && before.rooms == r.rooms;
        if same {
            return Ok(());
        }
        from = from.min(before.check_in_date);
        to = to.max(before.check_out_date);
    }
    // The nights are [check-in, check-out): the last is the day before departure.
    let last = to.pred_opt().unwrap_or(to);
    // The room types of its rooms, as it was and as it is; unknown: all of the hotel's.
    let before = match wrote {
        Wrote::Updated(before) => before.rooms.as_ref(),
        _ => r.rooms.as_ref(),
    };
    let (Some(before), Some(now)) = (before, r.rooms.as_ref()) else {
        return tx.channel_dirty(&r.hotel_id, None, from, last, ChannelChangeKind::Availability).await;
    };
    let mut room_types: Vec<&str> = before.iter().chain(now).map(|room| room.room_type_id.as_str()).collect();
    room_types.sort_unstable();
    room_types.dedup();
    for room_type in room_types {
        tx.channel_dirty(&r.hotel_id, Some(room_type), from, last, ChannelChangeKind::Availability).await?;
    }
    Ok(())
}
