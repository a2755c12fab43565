//! Aggregate counts for the assistant endpoint: only `COUNT(*)` leaves the database, never a guest or a
//! reservation record.

use super::StoreResult;
use crate::model::reservations::ReservationStatus;
use crate::store::schema::{Reservations as R, Rooms};
use crate::store::statement::{statement, Asterisk, Expr, ExprTrait, Func, Sql};
use crate::store::Conn;

/// Rooms of a hotel by housekeeping status: (status, count).
pub async fn rooms_by_status(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
) -> StoreResult<Vec<(String, i64)>> {
    let select = Sql::select()
        .column(Rooms::HousekeepingStatus)
        .expr_as(Func::count(Expr::col(Asterisk)), "n")
        .from(Rooms::Table)
        .and_where(Expr::col(Rooms::OrganizationId).eq(organization_id))
        .and_where(Expr::col(Rooms::HotelId).eq(hotel_id))
        .group_by_col(Rooms::HousekeepingStatus)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("housekeeping_status")?, row.try_get("n")?)))
        .collect()
}

/// Stays of a hotel that touch `[from, to]` (check-in on or before `to`, check-out on or after `from`), counted
/// by (check-in date, check-out date, status), of the reservations in `statuses`.
pub struct StayCount {
    pub check_in_date: String,
    pub check_out_date: String,
    pub status: String,
    pub count: i64,
}

pub async fn stay_counts(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    from: &str,
    to: &str,
    statuses: &[ReservationStatus],
) -> StoreResult<Vec<StayCount>> {
    let select = Sql::select()
        .columns([R::CheckInDate, R::CheckOutDate, R::Status])
        .expr_as(Func::count(Expr::col(Asterisk)), "n")
        .from(R::Table)
        .and_where(Expr::col(R::OrganizationId).eq(organization_id))
        .and_where(Expr::col(R::HotelId).eq(hotel_id))
        .and_where(Expr::col(R::CheckInDate).lte(to))
        .and_where(Expr::col(R::CheckOutDate).gte(from))
        .and_where(Expr::col(R::Status).is_in(statuses.iter().map(|s| s.as_str())))
        .group_by_columns([R::CheckInDate, R::CheckOutDate, R::Status])
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            Ok(StayCount {
                check_in_date: row.try_get("check_in_date")?,
                check_out_date: row.try_get("check_out_date")?,
                status: row.try_get("status")?,
                count: row.try_get("n")?,
            })
        })
        .collect()
}
