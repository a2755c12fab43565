//! Files the audit log's newest entries into the log ([`crate::store::audit_log::file_recent`]). On SQLite a write
//! appends its entries to a table without indexes, so that SQLite's one writer does not write the log's indexes
//! inside every write's lock; this job moves them in batches. Every read finds an entry whether or not it has been
//! filed: filing only keeps the unindexed table, which reads scan, small. On PostgreSQL writes file their entries
//! themselves and each round finds nothing.

use std::time::Duration;

use super::periodic::Periodic;
use crate::store::{audit_log, Db};

/// How often the newest entries are filed: at a thousand writes a second, a round files a thousand entries, and
/// the reads that scan the unfiled ones scan no more.
pub const EVERY: Duration = Duration::from_secs(1);

/// Starts filing every `every`.
pub fn spawn(db: Db, every: Duration) -> Periodic {
    Periodic::spawn(every, move || {
        let db = db.clone();
        async move {
            if let Err(err) = audit_log::file_recent(&db).await {
                tracing::warn!(error = ?err, "could not file the audit log's newest entries; the next round will");
            }
        }
    })
}
