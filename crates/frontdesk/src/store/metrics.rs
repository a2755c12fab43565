//! What `/metrics` reads from the store: the connection pools' use and the webhook outbox's backlog.

use std::sync::atomic::{AtomicI64, Ordering};

use super::{Db, Engine, RowExt, StoreResult};
use crate::store::query;

/// Requests waiting for a connection, per pool: raised before an acquire, lowered when it completes or is dropped.
#[derive(Debug, Default)]
pub struct Waiting {
    pub(super) read: Counter,
    pub(super) write: Counter,
}

#[derive(Debug, Default)]
pub(super) struct Counter(AtomicI64);

impl Counter {
    /// Counts one waiter until the guard is dropped (also when the waiting future is cancelled).
    pub(super) fn wait(&self) -> WaitGuard<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        WaitGuard(&self.0)
    }

    fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed).max(0)
    }
}

pub(super) struct WaitGuard<'a>(&'a AtomicI64);

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One connection pool's state at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// `read` and `write` on SQLite (one writer connection, a pool of readers); `shared` on PostgreSQL.
    pub pool: &'static str,
    pub in_use: u32,
    pub idle: u32,
    pub max: u32,
    /// Requests of this process waiting for a connection of this pool.
    pub waiting: i64,
}

fn pool_use(pool: &'static str, (size, idle, max): (u32, usize, u32), waiting: i64) -> PoolUse {
    let idle = u32::try_from(idle).unwrap_or(u32::MAX).min(size);
    PoolUse { pool, in_use: size - idle, idle, max, waiting }
}

impl Db {
    /// The pools of this process and their use (no query: the pools' own counters).
    pub fn pool_use(&self) -> Vec<PoolUse> {
        match self.engine {
            Engine::Sqlite => vec![
                pool_use("read", self.read.size(), self.waiting.read.get()),
                pool_use("write", self.write.size(), self.waiting.write.get()),
            ],
            Engine::Postgres => {
                vec![pool_use("shared", self.read.size(), self.waiting.read.get() + self.waiting.write.get())]
            }
        }
    }
}

/// The webhook outbox's backlog: events recorded and not yet delivered (or given up) to every subscription.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutboxBacklog {
    pub events: i64,
    /// Seconds since the oldest of them was recorded (0 when there is none).
    pub oldest_age_seconds: f64,
}

/// Reads the backlog in two index-only queries (a count, and the first row by id, which is time-ordered).
pub async fn outbox_backlog(db: &Db) -> StoreResult<OutboxBacklog> {
    let mut conn = db.read().await?;
    let events: i64 = query("SELECT COUNT(*) AS n FROM outbox_events").fetch_one(&mut conn).await?.try_get("n")?;
    let oldest = query("SELECT created_at FROM outbox_events ORDER BY id LIMIT 1")
        .fetch_optional(&mut conn)
        .await?
        .map(|row| row.get_ts("created_at"))
        .transpose()?;
    let oldest_age_seconds =
        oldest.map(|at| (chrono::Utc::now() - at).num_milliseconds().max(0) as f64 / 1000.0).unwrap_or(0.0);
    Ok(OutboxBacklog { events, oldest_age_seconds })
}
