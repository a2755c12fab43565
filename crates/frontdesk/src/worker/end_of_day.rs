//! Closes the hotels' business days when their end of day has come ([`crate::domain::finance::end_of_day`]): every
//! minute, in every process; the day's lease lets one of them close it.

use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::domain::finance::end_of_day;
use crate::store::Db;

/// How often the job looks for a day to close.
pub const EVERY: Duration = Duration::from_secs(60);

/// The running job.
pub struct EndOfDay {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl EndOfDay {
    pub fn spawn(db: Db, every: Duration) -> EndOfDay {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                match end_of_day::run_due(&db, chrono::Utc::now()).await {
                    Ok(closed) => {
                        for day in closed {
                            tracing::info!(hotel = %day.hotel_id, closed = %day.closed, posted = day.lines_posted,
                                no_shows = day.no_shows.len(), "closed a business day");
                        }
                    }
                    Err(err) => tracing::warn!(error = %err, "could not close the business days; the next round will"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = stopped.changed() => return,
                }
            }
        });
        EndOfDay { stop, task }
    }

    /// Stops after the round under way, if any.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
