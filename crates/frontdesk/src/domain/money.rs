//! Amounts of money: integers in minor units of a currency (12000 EUR = 120.00 EUR).
//!
//! Every amount the service accepts or computes (a night's price, a room's price for a stay, a reservation's total,
//! an offer's total, a folio's total) lies in `0..=MAX_AMOUNT`. The bound is far above any real stay (10^12 minor
//! units is ten billion euros) and far below where 64-bit sums wrap, and every sum is computed with [`sum`], so no
//! amount ever wraps: an input beyond it is refused naming its field, and a sum beyond it is refused (or, for a
//! search, not offered).
//!
//! People read and type major units (`EUR 120.00`, `JPY 12,000`): [`format`] and [`parse`] convert with the
//! currency's ISO 4217 minor-unit exponent, exactly: decimal text is parsed digit by digit into an integer, never
//! through floating point.

/// The largest amount, in minor units: 10^12.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;

/// What an amount out of bounds is told.
pub fn out_of_bounds_message() -> String {
    format!("must be an amount between 0 and {MAX_AMOUNT} minor units")
}

/// Whether `amount` is one the service accepts.
pub fn in_bounds(amount: i64) -> bool {
    (0..=MAX_AMOUNT).contains(&amount)
}

/// The sum of `amounts` if every one and the sum are within bounds; `None` otherwise (never a wrapped value).
pub fn sum(amounts: impl IntoIterator<Item = i64>) -> Option<i64> {
    amounts
        .into_iter()
        .try_fold(0_i64, |total, amount| total.checked_add(amount).filter(|t| in_bounds(amount) && in_bounds(*t)))
}

/// Digits after the decimal point of `currency` (2 for EUR, 0 for JPY, 3 for BHD). Codes without a defined
/// exponent (XAU and the like) are treated as having none.
pub fn exponent(currency: &str) -> u32 {
    iso_currency::Currency::from_code(currency).and_then(|c| c.exponent()).map(u32::from).unwrap_or(0)
}

/// `minor` formatted in major units with thousands separators, without the code: `1,234.50`, `-12,000`.
pub fn format_amount(minor: i64, currency: &str) -> String {
    let exp = exponent(currency);
    let unit = 10u64.pow(exp);
    let magnitude = minor.unsigned_abs();
    let whole = group_thousands(magnitude / unit);
    let sign = if minor < 0 { "-" } else { "" };
    match exp {
        0 => format!("{sign}{whole}"),
        _ => format!("{sign}{whole}.{:0width$}", magnitude % unit, width = exp as usize),
    }
}

/// `minor` with its currency code: `EUR 120.00`.
pub fn format(minor: i64, currency: &str) -> String {
    format!("{currency} {}", format_amount(minor, currency))
}

/// The value of an `<input>` that edits an amount: major units without separators (`1234.50`), which
/// [`parse`] reads back exactly.
pub fn input_value(minor: i64, currency: &str) -> String {
    format_amount(minor, currency).replace(',', "")
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Reads an amount typed in major units (`120`, `120.5`, `1,200.00`, ` 99.90 `) as minor units of `currency`.
/// Refuses signs, more decimals than the currency has, misplaced separators, and amounts beyond `i64`.
pub fn parse(text: &str, currency: &str) -> Result<i64, String> {
    let exp = exponent(currency);
    let text = text.trim();
    if text.is_empty() {
        return Err("enter an amount".into());
    }
    let (whole, fraction) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text, None),
    };
    let whole_digits = strip_grouping(whole).ok_or_else(|| format!("{text:?} is not an amount such as 120.00"))?;
    let fraction = fraction.unwrap_or("");
    if !fraction.chars().all(|c| c.is_ascii_digit()) || (whole_digits.is_empty() && fraction.is_empty()) {
        return Err(format!("{text:?} is not an amount such as 120.00"));
    }
    if fraction.len() > exp as usize {
        return Err(match exp {
            0 => format!("{currency} has no decimals"),
            n => format!("{currency} has at most {n} decimals"),
        });
    }
    let too_large = || "the amount is too large".to_string();
    let mut minor: i64 = 0;
    for c in whole_digits.chars().chain(fraction.chars()).chain(std::iter::repeat_n('0', exp as usize - fraction.len()))
    {
        let digit = i64::from(c.to_digit(10).ok_or_else(too_large)?);
        minor = minor.checked_mul(10).and_then(|m| m.checked_add(digit)).ok_or_else(too_large)?;
    }
    if !in_bounds(minor) {
        return Err(format!("the amount is too large (at most {})", format(MAX_AMOUNT, currency)));
    }
    Ok(minor)
}

/// The digits of an integer part, with optional thousands commas in their proper places (`1,200` but not `12,00`).
fn strip_grouping(whole: &str) -> Option<String> {
    if !whole.contains(',') {
        return whole.chars().all(|c| c.is_ascii_digit()).then(|| whole.to_string());
    }
    let groups: Vec<&str> = whole.split(',').collect();
    let first_ok = (1..=3).contains(&groups[0].len());
    let rest_ok = groups[1..].iter().all(|g| g.len() == 3);
    let digits_ok = groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()));
    (first_ok && rest_ok && digits_ok).then(|| groups.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_the_currency_exponent() {
        assert_eq!(format(12000, "EUR"), "EUR 120.00");
        assert_eq!(format(12000, "JPY"), "JPY 12,000");
        assert_eq!(format(1234567, "BHD"), "BHD 1,234.567");
        assert_eq!(format(-5, "EUR"), "EUR -0.05");
        assert_eq!(format(123456789, "USD"), "USD 1,234,567.89");
        assert_eq!(format(i64::MIN, "EUR"), "EUR -92,233,720,368,547,758.08");
        assert_eq!(input_value(123450, "EUR"), "1234.50");
    }

    #[test]
    fn parses_exactly() {
        assert_eq!(parse("120", "EUR"), Ok(12000));
        assert_eq!(parse("120.5", "EUR"), Ok(12050));
        assert_eq!(parse(" 1,200.05 ", "EUR"), Ok(120005));
        assert_eq!(parse(".5", "EUR"), Ok(50));
        assert_eq!(parse("0.1", "EUR"), Ok(10), "0.1 is exact in decimal, unlike binary floating point");
        assert_eq!(parse("12000", "JPY"), Ok(12000));
        assert_eq!(parse("1.234", "BHD"), Ok(1234));
        assert!(parse("12.5", "JPY").is_err());
        assert!(parse("1.005", "EUR").is_err());
        assert!(parse("-1", "EUR").is_err());
        assert!(parse("12,00", "EUR").is_err());
        assert!(parse("1e3", "EUR").is_err());
        assert!(parse("", "EUR").is_err());
        assert!(parse(".", "EUR").is_err());
        assert!(parse("99999999999999999999", "EUR").is_err());
        assert_eq!(parse("10,000,000,000.00", "EUR"), Ok(MAX_AMOUNT));
        assert!(parse("10,000,000,000.01", "EUR").is_err(), "beyond the largest amount");
        for minor in [0, 1, 99, 100, 12345, 100000000] {
            assert_eq!(parse(&input_value(minor, "EUR"), "EUR"), Ok(minor));
            assert_eq!(parse(&format_amount(minor, "EUR"), "EUR"), Ok(minor));
        }
    }

    #[test]
    fn sums_never_wrap() {
        assert_eq!(sum([1, 2, 3]), Some(6));
        assert_eq!(sum([]), Some(0));
        assert_eq!(sum([MAX_AMOUNT]), Some(MAX_AMOUNT));
        assert_eq!(sum([MAX_AMOUNT, 1]), None);
        assert_eq!(sum([i64::MAX, i64::MAX]), None);
        assert_eq!(sum([-1, 2]), None);
        assert_eq!(sum([i64::MAX]), None);
    }
}
