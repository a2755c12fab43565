//! Data access for both database engines: one access path per engine (`conn.rs`, `pool.rs`).
//!
//! # One body of SQL for SQLite and PostgreSQL
//!
//! Every query in this module is written once and runs unchanged on both engines, each through its own sqlx driver:
//! a [`Conn`] holds a PostgreSQL or a SQLite connection, [`query`] binds values ([`SqlValue`]) with that engine's
//! driver, and a [`Row`] is read by code written once for both ([`Cell`], [`RowExt`], [`PortableRow`]). That keeps
//! the business rules in [`crate::domain`] written once, and keeps the engines behaving identically. The price is a
//! portable subset of SQL, which these rules keep (`docs/storage.md` has the why):
//!
//! * Statements are built with sea-query ([`statement`], `statement.rs`), naming tables and columns through the
//!   enums of [`schema`] (generated from the migrations), and rendered for the connection's engine, which numbers
//!   the placeholders. The two written as text that bind values (`webhooks::insert_deliveries`, the backup's
//!   `VACUUM INTO`) take their placeholders from [`sql::Conditions`]; none are counted by hand.
//! * Each engine stores values in its own types. On PostgreSQL (migration 0021) ids are `uuid`, calendar dates
//!   `date`, instants `timestamptz`, flags `boolean`; on SQLite they are `TEXT` (`YYYY-MM-DD` dates, instants in the
//!   fixed-width UTC form of [`format_ts`], which sort as text) and `INTEGER` 0/1. Money is integer minor units on
//!   both. Code hands the store text and integers ([`SqlValue`]); on PostgreSQL each is bound as the type its
//!   placeholder has there (`conn.rs`), and read back as the same text and integers, or natively as a date, an
//!   instant or a flag ([`RowExt`], [`PortableRow`]).
//! * Flags are compared with `TRUE` and `FALSE`, which both engines read. A value whose type nothing around its
//!   placeholder says (a column of a `VALUES` list read by a `SELECT`) is bound with [`sql::Conditions::bind_as`].
//! * Aggregates that PostgreSQL would widen to `NUMERIC` (`SUM`) are cast back with `CAST(... AS BIGINT)`.
//! * Upserts use `INSERT … ON CONFLICT (…) DO UPDATE SET col = excluded.col`, which both engines implement.
//! * Text compares as bytes, as SQLite compares it: on PostgreSQL, the codes and statuses of reservations, their
//!   rooms and folios are declared `COLLATE "C"` (migration 0013), whatever the database's default collation; a
//!   `uuid` orders as its text does.
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
//! [`WriteTx::write_trail`] writes webhook events into the outbox, with the audit entries, inside the same transaction.
//!
//! A write that fails leaves its connection as clean as it found it: a connection that comes back to its pool still
//! counted inside a transaction is closed rather than reused (`writer_pool_options`, in `pool.rs`). A write that
//! fails for want of storage (a full disk) is a passing fault like an unreachable database ([`is_unavailable`]:
//! 503), and readiness watches for it ([`write_health`]).
//!
//! # Where things are
//!
//! This file holds the [`Engine`], the [`Db`] handle and the [`WriteTx`]. Beside it: `conn.rs` is how a statement
//! reaches a database ([`Conn`], [`query`], [`Row`]), `pool.rs` opens a database ([`Db::open`], the pools and their
//! settings), `rows.rs` has the helpers that read and write the portable column types
//! ([`format_ts`], [`RowExt`]), `errors.rs` says what a database error means ([`Error::kind`]: a value taken, a
//! record still referenced, a collision, the database out of reach), and `stream.rs` streams and counts a query's
//! rows ([`stream()`], [`count()`]). Every other module is the queries of one area.
//!
//! # What the rest of the service sees
//!
//! [`crate::domain`] calls the store; the store never names the domain. It reads and writes the records of
//! [`crate::model`], and where a statement needs a rule's answer (which statuses are on the books) the domain
//! passes it in; the shapes that exist only for a query ([`Page`], `reservations::StayFilter`,
//! `daily_rates::StayRates`, `webhooks::Target`) are the store's own. Code above the store takes a
//! [`Conn`] and gets a [`StoreResult`], whose [`Error`] it asks for its [`ErrorKind`]: nothing outside this module
//! names the driver's types, so how the store reaches each engine can change here alone (see `docs/storage.md`).

pub mod api_keys;
pub mod attempts;
pub mod audit_log;
pub mod billing;
pub mod booking;
pub mod business_days;
pub mod channels;
mod conn;
mod connection_manager;
pub mod daily_rates;
mod errors;
pub mod folios;
pub mod guest_messages;
pub mod guests;
pub mod hotels;
pub mod idempotency;
pub mod identity;
pub mod invoices;
pub mod maintenance;
pub mod metrics;
pub mod oauth;
pub mod outbox;
mod pool;
pub mod rate_plans;
pub mod recent;
pub mod reservation_counts;
pub mod reservations;
pub mod room_types;
pub mod rooms;
mod rows;
pub mod schema;
pub mod service_secrets;
pub mod sql;
pub mod statement;
mod stream;
pub mod summaries;
pub mod webhooks;
pub mod write_health;

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::Notify;

pub use conn::{query, query_with, Cell, Column, Conn, Done, Query, Row, SqlValue};
pub use errors::{is_unavailable_cause, Error, ErrorKind};
pub use pool::{sqlite_file, IfMissing, CHECK_AFTER_IDLE, CONNECT_TIMEOUT, POSTGRES_ACQUIRE_TIMEOUT};
pub use rows::{bool_int, format_date, format_ts, new_id, parse_date, parse_ts, FromPortableRow, PortableRow, RowExt};
pub use sql::Page;
pub use statement::{insert_row, statement};
pub use stream::{count, stream};

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
    pub fn of(conn: &Conn) -> Engine {
        conn.engine()
    }
}

/// A handle on the database: cheap to clone, shared by every request.
#[derive(Clone, Debug)]
pub struct Db {
    engine: Engine,
    /// PostgreSQL: one pool. SQLite: the readers, and the single writer connection.
    read: pool::Pool,
    write: pool::Pool,
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
    /// Whether writes fail for want of storage (see [`write_health`]).
    write_health: Arc<write_health::WriteHealth>,
    /// How long the audit log entries written through this handle are kept.
    audit_retention_days: u32,
}

/// The answers of hot reads this process reuses for a few milliseconds (see [`recent`]).
#[derive(Debug, Default)]
struct RecentReads {
    api_keys: recent::Recent<String, api_keys::StoredApiKey>,
    public_hotels: recent::Recent<String, (String, crate::model::hotels::Hotel, i64)>,
}

pub type StoreResult<T> = Result<T, Error>;

impl Db {
    /// Ten years: what § 147 AO asks of the records of a business's books.
    pub const AUDIT_RETENTION_DAYS: u32 = 3650;

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Applies the migrations of this engine that are not applied yet, and fills what they added that the store can
    /// compute. `domain::migrate` does this and fills the rest, which needs the domain's rules.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        let mut conn = self.write.get().await?;
        conn.migrate(&self.migrator()).await.context("applying database migrations")?;
        drop(conn);
        maintenance::backfill(self).await.context("filling what the migrations added")?;
        Ok(())
    }

    /// Applies `migrator`'s migrations instead of this release's: for tests that build a database as an earlier
    /// release left it.
    pub async fn migrate_with(&self, migrator: &sqlx::migrate::Migrator) -> anyhow::Result<()> {
        self.write.get().await?.migrate(migrator).await
    }

    /// This engine's migrations, compiled into the binary.
    pub(crate) fn migrator(&self) -> sqlx::migrate::Migrator {
        match self.engine {
            Engine::Sqlite => sqlx::migrate!("migrations/sqlite"),
            Engine::Postgres => sqlx::migrate!("migrations/postgres"),
        }
    }

    /// A connection for reads. Reads never block writers (WAL on SQLite, MVCC on PostgreSQL).
    pub async fn read(&self) -> StoreResult<Pooled> {
        let _waiting = self.waiting.read.wait();
        Ok(Pooled(self.read.get().await?))
    }

    /// Starts the one kind of transaction every write goes through. Outside the store only the door for writes,
    /// `domain::change::Change`, calls it (`tests/it/layers.rs`).
    pub async fn begin_write(&self) -> StoreResult<WriteTx> {
        let waiting = self.waiting.write.wait();
        let conn = self.write.get().await;
        drop(waiting);
        let mut conn = conn?;
        conn.begin().await.inspect_err(|err| {
            if err.is_storage_failure() {
                self.write_health.failed();
            }
        })?;
        Ok(WriteTx {
            conn: Some(conn),
            engine: self.engine,
            outbox_signal: None,
            db_signal: self.outbox_signal.clone(),
            writes: self.writes.clone(),
            write_health: self.write_health.clone(),
            audit_retention_days: self.audit_retention_days,
        })
    }

    /// Completes after a transaction of this process that recorded webhook events has committed (at once if one
    /// did since the last call).
    pub async fn outbox_written(&self) {
        self.outbox_signal.notified().await
    }

    /// Answers whether the database can serve a query now.
    pub async fn ping(&self) -> StoreResult<()> {
        query("SELECT 1").execute(&mut *self.read().await?).await?;
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
        self.read.close();
        self.write.close();
    }
}

/// A connection from [`Db::read`], back to its pool when dropped.
pub struct Pooled(Conn);

impl std::ops::Deref for Pooled {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        &self.0
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.0
    }
}

/// A write transaction. Dropping it without [`WriteTx::commit`] rolls everything back, so an error anywhere
/// leaves nothing half-written.
pub struct WriteTx {
    /// `None` once committed.
    conn: Option<Conn>,
    engine: Engine,
    /// Set once an event is recorded: the dispatcher is woken on commit.
    outbox_signal: Option<Arc<Notify>>,
    db_signal: Arc<Notify>,
    writes: recent::Writes,
    write_health: Arc<write_health::WriteHealth>,
    audit_retention_days: u32,
}

impl WriteTx {
    /// How long the audit log entries of this transaction are kept.
    pub fn audit_retention_days(&self) -> u32 {
        self.audit_retention_days
    }

    pub fn conn(&mut self) -> &mut Conn {
        match self.conn.as_mut() {
            Some(conn) => conn,
            // Only `commit` takes the connection, and it takes the transaction with it.
            None => unreachable!("a committed transaction has no connection"),
        }
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Writes what a change leaves behind, atomically with it: its webhook events into the outbox and its audit
    /// entries (of their organizations, kept until `keep_until`), in one round trip ([`statement::inserts`]).
    pub async fn write_trail(
        &mut self,
        events: &[outbox::PendingEvent],
        entries: &[(String, crate::model::audit::AuditEntry)],
        keep_until: chrono::DateTime<chrono::Utc>,
    ) -> StoreResult<()> {
        let mut inserts = Vec::new();
        if !events.is_empty() {
            inserts.push(outbox::insert_statement(events));
            self.outbox_signal = Some(self.db_signal.clone());
        }
        inserts.extend(audit_log::insert_statements(self.engine, entries, keep_until)?);
        match statement::inserts(self.engine(), inserts) {
            Some(query) => query.execute(self.conn()).await.map(|_| ()),
            None => Ok(()),
        }
    }

    pub async fn commit(mut self) -> StoreResult<()> {
        let Some(mut conn) = self.conn.take() else { return Ok(()) };
        let committed = conn.commit().await;
        // Even after an error: a commit whose answer was lost may have happened.
        self.writes.committed();
        match &committed {
            Ok(()) => self.write_health.committed(),
            Err(err) if err.is_storage_failure() => self.write_health.failed(),
            Err(_) => {}
        }
        committed?;
        if let Some(signal) = self.outbox_signal.take() {
            signal.notify_one();
        }
        Ok(())
    }
}

impl Drop for WriteTx {
    /// Rolls back at once, as sqlx's transactions do: on PostgreSQL an abandoned transaction would otherwise keep
    /// its row locks until its connection is next handed out, and on SQLite the write lock.
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            conn.roll_back_in_background();
        }
    }
}
