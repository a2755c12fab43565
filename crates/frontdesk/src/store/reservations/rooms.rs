//! A reservation's rooms: read, read for many reservations at once, written, and the rooms of the stays the room
//! rack shows.

use chrono::NaiveDate;

use super::decode_err;
use crate::domain::reservations::{Reservation, ReservationRoom, ReservationStatus, RoomStatus};
use crate::store::format_date;
use crate::store::sql::Conditions;
use crate::store::PortableRow;
use crate::store::{bool_int, Engine, RowExt, StoreResult};
use crate::store::{query, query_with, Conn, Row};

pub(super) const ROOM_COLUMNS: &str =
    "id, room_type_id, rate_plan_id, room_id, status, adults, children, infants, price";

/// A reservation room from the [`ROOM_COLUMNS`] that start at column `first` of `row` (by position: a statement
/// that joins rooms to their reservation has both tables' `id`, `status`, `adults`…).
pub(super) fn room_at<R: PortableRow>(row: &R, first: usize) -> StoreResult<ReservationRoom> {
    let status = row.text(first + 4)?;
    Ok(ReservationRoom {
        id: row.text(first)?,
        room_type_id: row.text(first + 1)?,
        rate_plan_id: row.optional_text(first + 2)?,
        room_id: row.optional_text(first + 3)?,
        status: RoomStatus::parse(&status).ok_or_else(|| decode_err("room status", &status))?,
        adults: row.integer(first + 5)?,
        children: row.integer(first + 6)?,
        infants: row.integer(first + 7)?,
        price: row.integer(first + 8)?,
    })
}

fn room(row: &Row) -> StoreResult<ReservationRoom> {
    room_at(row, 0)
}

pub async fn rooms(conn: &mut Conn, reservation_id: &str) -> StoreResult<Vec<ReservationRoom>> {
    query(&format!("SELECT {ROOM_COLUMNS} FROM reservation_rooms WHERE reservation_id = $1 ORDER BY position"))
        .bind(reservation_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(room)
        .collect()
}

/// The rooms of several reservations: (reservation id, room), in each reservation's order.
pub async fn rooms_of(conn: &mut Conn, reservation_ids: &[String]) -> StoreResult<Vec<(String, ReservationRoom)>> {
    if reservation_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = Conditions::new(Engine::of(conn));
    c.push_in("reservation_id", reservation_ids);
    let sql = format!(
        "SELECT reservation_id, {ROOM_COLUMNS} FROM reservation_rooms{} ORDER BY reservation_id, position",
        c.where_clause()
    );
    query_with(&sql, c)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("reservation_id")?, room_at(row, 1)?)))
        .collect()
}

/// A reservation room on the room rack: the stay it belongs to and where it sleeps.
pub struct RackRow {
    pub reservation_id: String,
    /// The guest's first and last name, read in the same statement (a rack shows thousands of stays).
    pub guest_name: Option<(String, String)>,
    pub status: ReservationStatus,
    pub check_in_date: NaiveDate,
    pub check_out_date: NaiveDate,
    pub room: ReservationRoom,
}

/// Columns of a rack row before its room's.
const RACK_COLUMNS_BEFORE_ROOM: usize = 6;

/// The rooms of a hotel's stays that touch the nights `[from, to)`, except cancelled ones and no-shows. Stays
/// checking in before `check_in_from` are not looked at: the caller bounds it by the longest stay on record, so the
/// stay-window index starts near the window.
pub async fn rack_rows(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    check_in_from: NaiveDate,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<RackRow>> {
    let columns = ROOM_COLUMNS.split(", ").map(|c| format!("rr.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT r.id AS reservation_id, g.first_name AS guest_first_name, g.last_name AS guest_last_name, \
         r.status AS reservation_status, r.check_in_date AS stay_in, r.check_out_date AS stay_out, {columns} \
         FROM reservations r JOIN reservation_rooms rr ON rr.reservation_id = r.id \
         LEFT JOIN guests g ON g.id = r.guest_id \
         WHERE r.organization_id = $1 AND r.hotel_id = $2 AND r.check_in_date >= $3 AND r.check_in_date < $4 \
         AND r.check_out_date > $5 AND r.status IN ('REQUESTED', 'CONFIRMED', 'CHECKED_IN', 'CHECKED_OUT') \
         AND rr.status <> 'CANCELLED' ORDER BY r.check_in_date, r.id, rr.position"
    );
    query(&sql)
        .bind(organization_id)
        .bind(hotel_id)
        .bind(format_date(check_in_from))
        .bind(format_date(to))
        .bind(format_date(from))
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            let status: String = row.try_get("reservation_status")?;
            Ok(RackRow {
                reservation_id: row.try_get("reservation_id")?,
                guest_name: match (row.try_get("guest_first_name")?, row.try_get("guest_last_name")?) {
                    (Some(first), Some(last)) => Some((first, last)),
                    _ => None,
                },
                status: ReservationStatus::parse(&status).ok_or_else(|| decode_err("status", &status))?,
                check_in_date: row.get_date("stay_in")?,
                check_out_date: row.get_date("stay_out")?,
                room: room_at(row, RACK_COLUMNS_BEFORE_ROOM)?,
            })
        })
        .collect()
}

/// Writes the rooms of a reservation as they are now (insert or replace), with the stay dates and whether they
/// take inventory, which the caller's rule says (`holds`: the domain's `reservations::inventory::holds`).
pub async fn save_rooms(
    conn: &mut Conn,
    r: &Reservation,
    rooms: &[ReservationRoom],
    holds: impl Fn(&ReservationRoom) -> bool,
) -> StoreResult<()> {
    for (position, room) in rooms.iter().enumerate() {
        let holds = holds(room);
        query(
            "INSERT INTO reservation_rooms (id, reservation_id, hotel_id, room_type_id, rate_plan_id, room_id, status, \
             adults, children, infants, price, check_in_date, check_out_date, holds_inventory, position) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (id) DO UPDATE SET room_id = excluded.room_id, status = excluded.status, \
             check_in_date = excluded.check_in_date, check_out_date = excluded.check_out_date, \
             holds_inventory = excluded.holds_inventory",
        )
        .bind(&room.id)
        .bind(&r.id)
        .bind(&r.hotel_id)
        .bind(&room.room_type_id)
        .bind(&room.rate_plan_id)
        .bind(&room.room_id)
        .bind(room.status.as_str())
        .bind(room.adults)
        .bind(room.children)
        .bind(room.infants)
        .bind(room.price)
        .bind(format_date(r.check_in_date))
        .bind(format_date(r.check_out_date))
        .bind(bool_int(holds))
        .bind(position as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
