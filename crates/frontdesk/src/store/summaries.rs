//! Aggregate counts for the assistant connector: only `COUNT(*)` leaves the database, never a guest or a
//! reservation record.

use super::StoreResult;
use crate::store::{query, Conn};

/// Rooms of a hotel by housekeeping status: (status, count).
pub async fn rooms_by_status(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
) -> StoreResult<Vec<(String, i64)>> {
    query(
        "SELECT housekeeping_status, COUNT(*) AS n FROM rooms WHERE organization_id = $1 AND hotel_id = $2 \
         GROUP BY housekeeping_status",
    )
    .bind(organization_id)
    .bind(hotel_id)
    .fetch_all(conn)
    .await?
    .iter()
    .map(|row| Ok((row.try_get("housekeeping_status")?, row.try_get("n")?)))
    .collect()
}

/// Stays of a hotel that touch `[from, to]` (check-in on or before `to`, check-out on or after `from`), counted
/// by (check-in date, check-out date, status). Cancelled and no-show reservations are left out.
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
) -> StoreResult<Vec<StayCount>> {
    query(
        "SELECT check_in_date, check_out_date, status, COUNT(*) AS n FROM reservations \
         WHERE organization_id = $1 AND hotel_id = $2 AND check_in_date <= $4 AND check_out_date >= $3 \
         AND status IN ('REQUESTED', 'CONFIRMED', 'CHECKED_IN', 'CHECKED_OUT') \
         GROUP BY check_in_date, check_out_date, status",
    )
    .bind(organization_id)
    .bind(hotel_id)
    .bind(from)
    .bind(to)
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
