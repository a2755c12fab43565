//! Amounts of money: integers in minor units of a currency (12000 EUR = 120.00 EUR).
//!
//! Every amount the service accepts or computes (a night's price, a room's price for a stay, a reservation's total,
//! an offer's total, a folio's total) lies in `0..=MAX_AMOUNT`. The bound is far above any real stay (10^12 minor
//! units is ten billion euros) and far below where 64-bit sums wrap, and every sum is computed with [`sum`], so no
//! amount ever wraps: an input beyond it is refused naming its field, and a sum beyond it is refused (or, for a
//! search, not offered).

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

#[cfg(test)]
mod tests {
    use super::*;

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
