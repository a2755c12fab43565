//! Public booking: the service's offer-signing secret and open booking requests.

use chrono::{DateTime, NaiveDate, Utc};

use super::reservations::HeldBy;
use super::{format_date, format_ts, StoreResult};
use crate::model::reservations::{ReservationStatus, Source};
use crate::store::schema::{Guests, ReservationRooms as Rr, Reservations as R, ServiceSecrets as S};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, OnConflict, Order, Sql};
use crate::store::Conn;

/// The secret named `name`, created from `fresh` by whichever process asks first; every process then reads the
/// same value.
pub async fn service_secret(conn: &mut Conn, name: &str, fresh: &str, at: DateTime<Utc>) -> StoreResult<String> {
    let mut insert = insert_row(
        S::Table,
        [(S::Name, Expr::val(name)), (S::Value, Expr::val(fresh)), (S::CreatedAt, Expr::val(format_ts(at)))],
    );
    insert.on_conflict(OnConflict::column(S::Name).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    let select = Sql::select().column(S::Value).from(S::Table).and_where(Expr::col(S::Name).eq(name)).take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("value")
}

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
