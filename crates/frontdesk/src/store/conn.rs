//! The one way the store reaches a database: each engine's own driver, through a [`Conn`] taken from the store's
//! pool ([`super::pool`]).
//!
//! A statement is written once for both engines ([`query`], with sqlx's shape: `query(sql).bind(v).fetch_all(conn)`)
//! and runs on the engine the connection belongs to; its values ([`SqlValue`]) are bound by that engine's driver,
//! and its rows ([`Row`]) are read by code written once for both ([`Cell`]).
//!
//! There used to be two paths: sqlx's `Any` driver for everything, and the engines' own drivers for the two hottest
//! reads, because `Any` turns every row into an owned copy with each column's name and type rebuilt, which cost a
//! tenth of the service's CPU on a list page. Now every statement takes the engines' own path.

use deadpool::managed::Object;
use futures::stream::BoxStream;
use futures::StreamExt;
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Arguments, ColumnIndex, Database, Postgres, Sqlite, TransactionManager, TypeInfo, ValueRef};

use super::pool::Connector;
use super::sql::Conditions;
use super::{Engine, Error, StoreResult};

/// A connection to the database, from [`super::Db::read`] or inside a [`super::WriteTx`]. Goes back to its pool when
/// dropped.
pub struct Conn {
    engine: Engine,
    /// `None` once let go: a connection that failed in a way that may have left it unusable is closed, not reused.
    handle: Option<Handle>,
}

pub(super) enum Handle {
    Postgres(Object<Connector<Postgres>>),
    Sqlite(Object<Connector<Sqlite>>),
}

impl Conn {
    pub(super) fn new(handle: Handle) -> Conn {
        let engine = match handle {
            Handle::Postgres(_) => Engine::Postgres,
            Handle::Sqlite(_) => Engine::Sqlite,
        };
        Conn { engine, handle: Some(handle) }
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub(super) fn handle(&mut self) -> StoreResult<&mut Handle> {
        self.handle.as_mut().ok_or_else(|| sqlx::Error::PoolClosed.into())
    }

    /// The outcome of a statement. A statement the database refused leaves its connection usable; anything else
    /// (the socket closed, the server restarting, a protocol error) may not, and the pool checks only connections
    /// that sat idle: this one is closed instead of going back.
    pub(super) fn checked<T>(&mut self, outcome: sqlx::Result<T>) -> StoreResult<T> {
        outcome.map_err(|err| {
            if !matches!(err, sqlx::Error::Database(_)) || super::errors::is_unavailable(&err) {
                self.let_go();
            }
            Error::from(err)
        })
    }

    /// Begins the transaction of a [`super::WriteTx`]: on SQLite with the write lock taken up front (`BEGIN
    /// IMMEDIATE`), so that writers queue instead of failing with `SQLITE_BUSY` midway.
    pub(super) async fn begin(&mut self) -> StoreResult<()> {
        let outcome = match self.handle()? {
            Handle::Postgres(c) => <Postgres as Database>::TransactionManager::begin(&mut **c, None).await,
            Handle::Sqlite(c) => {
                <Sqlite as Database>::TransactionManager::begin(&mut **c, Some("BEGIN IMMEDIATE".into())).await
            }
        };
        self.checked(outcome)
    }

    pub(super) async fn commit(&mut self) -> StoreResult<()> {
        let outcome = match self.handle()? {
            Handle::Postgres(c) => <Postgres as Database>::TransactionManager::commit(&mut **c).await,
            Handle::Sqlite(c) => <Sqlite as Database>::TransactionManager::commit(&mut **c).await,
        };
        self.checked(outcome)
    }

    /// Rolls back the open transaction without waiting for it: queued on the connection and sent by a task, after
    /// which the connection goes back to its pool (which closes it if it is still inside the transaction).
    pub(super) fn roll_back_in_background(mut self) {
        let Some(handle) = self.handle.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to send it on: close the connection, which ends the transaction on the server.
            match handle {
                Handle::Postgres(conn) => drop(Object::take(conn)),
                Handle::Sqlite(conn) => drop(Object::take(conn)),
            }
            return;
        };
        runtime.spawn(async move {
            match handle {
                Handle::Postgres(mut conn) => {
                    <Postgres as Database>::TransactionManager::start_rollback(&mut conn);
                    let _ = sqlx::Connection::ping(&mut *conn).await;
                }
                Handle::Sqlite(mut conn) => {
                    <Sqlite as Database>::TransactionManager::start_rollback(&mut conn);
                    let _ = sqlx::Connection::ping(&mut *conn).await;
                }
            }
        });
    }

    /// Applies `migrator`'s migrations not applied yet.
    pub(super) async fn migrate(&mut self, migrator: &sqlx::migrate::Migrator) -> anyhow::Result<()> {
        match self.handle()? {
            Handle::Postgres(c) => migrator.run(&mut **c).await?,
            Handle::Sqlite(c) => migrator.run(&mut **c).await?,
        }
        Ok(())
    }

    /// Takes the connection out of its pool and closes it.
    pub(super) fn let_go(&mut self) {
        match self.handle.take() {
            Some(Handle::Postgres(conn)) => drop(Object::take(conn)),
            Some(Handle::Sqlite(conn)) => drop(Object::take(conn)),
            None => {}
        }
    }
}

/// A value bound to a statement, kept as such until the statement runs on one engine or the other.
#[derive(Debug, Clone)]
pub enum SqlValue {
    Text(Option<String>),
    Integer(Option<i64>),
}

macro_rules! sql_value_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {$(
        impl From<$t> for SqlValue {
            fn from($v: $t) -> Self {
                $e
            }
        }
    )*};
}

sql_value_from! {
    String => |v| SqlValue::Text(Some(v)),
    &String => |v| SqlValue::Text(Some(v.clone())),
    &str => |v| SqlValue::Text(Some(v.to_string())),
    &&str => |v| SqlValue::Text(Some(v.to_string())),
    Option<String> => |v| SqlValue::Text(v),
    &Option<String> => |v| SqlValue::Text(v.clone()),
    Option<&String> => |v| SqlValue::Text(v.cloned()),
    Option<&str> => |v| SqlValue::Text(v.map(str::to_string)),
    i64 => |v| SqlValue::Integer(Some(v)),
    &i64 => |v| SqlValue::Integer(Some(*v)),
    i32 => |v| SqlValue::Integer(Some(i64::from(v))),
    u32 => |v| SqlValue::Integer(Some(i64::from(v))),
    Option<i64> => |v| SqlValue::Integer(v),
    &Option<i64> => |v| SqlValue::Integer(*v),
}

pub(super) fn postgres_args(values: Vec<SqlValue>) -> PgArguments {
    arguments(values)
}

pub(super) fn sqlite_args(values: Vec<SqlValue>) -> SqliteArguments<'static> {
    arguments(values)
}

fn arguments<A>(values: Vec<SqlValue>) -> A
where
    A: Arguments<'static>,
    Option<String>: sqlx::Encode<'static, A::Database> + sqlx::Type<A::Database>,
    Option<i64>: sqlx::Encode<'static, A::Database> + sqlx::Type<A::Database>,
{
    let mut args = A::default();
    // Encoding text and integers cannot fail.
    for value in values {
        let _ = match value {
            SqlValue::Text(text) => args.add(text),
            SqlValue::Integer(integer) => args.add(integer),
        };
    }
    args
}

/// A statement and its values, to run on a [`Conn`] of either engine.
#[must_use = "a statement does nothing until it runs"]
pub struct Query<'q> {
    sql: &'q str,
    values: Vec<SqlValue>,
}

/// A statement whose values are bound one by one, in the order of their placeholders (`$1`, `$2`, …).
pub fn query(sql: &str) -> Query<'_> {
    Query { sql, values: Vec::new() }
}

/// A statement built with [`Conditions`], whose values it carries.
pub fn query_with(sql: &str, conditions: Conditions) -> Query<'_> {
    Query { sql, values: conditions.into_values() }
}

/// What a statement that returns no rows did.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    rows_affected: u64,
}

impl Done {
    pub fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

impl<'q> Query<'q> {
    pub fn bind(mut self, value: impl Into<SqlValue>) -> Self {
        self.values.push(value.into());
        self
    }

    pub async fn execute(self, conn: &mut Conn) -> StoreResult<Done> {
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => sqlx::query_with(self.sql, postgres_args(self.values))
                .execute(&mut **c)
                .await
                .map(|r| r.rows_affected()),
            Handle::Sqlite(c) => {
                sqlx::query_with(self.sql, sqlite_args(self.values)).execute(&mut **c).await.map(|r| r.rows_affected())
            }
        };
        conn.checked(outcome).map(|rows_affected| Done { rows_affected })
    }

    pub async fn fetch_all(self, conn: &mut Conn) -> StoreResult<Vec<Row>> {
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => sqlx::query_with(self.sql, postgres_args(self.values))
                .fetch_all(&mut **c)
                .await
                .map(|rows| rows.into_iter().map(Row::Postgres).collect()),
            Handle::Sqlite(c) => sqlx::query_with(self.sql, sqlite_args(self.values))
                .fetch_all(&mut **c)
                .await
                .map(|rows| rows.into_iter().map(Row::Sqlite).collect()),
        };
        conn.checked(outcome)
    }

    /// The rows, each read into a `T` by column position.
    pub async fn fetch_records<T: super::FromPortableRow>(self, conn: &mut Conn) -> StoreResult<Vec<T>> {
        self.fetch_all(conn).await?.iter().map(T::from_row).collect()
    }

    pub async fn fetch_optional(self, conn: &mut Conn) -> StoreResult<Option<Row>> {
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => sqlx::query_with(self.sql, postgres_args(self.values))
                .fetch_optional(&mut **c)
                .await
                .map(|r| r.map(Row::Postgres)),
            Handle::Sqlite(c) => sqlx::query_with(self.sql, sqlite_args(self.values))
                .fetch_optional(&mut **c)
                .await
                .map(|r| r.map(Row::Sqlite)),
        };
        conn.checked(outcome)
    }

    pub async fn fetch_one(self, conn: &mut Conn) -> StoreResult<Row> {
        self.fetch_optional(conn).await?.ok_or_else(|| sqlx::Error::RowNotFound.into())
    }

    /// The rows one by one, as the database sends them.
    pub fn fetch<'c>(self, conn: &'c mut Conn) -> BoxStream<'c, StoreResult<Row>>
    where
        'q: 'c,
    {
        match conn.handle.as_mut() {
            Some(Handle::Postgres(c)) => sqlx::query_with(self.sql, postgres_args(self.values))
                .fetch(&mut **c)
                .map(|row| row.map(Row::Postgres).map_err(Error::from))
                .boxed(),
            Some(Handle::Sqlite(c)) => sqlx::query_with(self.sql, sqlite_args(self.values))
                .fetch(&mut **c)
                .map(|row| row.map(Row::Sqlite).map_err(Error::from))
                .boxed(),
            None => futures::stream::once(async { Err(sqlx::Error::PoolClosed.into()) }).boxed(),
        }
    }
}

/// A row of either engine.
pub enum Row {
    Postgres(PgRow),
    Sqlite(SqliteRow),
}

/// A column, by position (`0`, `1`, …) or by name.
pub trait Column: ColumnIndex<PgRow> + ColumnIndex<SqliteRow> + std::fmt::Debug {}

impl<I: ColumnIndex<PgRow> + ColumnIndex<SqliteRow> + std::fmt::Debug> Column for I {}

impl Row {
    /// The value of a column, as `T`.
    pub fn try_get<T: Cell, I: Column>(&self, column: I) -> StoreResult<T> {
        let value = match self {
            Row::Postgres(row) => column.index(row).and_then(|i| T::from_postgres(row, i)),
            Row::Sqlite(row) => column.index(row).and_then(|i| T::from_sqlite(row, i)),
        };
        Ok(value?)
    }

    /// [`Row::try_get`] for tests and for columns that cannot fail to decode; panics naming the column otherwise.
    pub fn get<T: Cell, I: Column>(&self, column: I) -> T {
        match self.try_get(&column) {
            Ok(value) => value,
            Err(err) => panic!("column {column:?}: {err}"),
        }
    }
}

/// A Rust value read from a column of either engine.
pub trait Cell: Sized {
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self>;
    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self>;
}

macro_rules! cell_as_decoded {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
                sqlx::Row::try_get(row, index)
            }

            fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
                sqlx::Row::try_get(row, index)
            }
        }
    )*};
}

cell_as_decoded!(String, f64, Vec<u8>, bool);

impl Cell for i64 {
    /// PostgreSQL types an integer expression by its operands (`1` and `COUNT(…)::int` are `integer`); any width
    /// reads as `i64`, as on SQLite.
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match sqlx::Row::try_get_raw(row, index)?.type_info().name() {
            "INT4" => sqlx::Row::try_get::<i32, _>(row, index).map(i64::from),
            "INT2" => sqlx::Row::try_get::<i16, _>(row, index).map(i64::from),
            _ => sqlx::Row::try_get(row, index),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        sqlx::Row::try_get(row, index)
    }
}

impl<T: Cell> Cell for Option<T> {
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        if sqlx::Row::try_get_raw(row, index)?.is_null() {
            return Ok(None);
        }
        T::from_postgres(row, index).map(Some)
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        if sqlx::Row::try_get_raw(row, index)?.is_null() {
            return Ok(None);
        }
        T::from_sqlite(row, index).map(Some)
    }
}
