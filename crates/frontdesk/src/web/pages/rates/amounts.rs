//! Amounts and percentages as an operator types them in the rates forms.

use crate::domain::money;

/// An amount in major units with an optional sign (`-5.50`, `+10`, `−3`), as minor units of `currency`.
pub(super) fn signed_amount(text: &str, currency: &str) -> Result<i64, String> {
    let text = text.trim();
    let (negative, magnitude) = match text.chars().next() {
        Some('-') | Some('−') => (true, text.trim_start_matches(['-', '−'])),
        Some('+') => (false, text.trim_start_matches('+')),
        _ => (false, text),
    };
    let minor = money::parse(magnitude, currency).map_err(|message| capitalize(&message) + ".")?;
    Ok(if negative { -minor } else { minor })
}

/// A percentage with at most two decimals (`10`, `-12.5`, `7.25 %`) in hundredths of a per cent.
pub(super) fn percent_hundredths(text: &str) -> Result<i64, String> {
    let text = text.trim().trim_end_matches('%').trim();
    let (negative, magnitude) = match text.chars().next() {
        Some('-') | Some('−') => (true, text.trim_start_matches(['-', '−'])),
        Some('+') => (false, text.trim_start_matches('+')),
        _ => (false, text),
    };
    let (whole, fraction) = magnitude.split_once('.').unwrap_or((magnitude, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) || whole.len() > 6 {
        return Err("Enter a percentage such as 10 or -12.5.".into());
    }
    if fraction.len() > 2 {
        return Err("A percentage may have two decimals at most.".into());
    }
    let value =
        format!("{whole}{fraction:0<2}").parse::<i64>().map_err(|_| "Enter a percentage such as 10.".to_string())?;
    Ok(if negative { -value } else { value })
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_percentages_are_read_exactly() {
        assert_eq!(signed_amount("-5.50", "EUR"), Ok(-550));
        assert_eq!(signed_amount("+10", "EUR"), Ok(1000));
        assert_eq!(signed_amount("1,200", "JPY"), Ok(1200));
        assert!(signed_amount("1.5", "JPY").is_err());
        assert_eq!(percent_hundredths("10"), Ok(1000));
        assert_eq!(percent_hundredths("-12.5 %"), Ok(-1250));
        assert_eq!(percent_hundredths("0.25"), Ok(25));
        assert!(percent_hundredths("1.234").is_err());
        assert!(percent_hundredths("ten").is_err());
        assert!(percent_hundredths("-").is_err());
    }
}
