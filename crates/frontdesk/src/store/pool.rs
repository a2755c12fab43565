//! Opening a database: the pools a [`Db`] reads and writes through (each engine's own driver, on deadpool), their
//! settings, and the first connection that says at once why a database cannot be opened.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use deadpool::managed::{PoolError, QueueMode};
use deadpool::Runtime;
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Database, Executor, Postgres, Sqlite};

use super::conn::{Conn, Handle};
use super::connection_manager::ConnectionManager;
pub use super::connection_manager::CHECK_AFTER_IDLE;
use super::write_health::WriteHealth;
use super::{maintenance, recent, Db, Engine, StoreResult};

/// How long opening a database may take before the command says why it cannot.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest a request waits for a PostgreSQL connection. When the server is down every connection attempt fails, and
/// the request is answered 503 after this long instead of hanging for the whole request timeout; under load, waits
/// for a connection are milliseconds.
pub const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The SQLite settings every connection runs when it opens. Reads through a memory map (up to 1 GB of the file) skip
/// a system call per page, which makes a 100-row list of a million-row table 3x faster; the mapped pages are the OS
/// page cache, shared and reclaimable, not the process's own memory. The 16 MB page cache (SQLite's default is
/// 2 MB) holds the rest of the hot index pages.
pub(super) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
     PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; \
     PRAGMA cache_size = -16384; PRAGMA mmap_size = 1073741824;";

type EnginePool<DB> = deadpool::managed::Pool<ConnectionManager<DB>>;

/// A pool of one engine's own connections.
#[derive(Clone)]
pub(super) enum Pool {
    Postgres(EnginePool<Postgres>),
    Sqlite(EnginePool<Sqlite>),
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (open, idle, most) = self.size();
        f.debug_struct("Pool").field("open", &open).field("idle", &idle).field("most", &most).finish()
    }
}

fn engine_pool<DB: Database>(
    connector: ConnectionManager<DB>,
    max_connections: u32,
    wait: Duration,
) -> anyhow::Result<EnginePool<DB>>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    Ok(deadpool::managed::Pool::builder(connector)
        .max_size(max_connections.max(1) as usize)
        // The connection that came back last goes out first: under light load the same few connections (and the
        // same few PostgreSQL backends, with their caches and prepared plans warm) answer every request, where
        // first-in-first-out would walk through all of them in turn.
        .queue_mode(QueueMode::Lifo)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(wait))
        .create_timeout(Some(wait))
        .build()?)
}

impl Pool {
    /// A connection of this pool; waits at most the pool's wait for one to be free.
    pub(super) async fn get(&self) -> StoreResult<Conn> {
        Ok(match self {
            Pool::Postgres(pool) => Conn::new(Handle::Postgres(pool.get().await.map_err(pool_error)?)),
            Pool::Sqlite(pool) => Conn::new(Handle::Sqlite(pool.get().await.map_err(pool_error)?)),
        })
    }

    /// (connections open, idle, most).
    pub(super) fn size(&self) -> (u32, usize, u32) {
        let status = match self {
            Pool::Sqlite(pool) => pool.status(),
            Pool::Postgres(pool) => pool.status(),
        };
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (count(status.size), status.available, count(status.max_size))
    }

    /// Closes the pool: connections in use are closed when they come back.
    pub(super) fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close(),
            Pool::Postgres(pool) => pool.close(),
        }
    }
}

/// What waiting for a connection failed with, as sqlx's pool would say it.
fn pool_error(err: PoolError<sqlx::Error>) -> sqlx::Error {
    match err {
        PoolError::Backend(err) => err,
        PoolError::Timeout(_) => sqlx::Error::PoolTimedOut,
        PoolError::Closed => sqlx::Error::PoolClosed,
        err @ (PoolError::NoRuntimeSpecified | PoolError::PostCreateHook(_)) => {
            sqlx::Error::Configuration(err.to_string().into())
        }
    }
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
    read: Pool,
    write: Pool,
    /// SQLite: the shared lock on the database file ([`maintenance::mark_in_use`]).
    in_use: Option<Arc<std::fs::File>>,
}

impl Db {
    /// Opens the database at `url`, creating a missing SQLite file. For SQLite every connection runs in WAL mode with
    /// foreign keys on and a busy timeout ([`SQLITE_PRAGMAS`]).
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Db> {
        Db::open(url, max_connections, IfMissing::Create).await
    }

    /// Opens the database at `url`. A PostgreSQL server that cannot be reached is reported within
    /// [`CONNECT_TIMEOUT`], naming the server and the reason.
    pub async fn open(url: &str, max_connections: u32, if_missing: IfMissing) -> anyhow::Result<Db> {
        let engine = Engine::from_url(url)?;
        refuse_a_missing_file(engine, url, if_missing)?;
        let url = with_sqlite_mode(engine, url, if_missing);
        let write_health = Arc::new(WriteHealth::default());
        let pools = match engine {
            Engine::Sqlite => open_sqlite(&url, max_connections, &write_health).await?,
            Engine::Postgres => open_postgres(&url, max_connections, &write_health).await?,
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
            write_health,
            audit_retention_days: Db::AUDIT_RETENTION_DAYS,
        })
    }

    /// Keeps the audit log entries this process writes for `days` (see `--audit-retention-days`).
    pub fn with_audit_retention_days(mut self, days: u32) -> Db {
        self.audit_retention_days = days;
        self
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

/// SQLite: one writer connection and the readers, all with the engine's settings, and the lock that tells
/// `frontdesk restore` the file is in use.
async fn open_sqlite(url: &str, max_connections: u32, write_health: &Arc<WriteHealth>) -> anyhow::Result<Pools> {
    let options = SqliteConnectOptions::from_str(url).context("parsing the database URL")?;
    try_sqlite_once(url, &options).await?;
    let connector =
        |write_health| ConnectionManager { options: options.clone(), after_connect: SQLITE_PRAGMAS, write_health };
    // One writer connection: SQLite allows a single writer at a time anyway, and queueing in the pool is fair and
    // cheap where lock contention inside SQLite would spin on busy_timeout.
    let wait = Duration::from_secs(30);
    let write = engine_pool(connector(Some(write_health.clone())), 1, wait).context("opening the SQLite database")?;
    let read = engine_pool(connector(None), max_connections.max(2), wait).context("opening the SQLite database")?;
    let in_use = match sqlite_file(url) {
        Some(path) => Some(Arc::new(maintenance::mark_in_use(&path)?)),
        None => None,
    };
    Ok(Pools { read: Pool::Sqlite(read), write: Pool::Sqlite(write), in_use })
}

/// The pool would retry a file it cannot use (not a database, unreadable) until its wait ends and then say only
/// that it timed out; one direct attempt first fails at once, with the reason.
async fn try_sqlite_once(url: &str, options: &SqliteConnectOptions) -> anyhow::Result<()> {
    let file = Db::describe(url);
    let attempt = async {
        let mut conn = options.connect().await?;
        conn.execute(SQLITE_PRAGMAS).await?;
        conn.close().await
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => anyhow::bail!("cannot open {file}: {err}"),
        Err(_) => anyhow::bail!("cannot open {file}: no answer within {} s", CONNECT_TIMEOUT.as_secs()),
    }
}

/// PostgreSQL: one pool for reads and writes.
async fn open_postgres(url: &str, max_connections: u32, write_health: &Arc<WriteHealth>) -> anyhow::Result<Pools> {
    let options = PgConnectOptions::from_str(url).context("parsing the database URL")?;
    try_postgres_once(url, &options).await?;
    let connector = ConnectionManager { options, after_connect: "", write_health: Some(write_health.clone()) };
    let pool = engine_pool(connector, max_connections, POSTGRES_ACQUIRE_TIMEOUT).context("connecting to PostgreSQL")?;
    Ok(Pools { read: Pool::Postgres(pool.clone()), write: Pool::Postgres(pool), in_use: None })
}

/// The pool would retry silently until its wait ends and then say only that it timed out; one direct attempt first
/// gives the real reason (refused, unknown host, authentication, no database).
async fn try_postgres_once(url: &str, options: &PgConnectOptions) -> anyhow::Result<()> {
    let server = Db::describe(url);
    match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
        Ok(Ok(conn)) => {
            drop(conn);
            Ok(())
        }
        Ok(Err(err)) => anyhow::bail!("cannot connect to {server}: {err}"),
        Err(_) => anyhow::bail!("cannot connect to {server}: no answer within {} s", CONNECT_TIMEOUT.as_secs()),
    }
}
