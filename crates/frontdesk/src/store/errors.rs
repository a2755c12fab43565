//! What a database error means for the request that met it: a taken value, a record still referenced, a database
//! out of reach (503), or a transaction given up for a concurrent one.

use super::write_health;

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
