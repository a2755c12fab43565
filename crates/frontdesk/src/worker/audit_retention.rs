//! Deletes the audit log's entries whose retention has ended (`--audit-retention-days`, kept on each entry as
//! `keep_until`), so that the log does not grow for ever. The database itself refuses to delete an entry sooner
//! (migration 0030), so this job cannot shorten what the log keeps. Several processes may run it at once: each
//! deletes what has expired, and a second deletes nothing.

use std::time::Duration;

use super::periodic::Periodic;
use crate::domain::audit;
use crate::store::Db;

/// How often expired entries are looked for: retention is counted in days, so hourly is prompt enough.
pub const EVERY: Duration = Duration::from_secs(3600);

/// Starts pruning every `every`.
pub fn spawn(db: Db, every: Duration) -> Periodic {
    Periodic::spawn(every, move || {
        let db = db.clone();
        async move {
            match audit::retention::prune(&db, chrono::Utc::now()).await {
                Ok(0) => {}
                Ok(pruned) => tracing::info!(pruned, "deleted audit log entries whose retention ended"),
                Err(err) => tracing::warn!(error = ?err, "could not prune the audit log; the next round will"),
            }
        }
    })
}
