//! Public booking: open booking requests.

use chrono::NaiveDate;

use super::reservations::HeldBy;
use super::{format_date, StoreResult};
use crate::model::reservations::{ReservationStatus, Source};
use crate::store::schema::{Guests, ReservationRooms as Rr, Reservations as R};
use crate::store::statement::{statement, Expr, ExprTrait, JoinType, Order, Sql};
use crate::store::Conn;

/// What an exact repeat of a public booking request is compared on.
pub struct PublicRequest<'a> {
    pub organization_id: &'a str,
    pub hotel_id: &'a str,
    /// The guest's e-mail as typed (compared without case).
    pub email: &'a str,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub room_type_id: &'a str,
}

/// The oldest booking request of the hotel still waiting for staff (REQUESTED, from the public) for the same guest
/// e-mail, dates and room type, if any.
pub async fn open_public_request(conn: &mut Conn, request: &PublicRequest<'_>) -> StoreResult<Option<String>> {
    let select = Sql::select()
        .column((R::Table, R::Id))
        .from(R::Table)
        .join(JoinType::InnerJoin, Guests::Table, Expr::col((Guests::Table, Guests::Id)).equals((R::Table, R::GuestId)))
        .join(JoinType::InnerJoin, Rr::Table, Expr::col((Rr::Table, Rr::ReservationId)).equals((R::Table, R::Id)))
        .and_where(Expr::col((R::Table, R::OrganizationId)).eq(request.organization_id))
        .and_where(Expr::col((R::Table, R::HotelId)).eq(request.hotel_id))
        .and_where(Expr::col((R::Table, R::CheckInDate)).eq(format_date(request.check_in)))
        .and_where(Expr::col((R::Table, R::CheckOutDate)).eq(format_date(request.check_out)))
        .and_where(Expr::col((Guests::Table, Guests::EmailNormalized)).eq(request.email.trim().to_lowercase()))
        .and_where(Expr::col((Rr::Table, Rr::RoomTypeId)).eq(request.room_type_id))
        .and_where(Expr::col((R::Table, R::Status)).eq(ReservationStatus::Requested.as_str()))
        .and_where(Expr::col((R::Table, R::Source)).eq(Source::BookingPage.as_str()))
        .order_by((R::Table, R::CreatedAt), Order::Asc)
        .order_by((R::Table, R::Id), Order::Asc)
        .limit(1)
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| row.try_get("id")).transpose()
}

/// Rooms held under each rate plan on each night of `[from, to)`: (rate plan, counts by night, index 0 is `from`),
/// leaving out the rooms of `except_reservation`. Plans holding no room on those nights are left out.
pub async fn held_by_plan(
    conn: &mut Conn,
    rate_plan_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> StoreResult<Vec<(String, Vec<i64>)>> {
    super::reservations::held_per_night(conn, HeldBy::RatePlan, rate_plan_ids, from, to, except_reservation).await
}
