//! The room rack (tape chart): each room's stays across a window of nights, by room type, with the stays that have
//! no room yet.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};

use super::{check_in_bound, full_name};
use crate::domain::access::{Actor, Scope};
use crate::domain::hotels;
use crate::domain::reservations::ReservationStatus;
use crate::domain::room_types::RoomType;
use crate::domain::rooms::Room;
use crate::domain::{Error, FieldError, Result};
use crate::store::{self, Db};

/// One room's line on the rack.
#[derive(Debug, Clone)]
pub struct RackRoom {
    pub room: Room,
    pub stays: Vec<RackStay>,
}

/// A stay's bar on the rack.
#[derive(Debug, Clone)]
pub struct RackStay {
    pub reservation_id: String,
    pub reservation_room_id: String,
    pub guest_name: String,
    pub status: ReservationStatus,
    pub check_in_date: NaiveDate,
    pub check_out_date: NaiveDate,
    pub room_type_id: String,
}

/// A room type's block on the rack: its rooms and its stays without a room yet.
#[derive(Debug, Clone)]
pub struct RackGroup {
    pub room_type: RoomType,
    pub rooms: Vec<RackRoom>,
    pub unassigned: Vec<RackStay>,
}

#[derive(Debug, Clone)]
pub struct Rack {
    pub from: NaiveDate,
    pub nights: u32,
    pub groups: Vec<RackGroup>,
}

/// The nights a rack may show at once.
pub const RACK_NIGHTS: [u32; 2] = [14, 30];

/// The room rack of a hotel: `nights` nights from `from`.
pub async fn rack(db: &Db, actor: &Actor, hotel_id: &str, from: NaiveDate, nights: u32) -> Result<Rack> {
    actor.require_scope(Scope::ReservationsRead)?;
    if !RACK_NIGHTS.contains(&nights) {
        return Err(Error::Validation(vec![FieldError::field("days", "must be 14 or 30")]));
    }
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let to = from.checked_add_days(Days::new(u64::from(nights))).ok_or_else(|| bad_date("from"))?;
    let mut conn = db.read().await?;
    let room_types = store::room_types::list(&mut conn, &actor.organization_id, Some(&hotel.id)).await?;
    let rooms = store::rooms::list(&mut conn, &actor.organization_id, Some(&hotel.id), None).await?;
    let check_in_from = check_in_bound(&mut conn, actor, &hotel.id, from).await?;
    let on_the_books = &ReservationStatus::ON_THE_BOOKS;
    let rows = store::reservations::rack_rows(
        &mut conn,
        &actor.organization_id,
        &hotel.id,
        check_in_from,
        from,
        to,
        on_the_books,
    )
    .await?;
    let mut by_room: HashMap<String, Vec<RackStay>> = HashMap::new();
    let mut unassigned: HashMap<String, Vec<RackStay>> = HashMap::new();
    for row in rows {
        let stay = RackStay {
            reservation_id: row.reservation_id,
            reservation_room_id: row.room.id.clone(),
            guest_name: row.guest_name.map_or_else(|| "No guest".into(), |(first, last)| full_name(&first, &last)),
            status: row.status,
            check_in_date: row.check_in_date,
            check_out_date: row.check_out_date,
            room_type_id: row.room.room_type_id.clone(),
        };
        match row.room.room_id {
            Some(room_id) => by_room.entry(room_id).or_default().push(stay),
            None => unassigned.entry(row.room.room_type_id).or_default().push(stay),
        }
    }
    let groups = room_types
        .into_iter()
        .map(|room_type| RackGroup {
            rooms: rooms
                .iter()
                .filter(|room| room.room_type_id == room_type.id)
                .map(|room| RackRoom { stays: by_room.remove(&room.id).unwrap_or_default(), room: room.clone() })
                .collect(),
            unassigned: unassigned.remove(&room_type.id).unwrap_or_default(),
            room_type,
        })
        .collect();
    Ok(Rack { from, nights, groups })
}

fn bad_date(field: &str) -> Error {
    Error::Validation(vec![FieldError::field(field, "is out of range")])
}
