//! Exact reservation totals without counting (docs/storage.md, "The list's total"; migration 0020).
//!
//! Triggers on `reservations` append a +1/-1 change per (organization, hotel, status) to `reservation_count_changes`
//! in the writing transaction; [`fold`] moves the changes into `reservation_counts` now and then. A total is the
//! counter plus the changes not folded yet, read in the list's own statement, so the page and its total come from
//! one snapshot.

use sea_query::{DynIden, IntoIden, QueryStatementBuilder};

use super::schema::{ReservationCountChanges as Changes, ReservationCounts as Counts};
use super::statement::{Expr, ExprTrait, Func, Sql};
use super::{Db, Engine, StoreResult};
use crate::store::query;
use crate::store::reservations::StayFilter;
use crate::store::Page;

/// Whether the total of `filter` and `page` can be read from the counts: only organization, hotel and status
/// narrow it. Every other filter is named here, so that a filter added later must be decided on.
pub fn answers(filter: &StayFilter, page: &Page) -> bool {
    let StayFilter {
        hotel_id: _,
        statuses: _,
        guest_id,
        reference,
        start_time,
        end_time,
        stay_date_from,
        stay_date_to,
        check_in_from,
        source,
        guest_ids,
        check_in_date,
        check_out_date,
    } = filter;
    page.ids.is_none()
        && guest_id.is_none()
        && reference.is_none()
        && start_time.is_none()
        && end_time.is_none()
        && stay_date_from.is_none()
        && stay_date_to.is_none()
        && check_in_from.is_none()
        && source.is_none()
        && guest_ids.is_none()
        && check_in_date.is_none()
        && check_out_date.is_none()
}

/// The total of a filter that [`answers`], as an expression of the list's own statement: the counters plus the
/// changes not folded yet, each summed by a scalar subquery.
pub fn total(organization_id: &str, filter: &StayFilter) -> Expr {
    let sum = |table: DynIden, organization: DynIden, hotel: DynIden, status: DynIden, n: DynIden| {
        let mut select = Sql::select();
        select
            .expr(Func::coalesce([Expr::col(n).sum(), Expr::cust("0")]))
            .from(table)
            .and_where(Expr::col(organization).eq(organization_id));
        if let Some(hotel_id) = &filter.hotel_id {
            select.and_where(Expr::col(hotel).eq(hotel_id));
        }
        if !filter.statuses.is_empty() {
            select.and_where(Expr::col(status).is_in(filter.statuses.iter().map(|s| s.as_str())));
        }
        Expr::SubQuery(None, Box::new(select.into_sub_query_statement()))
    };
    let counted = sum(
        Counts::Table.into_iden(),
        Counts::OrganizationId.into_iden(),
        Counts::HotelId.into_iden(),
        Counts::Status.into_iden(),
        Counts::N.into_iden(),
    );
    let changes = sum(
        Changes::Table.into_iden(),
        Changes::OrganizationId.into_iden(),
        Changes::HotelId.into_iden(),
        Changes::Status.into_iden(),
        Changes::Delta.into_iden(),
    );
    // PostgreSQL's SUM of BIGINT is NUMERIC; the cast keeps the total an integer on both engines.
    counted.add(changes).cast_as("BIGINT")
}

/// Folds the appended changes into the counters, in one transaction: a concurrent read sees either the changes or
/// the counters they became. On PostgreSQL one process folds at a time (an advisory lock; the others skip this
/// round), so that two folds never update the same counters in opposite orders. Answers how many counters it
/// changed.
///
/// On PostgreSQL a fold of many changes (a burst of writes, an import) then vacuums the changes' table: the rows it
/// deleted stay in the table and its index until vacuumed, and every total of their hotels reads past them, with a
/// bitmap scan that never marks them dead. Measured on 1,000,000 reservations over 20 hotels: after their changes
/// were folded, each list page of a hotel read 10,310 pages of the table (46 ms instead of 0.6 ms) until
/// autovacuum came, a minute or more later.
pub async fn fold(db: &Db) -> StoreResult<u64> {
    // Most rounds find nothing to fold: a read says so without taking SQLite's one writer or a write transaction.
    let pending: i64 = query("SELECT COUNT(*) FROM (SELECT 1 FROM reservation_count_changes LIMIT 1) AS any_change")
        .fetch_one(&mut *db.read().await?)
        .await?
        .try_get(0)?;
    if pending == 0 {
        return Ok(0);
    }
    let mut tx = db.begin_write().await?;
    let (folded, changes) = match tx.engine() {
        Engine::Postgres => {
            let ours: i64 = query(
                "SELECT CAST(CASE WHEN pg_try_advisory_xact_lock(hashtext('frontdesk.reservation_counts')) \
                 THEN 1 ELSE 0 END AS BIGINT)",
            )
            .fetch_one(tx.conn())
            .await?
            .try_get(0)?;
            if ours == 0 {
                return Ok(0);
            }
            let row = query(
                "WITH folded AS (DELETE FROM reservation_count_changes \
                                 RETURNING organization_id, hotel_id, status, delta), \
                      added AS (INSERT INTO reservation_counts (organization_id, hotel_id, status, n) \
                                SELECT organization_id, hotel_id, status, SUM(delta) FROM folded \
                                GROUP BY organization_id, hotel_id, status \
                                ON CONFLICT (organization_id, hotel_id, status) \
                                DO UPDATE SET n = reservation_counts.n + EXCLUDED.n RETURNING 1) \
                 SELECT (SELECT COUNT(*) FROM added) AS counters, (SELECT COUNT(*) FROM folded) AS changes",
            )
            .fetch_one(tx.conn())
            .await?;
            (u64::try_from(row.try_get::<i64, _>("counters")?).unwrap_or(0), row.try_get::<i64, _>("changes")?)
        }
        // One writer at a time: nothing is appended between the two statements.
        Engine::Sqlite => {
            let folded = query(
                "INSERT INTO reservation_counts (organization_id, hotel_id, status, n) \
                 SELECT organization_id, hotel_id, status, SUM(delta) FROM reservation_count_changes \
                 GROUP BY organization_id, hotel_id, status \
                 ON CONFLICT (organization_id, hotel_id, status) DO UPDATE SET n = n + excluded.n",
            )
            .execute(tx.conn())
            .await?
            .rows_affected();
            query("DELETE FROM reservation_count_changes").execute(tx.conn()).await?;
            // SQLite reuses the pages of deleted rows; nothing is left to read past.
            (folded, 0)
        }
    };
    tx.commit().await?;
    if changes >= VACUUM_AFTER_FOLDING {
        query("VACUUM reservation_count_changes").execute(&mut *db.read().await?).await?;
    }
    Ok(folded)
}

/// How many folded changes make a fold vacuum their table at once (PostgreSQL). Below it autovacuum is soon enough:
/// the table is small between folds, so its few dead rows pass autovacuum's threshold within its next round.
pub const VACUUM_AFTER_FOLDING: i64 = 10_000;
