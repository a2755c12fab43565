//! Data access for both database engines.
//!
//! # One body of SQL for SQLite and PostgreSQL
//!
//! Every query in this module runs unchanged on both engines through sqlx's `Any` driver. That keeps the business
//! rules in [`crate::domain`] written once, and keeps the engines behaving identically. The two hottest reads (a
//! reservation list's page and a single reservation) run the same SQL through the engine's own driver instead, to
//! skip `Any`'s per-row conversion ([`native`]). The price is a portable subset of SQL and of column types, which
//! these rules keep:
//!
//! * Placeholders are `$1, $2, …` (SQLite accepts them as numbered parameters).
//! * Column types are only `TEXT` and `BIGINT`. Booleans are `BIGINT` 0/1 (read with [`RowExt::get_bool`]),
//!   calendar dates are `TEXT` `YYYY-MM-DD`, instants are `TEXT` in the fixed-width UTC form of [`format_ts`]:
//!   both sort and compare correctly as text on either engine, so range filters and ORDER BY stay in SQL.
//! * Aggregates that PostgreSQL would widen to `NUMERIC` (`SUM`) are cast back with `CAST(... AS BIGINT)`.
//! * Upserts use `INSERT … ON CONFLICT (…) DO UPDATE SET col = excluded.col`, which both engines implement.
//! * Text compares as bytes, as SQLite compares it: on PostgreSQL, the identifiers, codes, dates and instants of
//!   reservations, their rooms and folios are declared `COLLATE "C"` (migration 0013), whatever the database's
//!   default collation.
//! * Where the dialects must differ (row locks), the difference is a constant chosen by [`Engine`], never text
//!   built from input.
//!
//! Migrations are kept per engine (`migrations/sqlite`, `migrations/postgres`) so that DDL can use each engine's
//! strengths without touching the shared queries; they are versioned and an applied migration is never edited.
//!
//! # Writes
//!
//! All writes go through [`WriteTx`]. On SQLite it takes the write lock up front (`BEGIN IMMEDIATE`) on a
//! dedicated single-connection pool, so writers queue in order instead of failing with `SQLITE_BUSY`; on PostgreSQL
//! it is an ordinary transaction and code that checks then takes inventory locks the rows it depends on.
//! [`WriteTx::record_event`] writes webhook events into the outbox inside the same transaction.
//!
//! A write that fails leaves its connection as clean as it found it: a connection that comes back to its pool still
//! counted inside a transaction is closed rather than reused ([`writer_pool_options`]). A write that fails for want of
//! storage (a full disk) is a passing fault like an unreachable database ([`is_unavailable`]: 503), and readiness
//! watches for it ([`write_health`]).

pub mod api_keys;
pub mod attempts;
pub mod booking;
pub mod daily_rates;
pub mod guest_messages;
pub mod guests;
pub mod hotels;
pub mod idempotency;
pub mod identity;
pub mod maintenance;
pub mod metrics;
pub mod native;
pub mod oauth;
pub mod outbox;
pub mod rate_plans;
pub mod recent;
pub mod reservation_counts;
pub mod reservations;
pub mod room_types;
pub mod rooms;
pub mod sql;
pub mod summaries;
pub mod webhooks;
pub mod write_health;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::{AnyConnectOptions, AnyRow};
use sqlx::pool::{PoolConnection, PoolOptions};
use sqlx::{Any, AnyConnection, AnyPool, Executor, Row};
use tokio::sync::Notify;

/// How long opening a database may take before the command says why it cannot.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest a request waits for a PostgreSQL connection. When the server is down every connection attempt fails, and
/// the request is answered 503 after this long instead of hanging for the whole request timeout; under load, waits
/// for a connection are milliseconds.
pub const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A pooled connection idle at least this long is checked with a round trip before it is handed out.
pub const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

/// The settings every pool starts from. sqlx's default checks each connection it hands out with a round trip to the
/// database, and it makes another when the connection comes back: on a one-statement read that is three round trips
/// for one answer. A connection that came back moments ago has just answered (the check on return proves it), so only
/// one idle for [`CHECK_AFTER_IDLE`] or more (the server may have restarted or dropped it since) is checked; one that
/// fails its check is closed and another taken, as with sqlx's default.
pub(crate) fn pool_options<DB: sqlx::Database>() -> PoolOptions<DB> {
    PoolOptions::new().test_before_acquire(false).before_acquire(|conn, meta| {
        Box::pin(async move {
            if meta.idle_for >= CHECK_AFTER_IDLE {
                sqlx::Connection::ping(conn).await?;
            }
            Ok(true)
        })
    })
}

/// [`pool_options`] for a pool that writes: a connection that comes back still inside a transaction is closed, not
/// reused. That happens when a transaction's ROLLBACK fails: SQLite rolls a transaction back by itself when a write
/// finds the disk full (or fails with an I/O error) and then refuses the ROLLBACK that sqlx sends when the
/// transaction is dropped, so sqlx goes on counting it open, and every later `BEGIN` on that connection would fail
/// ("begin_with at non-zero transaction depth") until the process restarted. Such a write also counts as one that
/// failed for want of storage (`health`).
fn writer_pool_options(health: Arc<write_health::WriteHealth>) -> PoolOptions<Any> {
    pool_options::<Any>().after_release(move |conn, _| {
        let health = health.clone();
        Box::pin(async move {
            if !sqlx::Connection::is_in_transaction(conn) {
                return Ok(true);
            }
            // A dropped transaction queues its ROLLBACK on the connection; a round trip runs it.
            sqlx::Connection::ping(conn).await?;
            if sqlx::Connection::is_in_transaction(conn) {
                tracing::warn!("a write transaction could not be rolled back; its connection is closed");
                health.failed();
                return Ok(false);
            }
            Ok(true)
        })
    })
}

/// Whether opening a database may create it. Only SQLite creates (its file); a PostgreSQL database must exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfMissing {
    Create,
    /// For commands that work on an existing database (`admin`): a mistyped path must not become a new, empty one.
    Refuse,
}

/// The file a SQLite URL names, made absolute; `None` for in-memory databases and other engines.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let path = std::path::PathBuf::from(path);
    Some(match std::env::current_dir() {
        Ok(dir) if path.is_relative() => dir.join(path),
        _ => path,
    })
}

/// Which database engine a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        if url.starts_with("sqlite:") {
            Ok(Engine::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Engine::Postgres)
        } else {
            anyhow::bail!("unsupported database URL (expected sqlite:… or postgres://…)")
        }
    }

    /// The engine behind a connection.
    pub fn of(conn: &AnyConnection) -> Engine {
        if conn.backend_name().eq_ignore_ascii_case("sqlite") {
            Engine::Sqlite
        } else {
            Engine::Postgres
        }
    }

    /// Suffix that locks the selected rows until the transaction ends, so that writers of the same rows take turns.
    /// SQLite needs none: its write transactions are already exclusive (see [`WriteTx`]).
    ///
    /// On PostgreSQL it is `FOR NO KEY UPDATE`, not `FOR UPDATE`: the rows are locked against each other's writers
    /// but not against writes that merely reference them (a foreign key check takes `FOR KEY SHARE`). With
    /// `FOR UPDATE`, a room move holding room type A and pointing the room at B would wait on a booking holding B,
    /// which waits for A: a lock cycle PostgreSQL breaks by failing one of them.
    pub fn lock_rows(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR NO KEY UPDATE",
        }
    }

    /// Like [`Engine::lock_rows`], skipping rows another transaction holds, so that several processes can claim
    /// work from one table without waiting on each other.
    pub fn lock_rows_skip_locked(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }
}

/// A handle on the database: cheap to clone, shared by every request.
#[derive(Clone, Debug)]
pub struct Db {
    engine: Engine,
    read: AnyPool,
    write: AnyPool,
    /// Woken when a transaction that recorded webhook events commits, so that this process's dispatcher sends
    /// them at once instead of at its next poll.
    outbox_signal: Arc<Notify>,
    /// SQLite: a shared advisory lock on the database file for as long as this process has it open, so that
    /// `frontdesk restore` can tell that the file is in use ([`maintenance::lock_for_restore`]).
    _in_use: Option<Arc<std::fs::File>>,
    /// Requests of this process waiting for a connection, per pool (for `/metrics`).
    waiting: Arc<metrics::Waiting>,
    /// Write transactions this process committed, and the recent answers that each of them makes stale.
    writes: recent::Writes,
    recent: Arc<RecentReads>,
    /// The engine's own driver, for the hottest reads ([`native`]).
    native: native::NativePool,
    /// Whether writes fail for want of storage (see [`write_health`]).
    write_health: Arc<write_health::WriteHealth>,
}

/// The answers of hot reads this process reuses for a few milliseconds (see [`recent`]).
#[derive(Debug, Default)]
struct RecentReads {
    api_keys: recent::Recent<String, api_keys::StoredApiKey>,
    public_hotels: recent::Recent<String, (String, crate::domain::hotels::Hotel, i64)>,
}

pub type StoreResult<T> = Result<T, sqlx::Error>;

impl Db {
    /// Connects, with per-engine settings. For SQLite the file is created if missing and every connection runs
    /// in WAL mode with foreign keys on and a busy timeout.
    /// Opens the database at `url`, creating a missing SQLite file.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Db> {
        Db::open(url, max_connections, IfMissing::Create).await
    }

    /// Opens the database at `url`. A PostgreSQL server that cannot be reached is reported within
    /// [`CONNECT_TIMEOUT`], naming the server and the reason.
    pub async fn open(url: &str, max_connections: u32, if_missing: IfMissing) -> anyhow::Result<Db> {
        sqlx::any::install_default_drivers();
        let engine = Engine::from_url(url)?;
        if let (Engine::Sqlite, IfMissing::Refuse, Some(path)) = (engine, if_missing, sqlite_file(url)) {
            anyhow::ensure!(
                path.exists(),
                "there is no database at {} ({url}); this command never creates one: run it where the database is, \
                 pass --database-url (or FRONTDESK_DATABASE_URL), or create it with `frontdesk migrate`",
                path.display()
            );
        }
        let url = match engine {
            Engine::Sqlite if !url.contains("mode=") && !url.contains(":memory:") => {
                let sep = if url.contains('?') { '&' } else { '?' };
                let mode = match if_missing {
                    IfMissing::Create => "rwc",
                    IfMissing::Refuse => "rw",
                };
                format!("{url}{sep}mode={mode}")
            }
            _ => url.to_string(),
        };
        let options = AnyConnectOptions::from_str(&url).context("parsing the database URL")?;
        let (hot_reads, other_reads) = native::split_connections(max_connections);
        let write_health = Arc::new(write_health::WriteHealth::default());
        match engine {
            Engine::Sqlite => {
                // The pool would retry a file it cannot use (not a database, unreadable) until its acquire timeout
                // and then say only that it timed out; one direct attempt first fails at once, with the reason.
                let file = Db::describe(&url);
                let attempt = async {
                    let mut conn = <AnyConnection as sqlx::Connection>::connect_with(&options).await?;
                    conn.execute(native::SQLITE_PRAGMAS).await?;
                    sqlx::Connection::close(conn).await
                };
                match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => anyhow::bail!("cannot open {file}: {err}"),
                    Err(_) => anyhow::bail!("cannot open {file}: no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                }
                let with_pragmas = |options: PoolOptions<Any>| {
                    options.acquire_timeout(Duration::from_secs(30)).after_connect(|conn, _| {
                        Box::pin(async move {
                            // Reads through a memory map (up to 1 GB of the file) skip a system call per page, which
                            // makes a 100-row list of a million-row table 3x faster; the mapped pages are the OS
                            // page cache, shared and reclaimable, not the process's own memory. The 16 MB page cache
                            // (SQLite's default is 2 MB) holds the rest of the hot index pages.
                            conn.execute(native::SQLITE_PRAGMAS).await?;
                            Ok(())
                        })
                    })
                };
                // One writer connection: SQLite allows a single writer at a time anyway, and queueing in the
                // pool is fair and cheap where lock contention inside SQLite would spin on busy_timeout.
                let write = with_pragmas(writer_pool_options(write_health.clone()))
                    .max_connections(1)
                    .connect_with(options.clone())
                    .await
                    .context("opening the SQLite database")?;
                let read = with_pragmas(pool_options::<Any>())
                    .max_connections(other_reads.max(2))
                    .connect_with(options)
                    .await
                    .context("opening the SQLite database")?;
                let native = native::NativePool::sqlite(&url, hot_reads).context("opening the SQLite database")?;
                let in_use = match sqlite_file(&url) {
                    Some(path) => Some(Arc::new(maintenance::mark_in_use(&path)?)),
                    None => None,
                };
                Ok(Db {
                    engine,
                    read,
                    write,
                    outbox_signal: Arc::default(),
                    _in_use: in_use,
                    waiting: Arc::default(),
                    writes: recent::Writes::default(),
                    recent: Arc::default(),
                    native,
                    write_health,
                })
            }
            Engine::Postgres => {
                // The pool would retry silently until its acquire timeout and then say only that it timed out; one
                // direct attempt first gives the real reason (refused, unknown host, authentication, no database).
                let server = Db::describe(url.as_str());
                match tokio::time::timeout(CONNECT_TIMEOUT, <AnyConnection as sqlx::Connection>::connect_with(&options))
                    .await
                {
                    Ok(Ok(conn)) => drop(conn),
                    Ok(Err(err)) => anyhow::bail!("cannot connect to {server}: {err}"),
                    Err(_) => {
                        anyhow::bail!("cannot connect to {server}: no answer within {} s", CONNECT_TIMEOUT.as_secs())
                    }
                }
                let native = native::NativePool::postgres(&url, hot_reads).context("connecting to PostgreSQL")?;
                let pool = writer_pool_options(write_health.clone())
                    .max_connections(other_reads)
                    .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
                    .connect_with(options)
                    .await
                    .context("connecting to PostgreSQL")?;
                Ok(Db {
                    engine,
                    read: pool.clone(),
                    write: pool,
                    outbox_signal: Arc::default(),
                    _in_use: None,
                    waiting: Arc::default(),
                    writes: recent::Writes::default(),
                    recent: Arc::default(),
                    native,
                    write_health,
                })
            }
        }
    }

    /// Which database `url` names, for people (no password): the SQLite file's full path, or PostgreSQL's server,
    /// database and user.
    pub fn describe(url: &str) -> String {
        if let Some(path) = sqlite_file(url) {
            return format!("SQLite file {}", path.display());
        }
        match url::Url::parse(url) {
            Ok(parsed) if parsed.scheme().starts_with("postgres") => format!(
                "PostgreSQL at {}:{} (database {}, user {})",
                parsed.host_str().unwrap_or("localhost"),
                parsed.port().unwrap_or(5432),
                parsed.path().trim_start_matches('/'),
                if parsed.username().is_empty() { "default" } else { parsed.username() },
            ),
            _ => "an in-memory SQLite database".to_string(),
        }
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Applies the migrations of this engine that are not applied yet.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        self.migrator().run(&self.write).await.context("applying database migrations")?;
        maintenance::backfill(self, crate::domain::reservations::reference::draw)
            .await
            .context("filling what the migrations added")?;
        Ok(())
    }

    /// This engine's migrations, compiled into the binary.
    pub(crate) fn migrator(&self) -> sqlx::migrate::Migrator {
        match self.engine {
            Engine::Sqlite => sqlx::migrate!("migrations/sqlite"),
            Engine::Postgres => sqlx::migrate!("migrations/postgres"),
        }
    }

    /// A connection for reads. Reads never block writers (WAL on SQLite, MVCC on PostgreSQL).
    pub async fn read(&self) -> StoreResult<PoolConnection<Any>> {
        let _waiting = self.waiting.read.wait();
        self.read.acquire().await
    }

    /// Starts the one kind of transaction every write goes through.
    pub async fn begin_write(&self) -> StoreResult<WriteTx> {
        let waiting = self.waiting.write.wait();
        let tx = match self.engine {
            Engine::Sqlite => self.write.begin_with("BEGIN IMMEDIATE").await,
            Engine::Postgres => self.write.begin().await,
        };
        drop(waiting);
        let tx = tx.inspect_err(|err| {
            if write_health::is_storage_failure(err) {
                self.write_health.failed();
            }
        })?;
        Ok(WriteTx {
            tx,
            engine: self.engine,
            outbox_signal: None,
            db_signal: self.outbox_signal.clone(),
            writes: self.writes.clone(),
            write_health: self.write_health.clone(),
        })
    }

    /// Completes after a transaction of this process that recorded webhook events has committed (at once if one
    /// did since the last call).
    pub async fn outbox_written(&self) {
        self.outbox_signal.notified().await
    }

    /// Answers whether the database can serve a query now.
    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    /// Answers whether the database serves now: it answers a query and, if a write failed for want of storage since
    /// the last one that committed, it takes a write again (see [`write_health`]).
    pub async fn ready(&self) -> StoreResult<()> {
        self.ping().await?;
        if self.write_health.is_failing() {
            write_health::probe(self).await?;
        }
        Ok(())
    }

    pub async fn close(&self) {
        self.read.close().await;
        self.native.close();
        self.write.close().await;
    }
}

/// A write transaction. Dropping it without [`WriteTx::commit`] rolls everything back, so an error anywhere
/// leaves nothing half-written.
pub struct WriteTx {
    tx: sqlx::Transaction<'static, Any>,
    engine: Engine,
    /// Set once an event is recorded: the dispatcher is woken on commit.
    outbox_signal: Option<Arc<Notify>>,
    db_signal: Arc<Notify>,
    writes: recent::Writes,
    write_health: Arc<write_health::WriteHealth>,
}

impl WriteTx {
    pub fn conn(&mut self) -> &mut AnyConnection {
        &mut self.tx
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Records a webhook event in the outbox, atomically with the change that caused it.
    pub async fn record_event(&mut self, event: &outbox::NewEvent<'_>) -> StoreResult<()> {
        outbox::insert(&mut self.tx, event).await?;
        self.outbox_signal = Some(self.db_signal.clone());
        Ok(())
    }

    pub async fn commit(self) -> StoreResult<()> {
        let committed = self.tx.commit().await;
        // Even after an error: a commit whose answer was lost may have happened.
        self.writes.committed();
        match &committed {
            Ok(()) => self.write_health.committed(),
            Err(err) if write_health::is_storage_failure(err) => self.write_health.failed(),
            Err(_) => {}
        }
        committed?;
        if let Some(signal) = self.outbox_signal {
            signal.notify_one();
        }
        Ok(())
    }
}

/// The stored form of an instant: fixed-width RFC 3339 UTC with microseconds, so text order is time order.
pub fn format_ts(ts: DateTime<Utc>) -> String {
    ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub fn parse_ts(s: &str) -> Result<DateTime<Utc>, sqlx::Error> {
    if let Some(instant) = native::parse_instant(s) {
        return Ok(instant);
    }
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// Decoding helpers for the portable column types.
pub trait RowExt {
    fn get_bool(&self, col: &str) -> StoreResult<bool>;
    fn get_ts(&self, col: &str) -> StoreResult<DateTime<Utc>>;
    fn get_opt_ts(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>>;
    fn get_date(&self, col: &str) -> StoreResult<NaiveDate>;
}

impl RowExt for AnyRow {
    fn get_bool(&self, col: &str) -> StoreResult<bool> {
        Ok(self.try_get::<i64, _>(col)? != 0)
    }

    fn get_ts(&self, col: &str) -> StoreResult<DateTime<Utc>> {
        parse_ts(&self.try_get::<String, _>(col)?)
    }

    fn get_opt_ts(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>> {
        self.try_get::<Option<String>, _>(col)?.map(|s| parse_ts(&s)).transpose()
    }

    fn get_date(&self, col: &str) -> StoreResult<NaiveDate> {
        native::parse_date(&self.try_get::<String, _>(col)?)
    }
}

/// The stored form of a boolean.
pub fn bool_int(b: bool) -> i64 {
    i64::from(b)
}

/// Whether an error is a unique-constraint violation (on either engine).
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Whether an error is a foreign-key violation (on either engine): a record is still referenced.
pub fn is_foreign_key_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_foreign_key_violation())
}

/// Whether an error means the database cannot be reached right now (stopped, restarting, every connection
/// failing), not that a statement failed: the same request may succeed a little later.
///
/// A write that failed for want of storage (a full disk: [`write_health::is_storage_failure`]) counts too: nothing was
/// written, and it may succeed once space is back.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    if write_health::is_storage_failure(err) {
        return true;
    }
    match err {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed => true,
        // Connection exceptions (class 08), and the server shutting down or starting up (57P01-57P03).
        sqlx::Error::Database(db) => {
            db.code().is_some_and(|code| code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03"))
        }
        _ => false,
    }
}

/// [`is_unavailable`] for an error that may wrap a database error.
pub fn is_unavailable_cause(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.downcast_ref::<sqlx::Error>().is_some_and(is_unavailable))
}

/// Whether PostgreSQL gave up a transaction because of a concurrent one (deadlock detected, or a serialization
/// failure): nothing was written, and the same request can simply be sent again.
pub fn is_concurrency_failure(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40P01" | "40001")))
}

/// What the task reading a [`stream`]'s rows sends: a row, or that the rows ended. A channel that closes without
/// [`Streamed::End`] means that the task stopped early (it panicked, or the runtime is shutting down).
enum Streamed<T> {
    Row(StoreResult<T>),
    End,
}

/// The error of a stream whose reader stopped before the last row.
fn cut_short() -> sqlx::Error {
    sqlx::Error::Protocol("the rows' reader stopped before the last row".into())
}

/// Streams the rows of a query, mapped, through a bounded channel: memory stays flat however many rows match,
/// and the connection is held only while the consumer keeps reading.
///
/// The first row is read before this answers, so that a query that fails at once (no connection, a row that does
/// not decode) is an error for the caller to answer, not a stream that fails after a list has begun. After that the
/// stream ends only when the rows did: a failure, or a reader that stopped early, is an `Err` item, never a quiet
/// end that would pass a partial list for a whole one.
pub async fn stream<T: Send + 'static>(
    db: &Db,
    sql: String,
    args: sqlx::any::AnyArguments<'static>,
    map: fn(&AnyRow) -> StoreResult<T>,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<T>>> {
    use futures::StreamExt;
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Streamed<T>>(64);
    let pool = db.read.clone();
    let waiting = db.waiting.clone();
    tokio::spawn(async move {
        let acquired = {
            let _waiting = waiting.read.wait();
            pool.acquire().await
        };
        let mut conn = match acquired {
            Ok(conn) => conn,
            Err(err) => {
                let _ = sender.send(Streamed::Row(Err(err))).await;
                return;
            }
        };
        let mut rows = sqlx::query_with(&sql, args).fetch(&mut *conn);
        while let Some(row) = rows.next().await {
            let item = row.and_then(|row| map(&row));
            let failed = item.is_err();
            if sender.send(Streamed::Row(item)).await.is_err() || failed {
                return;
            }
        }
        let _ = sender.send(Streamed::End).await;
    });
    let first = match receiver.recv().await {
        Some(Streamed::Row(Ok(row))) => row,
        Some(Streamed::Row(Err(err))) => return Err(err),
        Some(Streamed::End) => return Ok(futures::stream::empty().boxed()),
        None => return Err(cut_short()),
    };
    let rest = futures::stream::unfold(Some(receiver), |receiver| async move {
        let mut receiver = receiver?;
        match receiver.recv().await {
            Some(Streamed::Row(Ok(row))) => Some((Ok(row), Some(receiver))),
            Some(Streamed::Row(Err(err))) => Some((Err(err), None)),
            Some(Streamed::End) => None,
            None => Some((Err(cut_short()), None)),
        }
    });
    Ok(futures::stream::once(async { Ok(first) }).chain(rest).boxed())
}

/// Counts the rows of a query (`sql` selects `COUNT(*) AS n`).
pub async fn count(db: &Db, sql: &str, args: sqlx::any::AnyArguments<'_>) -> StoreResult<i64> {
    let row = sqlx::query_with(sql, args).fetch_one(&mut *db.read().await?).await?;
    row.try_get("n")
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    fn stops_at_three(row: &AnyRow) -> StoreResult<i64> {
        let n: i64 = row.try_get(0)?;
        assert!(n != 3, "the reader stops early");
        Ok(n)
    }

    #[tokio::test]
    async fn a_stream_whose_reader_stops_early_ends_with_an_error() {
        let db = Db::connect("sqlite::memory:", 2).await.unwrap();
        let sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n";
        let rows: Vec<_> = stream(&db, sql.into(), Default::default(), stops_at_three).await.unwrap().collect().await;
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(matches!(rows[..2], [Ok(1), Ok(2)]), "{rows:?}");
        assert!(matches!(rows[2], Err(sqlx::Error::Protocol(_))), "not a quiet end: {rows:?}");
        let whole: Vec<_> =
            stream(&db, sql.into(), Default::default(), |row| row.try_get::<i64, _>(0)).await.unwrap().collect().await;
        assert_eq!(whole.into_iter().collect::<StoreResult<Vec<i64>>>().unwrap(), [1, 2, 3, 4, 5]);
        db.close().await;
    }
}
