//! Folds the reservation count changes the triggers append into their counters
//! ([`crate::store::reservation_counts`]), so that a list's total adds up a few rows, not every write since the
//! service started. A total is exact whether or not a fold has run; folding only keeps it cheap.

use std::time::Duration;

use super::periodic::Periodic;
use crate::store::{reservation_counts, Db};

/// How often the changes are folded: often enough that a busy hotel's unfolded changes stay a few thousand rows.
pub const FOLD_EVERY: Duration = Duration::from_secs(2);

/// Starts folding every `every`.
pub fn spawn(db: Db, every: Duration) -> Periodic {
    Periodic::spawn(every, move || {
        let db = db.clone();
        async move {
            if let Err(err) = reservation_counts::fold(&db).await {
                tracing::warn!(error = ?err, "could not fold the reservation count changes; the next round will");
            }
        }
    })
}
