//! The portable column types as Rust reads and writes them: instants as fixed-width text, booleans as integers,
//! dates as `YYYY-MM-DD` (see the module's rules in [`super`]).

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{native, StoreResult};

/// A new opaque identifier: UUIDv7, so ids sort by creation time and index well.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The stored form of an instant: fixed-width RFC 3339 UTC with microseconds, so text order is time order.
pub fn format_ts(ts: DateTime<Utc>) -> String {
    ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub fn parse_ts(s: &str) -> StoreResult<DateTime<Utc>> {
    if let Some(instant) = native::parse_instant(s) {
        return Ok(instant);
    }
    Ok(DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).map_err(|e| sqlx::Error::Decode(Box::new(e)))?)
}

/// Decoding helpers for the portable column types.
pub trait RowExt {
    fn get_bool(&self, col: &str) -> StoreResult<bool>;
    fn get_ts(&self, col: &str) -> StoreResult<DateTime<Utc>>;
    fn get_opt_ts(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>>;
    fn get_date(&self, col: &str) -> StoreResult<NaiveDate>;
}

impl RowExt for AnyRow {
    fn get_bool(&self, col: &str) -> StoreResult<bool> {
        Ok(self.try_get::<i64, _>(col)? != 0)
    }

    fn get_ts(&self, col: &str) -> StoreResult<DateTime<Utc>> {
        parse_ts(&self.try_get::<String, _>(col)?)
    }

    fn get_opt_ts(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>> {
        self.try_get::<Option<String>, _>(col)?.map(|s| parse_ts(&s)).transpose()
    }

    fn get_date(&self, col: &str) -> StoreResult<NaiveDate> {
        native::parse_date(&self.try_get::<String, _>(col)?)
    }
}

/// The stored form of a boolean.
pub fn bool_int(b: bool) -> i64 {
    i64::from(b)
}
