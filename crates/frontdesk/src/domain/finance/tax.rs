//! VAT on a line, and a price split into parts: the one rounding rule of docs/money.md.
//!
//! Amounts are integers in the currency's minor units, so every rule here is exact arithmetic on integers (in
//! `i128`, so that no product of an amount and a rate can wrap), rounded once per line, half away from zero (half up
//! for the positive amounts lines carry). Totals per rate are sums of lines, never rounded again: what a folio or an
//! invoice shows adds up to the cent. The currency's number of decimals plays no part: a minor unit is a minor unit
//! whether a euro has 100 of them, a yen 1 or a dinar 1,000.

/// 100 % in basis points.
pub const WHOLE: i64 = 10_000;

/// A line's amounts: `gross = net + vat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAmounts {
    pub gross: i64,
    pub net: i64,
    pub vat: i64,
}

/// `numerator / denominator`, rounded half away from zero (`denominator > 0`).
fn divide_rounded(numerator: i128, denominator: i128) -> i128 {
    let quotient = numerator / denominator;
    let remainder = numerator % denominator;
    if remainder.abs() * 2 >= denominator {
        quotient + numerator.signum()
    } else {
        quotient
    }
}

/// The VAT contained in `gross` at `rate_bp`: `gross × rate / (1 + rate)`, rounded. 100.00 at 7 % holds 6.54.
pub fn vat_in_gross(gross: i64, rate_bp: i64) -> Option<i64> {
    if !(0..=WHOLE).contains(&rate_bp) {
        return None;
    }
    let vat = divide_rounded(i128::from(gross) * i128::from(rate_bp), i128::from(WHOLE + rate_bp));
    i64::try_from(vat).ok()
}

/// The VAT on `net` at `rate_bp`: `net × rate`, rounded.
pub fn vat_on_net(net: i64, rate_bp: i64) -> Option<i64> {
    if !(0..=WHOLE).contains(&rate_bp) {
        return None;
    }
    i64::try_from(divide_rounded(i128::from(net) * i128::from(rate_bp), i128::from(WHOLE))).ok()
}

/// A line of `amount` (gross when `amount_includes_vat`, net otherwise) at `rate_bp`.
pub fn line(amount: i64, rate_bp: i64, amount_includes_vat: bool) -> Option<LineAmounts> {
    if amount_includes_vat {
        let vat = vat_in_gross(amount, rate_bp)?;
        Some(LineAmounts { gross: amount, net: amount.checked_sub(vat)?, vat })
    } else {
        let vat = vat_on_net(amount, rate_bp)?;
        Some(LineAmounts { gross: amount.checked_add(vat)?, net: amount, vat })
    }
}

/// `amount` × `quantity`, or `None` where it would wrap.
pub fn times(amount: i64, quantity: i64) -> Option<i64> {
    amount.checked_mul(quantity)
}

/// `rate_bp` of `amount`, rounded (a percentage of a price).
pub fn share_of(amount: i64, rate_bp: i64) -> Option<i64> {
    vat_on_net(amount, rate_bp)
}

/// `amount` split by `shares_bp` (which add up to [`WHOLE`]) into parts that add up to `amount` exactly: each part
/// rounded down, and the minor units left over given one each to the parts that lost most by rounding (the first
/// of equal ones). 20.00 split 70/30 is 14.00 and 6.00; 0.10 split in thirds is 0.04, 0.03, 0.03.
pub fn split(amount: i64, shares_bp: &[i64]) -> Option<Vec<i64>> {
    if shares_bp.iter().any(|s| !(0..=WHOLE).contains(s)) || shares_bp.iter().sum::<i64>() != WHOLE {
        return None;
    }
    let whole = i128::from(WHOLE);
    let exact: Vec<i128> = shares_bp.iter().map(|s| i128::from(amount) * i128::from(*s)).collect();
    let mut parts: Vec<i128> = exact.iter().map(|e| e.div_euclid(whole)).collect();
    let left = i128::from(amount) - parts.iter().sum::<i128>();
    let mut by_loss: Vec<usize> = (0..parts.len()).collect();
    by_loss.sort_by_key(|&i| (std::cmp::Reverse(exact[i].rem_euclid(whole)), i));
    for &i in by_loss.iter().take(usize::try_from(left).ok()?) {
        parts[i] += 1;
    }
    parts.into_iter().map(|p| i64::try_from(p).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_is_taken_out_of_the_gross_per_line_half_up() {
        assert_eq!(line(10_000, 700, true), Some(LineAmounts { gross: 10_000, net: 9_346, vat: 654 }));
        assert_eq!(line(1_400, 700, true).map(|l| l.vat), Some(92));
        assert_eq!(line(600, 1_900, true).map(|l| l.vat), Some(96));
        // 1.07 at 7 % holds exactly 0.07; 0.01 at 100 % holds half a cent, which rounds up.
        assert_eq!(vat_in_gross(107, 700), Some(7));
        assert_eq!(vat_in_gross(1, WHOLE), Some(1));
        assert_eq!(vat_in_gross(0, 1_900), Some(0));
        // A correction (negative) mirrors its charge.
        assert_eq!(line(-10_000, 700, true), Some(LineAmounts { gross: -10_000, net: -9_346, vat: -654 }));
    }

    #[test]
    fn vat_on_net_prices() {
        assert_eq!(line(10_000, 1_900, false), Some(LineAmounts { gross: 11_900, net: 10_000, vat: 1_900 }));
        // 0.05 at 10 % is half a cent of VAT: up.
        assert_eq!(vat_on_net(5, 1_000), Some(1));
        assert_eq!(vat_on_net(4, 1_000), Some(0));
    }

    #[test]
    fn rates_outside_0_to_100_percent_and_overflow_are_refused() {
        assert_eq!(vat_in_gross(100, -1), None);
        assert_eq!(vat_in_gross(100, WHOLE + 1), None);
        assert_eq!(line(i64::MAX, 1_900, false), None);
        assert_eq!(times(i64::MAX, 2), None);
        // The largest amounts still compute exactly (i128 inside).
        assert!(line(i64::MAX, 1_900, true).is_some());
    }

    #[test]
    fn a_split_adds_up_exactly() {
        assert_eq!(split(2_000, &[7_000, 3_000]), Some(vec![1_400, 600]));
        assert_eq!(split(10, &[3_334, 3_333, 3_333]), Some(vec![4, 3, 3]));
        assert_eq!(split(1, &[5_000, 5_000]), Some(vec![1, 0]));
        assert_eq!(split(0, &[WHOLE]), Some(vec![0]));
        for amount in [1, 7, 99, 12_345, 1_000_000_000_000] {
            let parts = split(amount, &[1_250, 2_500, 6_250]).unwrap();
            assert_eq!(parts.iter().sum::<i64>(), amount, "{amount}");
        }
        assert_eq!(split(100, &[7_000, 2_000]), None, "shares must make the whole");
    }

    #[test]
    fn currencies_of_0_and_3_decimals_round_alike() {
        // JPY 1,000 at 10 % holds JPY 91 (90.9...); BHD 1.000 at 10 % holds 0.091.
        assert_eq!(vat_in_gross(1_000, 1_000), Some(91));
    }
}
