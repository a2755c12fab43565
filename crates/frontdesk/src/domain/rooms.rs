//! Physical rooms. Each belongs to a room type of its hotel; rooms out of order are not sellable. A room leaves its
//! type's sellable rooms (moving to another type, going out of order, deleted) only when no confirmed stay needs
//! it: see [`inventory::release_room`].

use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::ToSchema;

use super::access::{Actor, Scope, Task};
use super::reservations::inventory;
use super::validate::{clean, Checks};
use super::{hotels, identity, new_id, not_null, now, nullable, room_types, store_conflict, Error, Result};
use crate::domain::change::{Change, ChannelChangeKind, Record, RecordKind};
pub use crate::model::rooms::{HousekeepingStatus, Room};
use crate::store::{self, Db};

impl HousekeepingStatus {
    /// Whether a room in this state can be sold.
    pub fn sellable(self) -> bool {
        self != Self::OutOfOrder
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomIn {
    /// Optional: the room type's hotel. When given it must be that hotel.
    pub hotel_id: Option<String>,
    pub room_type_id: String,
    #[schema(min_length = 1, max_length = 50, pattern = r"\S")]
    pub name: String,
    #[schema(minimum = -20, maximum = 500)]
    pub floor: Option<i64>,
    /// Defaults to CLEAN.
    pub housekeeping_status: Option<HousekeepingStatus>,
}

/// Changes to a room; fields left out keep their value. The hotel cannot change.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomPatch {
    /// Another room type of the same hotel.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub room_type_id: Option<String>,
    #[schema(nullable = false, min_length = 1, max_length = 50, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>, minimum = -20, maximum = 500)]
    pub floor: Option<Option<i64>>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub housekeeping_status: Option<HousekeepingStatus>,
}

fn validate(r: &Room) -> Result<()> {
    let mut c = Checks::new();
    c.line("name", &r.name, 50);
    if let Some(floor) = r.floor {
        c.range("floor", floor, -20, 500);
    }
    c.finish()
}

/// The room type a room is given: visible to the actor and of the room's hotel (404 otherwise: room types are
/// records of their hotel).
async fn room_type_of_hotel(
    conn: &mut store::Conn,
    actor: &Actor,
    room_type_id: &str,
    hotel_id: Option<&str>,
) -> Result<room_types::RoomType> {
    let room_type = room_types::visible(conn, actor, room_type_id).await?;
    if hotel_id.is_some_and(|h| h != room_type.hotel_id) {
        return Err(Error::NotFound("room type of this hotel"));
    }
    Ok(room_type)
}

async fn visible(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<Room> {
    store::rooms::get(conn, &actor.organization_id, id)
        .await?
        .filter(|r| actor.sees_hotel(Some(&r.hotel_id)))
        .ok_or(Error::NotFound("room"))
}

pub async fn list(db: &Db, actor: &Actor, hotel_id: Option<&str>, room_type_id: Option<&str>) -> Result<Vec<Room>> {
    actor.require_scope(Scope::RoomsRead)?;
    let mut conn = db.read().await?;
    let hotel_id = hotels::optional_filter(&mut conn, actor, hotel_id).await?;
    let mut rooms = store::rooms::list(&mut conn, &actor.organization_id, hotel_id.as_deref(), room_type_id).await?;
    rooms.retain(|r| actor.sees_hotel(Some(&r.hotel_id)));
    Ok(rooms)
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<Room> {
    actor.require_scope(Scope::RoomsRead)?;
    visible(&mut *db.read().await?, actor, id).await
}

pub async fn create(db: &Db, actor: &Actor, input: RoomIn) -> Result<Room> {
    actor.require_scope(Scope::RoomsWrite)?;
    actor.require(Task::SetUpRooms)?;
    let mut tx = Change::begin(db, actor).await?;
    if let Some(hotel_id) = actor.resolve_hotel(input.hotel_id.as_deref())? {
        hotels::require_named(tx.conn(), actor, Some(&hotel_id)).await?;
    }
    let room_type = room_type_of_hotel(tx.conn(), actor, &input.room_type_id, input.hotel_id.as_deref()).await?;
    let at = now();
    let room = Room {
        id: new_id(),
        hotel_id: room_type.hotel_id,
        room_type_id: room_type.id,
        name: clean(&input.name),
        floor: input.floor,
        housekeeping_status: input.housekeeping_status.unwrap_or(HousekeepingStatus::Clean),
        housekeeping_changed_at: None,
        housekeeping_changed_by: None,
        created_at: at,
        updated_at: at,
    };
    validate(&room)?;
    store::rooms::insert(tx.conn(), &actor.organization_id, &room)
        .await
        .map_err(|e| store_conflict(e, "the hotel already has a room with this name"))?;
    tx.created(&actor.organization_id, &room).await?;
    tx.channel_dirty_ahead(&room.hotel_id, Some(&room.room_type_id), ChannelChangeKind::Availability).await?;
    tx.commit().await?;
    Ok(room)
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: RoomPatch) -> Result<Room> {
    actor.require_scope(Scope::RoomsWrite)?;
    // Housekeeping and the front desk change a room's status; what the room is (type, name, floor) is setup.
    if patch.room_type_id.is_some() || patch.name.is_some() || patch.floor.is_some() {
        actor.require(Task::SetUpRooms)?;
    }
    let mut tx = Change::begin(db, actor).await?;
    let mut room = visible(tx.conn(), actor, id).await?;
    let before = room.clone();
    let new_type = match &patch.room_type_id {
        Some(room_type_id) => Some(room_type_of_hotel(tx.conn(), actor, room_type_id, Some(&room.hotel_id)).await?.id),
        None => None,
    };
    let moves = new_type.as_ref().is_some_and(|t| *t != room.room_type_id);
    let goes_out_of_order = patch.housekeeping_status.is_some_and(|s| !s.sellable());
    if moves || goes_out_of_order {
        // The room may stop counting as a sellable room of its type: checked under the inventory locks.
        room = inventory::lock_room(&mut tx, &actor.organization_id, &room).await?;
        let leaves = moves || room.housekeeping_status.sellable();
        if leaves {
            let change = if moves { "change room type" } else { "go out of order" };
            inventory::release_room(&mut tx, &room, change).await?;
        }
    }
    if let Some(room_type_id) = new_type {
        room.room_type_id = room_type_id;
    }
    if let Some(name) = patch.name {
        room.name = clean(&name);
    }
    if let Some(floor) = patch.floor {
        room.floor = floor;
    }
    if let Some(status) = patch.housekeeping_status {
        let by = identity::who(tx.conn(), actor).await?;
        set_status(&mut tx, actor, &mut room, status, &by).await?;
    }
    room.updated_at = now();
    validate(&room)?;
    store::rooms::update(tx.conn(), &actor.organization_id, &room)
        .await
        .map_err(|e| store_conflict(e, "the hotel already has a room with this name"))?;
    tx.updated(&actor.organization_id, &before, &room).await?;
    if moves || before.housekeeping_status.sellable() != room.housekeeping_status.sellable() {
        for room_type in [&before.room_type_id, &room.room_type_id] {
            tx.channel_dirty_ahead(&room.hotel_id, Some(room_type), ChannelChangeKind::Availability).await?;
        }
    }
    tx.commit().await?;
    Ok(room)
}

/// Deletes a room that no reservation is assigned to and that its type's confirmed stays can do without (409
/// otherwise).
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<Room> {
    actor.require_scope(Scope::RoomsWrite)?;
    actor.require(Task::SetUpRooms)?;
    let mut tx = Change::begin(db, actor).await?;
    let room = visible(tx.conn(), actor, id).await?;
    let room = inventory::lock_room(&mut tx, &actor.organization_id, &room).await?;
    inventory::release_room(&mut tx, &room, "be deleted").await?;
    store::rooms::delete(tx.conn(), &actor.organization_id, id)
        .await
        .map_err(|e| super::in_use(e, "reservations are assigned to this room; unassign them first"))?;
    tx.deleted(&actor.organization_id, &room).await?;
    tx.channel_dirty_ahead(&room.hotel_id, Some(&room.room_type_id), ChannelChangeKind::Availability).await?;
    tx.commit().await?;
    Ok(room)
}

/// Sets a room's housekeeping status as `by` (who did it, as people read it), keeping the change in the room's
/// history. The caller writes the room; a status that does not change records nothing. Taking a room out of order
/// must first pass [`inventory::release_room`] (as [`update`] does).
pub(crate) async fn set_status(
    tx: &mut Change,
    actor: &Actor,
    room: &mut Room,
    status: HousekeepingStatus,
    by: &str,
) -> Result<()> {
    if room.housekeeping_status == status {
        return Ok(());
    }
    room.housekeeping_status = status;
    room.housekeeping_changed_at = Some(now());
    room.housekeeping_changed_by = Some(by.to_string());
    store::rooms::record_status_change(tx.conn(), &actor.organization_id, room, &new_id()).await?;
    Ok(())
}

/// A room's housekeeping changes, newest first (at most 20): status, when, by whom.
pub async fn status_history(
    db: &Db,
    actor: &Actor,
    id: &str,
) -> Result<Vec<(HousekeepingStatus, DateTime<Utc>, String)>> {
    actor.require_scope(Scope::RoomsRead)?;
    let mut conn = db.read().await?;
    let room = visible(&mut conn, actor, id).await?;
    Ok(store::rooms::status_changes(&mut conn, &room.id, 20).await?)
}

/// Sets the housekeeping status of room `room_id` inside a write under way (check-out marks its rooms DIRTY), as
/// `by`. A room out of order stays so: only an explicit change ([`update`]) brings it back.
pub(crate) async fn mark(
    tx: &mut Change,
    actor: &Actor,
    room_id: &str,
    status: HousekeepingStatus,
    by: &str,
) -> Result<()> {
    let Some(before) = store::rooms::get(tx.conn(), &actor.organization_id, room_id).await? else {
        return Ok(());
    };
    if !before.housekeeping_status.sellable() || before.housekeeping_status == status {
        return Ok(());
    }
    let mut room = before.clone();
    set_status(tx, actor, &mut room, status, by).await?;
    room.updated_at = now();
    store::rooms::update(tx.conn(), &actor.organization_id, &room).await?;
    tx.updated(&actor.organization_id, &before, &room).await
}

impl Record for Room {
    const KIND: RecordKind = RecordKind::Room;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
