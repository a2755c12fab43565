//! The revenue report of a hotel for a period: its posted charges less allowances by service date, category and
//! VAT rate (what the hotel earned, and the VAT it owes on it), and the payments and refunds by method (what it
//! took). Only posted lines count: a night not yet passed is not revenue. An accountant's import takes it as CSV.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::folios::{LineKind, PaymentMethod, VatTotal};
use crate::domain::access::{Actor, Scope};
use crate::domain::validate::{parse_date, Checks};
use crate::domain::{hotels, money, Result};
use crate::model::codes::CurrencyCode;
use crate::store::{self, Db};

/// The longest period one report covers: a year (a leap year's days).
pub const MAX_DAYS: i64 = 366;

/// Which report: a hotel and a period, both dates included.
#[derive(Debug, Clone, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RevenueQuery {
    pub hotel_id: String,
    /// The first service date, `YYYY-MM-DD`.
    #[param(format = Date)]
    pub date_from: String,
    /// The last service date, `YYYY-MM-DD` (at most 366 days after `dateFrom`).
    #[param(format = Date)]
    pub date_to: String,
}

/// What a hotel earned on one service date in one category at one VAT rate: posted charges less allowances.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RevenueRow {
    #[schema(value_type = String, format = Date)]
    pub date: NaiveDate,
    pub category: String,
    pub vat_rate_basis_points: i64,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub net: i64,
    pub vat: i64,
    pub gross: i64,
    /// How many lines (charges and allowances) make it.
    pub lines: i64,
}

/// What a hotel took by one method over the period.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PaymentsRow {
    pub method: PaymentMethod,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub received: i64,
    pub refunded: i64,
    /// `received - refunded`.
    pub net: i64,
}

/// The period's sums in one currency.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RevenueTotals {
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub net: i64,
    pub vat: i64,
    pub gross: i64,
    /// By VAT rate, lowest first.
    pub vat_totals: Vec<VatTotal>,
    pub received: i64,
    pub refunded: i64,
}

/// A hotel's revenue and takings for a period. Amounts in minor units of their currency (a hotel whose stays were
/// sold in more than one currency has rows and totals for each).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RevenueReport {
    pub hotel_id: String,
    #[schema(value_type = String, format = Date)]
    pub date_from: NaiveDate,
    #[schema(value_type = String, format = Date)]
    pub date_to: NaiveDate,
    /// By service date, then category, then VAT rate.
    pub revenue: Vec<RevenueRow>,
    /// By method, in the order of `PaymentMethod`.
    pub payments: Vec<PaymentsRow>,
    /// One per currency.
    pub totals: Vec<RevenueTotals>,
}

/// The period a query names, or every problem with it.
pub(crate) fn period(query: &RevenueQuery) -> Result<(NaiveDate, NaiveDate)> {
    let mut checks = Checks::new();
    let from = parse_date(&mut checks, "dateFrom", &query.date_from);
    let to = parse_date(&mut checks, "dateTo", &query.date_to);
    if let (Some(from), Some(to)) = (from, to) {
        if to < from {
            checks.fail("dateTo", "must not be before dateFrom");
        } else if (to - from).num_days() >= MAX_DAYS {
            checks.fail("dateTo", format!("must be within {MAX_DAYS} days of dateFrom (both included)"));
        }
    }
    checks.finish()?;
    match (from, to) {
        (Some(from), Some(to)) => Ok((from, to)),
        _ => Err(crate::domain::Error::Internal(anyhow::anyhow!("dates checked but missing"))),
    }
}

/// The revenue report a query asks for, of a hotel the actor sees (404 otherwise); `folios:read`.
pub async fn report(db: &Db, actor: &Actor, query: &RevenueQuery) -> Result<RevenueReport> {
    actor.require_scope(Scope::FoliosRead)?;
    let (from, to) = period(query)?;
    let hotel = hotels::get(db, actor, &query.hotel_id).await?;
    let sums = store::folios::posted_sums(&mut *db.read().await?, &hotel.id, from, to).await?;
    Ok(fold(hotel.id, from, to, sums))
}

/// The report from the store's sums (by date, kind, category, rate, method and currency).
fn fold(
    hotel_id: String,
    date_from: NaiveDate,
    date_to: NaiveDate,
    sums: Vec<store::folios::PostedSum>,
) -> RevenueReport {
    let mut revenue: Vec<RevenueRow> = Vec::new();
    let mut payments: Vec<PaymentsRow> = Vec::new();
    let mut totals: Vec<RevenueTotals> = Vec::new();
    for s in sums {
        let total = match totals.iter().position(|t| t.currency == s.currency) {
            Some(i) => &mut totals[i],
            None => {
                totals.push(RevenueTotals {
                    currency: s.currency.clone(),
                    net: 0,
                    vat: 0,
                    gross: 0,
                    vat_totals: Vec::new(),
                    received: 0,
                    refunded: 0,
                });
                let last = totals.len() - 1;
                &mut totals[last]
            }
        };
        match s.kind {
            LineKind::Charge | LineKind::Allowance => {
                let sign = s.kind.sign();
                let (net, vat, gross) =
                    (sign.saturating_mul(s.net), sign.saturating_mul(s.vat), sign.saturating_mul(s.gross));
                let category = s.category.clone().unwrap_or_else(|| super::billing::OTHER.to_string());
                // Charges and allowances of the same date, category and rate make one row.
                let same = |r: &&mut RevenueRow| {
                    r.date == s.service_date
                        && r.category == category
                        && r.vat_rate_basis_points == s.vat_rate_basis_points
                        && r.currency == s.currency
                };
                match revenue.iter_mut().find(|r| same(r)) {
                    Some(row) => {
                        row.net = row.net.saturating_add(net);
                        row.vat = row.vat.saturating_add(vat);
                        row.gross = row.gross.saturating_add(gross);
                        row.lines = row.lines.saturating_add(s.lines);
                    }
                    None => revenue.push(RevenueRow {
                        date: s.service_date,
                        category,
                        vat_rate_basis_points: s.vat_rate_basis_points,
                        currency: s.currency.clone(),
                        net,
                        vat,
                        gross,
                        lines: s.lines,
                    }),
                }
                total.net = total.net.saturating_add(net);
                total.vat = total.vat.saturating_add(vat);
                total.gross = total.gross.saturating_add(gross);
                match total.vat_totals.iter_mut().find(|t| t.vat_rate_basis_points == s.vat_rate_basis_points) {
                    Some(t) => {
                        t.net = t.net.saturating_add(net);
                        t.vat = t.vat.saturating_add(vat);
                        t.gross = t.gross.saturating_add(gross);
                    }
                    None => total.vat_totals.push(VatTotal {
                        vat_rate_basis_points: s.vat_rate_basis_points,
                        net,
                        vat,
                        gross,
                    }),
                }
            }
            LineKind::Payment | LineKind::Refund => {
                let method = s.method.unwrap_or(PaymentMethod::Other);
                let row = match payments.iter().position(|p| p.method == method && p.currency == s.currency) {
                    Some(i) => &mut payments[i],
                    None => {
                        payments.push(PaymentsRow {
                            method,
                            currency: s.currency.clone(),
                            received: 0,
                            refunded: 0,
                            net: 0,
                        });
                        let last = payments.len() - 1;
                        &mut payments[last]
                    }
                };
                if s.kind == LineKind::Payment {
                    row.received = row.received.saturating_add(s.gross);
                    total.received = total.received.saturating_add(s.gross);
                } else {
                    row.refunded = row.refunded.saturating_add(s.gross);
                    total.refunded = total.refunded.saturating_add(s.gross);
                }
                row.net = row.received.saturating_sub(row.refunded);
            }
        }
    }
    revenue.sort_by(|a, b| {
        (a.date, &a.category, a.vat_rate_basis_points, &a.currency).cmp(&(
            b.date,
            &b.category,
            b.vat_rate_basis_points,
            &b.currency,
        ))
    });
    let order = |m: PaymentMethod| PaymentMethod::CHOICES.iter().position(|(v, _)| *v == <&str>::from(m));
    payments.sort_by(|a, b| (order(a.method), &a.currency).cmp(&(order(b.method), &b.currency)));
    for t in &mut totals {
        t.vat_totals.sort_by_key(|v| v.vat_rate_basis_points);
    }
    totals.sort_by(|a, b| a.currency.cmp(&b.currency));
    RevenueReport { hotel_id, date_from, date_to, revenue, payments, totals }
}

/// The report as CSV for an accountant's import: one row per revenue row (`revenue`) and per payment method
/// (`payments`), amounts in major units with a point (`93.46`), a header naming the columns.
pub fn csv(report: &RevenueReport) -> String {
    let mut out = String::from(
        "section,date,category,vat_rate_percent,payment_method,currency,net,vat,gross,received,refunded\n",
    );
    let amount = |minor: i64, currency: &str| money::input_value(minor, currency);
    for r in &report.revenue {
        out.push_str(&format!(
            "revenue,{},{},{},,{},{},{},{},,\n",
            r.date,
            csv_field(&r.category),
            percent(r.vat_rate_basis_points),
            r.currency,
            amount(r.net, &r.currency),
            amount(r.vat, &r.currency),
            amount(r.gross, &r.currency),
        ));
    }
    for p in &report.payments {
        let method: &str = p.method.into();
        out.push_str(&format!(
            "payments,,,,{method},{},,,,{},{}\n",
            p.currency,
            amount(p.received, &p.currency),
            amount(p.refunded, &p.currency),
        ));
    }
    out
}

/// The name a downloaded report's file gets: `revenue-2026-12-01-2026-12-31.csv`.
fn csv_file_name(report: &RevenueReport) -> String {
    format!("revenue-{}-{}.csv", report.date_from, report.date_to)
}

/// The report as a CSV file to download: its `Content-Disposition` value and its text.
pub fn csv_download(report: &RevenueReport) -> (String, String) {
    (format!("attachment; filename=\"{}\"", csv_file_name(report)), csv(report))
}

/// A VAT rate in basis points as a percentage with up to two decimals: 700 is `7`, 750 `7.5`.
pub(crate) fn percent(bp: i64) -> String {
    let text = format!("{}.{:02}", bp / 100, bp % 100);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break, and defused when a spreadsheet would read it
/// as a formula (a category is the hotel's own text).
pub(crate) fn csv_field(text: &str) -> String {
    let defused = if text.starts_with(['=', '+', '-', '@']) { format!("'{text}") } else { text.to_string() };
    if defused.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", defused.replace('"', "\"\""))
    } else {
        defused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::folios::PostedSum;

    fn sum(
        date: u32,
        kind: LineKind,
        category: Option<&str>,
        rate: i64,
        method: Option<PaymentMethod>,
        gross: i64,
    ) -> PostedSum {
        let vat = if rate == 0 { 0 } else { gross * rate / (10_000 + rate) };
        PostedSum {
            service_date: NaiveDate::from_ymd_opt(2026, 12, date).unwrap(),
            kind,
            category: category.map(str::to_string),
            vat_rate_basis_points: rate,
            method,
            currency: "EUR".into(),
            gross,
            net: gross - vat,
            vat,
            lines: 1,
        }
    }

    #[test]
    fn allowances_come_off_their_row_and_payments_are_by_method() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 12, d).unwrap();
        let report = fold(
            "h".into(),
            day(1),
            day(2),
            vec![
                sum(1, LineKind::Charge, Some("ACCOMMODATION"), 700, None, 30_000),
                sum(1, LineKind::Allowance, Some("ACCOMMODATION"), 700, None, 10_700),
                sum(1, LineKind::Charge, Some("FOOD_AND_BEVERAGE"), 1900, None, 1_190),
                sum(1, LineKind::Payment, None, 0, Some(PaymentMethod::Card), 20_000),
                sum(2, LineKind::Payment, None, 0, Some(PaymentMethod::BankTransfer), 5_000),
                sum(2, LineKind::Refund, None, 0, Some(PaymentMethod::Card), 1_000),
            ],
        );
        assert_eq!(report.revenue.len(), 2);
        assert_eq!((report.revenue[0].gross, report.revenue[0].lines), (19_300, 2));
        assert_eq!((report.revenue[0].net, report.revenue[0].vat), (18_038, 1_262));
        let card = &report.payments[0];
        assert_eq!((card.method, card.received, card.refunded, card.net), (PaymentMethod::Card, 20_000, 1_000, 19_000));
        assert_eq!(report.payments[1].method, PaymentMethod::BankTransfer);
        let total = &report.totals[0];
        assert_eq!((total.gross, total.received, total.refunded), (20_490, 25_000, 1_000));
        assert_eq!(total.vat_totals.iter().map(|t| t.vat_rate_basis_points).collect::<Vec<_>>(), vec![700, 1900]);
        let csv = csv(&report);
        assert!(csv.contains("revenue,2026-12-01,ACCOMMODATION,7,,EUR,180.38,12.62,193.00,,\n"), "{csv}");
        assert!(csv.contains("payments,,,,CARD,EUR,,,,200.00,10.00\n"), "{csv}");
    }

    #[test]
    fn a_period_is_at_most_a_year_and_in_order() {
        let q =
            |from: &str, to: &str| RevenueQuery { hotel_id: "h".into(), date_from: from.into(), date_to: to.into() };
        assert!(period(&q("2026-01-01", "2026-12-31")).is_ok());
        assert!(period(&q("2024-01-01", "2024-12-31")).is_ok(), "a leap year's 366 days");
        assert!(period(&q("2026-01-01", "2027-01-01")).is_ok(), "366 days, both included");
        assert!(period(&q("2026-01-01", "2027-01-02")).is_err());
        assert!(period(&q("2026-02-01", "2026-01-31")).is_err());
        assert!(period(&q("2026-02-30", "tomorrow")).is_err());
    }

    #[test]
    fn categories_cannot_smuggle_formulas_or_break_rows() {
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("SPA, WELLNESS"), "\"SPA, WELLNESS\"");
        assert_eq!(percent(750), "7.5");
        assert_eq!(percent(0), "0");
    }
}
