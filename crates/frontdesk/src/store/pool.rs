//! Opening a database: the pools a [`Db`] reads and writes through, their settings, and the first connection that
//! says at once why a database cannot be opened.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use sqlx::any::AnyConnectOptions;
use sqlx::pool::PoolOptions;
use sqlx::{Any, AnyConnection, AnyPool, Executor};

use super::write_health::WriteHealth;
use super::{maintenance, native, recent, Db, Engine};

/// How long opening a database may take before the command says why it cannot.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest a request waits for a PostgreSQL connection. When the server is down every connection attempt fails, and
/// the request is answered 503 after this long instead of hanging for the whole request timeout; under load, waits
/// for a connection are milliseconds.
pub const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A pooled connection idle at least this long is checked with a round trip before it is handed out.
pub const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

/// The settings every pool starts from. sqlx's default checks each connection it hands out with a round trip to the
/// database, and it makes another when the connection comes back: on a one-statement read that is three round trips
/// for one answer. A connection that came back moments ago has just answered (the check on return proves it), so only
/// one idle for [`CHECK_AFTER_IDLE`] or more (the server may have restarted or dropped it since) is checked; one that
/// fails its check is closed and another taken, as with sqlx's default.
fn pool_options<DB: sqlx::Database>() -> PoolOptions<DB> {
    PoolOptions::new().test_before_acquire(false).before_acquire(|conn, meta| {
        Box::pin(async move {
            if meta.idle_for >= CHECK_AFTER_IDLE {
                sqlx::Connection::ping(conn).await?;
            }
            Ok(true)
        })
    })
}

/// [`pool_options`] for a pool that writes: a connection that comes back still inside a transaction is closed, not
/// reused. That happens when a transaction's ROLLBACK fails: SQLite rolls a transaction back by itself when a write
/// finds the disk full (or fails with an I/O error) and then refuses the ROLLBACK that sqlx sends when the
/// transaction is dropped, so sqlx goes on counting it open, and every later `BEGIN` on that connection would fail
/// ("begin_with at non-zero transaction depth") until the process restarted. Such a write also counts as one that
/// failed for want of storage (`health`).
fn writer_pool_options(health: Arc<WriteHealth>) -> PoolOptions<Any> {
    pool_options::<Any>().after_release(move |conn, _| {
        let health = health.clone();
        Box::pin(async move {
            if !sqlx::Connection::is_in_transaction(conn) {
                return Ok(true);
            }
            // A dropped transaction queues its ROLLBACK on the connection; a round trip runs it.
            sqlx::Connection::ping(conn).await?;
            if sqlx::Connection::is_in_transaction(conn) {
                tracing::warn!("a write transaction could not be rolled back; its connection is closed");
                health.failed();
                return Ok(false);
            }
            Ok(true)
        })
    })
}

/// Whether opening a database may create it. Only SQLite creates (its file); a PostgreSQL database must exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfMissing {
    Create,
    /// For commands that work on an existing database (`admin`): a mistyped path must not become a new, empty one.
    Refuse,
}

/// The file a SQLite URL names, made absolute; `None` for in-memory databases and other engines.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return None;
    }
    let path = std::path::PathBuf::from(path);
    Some(match std::env::current_dir() {
        Ok(dir) if path.is_relative() => dir.join(path),
        _ => path,
    })
}

/// The pools of an open database, as its engine opened them.
struct Pools {
    read: AnyPool,
    write: AnyPool,
    /// The engine's own driver, for the hottest reads ([`native`]).
    native: native::NativePool,
    /// SQLite: the shared lock on the database file ([`maintenance::mark_in_use`]).
    in_use: Option<Arc<std::fs::File>>,
}

impl Db {
    /// Connects, with per-engine settings. For SQLite the file is created if missing and every connection runs
    /// in WAL mode with foreign keys on and a busy timeout.
    /// Opens the database at `url`, creating a missing SQLite file.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Db> {
        Db::open(url, max_connections, IfMissing::Create).await
    }

    /// Opens the database at `url`. A PostgreSQL server that cannot be reached is reported within
    /// [`CONNECT_TIMEOUT`], naming the server and the reason.
    pub async fn open(url: &str, max_connections: u32, if_missing: IfMissing) -> anyhow::Result<Db> {
        sqlx::any::install_default_drivers();
        let engine = Engine::from_url(url)?;
        refuse_a_missing_file(engine, url, if_missing)?;
        let url = with_sqlite_mode(engine, url, if_missing);
        let options = AnyConnectOptions::from_str(&url).context("parsing the database URL")?;
        let (hot_reads, other_reads) = native::split_connections(max_connections);
        let write_health = Arc::new(WriteHealth::default());
        let pools = match engine {
            Engine::Sqlite => open_sqlite(&url, options, hot_reads, other_reads, &write_health).await?,
            Engine::Postgres => open_postgres(&url, options, hot_reads, other_reads, &write_health).await?,
        };
        Ok(Db {
            engine,
            read: pools.read,
            write: pools.write,
            outbox_signal: Arc::default(),
            _in_use: pools.in_use,
            waiting: Arc::default(),
            writes: recent::Writes::default(),
            recent: Arc::default(),
            native: pools.native,
            write_health,
        })
    }

    /// Which database `url` names, for people (no password): the SQLite file's full path, or PostgreSQL's server,
    /// database and user.
    pub fn describe(url: &str) -> String {
        if let Some(path) = sqlite_file(url) {
            return format!("SQLite file {}", path.display());
        }
        match url::Url::parse(url) {
            Ok(parsed) if parsed.scheme().starts_with("postgres") => format!(
                "PostgreSQL at {}:{} (database {}, user {})",
                parsed.host_str().unwrap_or("localhost"),
                parsed.port().unwrap_or(5432),
                parsed.path().trim_start_matches('/'),
                if parsed.username().is_empty() { "default" } else { parsed.username() },
            ),
            _ => "an in-memory SQLite database".to_string(),
        }
    }
}

/// For commands that work on an existing database ([`IfMissing::Refuse`]): a SQLite file that is not there is an
/// error that says where it was looked for, not a new, empty database.
fn refuse_a_missing_file(engine: Engine, url: &str, if_missing: IfMissing) -> anyhow::Result<()> {
    if let (Engine::Sqlite, IfMissing::Refuse, Some(path)) = (engine, if_missing, sqlite_file(url)) {
        anyhow::ensure!(
            path.exists(),
            "there is no database at {} ({url}); this command never creates one: run it where the database is, \
             pass --database-url (or FRONTDESK_DATABASE_URL), or create it with `frontdesk migrate`",
            path.display()
        );
    }
    Ok(())
}

/// A SQLite file's URL with the `mode=` that `if_missing` asks for (`rwc` creates the file, `rw` does not), unless
/// it names its own or the database is in memory; any other URL as it is.
fn with_sqlite_mode(engine: Engine, url: &str, if_missing: IfMissing) -> String {
    match engine {
        Engine::Sqlite if !url.contains("mode=") && !url.contains(":memory:") => {
            let sep = if url.contains('?') { '&' } else { '?' };
            let mode = match if_missing {
                IfMissing::Create => "rwc",
                IfMissing::Refuse => "rw",
            };
            format!("{url}{sep}mode={mode}")
        }
        _ => url.to_string(),
    }
}

/// SQLite: one writer connection and the readers, all with the engine's settings, the engine's own driver for the
/// hottest reads, and the lock that tells `frontdesk restore` the file is in use.
async fn open_sqlite(
    url: &str,
    options: AnyConnectOptions,
    hot_reads: u32,
    other_reads: u32,
    write_health: &Arc<WriteHealth>,
) -> anyhow::Result<Pools> {
    try_sqlite_once(url, &options).await?;
    // One writer connection: SQLite allows a single writer at a time anyway, and queueing in the
    // pool is fair and cheap where lock contention inside SQLite would spin on busy_timeout.
    let write = with_sqlite_pragmas(writer_pool_options(write_health.clone()))
        .max_connections(1)
        .connect_with(options.clone())
        .await
        .context("opening the SQLite database")?;
    let read = with_sqlite_pragmas(pool_options::<Any>())
        .max_connections(other_reads.max(2))
        .connect_with(options)
        .await
        .context("opening the SQLite database")?;
    let native = native::NativePool::sqlite(url, hot_reads).context("opening the SQLite database")?;
    let in_use = match sqlite_file(url) {
        Some(path) => Some(Arc::new(maintenance::mark_in_use(&path)?)),
        None => None,
    };
    Ok(Pools { read, write, native, in_use })
}

/// The pool would retry a file it cannot use (not a database, unreadable) until its acquire timeout and then say
/// only that it timed out; one direct attempt first fails at once, with the reason.
async fn try_sqlite_once(url: &str, options: &AnyConnectOptions) -> anyhow::Result<()> {
    let file = Db::describe(url);
    let attempt = async {
        let mut conn = <AnyConnection as sqlx::Connection>::connect_with(options).await?;
        conn.execute(native::SQLITE_PRAGMAS).await?;
        sqlx::Connection::close(conn).await
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => anyhow::bail!("cannot open {file}: {err}"),
        Err(_) => anyhow::bail!("cannot open {file}: no answer within {} s", CONNECT_TIMEOUT.as_secs()),
    }
}

/// Every SQLite connection of a pool runs [`native::SQLITE_PRAGMAS`] when it opens.
fn with_sqlite_pragmas(options: PoolOptions<Any>) -> PoolOptions<Any> {
    options.acquire_timeout(Duration::from_secs(30)).after_connect(|conn, _| {
        Box::pin(async move {
            // Reads through a memory map (up to 1 GB of the file) skip a system call per page, which
            // makes a 100-row list of a million-row table 3x faster; the mapped pages are the OS
            // page cache, shared and reclaimable, not the process's own memory. The 16 MB page cache
            // (SQLite's default is 2 MB) holds the rest of the hot index pages.
            conn.execute(native::SQLITE_PRAGMAS).await?;
            Ok(())
        })
    })
}

/// PostgreSQL: one pool for reads and writes, and the engine's own driver for the hottest reads.
async fn open_postgres(
    url: &str,
    options: AnyConnectOptions,
    hot_reads: u32,
    other_reads: u32,
    write_health: &Arc<WriteHealth>,
) -> anyhow::Result<Pools> {
    try_postgres_once(url, &options).await?;
    let native = native::NativePool::postgres(url, hot_reads).context("connecting to PostgreSQL")?;
    let pool = writer_pool_options(write_health.clone())
        .max_connections(other_reads)
        .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .context("connecting to PostgreSQL")?;
    Ok(Pools { read: pool.clone(), write: pool, native, in_use: None })
}

/// The pool would retry silently until its acquire timeout and then say only that it timed out; one direct
/// attempt first gives the real reason (refused, unknown host, authentication, no database).
async fn try_postgres_once(url: &str, options: &AnyConnectOptions) -> anyhow::Result<()> {
    let server = Db::describe(url);
    match tokio::time::timeout(CONNECT_TIMEOUT, <AnyConnection as sqlx::Connection>::connect_with(options)).await {
        Ok(Ok(conn)) => {
            drop(conn);
            Ok(())
        }
        Ok(Err(err)) => anyhow::bail!("cannot connect to {server}: {err}"),
        Err(_) => anyhow::bail!("cannot connect to {server}: no answer within {} s", CONNECT_TIMEOUT.as_secs()),
    }
}
