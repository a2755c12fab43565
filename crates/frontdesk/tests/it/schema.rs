//! The two engines' migrations are written by hand, each in its engine's own SQL (`migrations/README.md`). This
//! checks what a reviewer cannot: that after all of them both databases have the same tables, each with the same
//! columns, the same nullability, types of the same kind, and the same named indexes. A change made for one engine
//! and forgotten for the other fails here, naming the table and the column.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::TestDatabase;
use frontdesk::store::{Db, Engine};
use sqlx::{Connection, Row};

/// Tables one engine has and the other needs not, each with the reason. Anything else one-sided is a mistake.
const ONE_ENGINE_ONLY: &[(&str, &str)] = &[(
    "availability_changes",
    "PostgreSQL only (migration 0008): the hotels a transaction changed, so that a deferred trigger bumps each \
     hotel's availability version once per transaction; SQLite's single writer bumps it directly",
)];

/// A column as both engines can describe it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Column {
    kind: Kind,
    nullable: bool,
}

/// What a column holds, whichever engine's type stores it: SQLite keeps text and integers where PostgreSQL may use
/// a narrower native type (a `uuid`, a `date` or a `timestamptz` is text on SQLite; a `boolean` is an integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Text,
    Integer,
    Real,
    Bytes,
}

#[derive(Debug, Default, PartialEq)]
struct Schema {
    tables: BTreeMap<String, BTreeMap<String, Column>>,
    /// Per table, the indexes created by name (not those a primary key or a UNIQUE column makes by itself).
    indexes: BTreeMap<String, BTreeSet<String>>,
}

fn sqlite_kind(declared: &str) -> Kind {
    // SQLite's own affinity rules (section 3.1 of its datatype page), in their order.
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        Kind::Integer
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        Kind::Text
    } else if t.contains("BLOB") {
        Kind::Bytes
    } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
        Kind::Real
    } else {
        panic!("a SQLite column declared {declared:?}: declare TEXT, INTEGER, BIGINT, REAL or BLOB")
    }
}

fn postgres_kind(data_type: &str) -> Kind {
    match data_type {
        "text" | "character varying" | "uuid" | "date" | "timestamp with time zone" => Kind::Text,
        "bigint" | "integer" | "smallint" | "boolean" => Kind::Integer,
        "double precision" | "real" => Kind::Real,
        "bytea" => Kind::Bytes,
        other => panic!("a PostgreSQL column of type {other}: add it to this test's kinds, with its SQLite twin"),
    }
}

async fn sqlite_schema(url: &str) -> Schema {
    let mut conn = sqlx::SqliteConnection::connect(url).await.expect("open SQLite");
    let mut schema = Schema::default();
    let tables = sqlx::query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .expect("tables");
    for table in tables {
        let table: String = table.get("name");
        let columns = sqlx::query("SELECT name, type, \"notnull\", pk FROM pragma_table_info($1)")
            .bind(&table)
            .fetch_all(&mut conn)
            .await
            .expect("columns");
        let columns = columns
            .iter()
            .map(|c| {
                let declared: String = c.get("type");
                // A primary key column is NOT NULL on PostgreSQL whatever it says; SQLite lets an undeclared one be
                // null (a historical quirk), which no insert of ours relies on.
                let not_null = c.get::<i64, _>("notnull") != 0 || c.get::<i64, _>("pk") != 0;
                (c.get::<String, _>("name"), Column { kind: sqlite_kind(&declared), nullable: !not_null })
            })
            .collect();
        let indexes =
            sqlx::query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 AND sql IS NOT NULL")
                .bind(&table)
                .fetch_all(&mut conn)
                .await
                .expect("indexes");
        schema.indexes.insert(table.clone(), indexes.iter().map(|i| i.get("name")).collect());
        schema.tables.insert(table, columns);
    }
    schema
}

async fn postgres_schema(url: &str) -> Schema {
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect to PostgreSQL");
    let mut schema = Schema::default();
    let columns = sqlx::query(
        "SELECT c.table_name::text AS table_name, c.column_name::text AS column_name, c.data_type::text AS data_type, \
                c.is_nullable::text AS is_nullable \
         FROM information_schema.columns c JOIN information_schema.tables t \
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .expect("columns");
    for c in columns {
        let column =
            Column { kind: postgres_kind(c.get("data_type")), nullable: c.get::<String, _>("is_nullable") == "YES" };
        schema.tables.entry(c.get("table_name")).or_default().insert(c.get("column_name"), column);
    }
    // Indexes that back a constraint (primary keys, UNIQUE columns) are made by the constraint, as on SQLite.
    let indexes = sqlx::query(
        "SELECT t.relname::text AS table_name, i.relname::text AS index_name \
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid \
         WHERE t.relnamespace = current_schema()::regnamespace AND t.relname <> '_sqlx_migrations' \
           AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)",
    )
    .fetch_all(&mut conn)
    .await
    .expect("indexes");
    for table in schema.tables.keys() {
        schema.indexes.insert(table.clone(), BTreeSet::new());
    }
    for i in indexes {
        schema.indexes.entry(i.get("table_name")).or_default().insert(i.get("index_name"));
    }
    schema
}

async fn migrated(engine: Engine) -> Option<TestDatabase> {
    let database = TestDatabase::create_or_skip(engine).await?;
    let db = Db::connect(&database.url, 2).await.expect("open the database");
    db.migrate().await.expect("migrate");
    db.close().await;
    Some(database)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_migrate_to_the_same_tables_columns_and_indexes() {
    let Some(sqlite) = migrated(Engine::Sqlite).await else { return };
    let Some(postgres) = migrated(Engine::Postgres).await else { return };
    let sqlite = sqlite_schema(&sqlite.url).await;
    let postgres = postgres_schema(&postgres.url).await;
    assert!(sqlite.tables.len() > 20, "the SQLite schema was not read: {:?}", sqlite.tables.keys());

    let mut differences = Vec::new();
    let tables: BTreeSet<&String> = sqlite.tables.keys().chain(postgres.tables.keys()).collect();
    for table in tables {
        let (Some(on_sqlite), Some(on_postgres)) = (sqlite.tables.get(table), postgres.tables.get(table)) else {
            if ONE_ENGINE_ONLY.iter().any(|(name, _)| name == table) {
                continue;
            }
            differences.push(format!(
                "table {table}: only on {}",
                if sqlite.tables.contains_key(table) { "SQLite" } else { "PostgreSQL" }
            ));
            continue;
        };
        let columns: BTreeSet<&String> = on_sqlite.keys().chain(on_postgres.keys()).collect();
        for column in columns {
            match (on_sqlite.get(column), on_postgres.get(column)) {
                (Some(a), Some(b)) if a == b => {}
                (a, b) => differences.push(format!("{table}.{column}: SQLite {a:?}, PostgreSQL {b:?}")),
            }
        }
        let (a, b) = (&sqlite.indexes[table], &postgres.indexes[table]);
        for index in a.symmetric_difference(b) {
            let on = if a.contains(index) { "SQLite" } else { "PostgreSQL" };
            differences.push(format!("{table}: index {index} only on {on}"));
        }
    }
    assert!(differences.is_empty(), "the engines' schemas differ:\n{}", differences.join("\n"));
}

/// The store's statements name tables and columns through `store/schema.rs`, which `scripts/store-schema.py` writes
/// from the migrations. A migration made without running the script (or a hand edit of the file) fails here, naming
/// what differs, so a column the statements name is one both engines have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_names_the_tables_and_columns_both_engines_have() {
    let Some(sqlite) = migrated(Engine::Sqlite).await else { return };
    let Some(postgres) = migrated(Engine::Postgres).await else { return };
    let named: BTreeMap<&str, BTreeSet<&str>> = frontdesk::store::schema::TABLES
        .iter()
        .map(|(table, columns)| (*table, columns.iter().copied().collect()))
        .collect();
    for (engine, schema) in
        [("SQLite", sqlite_schema(&sqlite.url).await), ("PostgreSQL", postgres_schema(&postgres.url).await)]
    {
        let mut differences = Vec::new();
        for (table, columns) in &schema.tables {
            if ONE_ENGINE_ONLY.iter().any(|(name, _)| name == table) {
                continue;
            }
            let live: BTreeSet<&str> = columns.keys().map(String::as_str).collect();
            match named.get(table.as_str()) {
                None => differences.push(format!("table {table} is not in store/schema.rs")),
                Some(named) if *named != live => differences.push(format!(
                    "{table}: store/schema.rs names {:?} that {engine} has not; {engine} has {:?} that it does not name",
                    named.difference(&live).collect::<Vec<_>>(),
                    live.difference(named).collect::<Vec<_>>()
                )),
                Some(_) => {}
            }
        }
        for table in named.keys() {
            if !schema.tables.contains_key(*table) {
                differences.push(format!("store/schema.rs names table {table}, which {engine} has not"));
            }
        }
        assert!(
            differences.is_empty(),
            "store/schema.rs and the {engine} migrations differ (run `python3 scripts/store-schema.py`):\n{}",
            differences.join("\n")
        );
    }
}
