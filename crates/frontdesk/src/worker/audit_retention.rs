//! Deletes the audit log's entries whose retention has ended (`--audit-retention-days`, kept on each entry as
//! `keep_until`), so that the log does not grow for ever. The database itself refuses to delete an entry sooner
//! (migration 0030), so this job cannot shorten what the log keeps. Several processes may run it at once: each
//! deletes what has expired, and a second deletes nothing.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::domain::audit;
use crate::store::Db;

/// How often expired entries are looked for: retention is counted in days, so hourly is prompt enough.
pub const EVERY: Duration = Duration::from_secs(3600);

/// The running job.
pub struct AuditRetention {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl AuditRetention {
    pub fn spawn(db: Db, every: Duration) -> AuditRetention {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                match audit::retention::prune(&db, chrono::Utc::now()).await {
                    Ok(0) => {}
                    Ok(pruned) => tracing::info!(pruned, "deleted audit log entries whose retention ended"),
                    Err(err) => tracing::warn!(error = ?err, "could not prune the audit log; the next round will"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = stopped.changed() => return,
                }
            }
        });
        AuditRetention { stop, task }
    }

    /// Stops after the round under way, if any.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
