//! The portable column types as Rust reads and writes them: instants as fixed-width text, booleans as integers,
//! dates as `YYYY-MM-DD` (see the module's rules in [`super`]).

use chrono::{DateTime, NaiveDate, Utc};

use super::{Row, StoreResult};

/// A new opaque identifier: UUIDv7, so ids sort by creation time and index well.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The stored form of an instant: fixed-width RFC 3339 UTC with microseconds, so text order is time order.
pub fn format_ts(ts: DateTime<Utc>) -> String {
    ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// The stored form of a calendar date: `YYYY-MM-DD`, so text order is date order.
pub fn format_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

pub fn parse_ts(s: &str) -> StoreResult<DateTime<Utc>> {
    if let Some(instant) = parse_instant(s) {
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

impl RowExt for Row {
    fn get_bool(&self, col: &str) -> StoreResult<bool> {
        self.try_get(col)
    }

    fn get_ts(&self, col: &str) -> StoreResult<DateTime<Utc>> {
        self.try_get(col)
    }

    fn get_opt_ts(&self, col: &str) -> StoreResult<Option<DateTime<Utc>>> {
        self.try_get(col)
    }

    fn get_date(&self, col: &str) -> StoreResult<NaiveDate> {
        self.try_get(col)
    }
}

/// Reading the portable column types by position, for records read from many rows: a position is found without
/// comparing column names.
pub trait PortableRow {
    fn text(&self, index: usize) -> StoreResult<String>;
    fn optional_text(&self, index: usize) -> StoreResult<Option<String>>;
    fn integer(&self, index: usize) -> StoreResult<i64>;
    fn optional_integer(&self, index: usize) -> StoreResult<Option<i64>>;

    fn date(&self, index: usize) -> StoreResult<NaiveDate> {
        parse_date(&self.text(index)?)
    }

    fn instant(&self, index: usize) -> StoreResult<DateTime<Utc>> {
        parse_ts(&self.text(index)?)
    }
}

impl PortableRow for Row {
    fn text(&self, index: usize) -> StoreResult<String> {
        self.try_get(index)
    }

    fn optional_text(&self, index: usize) -> StoreResult<Option<String>> {
        self.try_get(index)
    }

    fn integer(&self, index: usize) -> StoreResult<i64> {
        self.try_get(index)
    }

    fn optional_integer(&self, index: usize) -> StoreResult<Option<i64>> {
        self.try_get(index)
    }

    fn date(&self, index: usize) -> StoreResult<NaiveDate> {
        self.try_get(index)
    }

    fn instant(&self, index: usize) -> StoreResult<DateTime<Utc>> {
        self.try_get(index)
    }
}

/// A record read from a row by column position.
pub trait FromPortableRow: Sized {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self>;
}

/// The stored form of a boolean.
pub fn bool_int(b: bool) -> i64 {
    i64::from(b)
}

/// The number written by the ASCII digits of `s[range]`, if they are all digits.
fn digits(s: &[u8], range: std::ops::Range<usize>) -> Option<u32> {
    s.get(range)?.iter().try_fold(0_u32, |n, b| b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0')))
}

/// A stored calendar date (`YYYY-MM-DD`).
pub fn parse_date(s: &str) -> StoreResult<NaiveDate> {
    // The stored form is fixed-width: read directly, as strftime-style parsing showed in profiles of lists.
    let b = s.as_bytes();
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        if let (Some(year), Some(month), Some(day)) = (digits(b, 0..4), digits(b, 5..7), digits(b, 8..10)) {
            if let Some(date) = NaiveDate::from_ymd_opt(year as i32, month, day) {
                return Ok(date);
            }
        }
    }
    Ok(NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|e| sqlx::Error::Decode(Box::new(e)))?)
}

/// A stored instant: the fixed-width form of [`super::format_ts`] read directly, anything else as RFC 3339.
pub fn parse_instant(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    if b.len() != 27 || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'.' || b[26] != b'Z' {
        return None;
    }
    let date = parse_date(s.get(0..10)?).ok()?;
    let (hour, minute, second) = (digits(b, 11..13)?, digits(b, 14..16)?, digits(b, 17..19)?);
    let time = chrono::NaiveTime::from_hms_micro_opt(hour, minute, second, digits(b, 20..26)?)?;
    Some(date.and_time(time).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_as_strftime_would() {
        let inputs = [
            "2026-01-01",
            "2000-02-29",
            "9999-12-31",
            "0001-01-01",
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "20260101",
            "2026-01-01x",
            "+026-01-01",
            "abcd-ef-gh",
            "",
        ];
        for s in inputs {
            assert_eq!(parse_date(s).ok(), NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(), "{s}");
        }
        assert!(parse_date("2026-02-30").is_err());
    }

    #[test]
    fn stored_instants_parse_as_rfc3339_would() {
        let rfc3339 = |s: &str| DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc));
        for s in ["2026-01-01T15:00:00.000000Z", "2026-11-23T22:41:07.123456Z", "2000-02-29T23:59:59.999999Z"] {
            assert_eq!(parse_instant(s), rfc3339(s), "{s}");
            assert_eq!(super::format_ts(parse_instant(s).expect(s)), s);
        }
        // Not the stored form: left to the RFC 3339 parser (`None` here).
        for s in ["2026-01-01T15:00:00Z", "2026-01-01T15:00:00.000000+01:00", "2026-01-01T25:00:00.000000Z", ""] {
            assert_eq!(parse_instant(s), None, "{s}");
        }
    }
}
