//! A stay in the house: the checked-in stay that occupies a room, and a stay's check-out as recorded (to restore on
//! an undo).

use chrono::NaiveDate;

use crate::model::reservations::{ReservationStatus, RoomStatus};
use crate::store::format_date;
use crate::store::schema::{CheckOuts, ReservationRooms as Rr, Reservations as R};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, OnConflict, Order, Sql};
use crate::store::{format_ts, Conn, RowExt, StoreResult};

/// A stay in the house: a checked-in reservation that has a physical room assigned.
#[derive(Debug, Clone)]
pub struct Occupant {
    pub reservation_id: String,
    pub reference: String,
    pub check_out_date: NaiveDate,
}

/// The checked-in stay, other than `except_reservation`, that has `room_id` assigned, whatever its dates (a guest
/// who stays past the departure date is still in the room).
pub async fn occupant(conn: &mut Conn, room_id: &str, except_reservation: &str) -> StoreResult<Option<Occupant>> {
    let select = Sql::select()
        .columns([(R::Table, R::Id), (R::Table, R::Reference), (R::Table, R::CheckOutDate)])
        .from(Rr::Table)
        .join(JoinType::InnerJoin, R::Table, Expr::col((R::Table, R::Id)).equals((Rr::Table, Rr::ReservationId)))
        .and_where(Expr::col((Rr::Table, Rr::RoomId)).eq(room_id))
        .and_where(Expr::col((Rr::Table, Rr::Status)).eq(RoomStatus::Confirmed.as_str()))
        .and_where(Expr::col((R::Table, R::Status)).eq(ReservationStatus::CheckedIn.as_str()))
        .and_where(Expr::col((R::Table, R::Id)).ne(except_reservation))
        .order_by((R::Table, R::CheckInDate), Order::Asc)
        .limit(1)
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(Occupant {
            reservation_id: row.try_get("id")?,
            reference: row.try_get("reference")?,
            check_out_date: row.get_date("check_out_date")?,
        })
    })
    .transpose()
}

/// A stay's check-out as recorded: when, and what an early departure shortened (to restore on an undo).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOut {
    pub checked_out_at: chrono::DateTime<chrono::Utc>,
    /// The departure date and instant that were booked, when the stay ended before them.
    pub booked: Option<(NaiveDate, chrono::DateTime<chrono::Utc>)>,
}

pub async fn save_check_out(conn: &mut Conn, reservation_id: &str, c: &CheckOut) -> StoreResult<()> {
    let mut upsert = insert_row(
        CheckOuts::Table,
        [
            (CheckOuts::ReservationId, Expr::val(reservation_id)),
            (CheckOuts::CheckedOutAt, Expr::val(format_ts(c.checked_out_at))),
            (CheckOuts::BookedCheckOutDate, Expr::val(c.booked.map(|(date, _)| format_date(date)))),
            (CheckOuts::BookedEndTime, Expr::val(c.booked.map(|(_, at)| format_ts(at)))),
        ],
    );
    upsert.on_conflict(
        OnConflict::column(CheckOuts::ReservationId)
            .update_columns([CheckOuts::CheckedOutAt, CheckOuts::BookedCheckOutDate, CheckOuts::BookedEndTime])
            .to_owned(),
    );
    statement(conn.engine(), &upsert).execute(conn).await?;
    Ok(())
}

pub async fn check_out(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<CheckOut>> {
    let select = Sql::select()
        .columns([CheckOuts::CheckedOutAt, CheckOuts::BookedCheckOutDate, CheckOuts::BookedEndTime])
        .from(CheckOuts::Table)
        .and_where(Expr::col(CheckOuts::ReservationId).eq(reservation_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        let date: Option<String> = row.try_get("booked_check_out_date")?;
        let booked = match (date, row.get_opt_ts("booked_end_time")?) {
            (Some(date), Some(at)) => Some((crate::store::parse_date(&date)?, at)),
            _ => None,
        };
        Ok(CheckOut { checked_out_at: row.get_ts("checked_out_at")?, booked })
    })
    .transpose()
}

pub async fn delete_check_out(conn: &mut Conn, reservation_id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(CheckOuts::Table)
        .and_where(Expr::col(CheckOuts::ReservationId).eq(reservation_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
