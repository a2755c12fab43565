//! Rooms as housekeeping and the desk see them now: each room's status, the guest in it, the guest arriving to it
//! today. The housekeeping page and the room pickers read it; changing a room's status goes through
//! [`super::rooms::update`], like `PUT /api/rooms/{id}`, so the out-of-order rule and the history are the same.

use std::collections::HashMap;

use chrono::NaiveDate;

use super::access::{Actor, Scope};
use super::front_office::{self, StayLine};
use super::listing::Page;
use super::reservations::{ReservationStatus, RoomStatus, StayFilter};
use super::rooms::{HousekeepingStatus, Room};
use super::{hotels, Result};
use crate::store::{self, Db};

/// One room now.
#[derive(Debug, Clone)]
pub struct RoomNow {
    pub room: Room,
    pub room_type: String,
    /// The checked-in stay in the room, if any (possibly past its departure date).
    pub occupant: Option<StayLine>,
    /// A confirmed stay assigned to the room that arrives today and is not checked in yet.
    pub arrival: Option<StayLine>,
}

impl RoomNow {
    /// Whether a guest could be checked in to the room now: in order and nobody in it.
    pub fn free_now(&self) -> bool {
        self.occupant.is_none() && self.room.housekeeping_status.sellable()
    }

    /// Whether the guest in the room is due to leave today or was due earlier.
    pub fn departing(&self, today: NaiveDate) -> bool {
        self.occupant.as_ref().is_some_and(|o| o.reservation.check_out_date <= today)
    }
}

/// Every room of a hotel now, by floor (rooms without a floor last) and name.
#[derive(Debug, Clone)]
pub struct Board {
    pub today: NaiveDate,
    pub rooms: Vec<RoomNow>,
}

impl Board {
    pub fn room(&self, id: &str) -> Option<&RoomNow> {
        self.rooms.iter().find(|r| r.room.id == id)
    }

    /// How many rooms are in each status.
    pub fn counts(&self) -> Vec<(HousekeepingStatus, usize)> {
        HousekeepingStatus::ALL
            .into_iter()
            .map(|s| (s, self.rooms.iter().filter(|r| r.room.housekeeping_status == s).count()))
            .collect()
    }
}

/// Most stays in house or arriving that the board reads at once (a hotel has fewer rooms than this).
const STAYS_READ: i64 = 5000;

/// The board of a hotel. Housekeeping reads it without reading reservations or guests: the stays are read for the
/// rooms and dates they take, and who stays (the guest, the stay's notes) is left out for a caller who may not read
/// guests.
pub async fn board(db: &Db, actor: &Actor, hotel_id: &str) -> Result<Board> {
    actor.require_scope(Scope::RoomsRead)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let sees_guests = actor.require_scope(Scope::GuestsRead).is_ok();
    let stays_reader = match actor.require_scope(Scope::ReservationsRead) {
        Ok(()) => actor.clone(),
        // The hotel is the caller's (read above); its stays are read for the board alone.
        Err(_) => Actor {
            hotel_pin: Some(hotel.id.clone()),
            ..Actor::service(&actor.organization_id, crate::domain::change::Writer::for_actor(actor))
        },
    };
    let today = hotel.today();
    let (rooms, types) = {
        let mut conn = db.read().await?;
        let rooms = store::rooms::list(&mut conn, &actor.organization_id, Some(&hotel.id), None).await?;
        let types = store::room_types::list(&mut conn, &actor.organization_id, Some(&hotel.id)).await?;
        (rooms, types)
    };
    let base = StayFilter { hotel_id: Some(hotel.id.clone()), ..StayFilter::default() };
    let page = Page {
        limit: Some(STAYS_READ),
        skip: 0,
        sort_column: "check_in_date",
        descending: false,
        projection: None,
        ids: None,
    };
    let in_house = StayFilter { statuses: vec![ReservationStatus::CheckedIn], ..base.clone() };
    let arriving =
        StayFilter { statuses: vec![ReservationStatus::Confirmed], check_in_date: Some(today), ..base.clone() };
    let (mut in_house, mut arriving) = futures::try_join!(
        front_office::lines(db, &stays_reader, &in_house, &page),
        front_office::lines(db, &stays_reader, &arriving, &page)
    )?;
    if !sees_guests {
        for line in in_house.iter_mut().chain(arriving.iter_mut()) {
            line.guest = None;
            line.reservation.notes = None;
            line.reservation.guest_id = None;
        }
    }
    let by_room = |lines: Vec<StayLine>| -> HashMap<String, StayLine> {
        let mut map = HashMap::new();
        for line in lines {
            for room in line.rooms.iter().filter(|r| r.status != RoomStatus::Cancelled) {
                if let Some(room_id) = &room.room_id {
                    map.entry(room_id.clone()).or_insert_with(|| line.clone());
                }
            }
        }
        map
    };
    let (mut occupants, mut arrivals) = (by_room(in_house), by_room(arriving));
    let type_names: HashMap<&str, &str> = types.iter().map(|t| (t.id.as_str(), t.name.as_str())).collect();
    let mut rooms: Vec<RoomNow> = rooms
        .into_iter()
        .map(|room| RoomNow {
            room_type: type_names.get(room.room_type_id.as_str()).copied().unwrap_or_default().to_string(),
            occupant: occupants.remove(&room.id),
            arrival: arrivals.remove(&room.id),
            room,
        })
        .collect();
    rooms.sort_by(|a, b| {
        (a.room.floor.is_none(), a.room.floor, natural(&a.room.name)).cmp(&(
            b.room.floor.is_none(),
            b.room.floor,
            natural(&b.room.name),
        ))
    });
    Ok(Board { today, rooms })
}

/// A sort key that puts "9" before "10": (digits as a number, the rest).
fn natural(name: &str) -> (u64, String) {
    let digits: String = name.chars().take_while(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(u64::MAX), name.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::natural;

    #[test]
    fn room_numbers_sort_as_numbers() {
        let mut names = vec!["110", "9", "101", "Suite", "12"];
        names.sort_by_key(|n| natural(n));
        assert_eq!(names, ["9", "12", "101", "110", "Suite"]);
    }
}
