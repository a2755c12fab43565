//! Folds the reservation count changes the triggers append into their counters
//! ([`crate::store::reservation_counts`]), so that a list's total adds up a few rows, not every write since the
//! service started. A total is exact whether or not a fold has run; folding only keeps it cheap.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::store::{reservation_counts, Db};

/// How often the changes are folded: often enough that a busy hotel's unfolded changes stay a few thousand rows.
pub const FOLD_EVERY: Duration = Duration::from_secs(2);

/// The running folder.
pub struct CountFolder {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl CountFolder {
    pub fn spawn(db: Db, every: Duration) -> CountFolder {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                if let Err(err) = reservation_counts::fold(&db).await {
                    tracing::warn!(error = ?err, "could not fold the reservation count changes; the next round will");
                }
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = stopped.changed() => return,
                }
            }
        });
        CountFolder { stop, task }
    }

    /// Stops after the fold under way, if any.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
