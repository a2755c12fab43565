//! `frontdesk backup` and `frontdesk restore` for SQLite. PostgreSQL has its own tools (`pg_dump`, `pg_restore`;
//! docs/operations.md says what the service needs after a restore).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::store::maintenance::{self, FileSummary};
use crate::store::{sqlite_file, Db, Engine};

const POSTGRES_BACKUP: &str = "for PostgreSQL use pg_dump and pg_restore (docs/operations.md, \"Backups\")";

/// A backup that was written and verified.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupOut {
    pub path: PathBuf,
    pub bytes: u64,
    #[serde(flatten)]
    pub summary: FileSummary,
}

/// Writes a consistent copy of the database to `target` while the service keeps serving, and verifies it before
/// it reports success. The copy is written under a temporary name and renamed only once verified, so a file at
/// `target` is always a complete, checked backup.
pub async fn backup(db: &Db, target: &Path) -> anyhow::Result<BackupOut> {
    anyhow::ensure!(db.engine() == Engine::Sqlite, "`frontdesk backup` copies SQLite databases; {POSTGRES_BACKUP}");
    anyhow::ensure!(!target.exists(), "{} exists already; a backup never overwrites a file", target.display());
    let partial = with_suffix(target, "partial");
    let _ = std::fs::remove_file(&partial);
    // Whatever fails (the disk filling up while the copy is written, the check, the rename), the partial file goes:
    // a failed backup must not use up the space it ran out of, nor be taken for a backup.
    let removed = |err: anyhow::Error, what: &str| {
        let _ = std::fs::remove_file(&partial);
        err.context(format!("{what}; the partial backup {} was removed", partial.display()))
    };
    maintenance::vacuum_into(db, &partial).await.map_err(|err| removed(err, "the backup could not be written"))?;
    let summary =
        maintenance::verify_sqlite_file(&partial).await.map_err(|err| removed(err, "the backup did not verify"))?;
    std::fs::rename(&partial, target)
        .map_err(|err| removed(err.into(), &format!("the backup could not be moved to {}", target.display())))?;
    let bytes = std::fs::metadata(target)?.len();
    Ok(BackupOut { path: absolute(target), bytes, summary })
}

/// Replaces the SQLite database named by `database_url` with the backup at `source`: the backup is verified first,
/// and the restore is refused while any Frontdesk process has the database open. The caller opens (and migrates)
/// the restored database afterwards.
pub async fn restore(database_url: &str, source: &Path) -> anyhow::Result<FileSummary> {
    ensure_sqlite(database_url)?;
    let target = sqlite_file(database_url).context("restore needs a database file, not an in-memory database")?;
    let summary = maintenance::verify_sqlite_file(source).await.context("checking the backup")?;
    let lock = maintenance::lock_for_restore(&target)?;
    let partial = with_suffix(&target, "restoring");
    std::fs::copy(source, &partial).with_context(|| format!("copying {}", source.display()))?;
    std::fs::File::open(&partial)?.sync_all()?;
    // The old database's write-ahead log belongs to the old file: left beside the new one, SQLite would replay
    // it into the restored database.
    for stale in [with_suffix(&target, "wal"), with_suffix(&target, "shm")] {
        match std::fs::remove_file(&stale) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err).with_context(|| format!("removing {}", stale.display())),
        }
    }
    std::fs::rename(&partial, &target).with_context(|| format!("replacing {}", target.display()))?;
    drop(lock);
    Ok(summary)
}

/// Backups and restores are SQLite's; checked before anything is opened, so that a PostgreSQL database is never
/// touched by them.
pub fn ensure_sqlite(database_url: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        Engine::from_url(database_url)? == Engine::Sqlite,
        "`frontdesk backup` and `frontdesk restore` work on SQLite databases; {POSTGRES_BACKUP}"
    );
    Ok(())
}

/// `path` with `-suffix` appended to its file name (SQLite's own naming: `frontdesk.db-wal`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!("-{suffix}"));
    PathBuf::from(name)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
