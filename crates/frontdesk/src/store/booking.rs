//! Public booking: the service's offer-signing secret and open booking requests.

use chrono::{DateTime, NaiveDate, Utc};

use super::reservations::HeldBy;
use super::{format_ts, StoreResult};
use crate::store::{query, Conn};

/// The secret named `name`, created from `fresh` by whichever process asks first; every process then reads the
/// same value.
pub async fn service_secret(conn: &mut Conn, name: &str, fresh: &str, at: DateTime<Utc>) -> StoreResult<String> {
    query("INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
        .bind(name)
        .bind(fresh)
        .bind(format_ts(at))
        .execute(&mut *conn)
        .await?;
    query("SELECT value FROM service_secrets WHERE name = $1").bind(name).fetch_one(conn).await?.try_get("value")
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
    let row = query(
        "SELECT r.id FROM reservations r \
         JOIN guests g ON g.id = r.guest_id \
         JOIN reservation_rooms rr ON rr.reservation_id = r.id \
         WHERE r.organization_id = $1 AND r.hotel_id = $2 AND r.check_in_date = $3 AND r.check_out_date = $4 \
         AND r.status = 'REQUESTED' AND r.source = 'BOOKING_PAGE' AND g.email_normalized = $5 \
         AND rr.room_type_id = $6 \
         ORDER BY r.created_at, r.id LIMIT 1",
    )
    .bind(request.organization_id)
    .bind(request.hotel_id)
    .bind(request.check_in.to_string())
    .bind(request.check_out.to_string())
    .bind(request.email.trim().to_lowercase())
    .bind(request.room_type_id)
    .fetch_optional(conn)
    .await?;
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
