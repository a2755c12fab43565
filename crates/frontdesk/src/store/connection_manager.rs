//! A pool's connections: how one is opened and when one handed back is checked, closed or reused (deadpool's
//! [`Manager`] for each engine's own sqlx connection). Below both the pools (`pool.rs`) and the connection the store
//! works with (`conn.rs`).

use std::sync::Arc;
use std::time::Duration;

use deadpool::managed::{Manager, Metrics, RecycleError, RecycleResult};
use sqlx::{ConnectOptions, Connection, Database, Executor};

use super::write_health::WriteHealth;

/// A pooled connection idle at least this long is checked with a round trip before it is handed out.
pub const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

/// A connection older than this is replaced the next time it would be handed out (sqlx's pools did the same after
/// 30 minutes), so that a PostgreSQL backend's caches do not grow for the life of the process.
const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Opens and rechecks a pool's connections.
///
/// The pools are deadpool's rather than sqlx's: sqlx's pool makes a round trip to the database every time a
/// connection comes back (and, by default, another before it hands one out), so a one-statement read cost three
/// round trips, and the database's share of a single reservation GET was mostly those wake-ups. Here a connection
/// is checked only when it was idle for [`CHECK_AFTER_IDLE`] (the server may have restarted since); one left
/// mid-statement by a cancelled request is safe to reuse, because sqlx's connections finish reading what is pending
/// before they run the next statement.
pub(crate) struct ConnectionManager<DB: Database> {
    pub(super) options: <DB::Connection as Connection>::Options,
    /// Run on each new connection ("" for none).
    pub(super) after_connect: &'static str,
    /// For a pool that writes: told when a connection comes back still inside a transaction it cannot leave.
    pub(super) write_health: Option<Arc<WriteHealth>>,
}

impl<DB: Database> Manager for ConnectionManager<DB>
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

    /// A connection that comes back still inside a transaction is closed, not reused. That happens when a
    /// transaction's ROLLBACK fails: SQLite rolls a transaction back by itself when a write finds the disk full (or
    /// fails with an I/O error) and then refuses the ROLLBACK the store sends, so the connection goes on counting it
    /// open, and every later `BEGIN` on it would fail until the process restarted. Such a write also counts as one
    /// that failed for want of storage ([`WriteHealth`]).
    async fn recycle(&self, conn: &mut DB::Connection, metrics: &Metrics) -> RecycleResult<sqlx::Error> {
        if conn.is_in_transaction() {
            // A rollback may still be queued on the connection; a round trip runs it.
            conn.ping().await?;
            if conn.is_in_transaction() {
                tracing::warn!("a write transaction could not be rolled back; its connection is closed");
                if let Some(health) = &self.write_health {
                    health.failed();
                }
                return Err(RecycleError::message("left inside a transaction"));
            }
        }
        if metrics.age() >= MAX_LIFETIME {
            return Err(RecycleError::message("past its lifetime"));
        }
        if metrics.last_used() >= CHECK_AFTER_IDLE {
            conn.ping().await?;
        }
        Ok(())
    }
}
