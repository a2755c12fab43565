//! A small builder for WHERE clauses with a variable set of filters. Only constant SQL fragments are
//! concatenated; every value is a bound parameter (`$N`, which both engines accept).

use sqlx::any::AnyArguments;
use sqlx::{Any, Arguments, Encode, Type};

#[derive(Default)]
pub struct Conditions<'a> {
    clauses: Vec<String>,
    args: AnyArguments<'a>,
}

impl<'a> Conditions<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `fragment`, whose `?` stands for `value`, e.g. `push("hotel_id = ?", id)`.
    pub fn push<T>(&mut self, fragment: &'static str, value: T) -> &mut Self
    where
        T: 'a + Encode<'a, Any> + Type<Any>,
    {
        self.bind(value);
        let placeholder = format!("${}", self.args.len());
        self.clauses.push(fragment.replace('?', &placeholder));
        self
    }

    /// Binds a value that a later fragment refers to as `$N` (see [`Conditions::next_placeholder`]).
    pub fn bind<T>(&mut self, value: T) -> String
    where
        T: 'a + Encode<'a, Any> + Type<Any>,
    {
        // Encoding the portable types (text, integers) cannot fail.
        let _ = self.args.add(value);
        format!("${}", self.args.len())
    }

    /// ` WHERE a AND b …`, or nothing.
    pub fn where_clause(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }

    pub fn into_args(self) -> AnyArguments<'a> {
        self.args
    }
}
