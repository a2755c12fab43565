//! Counts of attempts shared by every process on the database (see [`crate::domain::attempts`]): per bucket, how
//! many attempts, the last one, and when the count goes stale.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::schema::AttemptCounts as A;
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, OnConflict, Order, RowLocks, Sql};
use crate::store::Conn;

/// A bucket's count as stored (stale counts are answered as none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub count: i64,
    pub last_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The live count of `bucket` at `now`, locked until the transaction ends, so that concurrent attempts on one
/// bucket are counted one after the other. SQLite's write transaction is exclusive already; on PostgreSQL the row is
/// made first (a stale placeholder) so that there is a row to lock even for a bucket's first attempt, which two
/// transactions would otherwise both see missing.
pub async fn lock(conn: &mut Conn, bucket: &str, now: DateTime<Utc>) -> StoreResult<Option<Count>> {
    let stale = format_ts(DateTime::<Utc>::UNIX_EPOCH);
    let mut insert = insert_row(
        A::Table,
        [
            (A::Bucket, Expr::val(bucket)),
            (A::Count, Expr::val(0)),
            (A::LastAt, Expr::val(&stale)),
            (A::ExpiresAt, Expr::val(&stale)),
        ],
    );
    insert.on_conflict(OnConflict::column(A::Bucket).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    let select = Sql::select()
        .columns([A::Count, A::LastAt, A::ExpiresAt])
        .from(A::Table)
        .and_where(Expr::col(A::Bucket).eq(bucket))
        .lock_for_writing()
        .take();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    let count =
        Count { count: row.try_get("count")?, last_at: row.get_ts("last_at")?, expires_at: row.get_ts("expires_at")? };
    Ok((count.expires_at > now && count.count > 0).then_some(count))
}

/// The live count of `bucket` at `now`, read without a lock or a write (a refusal's check costs a read).
pub async fn peek(conn: &mut Conn, bucket: &str, now: DateTime<Utc>) -> StoreResult<Option<Count>> {
    let select = Sql::select()
        .columns([A::Count, A::LastAt, A::ExpiresAt])
        .from(A::Table)
        .and_where(Expr::col(A::Bucket).eq(bucket))
        .take();
    let Some(row) = statement(conn.engine(), &select).fetch_optional(conn).await? else { return Ok(None) };
    let count =
        Count { count: row.try_get("count")?, last_at: row.get_ts("last_at")?, expires_at: row.get_ts("expires_at")? };
    Ok((count.expires_at > now && count.count > 0).then_some(count))
}

/// Writes a bucket's count.
pub async fn put(conn: &mut Conn, bucket: &str, count: &Count) -> StoreResult<()> {
    let mut upsert = insert_row(
        A::Table,
        [
            (A::Bucket, Expr::val(bucket)),
            (A::Count, Expr::val(count.count)),
            (A::LastAt, Expr::val(format_ts(count.last_at))),
            (A::ExpiresAt, Expr::val(format_ts(count.expires_at))),
        ],
    );
    upsert.on_conflict(OnConflict::column(A::Bucket).update_columns([A::Count, A::LastAt, A::ExpiresAt]).to_owned());
    statement(conn.engine(), &upsert).execute(conn).await?;
    Ok(())
}

/// Moves a live count's last attempt (and its end) to `at`.
pub async fn touch(conn: &mut Conn, bucket: &str, at: DateTime<Utc>, expires_at: DateTime<Utc>) -> StoreResult<()> {
    let at = format_ts(at);
    let update = Sql::update()
        .table(A::Table)
        .values([(A::LastAt, Expr::val(&at)), (A::ExpiresAt, Expr::val(format_ts(expires_at)))])
        .and_where(Expr::col(A::Bucket).eq(bucket))
        .and_where(Expr::col(A::ExpiresAt).gt(&at))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, bucket: &str) -> StoreResult<()> {
    let delete = Sql::delete().from_table(A::Table).and_where(Expr::col(A::Bucket).eq(bucket)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// Forgets stale counts (a few at a time, so that no write carries a large delete).
pub async fn purge(conn: &mut Conn, now: DateTime<Utc>) -> StoreResult<()> {
    let stale = Sql::select()
        .column(A::Bucket)
        .from(A::Table)
        .and_where(Expr::col(A::ExpiresAt).lte(format_ts(now)))
        .order_by(A::ExpiresAt, Order::Asc)
        .limit(100)
        .take();
    let delete = Sql::delete().from_table(A::Table).and_where(Expr::col(A::Bucket).in_subquery(stale)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
