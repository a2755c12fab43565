//! A small builder for WHERE clauses with a variable set of filters, and for long VALUES lists. Only constant SQL
//! fragments are concatenated; every value is a bound parameter. And [`Page`], the page of a list as a statement
//! orders and cuts it.

use super::{Engine, SqlValue};

/// One page of a list as the store reads it: the validated list parameters of one kind of record.
#[derive(Debug, Clone)]
pub struct Page {
    /// `None`: every match.
    pub limit: Option<i64>,
    pub skip: i64,
    /// The column to sort by (from the record's whitelist, never from input) and whether descending.
    pub sort_column: &'static str,
    pub descending: bool,
    pub projection: Option<Vec<String>>,
    pub ids: Option<Vec<String>>,
}

/// The PostgreSQL types a value bound where nothing says its type is stored as (native types: migration 0021).
#[derive(Debug, Clone, Copy)]
pub enum StoredAs {
    Id,
    Instant,
    Flag,
    Integer,
}

impl StoredAs {
    fn postgres_type(self) -> &'static str {
        match self {
            StoredAs::Id => "uuid",
            StoredAs::Instant => "timestamptz",
            StoredAs::Flag => "boolean",
            StoredAs::Integer => "bigint",
        }
    }
}

pub struct Conditions {
    clauses: Vec<String>,
    values: Vec<SqlValue>,
    engine: Engine,
}

impl Conditions {
    pub fn new(engine: Engine) -> Self {
        Conditions { clauses: Vec::new(), values: Vec::new(), engine }
    }

    /// Values already bound by a statement rendered elsewhere ([`super::statement::rendered`]).
    pub fn bound(engine: Engine, values: Vec<SqlValue>) -> Self {
        Conditions { clauses: Vec::new(), values, engine }
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The placeholder of the value bound last. SQLite gets plain `?` (bound in order): it finds a numbered
    /// parameter by a linear search of the statement's names, which costs O(n²) on a statement with thousands of
    /// them, such as a 500-row upsert.
    fn placeholder(&self) -> String {
        match self.engine {
            Engine::Sqlite => "?".to_string(),
            Engine::Postgres => format!("${}", self.values.len()),
        }
    }

    /// Adds `fragment`, whose `?` stands for `value`, e.g. `push("hotel_id = ?", id)`.
    pub fn push(&mut self, fragment: &'static str, value: impl Into<SqlValue>) -> &mut Self {
        let placeholder = self.bind(value);
        self.clauses.push(fragment.replace('?', &placeholder));
        self
    }

    /// Adds `fragment`, whose `?`s stand for `values` in order, e.g.
    /// `push_all("a >= ? AND a < ?", vec![from, to])`.
    pub fn push_all(&mut self, fragment: &'static str, values: Vec<String>) -> &mut Self {
        let mut values = values.into_iter();
        let mut clause = String::new();
        let mut parts = fragment.split('?').peekable();
        while let Some(part) = parts.next() {
            clause.push_str(part);
            if parts.peek().is_some() {
                let value = values.next().unwrap_or_default();
                clause.push_str(&self.bind(value));
            }
        }
        self.clauses.push(clause);
        self
    }

    /// Binds a value and answers its placeholder. Values must be bound in the order their placeholders appear in the
    /// statement.
    pub fn bind(&mut self, value: impl Into<SqlValue>) -> String {
        self.values.push(value.into());
        self.placeholder()
    }

    /// [`Conditions::bind`], for a value whose type nothing around its placeholder says, such as a column of a
    /// `VALUES` list read by a `SELECT`: PostgreSQL would take it for `text`, so it is cast to the type it has there.
    /// SQLite stores the text and integers as they are.
    pub fn bind_as(&mut self, value: impl Into<SqlValue>, stored_as: StoredAs) -> String {
        let placeholder = self.bind(value);
        match self.engine {
            Engine::Sqlite => placeholder,
            Engine::Postgres => format!("CAST({placeholder} AS {})", stored_as.postgres_type()),
        }
    }

    /// Adds `column IN (…)` over `values`; an empty list matches nothing.
    pub fn push_in(&mut self, column: &'static str, values: &[String]) -> &mut Self {
        if values.is_empty() {
            self.clauses.push("1 = 0".into());
            return self;
        }
        let placeholders: Vec<String> = values.iter().map(|v| self.bind(v.clone())).collect();
        self.clauses.push(format!("{column} IN ({})", placeholders.join(", ")));
        self
    }

    /// ` ORDER BY <column> [DESC], id [DESC] LIMIT … OFFSET …` for a validated page. The column comes from a
    /// record's whitelist, never from input; `id` breaks ties so pages never overlap.
    pub fn order_and_page(&mut self, page: &Page) -> String {
        let direction = if page.descending { " DESC" } else { "" };
        let mut sql = if page.sort_column == "id" {
            format!(" ORDER BY id{direction}")
        } else {
            format!(" ORDER BY {column}{direction}, id{direction}", column = page.sort_column)
        };
        match page.limit {
            Some(limit) => {
                let limit = self.bind(limit);
                let skip = self.bind(page.skip);
                sql.push_str(&format!(" LIMIT {limit} OFFSET {skip}"));
            }
            // SQLite wants a LIMIT before an OFFSET, and the largest integer means "no limit" on both engines.
            None if page.skip > 0 => {
                let limit = self.bind(i64::MAX);
                let skip = self.bind(page.skip);
                sql.push_str(&format!(" LIMIT {limit} OFFSET {skip}"));
            }
            None => {}
        }
        sql
    }

    /// ` WHERE a AND b …`, or nothing.
    pub fn where_clause(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }

    /// ` WHERE …` of the conditions added so far, which are then forgotten (their values stay bound): for a statement
    /// with two WHERE clauses, such as a page and its count in a subquery.
    pub fn take_where_clause(&mut self) -> String {
        let clause = self.where_clause();
        self.clauses.clear();
        clause
    }

    /// The values bound so far, in the order of their placeholders ([`super::query_with`]).
    pub fn into_values(self) -> Vec<SqlValue> {
        self.values
    }
}
