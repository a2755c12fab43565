//! Writes that fail for want of storage (a full disk, I/O errors), and how the service notices that they work again.
//!
//! Reads keep working on a full disk, so `SELECT 1` alone would call the service ready while every write fails.
//! Each [`super::Db`] remembers whether a write failed that way since the last one that committed; while it did,
//! readiness ([`super::Db::ready`]) commits a small write of its own ([`probe`]), so `/readyz` answers 503 until the
//! database takes writes again, and 200 as soon as it does, with or without other traffic. Without such a failure
//! readiness writes nothing: a probe every few seconds would otherwise wait behind every long write.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{format_ts, Db, StoreResult};
use crate::store::schema::WriteProbes;
use crate::store::statement::{insert_row, statement, Expr, OnConflict};

#[derive(Debug, Default)]
pub(crate) struct WriteHealth {
    failing: AtomicBool,
}

impl WriteHealth {
    pub(crate) fn failed(&self) {
        if !self.failing.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "writes fail for want of storage (disk full or failing); /readyz answers 503 until one succeeds"
            );
        }
    }

    pub(crate) fn committed(&self) {
        if self.failing.swap(false, Ordering::Relaxed) {
            tracing::info!("writes succeed again");
        }
    }

    pub(crate) fn is_failing(&self) -> bool {
        self.failing.load(Ordering::Relaxed)
    }
}

/// Whether an error means the database could not store what it was asked to: SQLite's `SQLITE_FULL` and I/O errors
/// (`SQLITE_IOERR_*`), PostgreSQL's classes 53 (insufficient resources: `disk_full`, out of memory) and 58030
/// (`io_error`). Nothing was written, and the same request may succeed once space is back.
pub(crate) fn is_storage_failure(err: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = err else { return false };
    let Some(code) = db.code() else { return false };
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // Extended result codes carry the primary code in their low byte.
        return code.parse::<i64>().is_ok_and(|code| matches!(code & 0xff, 10 | 13));
    }
    code.starts_with("53") || code == "58030"
}

/// [`is_storage_failure`] for an error that may wrap a database error.
pub fn is_storage_failure_cause(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<super::Error>().is_some_and(super::Error::is_storage_failure)
            || cause.downcast_ref::<sqlx::Error>().is_some_and(is_storage_failure)
    })
}

/// Commits one small write (the single row of `write_probes`), through the same writer as every other write.
pub(crate) async fn probe(db: &Db) -> StoreResult<()> {
    let mut tx = db.begin_write().await?;
    let mut upsert = insert_row(
        WriteProbes::Table,
        [(WriteProbes::Id, Expr::val(1)), (WriteProbes::WrittenAt, Expr::val(format_ts(chrono::Utc::now())))],
    );
    upsert.on_conflict(OnConflict::column(WriteProbes::Id).update_column(WriteProbes::WrittenAt).to_owned());
    statement(db.engine(), &upsert).execute(tx.conn()).await?;
    tx.commit().await
}
