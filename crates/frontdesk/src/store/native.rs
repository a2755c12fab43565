//! The engines' own drivers, for the reads hot enough that the `Any` driver's cost shows: the reservation list's page
//! and the single reservation.
//!
//! `Any` turns every row into an `AnyRow` before it is read: each value copied into an owned enum, each column's
//! name and type rebuilt per row. Reading a 50-row page that way was a tenth of the service's CPU under load. These
//! reads run the same SQL, built by the same [`Conditions`], on a `PgConnection` or `SqliteConnection` instead, and
//! are decoded once by code written for both (a [`PortableRow`] reader).
//!
//! The native pool is a second pool on the same database (see [`Connector`] for why it is not sqlx's), opened with
//! the same settings (SQLite's pragmas, the PostgreSQL acquire timeout), connecting when first used.
//! `database_max_connections` is shared between the two ([`split_connections`]), so a process still opens at most
//! that many (plus SQLite's writer; at least 2).

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool::managed::{Manager, Metrics, Object, Pool, PoolError, RecycleError, RecycleResult};
use deadpool::Runtime;
use sqlx::any::AnyRow;
use sqlx::postgres::{PgConnectOptions, PgRow};
use sqlx::sqlite::{SqliteConnectOptions, SqliteRow};
use sqlx::{ConnectOptions, Connection, Database, Executor, Postgres, Row, Sqlite};

use super::sql::Conditions;
use super::{parse_ts, Db, StoreResult, POSTGRES_ACQUIRE_TIMEOUT};

/// A pool of the engine's own connections (see [`Connector`]).
#[derive(Clone)]
pub(super) enum NativePool {
    Sqlite(Pool<Connector<Sqlite>>),
    Postgres(Pool<Connector<Postgres>>),
}

impl std::fmt::Debug for NativePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (open, idle, most) = self.size();
        f.debug_struct("NativePool").field("open", &open).field("idle", &idle).field("most", &most).finish()
    }
}

/// SQLite's settings for every connection, whichever driver opens it (see [`Db::open`]).
pub(super) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
     PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; \
     PRAGMA cache_size = -16384; PRAGMA mmap_size = 1073741824;";

/// How `max_connections` is shared: (the native pool's, the `Any` pool's). Half go to the hot reads: a PostgreSQL
/// server on a few cores runs only so many statements at once (on 2 cores, 32 clients got as many list pages a
/// second from 8 hot connections as from 16, in separate runs). Each pool has at least one, so 1 opens 2.
pub(super) fn split_connections(max_connections: u32) -> (u32, u32) {
    let hot = (max_connections / 2).max(1);
    (hot, max_connections.saturating_sub(hot).max(1))
}

/// A connection of the hot pool older than this is replaced the next time it would be handed out (sqlx's pools
/// replace theirs after 30 minutes too), so that a PostgreSQL backend's caches do not grow for the life of the process.
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Opens and rechecks the hot pool's connections.
///
/// The hot pool is a deadpool pool rather than sqlx's: sqlx's pool makes a round trip to the database every time a
/// connection comes back (and, by default, another before it hands one out), so a one-statement read cost three
/// round trips, and the database's share of the single reservation GET was mostly those wake-ups. Here a connection
/// is checked only when it was idle for [`super::CHECK_AFTER_IDLE`] (the server may have restarted since); one left
/// mid-statement by a cancelled request is safe to reuse, because sqlx's connections finish reading what is pending
/// before they run the next statement.
pub(super) struct Connector<DB: Database> {
    options: <DB::Connection as Connection>::Options,
    /// Run on each new connection ("" for none).
    after_connect: &'static str,
}

impl<DB: Database> Manager for Connector<DB>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    type Type = DB::Connection;
    type Error = sqlx::Error;

    async fn create(&self) -> Result<DB::Connection, sqlx::Error> {
        let mut conn = self.options.connect().await?;
        if !self.after_connect.is_empty() {
            conn.execute(self.after_connect).await?;
        }
        Ok(conn)
    }

    async fn recycle(&self, conn: &mut DB::Connection, metrics: &Metrics) -> RecycleResult<sqlx::Error> {
        if metrics.age() >= MAX_LIFETIME {
            return Err(RecycleError::message("past its lifetime"));
        }
        if metrics.last_used() >= super::CHECK_AFTER_IDLE {
            conn.ping().await?;
        }
        Ok(())
    }
}

fn pool<DB: Database>(
    options: <DB::Connection as Connection>::Options,
    after_connect: &'static str,
    max_connections: u32,
    wait: Duration,
) -> StoreResult<Pool<Connector<DB>>>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    Pool::builder(Connector { options, after_connect })
        .max_size(max_connections as usize)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(wait))
        .create_timeout(Some(wait))
        .build()
        .map_err(|e| sqlx::Error::Configuration(e.into()).into())
}

impl NativePool {
    /// A pool on the SQLite database at `url` (already carrying its `mode=`), connecting lazily.
    pub(super) fn sqlite(url: &str, max_connections: u32) -> StoreResult<NativePool> {
        let options = SqliteConnectOptions::from_str(url)?;
        Ok(NativePool::Sqlite(pool(options, SQLITE_PRAGMAS, max_connections, Duration::from_secs(30))?))
    }

    /// A pool on the PostgreSQL database at `url`, connecting lazily.
    pub(super) fn postgres(url: &str, max_connections: u32) -> StoreResult<NativePool> {
        let options = PgConnectOptions::from_str(url)?;
        Ok(NativePool::Postgres(pool(options, "", max_connections, POSTGRES_ACQUIRE_TIMEOUT)?))
    }

    /// (connections open, idle, most).
    pub(super) fn size(&self) -> (u32, usize, u32) {
        let status = match self {
            NativePool::Sqlite(pool) => pool.status(),
            NativePool::Postgres(pool) => pool.status(),
        };
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (count(status.size), status.available, count(status.max_size))
    }

    /// Closes the pool: connections in use are closed when they come back.
    pub(super) fn close(&self) {
        match self {
            NativePool::Sqlite(pool) => pool.close(),
            NativePool::Postgres(pool) => pool.close(),
        }
    }
}

/// What waiting for a hot connection failed with, as sqlx's pool would say it.
fn pool_error(err: PoolError<sqlx::Error>) -> sqlx::Error {
    match err {
        PoolError::Backend(err) => err,
        PoolError::Timeout(_) => sqlx::Error::PoolTimedOut,
        PoolError::Closed => sqlx::Error::PoolClosed,
        err @ (PoolError::NoRuntimeSpecified | PoolError::PostCreateHook(_)) => {
            sqlx::Error::Configuration(err.to_string().into())
        }
    }
}

/// A record read from a row of any driver, by column position.
pub trait FromPortableRow: Sized {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self>;
}

/// The rows of a read statement, through the engine's own driver, each decoded by `T`.
pub async fn fetch_all<T: FromPortableRow>(db: &Db, sql: &str, conditions: Conditions) -> StoreResult<Vec<T>> {
    HotRead::acquire(db).await?.fetch_all(sql, conditions).await
}

/// A connection of the native pool, for reads of several statements: taking it once is one pool hand-off fewer per
/// statement after the first. Statements run one by one, each seeing what was committed when it started.
pub struct HotRead(Option<HotConnection>);

enum HotConnection {
    Postgres(Object<Connector<Postgres>>),
    Sqlite(Object<Connector<Sqlite>>),
}

impl HotRead {
    pub async fn acquire(db: &Db) -> StoreResult<HotRead> {
        let waiting = db.waiting.hot_reads.wait();
        let conn = match &db.native {
            NativePool::Postgres(pool) => HotConnection::Postgres(pool.get().await.map_err(pool_error)?),
            NativePool::Sqlite(pool) => HotConnection::Sqlite(pool.get().await.map_err(pool_error)?),
        };
        drop(waiting);
        Ok(HotRead(Some(conn)))
    }

    /// The rows of a read statement, each decoded by `T`.
    pub async fn fetch_all<T: FromPortableRow>(&mut self, sql: &str, conditions: Conditions) -> StoreResult<Vec<T>> {
        // Only a connection that failed before (and was let go) is missing.
        let conn = self.0.as_mut().ok_or(sqlx::Error::PoolClosed)?;
        let rows = match conn {
            HotConnection::Postgres(conn) => {
                let rows = sqlx::query_with(sql, conditions.into_postgres_args()).fetch_all(&mut **conn).await;
                rows.map(|rows| rows.iter().map(T::from_row).collect())
            }
            HotConnection::Sqlite(conn) => {
                let rows = sqlx::query_with(sql, conditions.into_sqlite_args()).fetch_all(&mut **conn).await;
                rows.map(|rows| rows.iter().map(T::from_row).collect())
            }
        };
        rows.inspect_err(|err| {
            // A statement the database refused leaves its connection usable; anything else (the socket closed, the
            // server restarting, a protocol error) may not, and the pool checks only connections that sat idle: this
            // one is closed instead of going back.
            if !matches!(err, sqlx::Error::Database(_)) || super::errors::is_unavailable(err) {
                self.let_go();
            }
        })?
    }

    /// Takes the connection out of its pool and closes it.
    fn let_go(&mut self) {
        match self.0.take() {
            Some(HotConnection::Postgres(conn)) => drop(Object::take(conn)),
            Some(HotConnection::Sqlite(conn)) => drop(Object::take(conn)),
            None => {}
        }
    }
}

/// Reading the portable column types ([`super`]) by position, from a row of the `Any` driver or of an engine's own.
pub trait PortableRow {
    fn text(&self, index: usize) -> StoreResult<String>;
    fn optional_text(&self, index: usize) -> StoreResult<Option<String>>;
    fn integer(&self, index: usize) -> StoreResult<i64>;
    fn optional_integer(&self, index: usize) -> StoreResult<Option<i64>>;

    fn date(&self, index: usize) -> StoreResult<NaiveDate> {
        parse_date(&self.text(index)?)
    }

    fn instant(&self, index: usize) -> StoreResult<DateTime<Utc>> {
        parse_ts(&self.text(index)?)
    }
}

macro_rules! portable_row {
    ($($row:ty),*) => {$(
        impl PortableRow for $row {
            fn text(&self, index: usize) -> StoreResult<String> {
                Ok(self.try_get(index)?)
            }

            fn optional_text(&self, index: usize) -> StoreResult<Option<String>> {
                Ok(self.try_get(index)?)
            }

            fn integer(&self, index: usize) -> StoreResult<i64> {
                Ok(self.try_get(index)?)
            }

            fn optional_integer(&self, index: usize) -> StoreResult<Option<i64>> {
                Ok(self.try_get(index)?)
            }
        }
    )*};
}

portable_row!(AnyRow, PgRow, SqliteRow);

/// The number written by the ASCII digits of `s[range]`, if they are all digits.
fn digits(s: &[u8], range: std::ops::Range<usize>) -> Option<u32> {
    s.get(range)?.iter().try_fold(0_u32, |n, b| b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0')))
}

/// A stored calendar date (`YYYY-MM-DD`).
pub fn parse_date(s: &str) -> StoreResult<NaiveDate> {
    // The stored form is fixed-width: read directly, as strftime-style parsing showed in profiles of lists.
    let b = s.as_bytes();
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        if let (Some(year), Some(month), Some(day)) = (digits(b, 0..4), digits(b, 5..7), digits(b, 8..10)) {
            if let Some(date) = NaiveDate::from_ymd_opt(year as i32, month, day) {
                return Ok(date);
            }
        }
    }
    Ok(NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|e| sqlx::Error::Decode(Box::new(e)))?)
}

/// A stored instant: the fixed-width form of [`super::format_ts`] read directly, anything else as RFC 3339.
pub fn parse_instant(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    if b.len() != 27 || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'.' || b[26] != b'Z' {
        return None;
    }
    let date = parse_date(s.get(0..10)?).ok()?;
    let (hour, minute, second) = (digits(b, 11..13)?, digits(b, 14..16)?, digits(b, 17..19)?);
    let time = chrono::NaiveTime::from_hms_micro_opt(hour, minute, second, digits(b, 20..26)?)?;
    Some(date.and_time(time).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_as_strftime_would() {
        let inputs = [
            "2026-01-01",
            "2000-02-29",
            "9999-12-31",
            "0001-01-01",
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "20260101",
            "2026-01-01x",
            "+026-01-01",
            "abcd-ef-gh",
            "",
        ];
        for s in inputs {
            assert_eq!(parse_date(s).ok(), NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(), "{s}");
        }
        assert!(parse_date("2026-02-30").is_err());
    }

    #[test]
    fn stored_instants_parse_as_rfc3339_would() {
        let rfc3339 = |s: &str| DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc));
        for s in ["2026-01-01T15:00:00.000000Z", "2026-11-23T22:41:07.123456Z", "2000-02-29T23:59:59.999999Z"] {
            assert_eq!(parse_instant(s), rfc3339(s), "{s}");
            assert_eq!(super::super::format_ts(parse_instant(s).expect(s)), s);
        }
        // Not the stored form: left to the RFC 3339 parser (`None` here).
        for s in ["2026-01-01T15:00:00Z", "2026-01-01T15:00:00.000000+01:00", "2026-01-01T25:00:00.000000Z", ""] {
            assert_eq!(parse_instant(s), None, "{s}");
        }
    }
}
