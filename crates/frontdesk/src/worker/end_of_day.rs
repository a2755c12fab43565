//! Closes the hotels' business days when their end of day has come ([`crate::domain::finance::end_of_day`]): every
//! minute, in every process; the day's lease lets one of them close it.

use std::time::Duration;

use super::periodic::Periodic;
use crate::domain::finance::end_of_day;
use crate::store::Db;

/// How often the job looks for a day to close.
pub const EVERY: Duration = Duration::from_secs(60);

/// Starts looking for days to close every `every`.
pub fn spawn(db: Db, every: Duration) -> Periodic {
    Periodic::spawn(every, move || {
        let db = db.clone();
        async move {
            match end_of_day::run_due(&db, chrono::Utc::now()).await {
                Ok(closed) => {
                    for day in closed {
                        tracing::info!(hotel = %day.hotel_id, closed = %day.closed, posted = day.lines_posted,
                            no_shows = day.no_shows.len(), "closed a business day");
                    }
                }
                Err(err) => tracing::warn!(error = %err, "could not close the business days; the next round will"),
            }
        }
    })
}
