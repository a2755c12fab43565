//! Invoice numbers: a hotel's pattern (billing settings `invoiceNumberPattern`), the series it gives for a year,
//! and the number taken from that series in the transaction that issues the invoice. The series' counter is one row
//! per hotel and series, incremented in that transaction: an issue that rolls back gives its number back (no gap),
//! and two issues of one hotel wait for each other on the row (no duplicate), on both engines and across processes.

use chrono::{Datelike, NaiveDate};

use crate::domain::Result;
use crate::store;

/// The longest pattern, and the widest padding `{n:0W}` may ask for.
const MAX_PATTERN: usize = 40;
const MAX_WIDTH: usize = 12;

/// A parsed pattern: the text before and after `{n}`, the padding, and whether it names the year.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    before: String,
    after: String,
    width: usize,
}

fn is_literal(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '/' | '_' | '.' | '#')
}

impl Pattern {
    /// Reads a pattern: literal letters, digits and `- / _ . #`, `{year}` at most once and `{n}` or `{n:0W}`
    /// exactly once. The message says what is wrong.
    pub fn parse(pattern: &str) -> std::result::Result<Pattern, String> {
        const HELP: &str = "use letters, digits, - / _ . #, {year} and one {n} or {n:06}, e.g. RE-{year}-{n:06}";
        if pattern.is_empty() || pattern.len() > MAX_PATTERN {
            return Err(format!("must be 1 to {MAX_PATTERN} characters: {HELP}"));
        }
        let mut parts: Vec<(bool, String)> = Vec::new(); // (is a placeholder, text)
        let mut rest = pattern;
        while let Some(open) = rest.find('{') {
            parts.push((false, rest[..open].to_string()));
            let close = rest[open..].find('}').ok_or_else(|| format!("has a {{ without }}: {HELP}"))?;
            parts.push((true, rest[open + 1..open + close].to_string()));
            rest = &rest[open + close + 1..];
        }
        parts.push((false, rest.to_string()));
        if parts.iter().any(|(placeholder, text)| !placeholder && !text.chars().all(is_literal)) {
            return Err(format!("has a character that cannot be in a number: {HELP}"));
        }
        let mut counters = 0;
        let mut years = 0;
        let (mut before, mut after, mut width, mut seen_counter) = (String::new(), String::new(), 1, false);
        for (placeholder, text) in parts {
            let piece = if !placeholder {
                text
            } else if text == "year" {
                years += 1;
                "{year}".to_string()
            } else if text == "n" || text.starts_with("n:0") {
                counters += 1;
                if let Some(w) = text.strip_prefix("n:0") {
                    width = w
                        .parse::<usize>()
                        .ok()
                        .filter(|w| (1..=MAX_WIDTH).contains(w))
                        .ok_or_else(|| format!("pads {{n}} to 1 to {MAX_WIDTH} digits, as {{n:06}}: {HELP}"))?;
                }
                seen_counter = true;
                continue;
            } else {
                return Err(format!("knows no {{{text}}}: {HELP}"));
            };
            if seen_counter {
                after.push_str(&piece);
            } else {
                before.push_str(&piece);
            }
        }
        if counters != 1 {
            return Err(format!("must have {{n}} exactly once: {HELP}"));
        }
        if years > 1 {
            return Err(format!("may have {{year}} once: {HELP}"));
        }
        Ok(Pattern { before, after, width })
    }

    /// The series an invoice issued on `date` takes its number from: the pattern with the year filled in.
    pub fn series(&self, date: NaiveDate) -> String {
        let year = date.year().to_string();
        format!("{}{{n:0{}}}{}", self.before.replace("{year}", &year), self.width, self.after.replace("{year}", &year))
    }

    /// The `n`-th number issued on `date`.
    pub fn number(&self, date: NaiveDate, n: i64) -> String {
        let year = date.year().to_string();
        format!(
            "{}{:0width$}{}",
            self.before.replace("{year}", &year),
            n,
            self.after.replace("{year}", &year),
            width = self.width
        )
    }
}

/// Takes the next number of `pattern`'s series for an invoice of `hotel_id` issued on `date`, inside the change
/// that issues it.
pub async fn take(conn: &mut store::Conn, hotel_id: &str, pattern: &Pattern, date: NaiveDate) -> Result<String> {
    let n = store::invoices::next_in_series(conn, hotel_id, &pattern.series(date)).await?;
    Ok(pattern.number(date, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("a date")
    }

    #[test]
    fn a_pattern_gives_numbers_per_year() {
        let p = Pattern::parse("RE-{year}-{n:06}").expect("valid");
        assert_eq!(p.number(day(2026, 12, 1), 1), "RE-2026-000001");
        assert_eq!(p.number(day(2027, 1, 1), 42), "RE-2027-000042");
        assert_eq!(p.series(day(2026, 3, 1)), "RE-2026-{n:06}");
        assert_ne!(p.series(day(2026, 3, 1)), p.series(day(2027, 3, 1)));
        let plain = Pattern::parse("{n}").expect("valid");
        assert_eq!(plain.number(day(2026, 1, 1), 1234567), "1234567");
        assert_eq!(plain.series(day(2026, 1, 1)), plain.series(day(2030, 1, 1)));
        let after = Pattern::parse("{n:04}/{year}").expect("valid");
        assert_eq!(after.number(day(2026, 5, 5), 7), "0007/2026");
        // A number wider than its padding is written whole.
        assert_eq!(Pattern::parse("A{n:02}").expect("valid").number(day(2026, 1, 1), 123), "A123");
    }

    #[test]
    fn a_pattern_without_one_counter_or_with_strange_text_is_refused() {
        for bad in [
            "",
            "RE-{year}",
            "{n}{n}",
            "{n:0}",
            "{n:013}",
            "{n:6}",
            "RE {n}",
            "RE-{month}-{n}",
            "{year}{year}{n}",
            "RE-{n",
            "Ré-{n}",
            "<{n}>",
            &"X".repeat(41),
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
