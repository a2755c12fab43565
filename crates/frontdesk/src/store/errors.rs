//! What a database error means for the request that met it: a taken value, a record still referenced, a database
//! out of reach (503), or a transaction given up for a concurrent one.
//!
//! The store says this itself ([`Error::kind`]), so that the rules above it never look inside the driver's errors:
//! they depend on the store, and the store on its driver, not the other way round.

use super::write_health;

/// A failed database operation. What it means for the request is its [`ErrorKind`]; the driver's error is kept as
/// its source for the logs.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] sqlx::Error);

/// What a database error means for the request that met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A unique constraint refused the write: the value is taken.
    Taken,
    /// A foreign key refused the write: a record is still referenced, or a referenced one is gone.
    StillReferenced,
    /// PostgreSQL gave the transaction up for a concurrent one (deadlock detected, serialization failure): nothing
    /// was written, and the same request can simply be sent again.
    Collided,
    /// The database cannot be reached right now (stopped, restarting, every connection failing), or a write failed
    /// for want of storage (a full disk): nothing was written, and the same request may succeed a little later.
    Unavailable,
    /// Anything else: a fault of the service or of its data.
    Other,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        let err = &self.0;
        if is_unavailable(err) {
            ErrorKind::Unavailable
        } else if matches!(err, sqlx::Error::Database(db) if db.is_unique_violation()) {
            ErrorKind::Taken
        } else if matches!(err, sqlx::Error::Database(db) if db.is_foreign_key_violation()) {
            ErrorKind::StillReferenced
        } else if matches!(err, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40P01" | "40001"))) {
            ErrorKind::Collided
        } else {
            ErrorKind::Other
        }
    }

    /// A value a statement was given that the store does not bind (a programming error, answered as 500).
    pub(crate) fn unbindable(what: impl std::fmt::Display) -> Error {
        Error(sqlx::Error::Encode(what.to_string().into()))
    }

    /// A value read from the database that the service cannot understand (an unknown status, a malformed date).
    pub(crate) fn undecodable(what: impl std::fmt::Display) -> Error {
        Error(sqlx::Error::Decode(what.to_string().into()))
    }

    /// Whether the database could not store what it was asked to ([`write_health::is_storage_failure`]).
    pub fn is_storage_failure(&self) -> bool {
        write_health::is_storage_failure(&self.0)
    }
}

/// Whether a driver error means the database cannot be reached right now (stopped, restarting, every connection
/// failing), not that a statement failed: the same request may succeed a little later.
///
/// A write that failed for want of storage (a full disk: [`write_health::is_storage_failure`]) counts too: nothing was
/// written, and it may succeed once space is back.
pub(super) fn is_unavailable(err: &sqlx::Error) -> bool {
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

/// Whether an error that may wrap a database error means the database is out of reach ([`ErrorKind::Unavailable`]).
pub fn is_unavailable_cause(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<Error>().is_some_and(|e| e.kind() == ErrorKind::Unavailable)
            || cause.downcast_ref::<sqlx::Error>().is_some_and(is_unavailable)
    })
}
