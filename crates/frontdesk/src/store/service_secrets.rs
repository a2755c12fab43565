//! The service's own secrets, one row per name: the keys it keeps in the database (unless given one from outside,
//! `domain::service_keys`), and the check value of a key given from outside.

use chrono::{DateTime, Utc};

use super::{format_ts, StoreResult};
use crate::store::schema::ServiceSecrets as S;
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, OnConflict, RowLocks, Sql};
use crate::store::Conn;

/// The secret named `name`, created from `fresh` by whichever process asks first; every process then reads the
/// same value.
pub async fn get_or_create(conn: &mut Conn, name: &str, fresh: &str, at: DateTime<Utc>) -> StoreResult<String> {
    let mut insert = insert_row(
        S::Table,
        [(S::Name, Expr::val(name)), (S::Value, Expr::val(fresh)), (S::CreatedAt, Expr::val(format_ts(at)))],
    );
    insert.on_conflict(OnConflict::column(S::Name).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    let select = Sql::select().column(S::Value).from(S::Table).and_where(Expr::col(S::Name).eq(name)).take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("value")
}

/// The secret named `name`, if there is one.
pub async fn get(conn: &mut Conn, name: &str) -> StoreResult<Option<String>> {
    let select = Sql::select().column(S::Value).from(S::Table).and_where(Expr::col(S::Name).eq(name)).take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.map(|row| row.try_get("value")).transpose()
}

/// The secret named `name`, locked until the transaction ends: made first with `placeholder` when missing, so that
/// two processes asking at once take turns on PostgreSQL (SQLite's write transaction is exclusive already).
pub async fn lock(conn: &mut Conn, name: &str, placeholder: &str, at: DateTime<Utc>) -> StoreResult<String> {
    let mut insert = insert_row(
        S::Table,
        [(S::Name, Expr::val(name)), (S::Value, Expr::val(placeholder)), (S::CreatedAt, Expr::val(format_ts(at)))],
    );
    insert.on_conflict(OnConflict::column(S::Name).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    let select =
        Sql::select().column(S::Value).from(S::Table).and_where(Expr::col(S::Name).eq(name)).lock_for_writing().take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("value")
}

/// Sets the secret named `name` (which [`lock`] made).
pub async fn set(conn: &mut Conn, name: &str, value: &str) -> StoreResult<()> {
    let update = Sql::update().table(S::Table).value(S::Value, value).and_where(Expr::col(S::Name).eq(name)).take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn delete(conn: &mut Conn, name: &str) -> StoreResult<()> {
    let delete = Sql::delete().from_table(S::Table).and_where(Expr::col(S::Name).eq(name)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
