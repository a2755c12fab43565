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

use std::borrow::Cow;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool::managed::Object;
use futures::stream::BoxStream;
use futures::{StreamExt, TryFutureExt};
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Arguments, ColumnIndex, Database, Postgres, Sqlite, TransactionManager, TypeInfo, ValueRef};

use super::connection_manager::ConnectionManager;
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
    Postgres(Object<ConnectionManager<Postgres>>),
    Sqlite(Object<ConnectionManager<Sqlite>>),
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

/// The values of a statement, bound as the types PostgreSQL gave its placeholders.
///
/// A value is text or an integer until here, while a PostgreSQL column may be a `uuid`, `date`, `timestamptz` or
/// `boolean` (migration 0021), and PostgreSQL has no implicit cast from `text` to those: sqlx sends every value in
/// binary, as the type it declares. So the statement is prepared first, without types, and PostgreSQL says what
/// each placeholder is from where it stands (`id = $1` is a `uuid`); each value is then encoded as that type. The
/// preparation is the one sqlx would make anyway, and is kept in the connection's statement cache, so a statement
/// run before on this connection costs a lookup.
async fn postgres_args(conn: &mut sqlx::PgConnection, sql: &str, values: Vec<SqlValue>) -> sqlx::Result<PgArguments> {
    let mut args = PgArguments::default();
    if values.is_empty() {
        return Ok(args);
    }
    let statement = sqlx::Executor::prepare(&mut *conn, sql).await?;
    let types = match sqlx::Statement::parameters(&statement) {
        Some(sqlx::Either::Left(types)) => types,
        _ => &[],
    };
    for (position, value) in values.into_iter().enumerate() {
        let placeholder = types.get(position).map_or("TEXT", TypeInfo::name);
        bind_postgres(&mut args, placeholder, value).map_err(|err| {
            sqlx::Error::Encode(format!("the value of ${} (a {placeholder}): {err}", position + 1).into())
        })?;
    }
    Ok(args)
}

fn bind_postgres(args: &mut PgArguments, placeholder: &str, value: SqlValue) -> Result<(), sqlx::error::BoxDynError> {
    match (placeholder, value) {
        ("UUID", SqlValue::Text(text)) => args.add(text.as_deref().map(stored_uuid)),
        ("DATE", SqlValue::Text(text)) => args.add(text.as_deref().map(super::parse_date).transpose()?),
        ("TIMESTAMPTZ", SqlValue::Text(text)) => args.add(text.as_deref().map(super::parse_ts).transpose()?),
        ("BOOL", SqlValue::Integer(integer)) => args.add(integer.map(|i| i != 0)),
        ("INT4", SqlValue::Integer(integer)) => args.add(integer.map(i32::try_from).transpose()?),
        ("INT2", SqlValue::Integer(integer)) => args.add(integer.map(i16::try_from).transpose()?),
        ("TEXT" | "VARCHAR", SqlValue::Integer(integer)) => args.add(integer.map(|i| i.to_string())),
        (_, SqlValue::Text(text)) => args.add(text),
        (_, SqlValue::Integer(integer)) => args.add(integer),
    }
}

/// The UUID an id names. Text that is not an id in the stored form (lower-case, hyphenated) names no record, as it
/// matches no text on SQLite: it binds as the nil UUID, which no record has (ids are UUIDv7), so that a path or
/// filter with such an id answers 404 or nothing rather than an error.
fn stored_uuid(text: &str) -> uuid::Uuid {
    let stored_form = text.len() == 36 && !text.bytes().any(|b| b.is_ascii_uppercase());
    stored_form.then(|| uuid::Uuid::try_parse(text).ok()).flatten().unwrap_or(uuid::Uuid::nil())
}

pub(super) fn sqlite_args(values: Vec<SqlValue>) -> SqliteArguments<'static> {
    let mut args = SqliteArguments::default();
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
    sql: Cow<'q, str>,
    values: Vec<SqlValue>,
    /// A value a built statement could not be given ([`super::statement`]), answered when the statement runs.
    unbindable: Option<Error>,
}

/// A statement whose values are bound one by one, in the order of their placeholders (`$1`, `$2`, …).
pub fn query(sql: &str) -> Query<'_> {
    Query { sql: Cow::Borrowed(sql), values: Vec::new(), unbindable: None }
}

/// A statement built with [`Conditions`], whose values it carries.
pub fn query_with(sql: &str, conditions: Conditions) -> Query<'_> {
    Query { sql: Cow::Borrowed(sql), values: conditions.into_values(), unbindable: None }
}

impl Query<'static> {
    /// A statement rendered by [`super::statement`], with its values, or the reason one could not be bound.
    pub(super) fn rendered(sql: String, values: Result<Vec<SqlValue>, Error>) -> Self {
        match values {
            Ok(values) => Query { sql: Cow::Owned(sql), values, unbindable: None },
            Err(err) => Query { sql: Cow::Owned(sql), values: Vec::new(), unbindable: Some(err) },
        }
    }
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
        if let Some(err) = self.unbindable {
            return Err(err);
        }
        let sql = &*self.sql;
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => match postgres_args(c, sql, self.values).await {
                Ok(args) => sqlx::query_with(sql, args).execute(&mut **c).await.map(|r| r.rows_affected()),
                Err(err) => Err(err),
            },
            Handle::Sqlite(c) => {
                sqlx::query_with(sql, sqlite_args(self.values)).execute(&mut **c).await.map(|r| r.rows_affected())
            }
        };
        conn.checked(outcome).map(|rows_affected| Done { rows_affected })
    }

    pub async fn fetch_all(self, conn: &mut Conn) -> StoreResult<Vec<Row>> {
        if let Some(err) = self.unbindable {
            return Err(err);
        }
        let sql = &*self.sql;
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => match postgres_args(c, sql, self.values).await {
                Ok(args) => sqlx::query_with(sql, args)
                    .fetch_all(&mut **c)
                    .await
                    .map(|rows| rows.into_iter().map(Row::Postgres).collect()),
                Err(err) => Err(err),
            },
            Handle::Sqlite(c) => sqlx::query_with(sql, sqlite_args(self.values))
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

    /// The first row, read into a `T` by column position, if there is one.
    pub async fn fetch_record<T: super::FromPortableRow>(self, conn: &mut Conn) -> StoreResult<Option<T>> {
        self.fetch_optional(conn).await?.as_ref().map(T::from_row).transpose()
    }

    pub async fn fetch_optional(self, conn: &mut Conn) -> StoreResult<Option<Row>> {
        if let Some(err) = self.unbindable {
            return Err(err);
        }
        let sql = &*self.sql;
        let outcome = match conn.handle()? {
            Handle::Postgres(c) => match postgres_args(c, sql, self.values).await {
                Ok(args) => sqlx::query_with(sql, args).fetch_optional(&mut **c).await.map(|r| r.map(Row::Postgres)),
                Err(err) => Err(err),
            },
            Handle::Sqlite(c) => sqlx::query_with(sql, sqlite_args(self.values))
                .fetch_optional(&mut **c)
                .await
                .map(|r| r.map(Row::Sqlite)),
        };
        conn.checked(outcome)
    }

    pub async fn fetch_one(self, conn: &mut Conn) -> StoreResult<Row> {
        self.fetch_optional(conn).await?.ok_or_else(|| sqlx::Error::RowNotFound.into())
    }

    /// The rows one by one, as the database sends them. A statement whose text was rendered here
    /// ([`super::statement`]) is read whole first: the driver's stream borrows the text, which only a statement
    /// written in the source outlives.
    pub fn fetch<'c>(self, conn: &'c mut Conn) -> BoxStream<'c, StoreResult<Row>>
    where
        'q: 'c,
    {
        let sql: &'q str = match self.sql {
            Cow::Borrowed(sql) => sql,
            Cow::Owned(sql) => {
                let whole = Query { sql: Cow::Owned(sql), values: self.values, unbindable: self.unbindable };
                return futures::stream::once(whole.fetch_all(conn))
                    .map(|rows| match rows {
                        Ok(rows) => futures::stream::iter(rows.into_iter().map(Ok)).boxed(),
                        Err(err) => futures::stream::once(async { Err(err) }).boxed(),
                    })
                    .flatten()
                    .boxed();
            }
        };
        if let Some(err) = self.unbindable {
            return futures::stream::once(async { Err(err) }).boxed();
        }
        match conn.handle.as_mut() {
            Some(Handle::Postgres(c)) => {
                let c: &'c mut sqlx::PgConnection = c;
                async move {
                    let args = postgres_args(&mut *c, sql, self.values).await.map_err(Error::from)?;
                    Ok(sqlx::query_with(sql, args).fetch(c).map(|row| row.map(Row::Postgres).map_err(Error::from)))
                }
                .try_flatten_stream()
                .boxed()
            }
            Some(Handle::Sqlite(c)) => sqlx::query_with(sql, sqlite_args(self.values))
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

cell_as_decoded!(f64, Vec<u8>);

/// The name of a PostgreSQL column's type, as sqlx spells it (`"UUID"`, `"INT8"` …).
fn postgres_type(row: &PgRow, index: usize) -> sqlx::Result<&str> {
    let column = sqlx::Row::columns(row)
        .get(index)
        .ok_or(sqlx::Error::ColumnIndexOutOfBounds { index, len: sqlx::Row::len(row) })?;
    Ok(sqlx::Column::type_info(column).name())
}

impl Cell for String {
    /// A `uuid`, `date` or `timestamptz` column reads as the text SQLite stores for it, so that code reading ids,
    /// dates and instants as text reads the same from both engines.
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match postgres_type(row, index)? {
            "UUID" => sqlx::Row::try_get::<uuid::Uuid, _>(row, index).map(|id| id.to_string()),
            "DATE" => postgres_date(row, index).map(super::format_date),
            "TIMESTAMPTZ" => postgres_instant(row, index).map(super::format_ts),
            _ => sqlx::Row::try_get(row, index),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        sqlx::Row::try_get(row, index)
    }
}

impl Cell for i64 {
    /// PostgreSQL types an integer expression by its operands (`1` and `COUNT(…)::int` are `integer`); any width
    /// reads as `i64`, as on SQLite, and a `boolean` as 0 or 1, as SQLite stores it.
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match postgres_type(row, index)? {
            "INT4" => sqlx::Row::try_get::<i32, _>(row, index).map(i64::from),
            "INT2" => sqlx::Row::try_get::<i16, _>(row, index).map(i64::from),
            "BOOL" => sqlx::Row::try_get::<bool, _>(row, index).map(i64::from),
            _ => sqlx::Row::try_get(row, index),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        sqlx::Row::try_get(row, index)
    }
}

impl Cell for bool {
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match postgres_type(row, index)? {
            "BOOL" => sqlx::Row::try_get(row, index),
            _ => i64::from_postgres(row, index).map(|i| i != 0),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        sqlx::Row::try_get::<i64, _>(row, index).map(|i| i != 0)
    }
}

impl Cell for NaiveDate {
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match postgres_type(row, index)? {
            "DATE" => postgres_date(row, index),
            _ => from_text(String::from_postgres(row, index)?, super::parse_date),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        from_text(sqlx::Row::try_get(row, index)?, super::parse_date)
    }
}

impl Cell for DateTime<Utc> {
    fn from_postgres(row: &PgRow, index: usize) -> sqlx::Result<Self> {
        match postgres_type(row, index)? {
            "TIMESTAMPTZ" => postgres_instant(row, index),
            _ => from_text(String::from_postgres(row, index)?, super::parse_ts),
        }
    }

    fn from_sqlite(row: &SqliteRow, index: usize) -> sqlx::Result<Self> {
        from_text(sqlx::Row::try_get(row, index)?, super::parse_ts)
    }
}

/// A PostgreSQL `date`: days since 2000-01-01 on the wire. Read here rather than by sqlx, whose reader panics on
/// a day outside chrono's range (`'infinity'`); such a day is an error to answer, not a reason to stop.
fn postgres_date(row: &PgRow, index: usize) -> sqlx::Result<NaiveDate> {
    let days: i32 = sqlx::Row::try_get_unchecked(row, index)?;
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(chrono::TimeDelta::days(i64::from(days))))
        .ok_or_else(|| sqlx::Error::Decode(format!("a date {days} days from 2000-01-01 is out of range").into()))
}

/// A PostgreSQL `timestamptz`: microseconds since 2000-01-01 UTC on the wire, read as [`postgres_date`] is.
fn postgres_instant(row: &PgRow, index: usize) -> sqlx::Result<DateTime<Utc>> {
    let micros: i64 = sqlx::Row::try_get_unchecked(row, index)?;
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|epoch| epoch.and_hms_opt(0, 0, 0))
        .and_then(|epoch| epoch.and_utc().checked_add_signed(chrono::TimeDelta::microseconds(micros)))
        .ok_or_else(|| sqlx::Error::Decode(format!("an instant {micros} µs from 2000-01-01 is out of range").into()))
}

/// A value SQLite (or a text expression on PostgreSQL) stores as text, read by the store's parser of its form.
fn from_text<T>(text: String, parse: fn(&str) -> StoreResult<T>) -> sqlx::Result<T> {
    parse(&text).map_err(|err| sqlx::Error::Decode(err.to_string().into()))
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
