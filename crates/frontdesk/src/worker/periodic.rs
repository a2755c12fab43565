//! A job that `frontdesk serve` runs in rounds beside the HTTP server: a round at once, then one every so often,
//! until it is stopped. Each job (the count fold, the end of day, the audit log's filing and pruning) says what a
//! round does and how often; a round that fails logs why, and the next one tries again.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running job.
pub struct Periodic {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Periodic {
    /// Runs `round` now and then every `every` after the last one ended, until [`Periodic::stop`].
    pub fn spawn<F, R>(every: Duration, mut round: F) -> Periodic
    where
        F: FnMut() -> R + Send + 'static,
        R: Future<Output = ()> + Send + 'static,
    {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                round().await;
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = stopped.changed() => return,
                }
            }
        });
        Periodic { stop, task }
    }

    /// Stops after the round under way, if any.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    fn counting(every: Duration) -> (Periodic, Arc<AtomicUsize>) {
        let rounds = Arc::new(AtomicUsize::new(0));
        let counted = rounds.clone();
        let job = Periodic::spawn(every, move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        (job, rounds)
    }

    #[tokio::test]
    async fn runs_at_once_then_every_so_often_and_not_after_it_stopped() {
        let (hourly, once) = counting(Duration::from_secs(3600));
        let (often, rounds) = counting(Duration::from_millis(10));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(once.load(Ordering::SeqCst), 1, "the first round runs at once, the next an hour later");
        assert!(rounds.load(Ordering::SeqCst) >= 3, "every 10 ms");
        often.stop().await;
        let stopped_at = rounds.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), stopped_at, "no round after stop");
        hourly.stop().await;
    }
}
