//! The city tax of a stay, night by night, as the hotel's rule ([`CityTaxRule`]) reckons it.

use chrono::NaiveDate;

use super::tax::{self, LineAmounts};
use crate::model::billing::{CityTaxBasis, CityTaxRule};

/// One night of a stay, as the city tax sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Night {
    pub date: NaiveDate,
    /// The rooms taken that night.
    pub rooms: i64,
    /// The night's room charges, as the hotel's prices are entered (with VAT or without).
    pub room_price: i64,
}

/// Who stays: the reservation's adults and children (infants never pay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Party {
    pub adults: i64,
    pub children: i64,
}

/// How the hotel's prices carry VAT, which the percentage bases need to find a night's net or gross.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pricing {
    pub prices_include_vat: bool,
    pub accommodation_rate_bp: i64,
}

/// The city tax of each night that pays one (the first `max_nights` from arrival; nights of no tax are left out).
/// `None` where an amount would wrap or the rule is incomplete (settings are checked before they are saved, so
/// this is a fault, not an input).
pub fn nightly(
    rule: &CityTaxRule,
    nights: &[Night],
    party: Party,
    pricing: Pricing,
) -> Option<Vec<(NaiveDate, LineAmounts)>> {
    let paying = party.adults.checked_add(if rule.children_exempt { 0 } else { party.children })?;
    let counted = usize::try_from(rule.max_nights.unwrap_or(i64::MAX)).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for night in nights.iter().take(counted) {
        let charged = match rule.basis {
            CityTaxBasis::PerPersonPerNight => tax::times(rule.amount?, paying)?,
            CityTaxBasis::PerRoomPerNight => tax::times(rule.amount?, night.rooms)?,
            CityTaxBasis::PercentOfNet | CityTaxBasis::PercentOfGross => {
                let room = tax::line(night.room_price, pricing.accommodation_rate_bp, pricing.prices_include_vat)?;
                let base = if rule.basis == CityTaxBasis::PercentOfNet { room.net } else { room.gross };
                // A percentage is of what the guest pays: the amount it makes includes its own VAT, if any.
                let amount = tax::share_of(base, rule.rate_basis_points?)?;
                if amount != 0 {
                    out.push((night.date, tax::line(amount, rule.vat_rate_basis_points, true)?));
                }
                continue;
            }
        };
        if charged != 0 {
            out.push((night.date, tax::line(charged, rule.vat_rate_basis_points, pricing.prices_include_vat)?));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(basis: CityTaxBasis) -> CityTaxRule {
        CityTaxRule {
            name: "City tax".into(),
            basis,
            amount: Some(300),
            rate_basis_points: Some(500),
            max_nights: Some(21),
            children_exempt: true,
            vat_rate_basis_points: 0,
        }
    }

    fn stay(nights: i64, price: i64) -> Vec<Night> {
        let first = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        (0..nights).map(|n| Night { date: first + chrono::Days::new(n as u64), rooms: 1, room_price: price }).collect()
    }

    const GROSS_7: Pricing = Pricing { prices_include_vat: true, accommodation_rate_bp: 700 };

    fn amounts(lines: &[(NaiveDate, LineAmounts)]) -> Vec<i64> {
        lines.iter().map(|(_, l)| l.gross).collect()
    }

    #[test]
    fn per_person_per_night_up_to_the_most_nights() {
        let two = Party { adults: 2, children: 0 };
        let three = nightly(&rule(CityTaxBasis::PerPersonPerNight), &stay(3, 10_000), two, GROSS_7).unwrap();
        assert_eq!(amounts(&three), vec![600, 600, 600]);
        assert_eq!(three[0].1, LineAmounts { gross: 600, net: 600, vat: 0 });
        let long = nightly(&rule(CityTaxBasis::PerPersonPerNight), &stay(25, 10_000), two, GROSS_7).unwrap();
        assert_eq!(long.len(), 21, "Berlin charges 21 nights at most");
    }

    #[test]
    fn children_pay_unless_exempt() {
        let family = Party { adults: 2, children: 1 };
        let exempt = nightly(&rule(CityTaxBasis::PerPersonPerNight), &stay(1, 10_000), family, GROSS_7).unwrap();
        assert_eq!(amounts(&exempt), vec![600]);
        let paying = CityTaxRule { children_exempt: false, ..rule(CityTaxBasis::PerPersonPerNight) };
        assert_eq!(amounts(&nightly(&paying, &stay(1, 10_000), family, GROSS_7).unwrap()), vec![900]);
        let child_alone = Party { adults: 0, children: 1 };
        assert!(nightly(&rule(CityTaxBasis::PerPersonPerNight), &stay(2, 10_000), child_alone, GROSS_7)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn per_room_and_percentages() {
        let two = Party { adults: 2, children: 0 };
        let mut nights = stay(2, 10_700);
        nights[1].rooms = 2;
        assert_eq!(
            amounts(&nightly(&rule(CityTaxBasis::PerRoomPerNight), &nights, two, GROSS_7).unwrap()),
            vec![300, 600]
        );
        // 5 % of 107.00 gross is 5.35; of its net 100.00, 5.00.
        assert_eq!(
            amounts(&nightly(&rule(CityTaxBasis::PercentOfGross), &nights, two, GROSS_7).unwrap()),
            vec![535, 535]
        );
        assert_eq!(
            amounts(&nightly(&rule(CityTaxBasis::PercentOfNet), &nights, two, GROSS_7).unwrap()),
            vec![500, 500]
        );
        // Prices entered without VAT: 100.00 net is 107.00 gross.
        let net_7 = Pricing { prices_include_vat: false, accommodation_rate_bp: 700 };
        let net_nights = stay(1, 10_000);
        assert_eq!(amounts(&nightly(&rule(CityTaxBasis::PercentOfGross), &net_nights, two, net_7).unwrap()), vec![535]);
    }

    #[test]
    fn a_city_tax_with_its_own_vat() {
        let taxed = CityTaxRule { vat_rate_basis_points: 700, ..rule(CityTaxBasis::PerRoomPerNight) };
        let lines = nightly(&taxed, &stay(1, 10_000), Party { adults: 1, children: 0 }, GROSS_7).unwrap();
        assert_eq!(lines[0].1, LineAmounts { gross: 300, net: 280, vat: 20 });
    }
}
