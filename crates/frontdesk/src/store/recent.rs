//! Recent answers of the hottest reads (an API key by its digest, a public hotel with its availability version),
//! reused for a few milliseconds so that an endpoint answering thousands of requests a second does not ask the
//! database the same question for each of them.
//!
//! When an answer may be reused, and why that is safe:
//! * Never after a write of this process: every [`super::WriteTx`] that commits makes all earlier answers unusable
//!   ([`Writes`]), so a client that changed something through a process reads its change through that process at
//!   once, as it always did.
//! * Never once it is [`MAX_AGE`] old, counted from before the read started: that is the bound on how long a change
//!   made by another process on the same database, or outside the service, can go unseen. A polling bound, not a
//!   notification, because it holds whatever happens to a notification channel (a dropped `LISTEN` connection, a
//!   second SQLite process) and costs one read per key per [`MAX_AGE`] at most.
//! * Only found records are kept: a flood of unknown keys can neither fill the memory (it is bounded anyway) nor make
//!   a record that appears later look missing.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an answer read from the database may be reused at most.
pub const MAX_AGE: Duration = Duration::from_millis(5);

/// Most answers one [`Recent`] holds; past it, all are dropped (they would be re-read within [`MAX_AGE`] anyway).
const CAPACITY: usize = 4096;

/// How many write transactions this process has committed: an answer read before the latest commit is not reused.
#[derive(Clone, Debug, Default)]
pub struct Writes(Arc<AtomicU64>);

impl Writes {
    pub fn committed(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

struct Entry<V> {
    writes: u64,
    read_at: Instant,
    value: V,
}

/// Recent answers of one kind of read, by key.
pub struct Recent<K, V> {
    entries: Mutex<HashMap<K, Entry<V>>>,
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent { entries: Mutex::new(HashMap::new()) }
    }
}

impl<K, V> std::fmt::Debug for Recent<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recent(…)")
    }
}

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    /// The answer for `key`: a recent one while it may be reused, else what `read` answers now (kept when found).
    pub async fn get_or_read<E, F, Fut>(&self, writes: &Writes, key: &K, read: F) -> Result<Option<V>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<V>, E>>,
    {
        // Both taken before the read: a write committed while it runs, or its duration, can only shorten the reuse.
        let (writes_before, read_at) = (writes.count(), Instant::now());
        {
            let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(entry) = entries.get(key) {
                if entry.writes == writes_before && read_at.duration_since(entry.read_at) < MAX_AGE {
                    return Ok(Some(entry.value.clone()));
                }
            }
        }
        let value = read().await?;
        if let Some(value) = &value {
            let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if entries.len() >= CAPACITY && !entries.contains_key(key) {
                entries.clear();
            }
            entries.insert(key.clone(), Entry { writes: writes_before, read_at, value: value.clone() });
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(recent: &Recent<u32, u32>, writes: &Writes, value: Option<u32>) -> Option<u32> {
        recent.get_or_read(writes, &1, || async { Ok::<_, ()>(value) }).await.unwrap()
    }

    #[tokio::test]
    async fn answers_are_reused_only_until_a_write_or_max_age() {
        let (recent, writes) = (Recent::default(), Writes::default());
        assert_eq!(read(&recent, &writes, Some(1)).await, Some(1));
        // Reused: the database would say 2 now.
        assert_eq!(read(&recent, &writes, Some(2)).await, Some(1));
        writes.committed();
        assert_eq!(read(&recent, &writes, Some(2)).await, Some(2));
        tokio::time::sleep(MAX_AGE).await;
        assert_eq!(read(&recent, &writes, Some(3)).await, Some(3));
    }

    #[tokio::test]
    async fn missing_records_are_not_remembered() {
        let (recent, writes) = (Recent::default(), Writes::default());
        assert_eq!(read(&recent, &writes, None).await, None);
        assert_eq!(read(&recent, &writes, Some(1)).await, Some(1));
    }

    #[tokio::test]
    async fn an_answer_read_across_a_write_is_not_reused() {
        let (recent, writes) = (Recent::default(), Writes::default());
        let value = recent
            .get_or_read(&writes, &1, || async {
                // A write of this process commits while the read is under way.
                writes.committed();
                Ok::<_, ()>(Some(1))
            })
            .await;
        assert_eq!(value, Ok(Some(1)));
        assert_eq!(read(&recent, &writes, Some(2)).await, Some(2));
    }
}
