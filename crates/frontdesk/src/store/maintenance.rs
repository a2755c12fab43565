//! Whole-database work for operators: the SQLite online backup and its verification, the "in use" mark that keeps a
//! restore from replacing a database under a running process, and the migration status that `frontdesk check`
//! reports.

use std::fs::File;
use std::path::Path;

use anyhow::Context;
use sqlx::{Connection, Row};

use super::sql::Conditions;
use super::{Db, Engine, StoreResult};
use crate::store::schema::{Guests, Reservations};
use crate::store::statement::{rows, statement, Expr, ExprTrait, Sql};
use crate::store::{query, query_with, Conn};

/// Marks a SQLite file as in use by this process (a shared advisory lock, released by the kernel when the process
/// ends, however it ends). Any number of processes may hold it; [`lock_for_restore`] needs it free.
pub fn mark_in_use(path: &Path) -> anyhow::Result<File> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock_shared() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            anyhow::bail!("{} is being restored (frontdesk restore); try again when it has finished", path.display())
        }
        Err(std::fs::TryLockError::Error(err)) => Err(err).context("marking the database in use"),
    }
}

/// The exclusive lock a restore holds on the database it replaces: refused while any Frontdesk process has the
/// database open. (A process other than Frontdesk, such as the `sqlite3` shell, is not seen.)
pub fn lock_for_restore(path: &Path) -> anyhow::Result<Option<File>> {
    if !path.exists() {
        return Ok(None);
    }
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "{} is in use by a running frontdesk process; stop every process that uses it (serve, migrate, admin, \
             backup), then restore",
            path.display()
        ),
        Err(std::fs::TryLockError::Error(err)) => Err(err).context("locking the database for the restore"),
    }
}

/// Writes a consistent copy of the SQLite database to `target` while the service keeps serving: `VACUUM INTO` reads
/// the whole database in one read transaction (the copy is the database as of one moment; in WAL mode the writer
/// is not blocked) and writes a compacted file.
pub async fn vacuum_into(db: &Db, target: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(db.engine() == Engine::Sqlite, "VACUUM INTO is SQLite's");
    let target = target.to_str().context("the backup path must be valid UTF-8")?;
    let mut conn = db.read().await?;
    let mut c = Conditions::new(Engine::Sqlite);
    let sql = format!("VACUUM INTO {}", c.bind(target));
    query_with(&sql, c).execute(&mut conn).await.context("writing the backup")?;
    Ok(())
}

/// What a verified SQLite file holds.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSummary {
    pub integrity_check: String,
    pub migrations: i64,
    pub organizations: i64,
    pub hotels: i64,
    pub guests: i64,
    pub reservations: i64,
    pub pending_webhook_events: i64,
}

/// Opens a SQLite file read-only and checks it: `PRAGMA integrity_check` must answer `ok` and the file must be a
/// Frontdesk database (it has applied migrations); then counts what it holds.
pub async fn verify_sqlite_file(path: &Path) -> anyhow::Result<FileSummary> {
    anyhow::ensure!(path.is_file(), "{} is not a file", path.display());
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).read_only(true);
    let mut conn =
        sqlx::SqliteConnection::connect_with(&options).await.with_context(|| format!("opening {}", path.display()))?;
    let problems: Vec<String> = sqlx::query("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("{} is not a SQLite database", path.display()))?
        .iter()
        .map(|row| row.try_get::<String, _>(0))
        .collect::<Result<_, _>>()?;
    let integrity_check = problems.join("; ");
    anyhow::ensure!(integrity_check == "ok", "{} fails the integrity check: {integrity_check}", path.display());
    let count = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql);
    let migrations = count("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut conn)
        .await
        .with_context(|| format!("{} is not a Frontdesk database (no migrations table)", path.display()))?;
    let summary = FileSummary {
        integrity_check,
        migrations,
        organizations: count("SELECT count(*) FROM organizations").fetch_one(&mut conn).await?,
        hotels: count("SELECT count(*) FROM hotels").fetch_one(&mut conn).await?,
        guests: count("SELECT count(*) FROM guests").fetch_one(&mut conn).await?,
        reservations: count("SELECT count(*) FROM reservations").fetch_one(&mut conn).await?,
        pending_webhook_events: count("SELECT count(*) FROM outbox_events").fetch_one(&mut conn).await?,
    };
    conn.close().await?;
    Ok(summary)
}

/// The reservations written before references existed (migration 0014) that have none yet, at most `limit`:
/// (id, organization id). The domain draws their references ([`set_reference`]).
pub async fn without_reference(conn: &mut Conn, limit: i64) -> StoreResult<Vec<(String, String)>> {
    let select = Sql::select()
        .columns([Reservations::Id, Reservations::OrganizationId])
        .from(Reservations::Table)
        .and_where(Expr::col(Reservations::Reference).is_null())
        .limit(rows(limit))
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter().map(|row| Ok((row.try_get("id")?, row.try_get("organization_id")?))).collect::<StoreResult<_>>()
}

pub async fn set_reference(conn: &mut Conn, id: &str, reference: &str) -> StoreResult<()> {
    let update = Sql::update()
        .table(Reservations::Table)
        .value(Reservations::Reference, reference)
        .and_where(Expr::col(Reservations::Id).eq(id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Fills what a migration added but SQL alone cannot compute for rows written before it: each guest's phone search
/// key. Runs after the migrations, in batches of its own transactions; a database with nothing to fill costs an
/// indexed read. (Reservations' references follow the domain's rule for drawing them: `domain::migrate`.)
pub async fn backfill(db: &Db) -> anyhow::Result<()> {
    const BATCH: u64 = 500;
    loop {
        let mut tx = db.begin_write().await?;
        let select = Sql::select()
            .columns([Guests::Id, Guests::Phone])
            .from(Guests::Table)
            .and_where(Expr::col(Guests::Phone).is_not_null())
            .and_where(Expr::col(Guests::PhoneDigitsReversed).is_null())
            .limit(BATCH)
            .take();
        let rows = statement(db.engine(), &select).fetch_all(tx.conn()).await?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            let (id, phone): (String, String) = (row.try_get("id")?, row.try_get("phone")?);
            // A number without digits gets an empty key, so that it is not read again.
            let key = super::guests::phone_key(Some(&phone)).unwrap_or_default();
            let update = Sql::update()
                .table(Guests::Table)
                .value(Guests::PhoneDigitsReversed, key)
                .and_where(Expr::col(Guests::Id).eq(id))
                .take();
            statement(db.engine(), &update).execute(tx.conn()).await?;
        }
        tx.commit().await?;
    }
    Ok(())
}

/// Migrations this binary knows and how many of them the database has applied.
pub struct MigrationStatus {
    pub known: usize,
    pub applied: usize,
    /// Applied versions this binary does not know: the database was migrated by a newer Frontdesk.
    pub unknown: usize,
}

pub async fn migration_status(db: &Db) -> anyhow::Result<MigrationStatus> {
    let known: Vec<i64> = db.migrator().iter().map(|m| m.version).collect();
    let mut conn = db.read().await?;
    let applied: Vec<i64> = match query("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&mut conn).await
    {
        Ok(rows) => rows.iter().map(|row| row.try_get(0)).collect::<StoreResult<_>>()?,
        // No migrations table: a database nothing was applied to yet.
        Err(err) if err.kind() == super::ErrorKind::Other => Vec::new(),
        Err(err) => return Err(err.into()),
    };
    Ok(MigrationStatus {
        known: known.len(),
        applied: applied.iter().filter(|v| known.contains(v)).count(),
        unknown: applied.iter().filter(|v| !known.contains(v)).count(),
    })
}
