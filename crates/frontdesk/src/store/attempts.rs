//! Counts of attempts shared by every process on the database (see [`crate::domain::attempts`]): per bucket, how
//! many attempts, the last one, and when the count goes stale.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::{query, Conn};

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
pub async fn lock(conn: &mut Conn, lock_rows: &str, bucket: &str, now: DateTime<Utc>) -> StoreResult<Option<Count>> {
    let stale = format_ts(DateTime::<Utc>::UNIX_EPOCH);
    query(
        "INSERT INTO attempt_counts (bucket, count, last_at, expires_at) VALUES ($1, 0, $2, $2) \
         ON CONFLICT (bucket) DO NOTHING",
    )
    .bind(bucket)
    .bind(&stale)
    .execute(&mut *conn)
    .await?;
    let row = query(&format!("SELECT count, last_at, expires_at FROM attempt_counts WHERE bucket = $1{lock_rows}"))
        .bind(bucket)
        .fetch_one(conn)
        .await?;
    let count =
        Count { count: row.try_get("count")?, last_at: row.get_ts("last_at")?, expires_at: row.get_ts("expires_at")? };
    Ok((count.expires_at > now && count.count > 0).then_some(count))
}

/// Writes a bucket's count.
pub async fn put(conn: &mut Conn, bucket: &str, count: &Count) -> StoreResult<()> {
    query(
        "INSERT INTO attempt_counts (bucket, count, last_at, expires_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (bucket) DO UPDATE SET count = excluded.count, last_at = excluded.last_at, \
         expires_at = excluded.expires_at",
    )
    .bind(bucket)
    .bind(count.count)
    .bind(format_ts(count.last_at))
    .bind(format_ts(count.expires_at))
    .execute(conn)
    .await?;
    Ok(())
}

/// Moves a live count's last attempt (and its end) to `at`.
pub async fn touch(conn: &mut Conn, bucket: &str, at: DateTime<Utc>, expires_at: DateTime<Utc>) -> StoreResult<()> {
    query("UPDATE attempt_counts SET last_at = $1, expires_at = $2 WHERE bucket = $3 AND expires_at > $1")
        .bind(format_ts(at))
        .bind(format_ts(expires_at))
        .bind(bucket)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, bucket: &str) -> StoreResult<()> {
    query("DELETE FROM attempt_counts WHERE bucket = $1").bind(bucket).execute(conn).await?;
    Ok(())
}

/// Forgets stale counts (a few at a time, so that no write carries a large delete).
pub async fn purge(conn: &mut Conn, now: DateTime<Utc>) -> StoreResult<()> {
    query(
        "DELETE FROM attempt_counts WHERE bucket IN \
         (SELECT bucket FROM attempt_counts WHERE expires_at <= $1 ORDER BY expires_at LIMIT 100)",
    )
    .bind(format_ts(now))
    .execute(conn)
    .await?;
    Ok(())
}
