//! A stay in the house: the checked-in stay that occupies a room, and a stay's check-out as recorded (to restore on
//! an undo).

use chrono::NaiveDate;

use crate::domain::reservations::{ReservationStatus, RoomStatus};
use crate::store::format_date;
use crate::store::{format_ts, RowExt, StoreResult};
use crate::store::{query, Conn};

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
    let row = query(
        "SELECT r.id, r.reference, r.check_out_date FROM reservation_rooms rr \
         JOIN reservations r ON r.id = rr.reservation_id \
         WHERE rr.room_id = $1 AND rr.status = $2 AND r.status = $3 AND r.id <> $4 \
         ORDER BY r.check_in_date LIMIT 1",
    )
    .bind(room_id)
    .bind(RoomStatus::Confirmed.as_str())
    .bind(ReservationStatus::CheckedIn.as_str())
    .bind(except_reservation)
    .fetch_optional(conn)
    .await?;
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
    query(
        "INSERT INTO check_outs (reservation_id, checked_out_at, booked_check_out_date, booked_end_time) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (reservation_id) DO UPDATE SET checked_out_at = excluded.checked_out_at, \
         booked_check_out_date = excluded.booked_check_out_date, booked_end_time = excluded.booked_end_time",
    )
    .bind(reservation_id)
    .bind(format_ts(c.checked_out_at))
    .bind(c.booked.map(|(date, _)| format_date(date)))
    .bind(c.booked.map(|(_, at)| format_ts(at)))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn check_out(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<CheckOut>> {
    let row = query(
        "SELECT checked_out_at, booked_check_out_date, booked_end_time FROM check_outs WHERE reservation_id = $1",
    )
    .bind(reservation_id)
    .fetch_optional(conn)
    .await?;
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
    query("DELETE FROM check_outs WHERE reservation_id = $1").bind(reservation_id).execute(conn).await?;
    Ok(())
}
