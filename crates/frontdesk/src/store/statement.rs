//! Statements built in Rust with sea-query, rendered for the engine of the connection they run on.
//!
//! A statement names its tables and columns through the enums of [`super::schema`] (generated from the migrations
//! and checked against both engines by `tests/it/schema.rs`), so a misspelt column fails the build; its values are
//! given where they are used, and the builder numbers the placeholders (`$1 …` on PostgreSQL, `?` on SQLite), so no
//! one counts them by hand. The rendered text and values then take the one access path of every statement
//! ([`super::Query`]): on PostgreSQL each value is bound as the type its placeholder has (`conn.rs`).
//!
//! ```ignore
//! let select = Sql::select()
//!     .columns([Guests::Id, Guests::FirstName])
//!     .from(Guests::Table)
//!     .and_where(Expr::col(Guests::OrganizationId).eq(organization_id))
//!     .take();
//! statement(conn.engine(), &select).fetch_all(conn).await?
//! ```
//!
//! The builder's methods answer `&mut` the statement; `.take()` moves the finished statement out of the temporary
//! (`.to_owned()` would copy it, every column and value: a few percent of the service's CPU on the hottest reads).
//!
//! Where a dialect differs (SQLite's index hints, PostgreSQL's date arithmetic) a statement keeps a constant
//! fragment (`Expr::cust`), chosen by [`Engine`], never text built from input.

use sea_query::{
    BinOper, IntoColumnRef, IntoIden, LockBehavior, LockType, PostgresQueryBuilder, QueryStatementWriter,
    SqliteQueryBuilder, Value,
};

pub use sea_query::{
    Alias, Asterisk, Cond, Expr, ExprTrait, Func, InsertStatement, JoinType, OnConflict, Order, Query as Sql,
    SelectStatement, UpdateStatement,
};

use super::sql::{Conditions, Page};
use super::{Engine, Error, Query, SqlValue};

/// `built` rendered for `engine`, ready to run on one of its connections.
pub fn statement(engine: Engine, built: &impl QueryStatementWriter) -> Query<'static> {
    let (sql, values) = match engine {
        Engine::Postgres => built.build(PostgresQueryBuilder),
        Engine::Sqlite => built.build(SqliteQueryBuilder),
    };
    Query::rendered(sql, values.0.into_iter().map(sql_value).collect())
}

/// Several INSERTs sent to the database as one statement, in one round trip: on SQLite one after the other in the
/// same text (the driver runs each in turn, binding the values in order), on PostgreSQL as data-modifying common
/// table expressions of the last (which PostgreSQL runs exactly once each, referenced or not). A write's trail (its
/// webhook events and audit entries) costs the write one exchange with the database instead of one per table.
pub fn inserts(engine: Engine, mut built: Vec<sea_query::InsertStatement>) -> Option<Query<'static>> {
    let last = built.pop()?;
    match engine {
        Engine::Sqlite => {
            let (mut sql, mut values) = (String::new(), Vec::new());
            for insert in built.iter().chain([&last]) {
                let (text, bound) = insert.build(SqliteQueryBuilder);
                sql.push_str(&text);
                sql.push_str(";\n");
                values.extend(bound.0);
            }
            Some(Query::rendered(sql, values.into_iter().map(sql_value).collect()))
        }
        Engine::Postgres => {
            if built.is_empty() {
                return Some(statement(engine, &last));
            }
            let mut with = sea_query::WithClause::new();
            for (n, insert) in built.into_iter().enumerate() {
                let name = sea_query::Alias::new(format!("written_{n}"));
                with.cte(sea_query::CommonTableExpression::new().query(insert).table_name(name).to_owned());
            }
            Some(statement(engine, &last.with(with)))
        }
    }
}

/// `built` rendered for `engine` as text and the values it binds, for a reader that must own both (a streamed list,
/// [`super::stream()`], reads its rows in a task of its own).
pub fn rendered(engine: Engine, built: &impl QueryStatementWriter) -> Result<(String, Conditions), Error> {
    let (sql, values) = match engine {
        Engine::Postgres => built.build(PostgresQueryBuilder),
        Engine::Sqlite => built.build(SqliteQueryBuilder),
    };
    let values = values.0.into_iter().map(sql_value).collect::<Result<Vec<_>, _>>()?;
    Ok((sql, Conditions::bound(engine, values)))
}

/// The condition for the one record `id` of the organization `organization_id`, for every read, update and delete of
/// a record the caller names by id: `id = … AND organization_id IS NOT DISTINCT FROM …`.
///
/// Only the id is a condition an index can serve, on purpose. For an organization PostgreSQL's statistics do not
/// know yet (one whose records were written since the table was last analysed, or any on a table never analysed),
/// the planner estimates one row for `organization_id = …` and then may prefer a small index that leads with the
/// organization over the primary key, reading every record of the organization to find one: measured on 400
/// reservations, 13 to 28 pages a lookup instead of 3, and it grows with the organization (docs/storage.md, "Built:
/// lookups by id"). The comparison stays in the statement, so another organization's record is never read or
/// changed as this one's; every `organization_id` column is NOT NULL, so it means what `=` means.
pub fn one_of_organization(
    id_column: impl IntoColumnRef,
    id: &str,
    organization_column: impl IntoColumnRef,
    organization_id: &str,
) -> Expr {
    Expr::col(id_column)
        .eq(id)
        .and(Expr::col(organization_column).binary(BinOper::Custom("IS NOT DISTINCT FROM"), organization_id))
}

/// Row locks of a select. SQLite's builder writes none: its write transactions are exclusive already
/// ([`super::WriteTx`]).
pub trait RowLocks {
    /// Locks the selected rows until the transaction ends, so that writers of the same rows take turns.
    ///
    /// On PostgreSQL it is `FOR NO KEY UPDATE`, not `FOR UPDATE`: the rows are locked against each other's writers
    /// but not against writes that merely reference them (a foreign key check takes `FOR KEY SHARE`). With
    /// `FOR UPDATE`, a room move holding room type A and pointing the room at B would wait on a booking holding B,
    /// which waits for A: a lock cycle PostgreSQL breaks by failing one of them.
    fn lock_for_writing(&mut self) -> &mut Self;

    /// Locks the selected rows as a claim, skipping rows another transaction holds (`FOR UPDATE SKIP LOCKED`), so
    /// that several processes can claim work from one table without waiting on each other.
    fn lock_skipping_held(&mut self) -> &mut Self;

    /// Locks the selected rows against every other lock, those of writes that merely reference them included
    /// (`FOR UPDATE`): it waits until each transaction that has written a row pointing at them by a foreign key
    /// (which holds `FOR KEY SHARE`) has ended, and makes later ones wait for this one. For a change that must see
    /// every row written against the locked one, e.g. a subscription turned off and the queue rows of a hand-out.
    fn lock_exclusively(&mut self) -> &mut Self;
}

impl RowLocks for SelectStatement {
    fn lock_for_writing(&mut self) -> &mut Self {
        self.lock(LockType::NoKeyUpdate)
    }

    fn lock_skipping_held(&mut self) -> &mut Self {
        self.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked)
    }

    fn lock_exclusively(&mut self) -> &mut Self {
        self.lock(LockType::Update)
    }
}

/// `column IN (taken)`, for the update of the rows a claim took (`taken` selects them with
/// [`RowLocks::lock_skipping_held`] and a `LIMIT`): on PostgreSQL written `column = ANY(ARRAY(taken))`.
///
/// PostgreSQL plans `IN (subquery)` as a join, estimates the subquery's rows from its `LIMIT` (the batch, 500) rather
/// than from what is left to take, and for a table of some ten thousand rows then reads all of it to join the few
/// taken: the outbox's hand-out read 263 to 463 pages of the table a call to update 33 to 48 rows (auto_explain, in
/// the webhooks benchmark). `ARRAY(…)` is computed once, first, and its ids are then looked up by their index.
/// SQLite has no arrays, and looks each id up by its index either way.
pub fn in_taken(engine: Engine, column: impl IntoColumnRef, taken: SelectStatement) -> Expr {
    match engine {
        Engine::Postgres => Expr::cust_with_exprs(
            "$1 = ANY(ARRAY $2)",
            [Expr::col(column), Expr::SubQuery(None, Box::new(taken.into()))],
        ),
        Engine::Sqlite => Expr::col(column).in_subquery(taken),
    }
}

/// A count of rows for `LIMIT` or `OFFSET` (which sea-query takes unsigned): a negative one reads none. Every caller
/// passes a validated or constant count, so that case is a guard, not a rule.
pub fn rows(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// ` ORDER BY <column> [DESC], id [DESC] LIMIT … OFFSET …` of a validated page. The column comes from a record's
/// whitelist, never from input; `id` breaks ties so pages never overlap.
pub fn order_and_page(select: &mut SelectStatement, page: &Page) {
    let order = if page.descending { Order::Desc } else { Order::Asc };
    if page.sort_column != "id" {
        select.order_by(Alias::new(page.sort_column), order.clone());
    }
    select.order_by(Alias::new("id"), order);
    match page.limit {
        Some(limit) => {
            select.limit(rows(limit)).offset(rows(page.skip));
        }
        // SQLite wants a LIMIT before an OFFSET, and the largest integer means "no limit" on both engines.
        None if page.skip > 0 => {
            select.limit(rows(i64::MAX)).offset(rows(page.skip));
        }
        None => {}
    }
}

/// `INSERT INTO table (…) VALUES (…)` from (column, value) pairs, so that each column and its value are one line and
/// cannot drift apart.
pub fn insert_row<C: IntoIden>(table: impl IntoIden, row: impl IntoIterator<Item = (C, Expr)>) -> InsertStatement {
    let (columns, values): (Vec<C>, Vec<Expr>) = row.into_iter().unzip();
    let mut insert = Sql::insert();
    insert.into_table(table).columns(columns);
    // Cannot panic: the columns and the values are the two halves of the same pairs, so their counts are equal.
    insert.values_panic(values);
    insert
}

/// A value of a built statement as the store binds it: text or an integer, each engine's driver then encoding it
/// as the column's type.
fn sql_value(value: Value) -> Result<SqlValue, Error> {
    Ok(match value {
        Value::Bool(v) => SqlValue::Integer(v.map(i64::from)),
        Value::TinyInt(v) => SqlValue::Integer(v.map(i64::from)),
        Value::SmallInt(v) => SqlValue::Integer(v.map(i64::from)),
        Value::Int(v) => SqlValue::Integer(v.map(i64::from)),
        Value::BigInt(v) => SqlValue::Integer(v),
        Value::TinyUnsigned(v) => SqlValue::Integer(v.map(i64::from)),
        Value::SmallUnsigned(v) => SqlValue::Integer(v.map(i64::from)),
        Value::Unsigned(v) => SqlValue::Integer(v.map(i64::from)),
        // What `limit` and `offset` bind.
        Value::BigUnsigned(Some(v)) => match i64::try_from(v) {
            Ok(v) => SqlValue::Integer(Some(v)),
            Err(_) => return Err(Error::unbindable(format!("{v} is larger than a 64-bit signed integer"))),
        },
        Value::BigUnsigned(None) => SqlValue::Integer(None),
        Value::String(v) => SqlValue::Text(v),
        Value::Char(v) => SqlValue::Text(v.map(String::from)),
        other => return Err(Error::unbindable(format!("the store binds text and integers, not {other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::super::schema::Reservations;
    use super::*;

    #[test]
    fn placeholders_are_numbered_by_the_builder_for_each_engine() {
        let select = Sql::select()
            .column(Reservations::Id)
            .from(Reservations::Table)
            .and_where(Expr::col(Reservations::OrganizationId).eq("org"))
            .and_where(Expr::col(Reservations::Adults).gt(2))
            .take();
        let (postgres, values) = select.build(PostgresQueryBuilder);
        assert_eq!(postgres, r#"SELECT "id" FROM "reservations" WHERE "organization_id" = $1 AND "adults" > $2"#);
        assert_eq!(values.0.len(), 2);
        let (sqlite, _) = select.build(SqliteQueryBuilder);
        assert_eq!(sqlite, r#"SELECT "id" FROM "reservations" WHERE "organization_id" = ? AND "adults" > ?"#);
    }

    #[test]
    fn an_inserted_row_pairs_each_column_with_its_value() {
        let insert = insert_row(
            Reservations::Table,
            [(Reservations::Id, Expr::val("r1")), (Reservations::Adults, Expr::val(2))],
        );
        let (sql, _) = insert.build(PostgresQueryBuilder);
        assert_eq!(sql, r#"INSERT INTO "reservations" ("id", "adults") VALUES ($1, $2)"#);
    }

    #[test]
    fn a_value_the_store_cannot_bind_is_an_error_not_a_guess() {
        assert!(matches!(sql_value(Value::Int(Some(3))), Ok(SqlValue::Integer(Some(3)))));
        assert!(matches!(sql_value(Value::String(None)), Ok(SqlValue::Text(None))));
        assert!(matches!(sql_value(Value::BigUnsigned(Some(50))), Ok(SqlValue::Integer(Some(50)))));
        assert!(sql_value(Value::BigUnsigned(Some(u64::MAX))).is_err());
        assert!(sql_value(Value::Double(Some(1.5))).is_err());
    }
}
