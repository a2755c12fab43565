//! Public booking: the service's offer-signing secret and open booking requests.

use chrono::{DateTime, NaiveDate, Utc};

use super::reservations::HeldBy;
use super::sql::Conditions;
use super::{format_ts, StoreResult};
use crate::store::schema::ServiceSecrets as S;
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, OnConflict, Sql};
use crate::store::{query_with, Conn};

/// The secret named `name`, created from `fresh` by whichever process asks first; every process then reads the
/// same value.
pub async fn service_secret(conn: &mut Conn, name: &str, fresh: &str, at: DateTime<Utc>) -> StoreResult<String> {
    let mut insert = insert_row(
        S::Table,
        [(S::Name, Expr::val(name)), (S::Value, Expr::val(fresh)), (S::CreatedAt, Expr::val(format_ts(at)))],
    );
    insert.on_conflict(OnConflict::column(S::Name).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    let select = Sql::select().column(S::Value).from(S::Table).and_where(Expr::col(S::Name).eq(name)).to_owned();
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
    // Text, not built: the builder binds a LIMIT as an unsigned integer, which the store does not bind.
    let mut c = Conditions::new(conn.engine());
    c.push("r.organization_id = ?", request.organization_id);
    c.push("r.hotel_id = ?", request.hotel_id);
    c.push("r.check_in_date = ?", request.check_in.to_string());
    c.push("r.check_out_date = ?", request.check_out.to_string());
    c.push("g.email_normalized = ?", request.email.trim().to_lowercase());
    c.push("rr.room_type_id = ?", request.room_type_id);
    let sql = format!(
        "SELECT r.id FROM reservations r \
         JOIN guests g ON g.id = r.guest_id \
         JOIN reservation_rooms rr ON rr.reservation_id = r.id{} \
         AND r.status = 'REQUESTED' AND r.source = 'BOOKING_PAGE' \
         ORDER BY r.created_at, r.id LIMIT 1",
        c.where_clause()
    );
    let row = query_with(&sql, c).fetch_optional(conn).await?;
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
