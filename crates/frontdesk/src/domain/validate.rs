//! Field validation shared by the domain modules. Each check pushes a [`FieldError`] so that one answer lists
//! every problem of a request.

use super::{Error, FieldError, Result};

#[derive(Default)]
pub struct Checks {
    errors: Vec<FieldError>,
}

impl Checks {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::field(field, message));
    }

    /// A required text: trimmed, non-empty, at most `max` characters.
    pub fn text(&mut self, field: &str, value: &str, max: usize) {
        if value.chars().all(is_space) {
            self.fail(field, "must not be empty");
        } else if value.chars().count() > max {
            self.fail(field, format!("must be at most {max} characters"));
        }
    }

    pub fn opt_text(&mut self, field: &str, value: Option<&str>, max: usize) {
        if let Some(v) = value {
            if v.chars().count() > max {
                self.fail(field, format!("must be at most {max} characters"));
            }
        }
    }

    /// A required single line of text (a name): [`Checks::text`], without the characters [`is_forbidden_in_line`]
    /// refuses.
    pub fn line(&mut self, field: &str, value: &str, max: usize) {
        if has_forbidden_in_line(value) {
            self.fail(field, FORBIDDEN_IN_LINE_MESSAGE);
        } else {
            self.text(field, value, max);
        }
    }

    /// An optional single line of text.
    pub fn opt_line(&mut self, field: &str, value: Option<&str>, max: usize) {
        match value {
            Some(v) if has_forbidden_in_line(v) => self.fail(field, FORBIDDEN_IN_LINE_MESSAGE),
            other => self.opt_text(field, other, max),
        }
    }

    /// An integer within `[min, max]`.
    pub fn range(&mut self, field: &str, value: i64, min: i64, max: i64) {
        if value < min || value > max {
            self.fail(field, format!("must be between {min} and {max}"));
        }
    }

    /// An amount of money within [`super::money::MAX_AMOUNT`].
    pub fn amount(&mut self, field: &str, value: i64) {
        if !super::money::in_bounds(value) {
            self.fail(field, super::money::out_of_bounds_message());
        }
    }

    pub fn email(&mut self, field: &str, value: &str) {
        if !is_email(value) {
            self.fail(field, "must be an e-mail address");
        }
    }

    pub fn timezone(&mut self, field: &str, value: &str) {
        if !super::codes::is_timezone(value) {
            self.fail(field, "must be an IANA time zone such as Europe/Paris");
        }
    }

    pub fn currency(&mut self, field: &str, value: &str) {
        if !super::codes::is_currency(value) {
            self.fail(field, "must be an ISO 4217 currency code such as EUR");
        }
    }

    /// An instant whose date (UTC) is one an input may name ([`date_bounds`]).
    pub fn instant(&mut self, field: &str, value: chrono::DateTime<chrono::Utc>) {
        let (first, last) = date_bounds();
        if value.date_naive() < first || value.date_naive() > last {
            self.fail(field, format!("must be between {first} and {last}"));
        }
    }

    /// A wall-clock time `HH:MM`.
    pub fn clock_time(&mut self, field: &str, value: &str) {
        if value.len() != 5 || chrono::NaiveTime::parse_from_str(value, "%H:%M").is_err() {
            self.fail(field, "must be a time HH:MM");
        }
    }

    pub fn finish(self) -> Result<()> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.errors))
        }
    }
}

/// White space as JSON Schema patterns (ECMA-262 `\s`) see it, so that the service and its OpenAPI document agree
/// on what "blank" means.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// A text with the white space (as [`is_space`] sees it) around it removed.
pub fn clean(value: &str) -> String {
    value.trim_matches(is_space).to_string()
}

/// A plain e-mail address, `local@domain`, and nothing else: no display name (`Ana <ana@example.com>`), no
/// comments, no quoted local part. Each mailbox has one written form up to case, so that a limit per address holds
/// for every way of writing it, and what the mailer is handed is exactly what was checked.
///
/// The local part is a dot-atom (RFC 5322: letters, digits and ``!#$%&'*+-/=?^_`{|}~``, dots between them; letters
/// of any script, RFC 6531), at most 64 bytes; the domain has two or more labels of letters, digits and inner
/// hyphens; at most 254 bytes in all.
pub fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    let atom_char = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let dot_atom = |s: &str| !s.is_empty() && s.split('.').all(|atom| !atom.is_empty() && atom.chars().all(atom_char));
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    value.len() <= 254
        && local.len() <= 64
        && dot_atom(local)
        && domain.split('.').count() >= 2
        && domain.split('.').all(label)
}

/// Whether a person's name carries a web or e-mail address, or an encoded word that a mail program would decode
/// (`=?utf-8?b?…?=`): an `@`, `://`, `www.`, or a word with a dot between two words (`example.com`; `St. John`,
/// with its space, is a name).
pub fn carries_address(name: &str) -> bool {
    let lower = name.to_lowercase();
    if lower.contains('@') || lower.contains("://") || lower.contains("www.") || lower.contains("=?") {
        return true;
    }
    lower.split(|c: char| c.is_whitespace() || ",;:!?()[]<>\"'/".contains(c)).any(|word| {
        let labels: Vec<&str> = word.trim_matches('.').split('.').collect();
        labels.len() >= 2
            && labels.iter().all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
            && labels.last().is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
            && labels.first().is_some_and(|first| first.chars().count() >= 2)
    })
}

/// Characters no text of this service may hold: the control characters (Unicode `Cc`: U+0000–U+001F, U+007F–U+009F)
/// other than tab, line feed and carriage return. PostgreSQL cannot store U+0000 at all, and none of the others
/// belongs in a name, an id or a note; refusing them where input enters gives both engines one rule.
pub fn is_forbidden_char(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Whether `text` holds a character [`is_forbidden_char`] refuses.
pub fn has_forbidden_chars(text: &str) -> bool {
    text.chars().any(is_forbidden_char)
}

/// What a refused text is told.
pub const FORBIDDEN_CHARS_MESSAGE: &str =
    "must not contain control characters (U+0000-U+001F, U+007F-U+009F) other than tab, line feed and carriage return";

/// Characters a single line of text (a name, a phone number) may not hold, besides those no text may hold: line
/// breaks and tabs (a name that reaches an e-mail header must not start a new header) and the Unicode format
/// characters (general category Cf: bidirectional overrides and isolates, zero-width spaces, the soft hyphen, …),
/// which make a name display as another ("look-alike" names on a consent page or a guest list). The zero-width
/// non-joiner and joiner (U+200C, U+200D) are allowed: Persian and Indic names and emoji sequences need them.
pub fn is_forbidden_in_line(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' // line and paragraph separators
                | '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'
                | '\u{200E}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

/// Whether `text` holds a character [`is_forbidden_in_line`] refuses.
pub fn has_forbidden_in_line(text: &str) -> bool {
    text.chars().any(is_forbidden_in_line)
}

/// What a refused single line is told.
pub const FORBIDDEN_IN_LINE_MESSAGE: &str =
    "must be a single line without invisible formatting characters (line breaks, tabs, bidirectional controls, \
     zero-width spaces)";

/// The fields of a JSON document whose names or string values hold forbidden characters, as paths in the form
/// serde_path_to_error uses (`guest.firstName`, `values[3].ratePlanId`; `.` is the document itself).
pub fn fields_with_forbidden_chars(value: &serde_json::Value) -> Vec<String> {
    fn walk(value: &serde_json::Value, path: &mut String, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) if has_forbidden_chars(s) => {
                out.push(if path.is_empty() { ".".to_string() } else { path.clone() })
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, path, out);
                    path.truncate(len);
                }
            }
            serde_json::Value::Object(fields) => {
                for (name, item) in fields {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                    if has_forbidden_chars(name) {
                        out.push(path.clone());
                    } else {
                        walk(item, path, out);
                    }
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::new(), &mut out);
    out
}

/// The earliest date any input may name.
pub const FIRST_DATE: chrono::NaiveDate = match chrono::NaiveDate::from_ymd_opt(2000, 1, 1) {
    Some(date) => date,
    None => panic!("2000-01-01 is a date"),
};

/// How far ahead of today (UTC) an input may name a date, in years.
pub const YEARS_AHEAD: u32 = 10;

/// The dates any input may name: from [`FIRST_DATE`] to [`YEARS_AHEAD`] years after today (UTC). One rule for every
/// date and instant the service is given (stays, rates, filters, tool arguments); endpoints may narrow it further
/// (rates are written from a year back to three years ahead, searches start no earlier than yesterday).
pub fn date_bounds() -> (chrono::NaiveDate, chrono::NaiveDate) {
    let today = chrono::Utc::now().date_naive();
    (FIRST_DATE, today.checked_add_months(chrono::Months::new(12 * YEARS_AHEAD)).unwrap_or(today))
}

/// A date an input may name: a calendar date `YYYY-MM-DD` (2026-02-30 is refused) within [`date_bounds`], or why
/// not.
pub fn input_date(value: &str) -> std::result::Result<chrono::NaiveDate, String> {
    let date = calendar_date(value).ok_or_else(|| "must be a calendar date YYYY-MM-DD".to_string())?;
    let (first, last) = date_bounds();
    if date < first || date > last {
        return Err(format!("must be between {first} and {last}"));
    }
    Ok(date)
}

/// A date an input may name ([`input_date`]), or a recorded error.
pub fn parse_date(checks: &mut Checks, field: &str, value: &str) -> Option<chrono::NaiveDate> {
    input_date(value).map_err(|message| checks.fail(field, message)).ok()
}

/// A calendar date in exactly the form `YYYY-MM-DD`.
pub fn calendar_date(value: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").ok().filter(|_| value.len() == 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_addresses() {
        for name in [
            "Refund pending: visit evil.example",
            "see https://evil.example/x",
            "www.evil",
            "mail me at x@evil.example",
            "=?utf-8?b?UmVmdW5k?=",
            "EVIL.COM",
        ] {
            assert!(carries_address(name), "{name}");
        }
        for name in ["Ana", "St. John", "O'Neil", "Jean-Luc", "J. R. R.", "Müller-Lüdenscheidt", "Mr.", "D.J."] {
            assert!(!carries_address(name), "{name}");
        }
    }

    #[test]
    fn emails() {
        assert!(is_email("ana@example.com"));
        assert!(!is_email("ana@example"));
        assert!(!is_email("ana example@x.com"));
        assert!(!is_email("@x.com"));
        assert!(!is_email("a@b@c.com"));
        // Only the plain form: one written form per mailbox.
        for form in [
            "0<victim@example.net>",
            "Ana <ana@example.com>",
            "\"ana\"@example.com",
            "ana(comment)@example.com",
            "ana@example.com (Ana)",
            "ana..x@example.com",
            ".ana@example.com",
            "ana@-example.com",
            "ana@example..com",
            "ana@[203.0.113.1]",
            "a,b@example.com",
        ] {
            assert!(!is_email(form), "{form}");
        }
        for plain in ["ana.silva+tag@example.co.uk", "o'neil@example.ie", "jürgen@exämple.de", "x_y-z@a-b.example"] {
            assert!(is_email(plain), "{plain}");
        }
    }

    #[test]
    fn forbidden_characters_are_found_where_they_are() {
        use serde_json::json;
        assert!(!has_forbidden_chars("tab\tline\nreturn\r, emoji \u{1F600}, bidi \u{202E}"));
        for c in ['\u{0}', '\u{7}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}'] {
            assert!(has_forbidden_chars(&format!("a{c}b")), "{c:?}");
        }
        let doc = json!({"name": "ok", "guest": {"firstName": "a\u{0}"}, "values": [{"id": "x"}, {"id": "\u{1}"}],
            "bad\u{0}key": 1});
        let mut found = fields_with_forbidden_chars(&doc);
        found.sort();
        assert_eq!(found, vec!["bad\u{0}key", "guest.firstName", "values[1].id"]);
        assert_eq!(fields_with_forbidden_chars(&json!("\u{0}")), vec!["."]);
    }

    #[test]
    fn single_lines_refuse_breaks_and_format_characters() {
        for bad in [
            "Ana\nSilva",
            "Ana\r\nBcc: x@example.com",
            "Ana\tSilva",
            "\u{202E}anA",
            "An\u{200B}a",
            "A\u{2028}b",
            "Ana\u{FEFF}",
            "\u{2066}Ana\u{2069}",
            "Ana\u{AD}",
        ] {
            assert!(has_forbidden_in_line(bad), "{bad:?}");
        }
        for good in
            ["Ana Silva", "José Álvarez-Núñez", "Ø. O'Brien", "محمد\u{200C}رضا", "👨\u{200D}👩\u{200D}👧", "李小龙"]
        {
            assert!(!has_forbidden_in_line(good), "{good:?}");
        }
        let mut c = Checks::new();
        c.line("name", "Ana\u{202E}", 100);
        c.line("other", "  ", 100);
        c.opt_line("phone", Some("1\n2"), 50);
        c.opt_line("none", None, 50);
        match c.finish() {
            Err(Error::Validation(errors)) => {
                let fields: Vec<_> = errors.iter().filter_map(|e| e.field.as_deref()).collect();
                assert_eq!(fields, ["name", "other", "phone"]);
            }
            other => panic!("expected validation errors, got {other:?}"),
        }
    }

    #[test]
    fn checks_collect_every_error() {
        let mut c = Checks::new();
        c.text("name", " ", 10);
        c.timezone("timezone", "Mars/Olympus");
        c.currency("currency", "EURO");
        c.clock_time("checkInTime", "25:00");
        match c.finish() {
            Err(Error::Validation(errors)) => assert_eq!(errors.len(), 4),
            other => panic!("expected validation errors, got {other:?}"),
        }
    }
}
