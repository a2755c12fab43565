//! Public booking: the service's offer-signing secret and booking idempotency keys.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{AnyConnection, Row};

use super::reservations::HeldBy;
use super::{format_ts, StoreResult};

/// The secret named `name`, created from `fresh` by whichever process asks first; every process then reads the
/// same value.
pub async fn service_secret(
    conn: &mut AnyConnection,
    name: &str,
    fresh: &str,
    at: DateTime<Utc>,
) -> StoreResult<String> {
    sqlx::query(
        "INSERT INTO service_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(fresh)
    .bind(format_ts(at))
    .execute(&mut *conn)
    .await?;
    sqlx::query("SELECT value FROM service_secrets WHERE name = $1").bind(name).fetch_one(conn).await?.try_get("value")
}

/// A booking already made with an idempotency key: (request digest, reservation id).
pub async fn idempotent(conn: &mut AnyConnection, hotel_id: &str, key: &str) -> StoreResult<Option<(String, String)>> {
    let row = sqlx::query("SELECT request_hash, reservation_id FROM idempotency_keys WHERE hotel_id = $1 AND key = $2")
        .bind(hotel_id)
        .bind(key)
        .fetch_optional(conn)
        .await?;
    row.map(|row| Ok((row.try_get("request_hash")?, row.try_get("reservation_id")?))).transpose()
}

pub async fn remember(
    conn: &mut AnyConnection,
    hotel_id: &str,
    key: &str,
    request_hash: &str,
    reservation_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO idempotency_keys (hotel_id, key, request_hash, reservation_id, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(hotel_id)
    .bind(key)
    .bind(request_hash)
    .bind(reservation_id)
    .bind(format_ts(at))
    .execute(conn)
    .await?;
    Ok(())
}

/// Rooms held under each rate plan on each night of `[from, to)`: (rate plan, counts by night, index 0 is `from`),
/// leaving out the rooms of `except_reservation`. Plans holding no room on those nights are left out.
pub async fn held_by_plan(
    conn: &mut AnyConnection,
    rate_plan_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> StoreResult<Vec<(String, Vec<i64>)>> {
    super::reservations::held_per_night(conn, HeldBy::RatePlan, rate_plan_ids, from, to, except_reservation).await
}
