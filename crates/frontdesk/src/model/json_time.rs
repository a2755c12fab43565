//! Dates and instants of the records answered in lists, written exactly as chrono writes them, in one piece.
//!
//! chrono's `Serialize` hands its text to serde_json through `collect_str`, one character at a time into the
//! string-escaping writer. A list page of 50 reservations writes 300 of them, and that was about a tenth of the
//! service's CPU per page (profile of the throughput benchmark's list). These write the same text first and give it
//! to the serializer as one string; the tests hold them to chrono's own output.

use std::fmt::{self, Write};

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::Serializer;

/// `#[serde(serialize_with)]` for an instant: RFC 3339 in UTC with `Z` and only as many fraction digits as needed,
/// chrono's form.
pub fn instant<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&at.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// `#[serde(serialize_with)]` for a calendar date: `YYYY-MM-DD` (a signed year outside 0..=9999), chrono's form.
pub fn date<S: Serializer>(date: &NaiveDate, serializer: S) -> Result<S::Ok, S::Error> {
    let mut text = Short::default();
    // chrono's `Serialize` writes the `Debug` form; it fits (at most 14 bytes: `-262143-12-31`).
    write!(text, "{date:?}").map_err(serde::ser::Error::custom)?;
    serializer.serialize_str(text.as_str())
}

/// Text of at most 16 bytes, on the stack.
#[derive(Default)]
struct Short {
    bytes: [u8; 16],
    len: usize,
}

impl Short {
    fn as_str(&self) -> &str {
        // Only whole `str`s are ever appended.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl Write for Short {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Days, TimeZone};

    fn ours_date(d: NaiveDate) -> String {
        date(&d, serde_json::value::Serializer).map(|v| v.to_string()).expect("date")
    }

    fn ours_instant(t: DateTime<Utc>) -> String {
        instant(&t, serde_json::value::Serializer).map(|v| v.to_string()).expect("instant")
    }

    #[test]
    fn dates_are_written_as_chrono_writes_them() {
        let mut dates = vec![NaiveDate::MIN, NaiveDate::MAX];
        for (y, m, d) in [(0, 1, 1), (9999, 12, 31), (10000, 1, 1), (-1, 12, 31), (1, 1, 1), (2026, 2, 28)] {
            dates.push(NaiveDate::from_ymd_opt(y, m, d).expect("date"));
        }
        let start = NaiveDate::from_ymd_opt(2023, 12, 25).expect("date");
        dates.extend((0..800).map(|n| start + Days::new(n)));
        for d in dates {
            assert_eq!(ours_date(d), serde_json::to_value(d).expect("chrono").to_string(), "{d:?}");
        }
    }

    #[test]
    fn instants_are_written_as_chrono_writes_them() {
        let base = Utc.with_ymd_and_hms(2026, 11, 24, 1, 2, 3).single().expect("instant");
        let mut instants = vec![DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::UNIX_EPOCH];
        for nanos in [0, 1, 1_000, 120_000, 123_456, 1_000_000, 999_999_999, 500_000_000, 1_999_999_999] {
            instants.push(base + chrono::TimeDelta::nanoseconds(nanos));
        }
        for t in instants {
            assert_eq!(ours_instant(t), serde_json::to_value(t).expect("chrono").to_string(), "{t:?}");
        }
    }
}
