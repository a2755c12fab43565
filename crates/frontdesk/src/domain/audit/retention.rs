//! Keeping the audit log for its retention: entries whose `keep_until` has passed are deleted by the pruning job
//! (`worker::audit_retention`), in batches.

use chrono::{DateTime, Utc};

use crate::domain::change::Change;
use crate::domain::Result;
use crate::model::changes::{Job, Writer};
use crate::store::{self, Db};

/// Entries deleted per statement by [`prune`], so that a long backlog never holds the write lock for long.
const PRUNE_BATCH: u64 = 1000;

/// Deletes the entries whose retention has ended; answers how many.
pub async fn prune(db: &Db, now: DateTime<Utc>) -> Result<u64> {
    let mut pruned = 0;
    loop {
        let mut tx = Change::begin_as(db, Writer::Job(Job::AuditRetention)).await?;
        let deleted = store::audit_log::prune(tx.conn(), now, PRUNE_BATCH).await?;
        tx.commit().await?;
        pruned += deleted;
        if deleted < PRUNE_BATCH {
            return Ok(pruned);
        }
    }
}
