//! A reservation's rooms: read, read for many reservations at once, written, and the rooms of the stays the room
//! rack shows.

use chrono::NaiveDate;

use super::decode_err;
use crate::model::reservations::{Reservation, ReservationRoom, ReservationStatus, RoomStatus};
use crate::store::format_date;
use crate::store::schema::{Guests, ReservationRooms as Rr, Reservations};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, OnConflict, Order, Sql};
use crate::store::PortableRow;
use crate::store::{Conn, Row};
use crate::store::{RowExt, StoreResult};

/// The columns [`room_at`] reads, in its order.
pub(super) const ROOM_COLUMNS: [Rr; 10] = [
    Rr::Id,
    Rr::RoomTypeId,
    Rr::RatePlanId,
    Rr::RoomId,
    Rr::Status,
    Rr::Adults,
    Rr::Children,
    Rr::Infants,
    Rr::Price,
    Rr::NightPrices,
];

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
        night_prices: match row.optional_text(first + 9)? {
            Some(json) => Some(serde_json::from_str(&json).map_err(|_| decode_err("night prices", &json))?),
            None => None,
        },
    })
}

fn room(row: &Row) -> StoreResult<ReservationRoom> {
    room_at(row, 0)
}

pub async fn rooms(conn: &mut Conn, reservation_id: &str) -> StoreResult<Vec<ReservationRoom>> {
    let select = Sql::select()
        .columns(ROOM_COLUMNS)
        .from(Rr::Table)
        .and_where(Expr::col(Rr::ReservationId).eq(reservation_id))
        .order_by(Rr::Position, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(room).collect()
}

/// The rooms of several reservations: (reservation id, room), in each reservation's order.
pub async fn rooms_of(conn: &mut Conn, reservation_ids: &[String]) -> StoreResult<Vec<(String, ReservationRoom)>> {
    if reservation_ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .column(Rr::ReservationId)
        .columns(ROOM_COLUMNS)
        .from(Rr::Table)
        .and_where(Expr::col(Rr::ReservationId).is_in(reservation_ids.iter().map(String::as_str)))
        .order_by(Rr::ReservationId, Order::Asc)
        .order_by(Rr::Position, Order::Asc)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get(0)?, room_at(row, 1)?)))
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

/// The rooms of a hotel's stays in `statuses` that touch the nights `[from, to)`, except cancelled rooms. Stays
/// checking in before `check_in_from` are not looked at: the caller bounds it by the longest stay on record, so the
/// stay-window index starts near the window.
pub async fn rack_rows(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    check_in_from: NaiveDate,
    from: NaiveDate,
    to: NaiveDate,
    statuses: &[ReservationStatus],
) -> StoreResult<Vec<RackRow>> {
    let r = Reservations::Table;
    let select = Sql::select()
        .expr_as(Expr::col((r, Reservations::Id)), "reservation_id")
        .expr_as(Expr::col((Guests::Table, Guests::FirstName)), "guest_first_name")
        .expr_as(Expr::col((Guests::Table, Guests::LastName)), "guest_last_name")
        .expr_as(Expr::col((r, Reservations::Status)), "reservation_status")
        .expr_as(Expr::col((r, Reservations::CheckInDate)), "stay_in")
        .expr_as(Expr::col((r, Reservations::CheckOutDate)), "stay_out")
        .columns(ROOM_COLUMNS.map(|c| (Rr::Table, c)))
        .from(r)
        .join(JoinType::InnerJoin, Rr::Table, Expr::col((Rr::Table, Rr::ReservationId)).equals((r, Reservations::Id)))
        .join(
            JoinType::LeftJoin,
            Guests::Table,
            Expr::col((Guests::Table, Guests::Id)).equals((r, Reservations::GuestId)),
        )
        .and_where(Expr::col((r, Reservations::OrganizationId)).eq(organization_id))
        .and_where(Expr::col((r, Reservations::HotelId)).eq(hotel_id))
        .and_where(Expr::col((r, Reservations::CheckInDate)).gte(format_date(check_in_from)))
        .and_where(Expr::col((r, Reservations::CheckInDate)).lt(format_date(to)))
        .and_where(Expr::col((r, Reservations::CheckOutDate)).gt(format_date(from)))
        .and_where(Expr::col((r, Reservations::Status)).is_in(statuses.iter().map(|s| s.as_str())))
        .and_where(Expr::col((Rr::Table, Rr::Status)).ne(RoomStatus::Cancelled.as_str()))
        .order_by((r, Reservations::CheckInDate), Order::Asc)
        .order_by((r, Reservations::Id), Order::Asc)
        .order_by((Rr::Table, Rr::Position), Order::Asc)
        .take();
    statement(conn.engine(), &select)
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

/// Writes rooms of a reservation as they are now (insert or replace), each with its position in the reservation,
/// the stay dates and whether it takes inventory, which the caller's rule says (`holds`: the domain's
/// `reservations::inventory::holds`). The caller chooses which rooms need writing.
/// A room's night prices as stored: a JSON object of dates and amounts.
fn night_prices(room: &ReservationRoom) -> StoreResult<Option<String>> {
    room.night_prices
        .as_ref()
        .map(|prices| serde_json::to_string(prices).map_err(|e| decode_err("night prices", &e.to_string())))
        .transpose()
}

pub async fn save_rooms<'a>(
    conn: &mut Conn,
    r: &Reservation,
    rooms: impl IntoIterator<Item = (usize, &'a ReservationRoom)>,
    holds: impl Fn(&ReservationRoom) -> bool,
) -> StoreResult<()> {
    for (position, room) in rooms {
        let mut upsert = insert_row(
            Rr::Table,
            [
                (Rr::Id, Expr::val(&room.id)),
                (Rr::ReservationId, Expr::val(&r.id)),
                (Rr::HotelId, Expr::val(&r.hotel_id)),
                (Rr::RoomTypeId, Expr::val(&room.room_type_id)),
                (Rr::RatePlanId, Expr::val(room.rate_plan_id.clone())),
                (Rr::RoomId, Expr::val(room.room_id.clone())),
                (Rr::Status, Expr::val(room.status.as_str())),
                (Rr::Adults, Expr::val(room.adults)),
                (Rr::Children, Expr::val(room.children)),
                (Rr::Infants, Expr::val(room.infants)),
                (Rr::Price, Expr::val(room.price)),
                (Rr::NightPrices, Expr::val(night_prices(room)?)),
                (Rr::CheckInDate, Expr::val(format_date(r.check_in_date))),
                (Rr::CheckOutDate, Expr::val(format_date(r.check_out_date))),
                (Rr::HoldsInventory, Expr::val(holds(room))),
                (Rr::Position, Expr::val(position as i64)),
            ],
        );
        upsert.on_conflict(
            OnConflict::column(Rr::Id)
                .update_columns([
                    Rr::RoomId,
                    Rr::Status,
                    Rr::Price,
                    Rr::NightPrices,
                    Rr::CheckInDate,
                    Rr::CheckOutDate,
                    Rr::HoldsInventory,
                ])
                .to_owned(),
        );
        statement(conn.engine(), &upsert).execute(&mut *conn).await?;
    }
    Ok(())
}
