//! What an invoice says, made from a folio without touching the store: which lines it takes, which payments it
//! shows, every reason it cannot be issued yet ([`draft`]), and the cancellation invoice that negates one
//! ([`cancellation`]).

use chrono::NaiveDate;

use crate::domain::finance::billing::BillingSettings;
use crate::domain::finance::folios::{FolioLine, LineKind};
use crate::domain::{money, FieldError};
use crate::model::guests::Guest;
use crate::model::hotels::Hotel;
use crate::model::invoices::{
    Invoice, InvoiceDocument, InvoiceIssuer, InvoiceKind, InvoiceLanguage, InvoiceLine, InvoicePayment,
    InvoiceRecipient, InvoiceVatTotal, PostalAddress, RecipientKind, ServicePeriod,
};
use crate::model::reservations::{Reservation, ReservationStatus};

/// An invoice up to this gross, in major units of its currency, may leave out the recipient's address (Germany's
/// small-amount invoice, § 33 UStDV: 250 euros; the same figure in major units of any other currency).
pub const SMALL_AMOUNT_MAJOR_UNITS: i64 = 250;

/// The recipient an invoice is issued to, as the issuer chose it (checked and cleaned).
#[derive(Debug, Clone)]
pub enum Recipient {
    /// The reservation's guest, with the address on the guest's record.
    Guest,
    Company {
        name: String,
        address: PostalAddress,
        vat_id: Option<String>,
    },
}

/// What the folio, its stay and the hotel hold, as an issue reads them.
pub struct Folio<'a> {
    pub hotel: &'a Hotel,
    pub billing: &'a BillingSettings,
    pub reservation: &'a Reservation,
    pub guest: Option<&'a Guest>,
    pub lines: &'a [FolioLine],
    /// The folio's invoices so far (cancelled ones included).
    pub invoices: &'a [Invoice],
}

/// The invoice a folio would be closed into now, without its number; or every reason it cannot be yet.
pub struct Draft {
    pub document: InvoiceDocument,
    /// The folio lines it takes.
    pub line_ids: Vec<String>,
}

/// A draft that cannot be issued, with every reason.
pub struct Refused {
    pub draft: Draft,
    pub problems: Vec<FieldError>,
}

fn problem(field: &str, message: impl Into<String>) -> FieldError {
    FieldError::field(field, message)
}

/// The smallest gross an invoice must have to need the recipient's address, in minor units.
fn small_amount(currency: &str) -> i64 {
    SMALL_AMOUNT_MAJOR_UNITS.saturating_mul(10_i64.pow(money::exponent(currency)))
}

/// `net / quantity`, rounded half away from zero.
fn unit_net(net: i64, quantity: i64) -> i64 {
    if quantity <= 1 {
        return net;
    }
    let (q, r) = (net / quantity, net % quantity);
    if r.abs() * 2 >= quantity {
        q + net.signum()
    } else {
        q
    }
}

/// The invoice line of a folio charge or allowance (an allowance's amounts negative).
fn invoice_line(l: &FolioLine) -> InvoiceLine {
    let sign = match l.kind {
        LineKind::Allowance => -1,
        _ => 1,
    };
    let description = match (&l.kind, &l.reason) {
        (LineKind::Allowance, Some(reason)) => format!("{} ({reason})", l.description),
        _ => l.description.clone(),
    };
    let quantity = if l.kind == LineKind::Allowance { 1 } else { l.quantity.max(1) };
    InvoiceLine {
        folio_line_id: l.id.clone(),
        service_date: l.service_date,
        description,
        quantity,
        unit_net: unit_net(sign * l.net, quantity),
        vat_rate_basis_points: l.vat_rate_basis_points,
        net: sign * l.net,
        vat: sign * l.vat,
        gross: sign * l.gross,
    }
}

/// The totals of each VAT rate of `lines`, lowest rate first: sums of the lines (the rounding rule of the folio).
pub fn vat_totals(lines: &[InvoiceLine]) -> Vec<InvoiceVatTotal> {
    let mut totals: Vec<InvoiceVatTotal> = Vec::new();
    for l in lines {
        match totals.iter_mut().find(|t| t.vat_rate_basis_points == l.vat_rate_basis_points) {
            Some(t) => {
                t.net = t.net.saturating_add(l.net);
                t.vat = t.vat.saturating_add(l.vat);
                t.gross = t.gross.saturating_add(l.gross);
            }
            None => totals.push(InvoiceVatTotal {
                vat_rate_basis_points: l.vat_rate_basis_points,
                net: l.net,
                vat: l.vat,
                gross: l.gross,
            }),
        }
    }
    totals.sort_by_key(|t| t.vat_rate_basis_points);
    totals
}

/// The folio's payments, less what was refunded of each, less what the folio's other invoices in force already
/// show as paid (taken from the oldest payments first): what this invoice shows as received.
fn payments_left(lines: &[FolioLine], invoices: &[Invoice], hotel: &Hotel) -> Vec<InvoicePayment> {
    let mut already_shown: i64 = invoices
        .iter()
        .filter(|i| i.document.kind == InvoiceKind::Invoice && i.cancelled_by_invoice_id.is_none())
        .map(|i| i.document.paid)
        .fold(0, i64::saturating_add);
    let mut shown = Vec::new();
    for p in lines.iter().filter(|l| l.kind == LineKind::Payment) {
        let refunded = lines
            .iter()
            .filter(|l| l.kind == LineKind::Refund && l.corrects_line_id.as_deref() == Some(p.id.as_str()))
            .map(|l| l.gross)
            .fold(0, i64::saturating_add);
        let mut amount = p.gross.saturating_sub(refunded);
        let taken = already_shown.min(amount).max(0);
        amount -= taken;
        already_shown -= taken;
        if amount <= 0 {
            continue;
        }
        let Some(method) = p.method else { continue };
        shown.push(InvoicePayment {
            paid_on: p.paid_at.map_or(p.service_date, |at| hotel.local_date(at)),
            method,
            reference: p.reference.clone(),
            amount,
        });
    }
    shown
}

fn issuer(hotel: &Hotel, billing: &BillingSettings, problems: &mut Vec<FieldError>) -> InvoiceIssuer {
    let settings = billing.invoice_issuer.clone().unwrap_or_default();
    let mut required = |field: &str, value: &Option<String>, what: &str| {
        if value.is_none() {
            problems.push(problem(
                &format!("invoiceIssuer.{field}"),
                format!("the hotel's billing settings have no {what} of the issuer"),
            ));
        }
    };
    required("legalName", &settings.legal_name, "legal name");
    required("street", &settings.street, "street");
    required("postalCode", &settings.postal_code, "postal code");
    required("city", &settings.city, "city");
    required("country", &settings.country, "country");
    required("vatId", &settings.vat_id, "VAT identification number");
    InvoiceIssuer {
        legal_name: settings.legal_name.unwrap_or_default(),
        hotel_name: hotel.name.clone(),
        address: PostalAddress {
            street: settings.street,
            postal_code: settings.postal_code,
            city: settings.city,
            country: settings.country,
        },
        vat_id: settings.vat_id.unwrap_or_default(),
        tax_number: settings.tax_number,
    }
}

fn recipient(
    chosen: &Recipient,
    guest: Option<&Guest>,
    needs_address: bool,
    problems: &mut Vec<FieldError>,
) -> InvoiceRecipient {
    let (kind, name, address, vat_id, whose) = match chosen {
        Recipient::Guest => {
            let Some(g) = guest else {
                problems.push(problem("recipient", "the reservation has no guest: issue it to a company"));
                return InvoiceRecipient {
                    kind: RecipientKind::Guest,
                    name: String::new(),
                    address: PostalAddress::default(),
                    vat_id: None,
                };
            };
            let name = format!("{} {}", g.first_name, g.last_name).trim().to_string();
            let address = PostalAddress {
                street: g.street.clone(),
                postal_code: g.postal_code.clone(),
                city: g.city.clone(),
                country: g.country.clone(),
            };
            (RecipientKind::Guest, name, address, None, "the guest has no")
        }
        Recipient::Company { name, address, vat_id } => {
            (RecipientKind::Company, name.clone(), address.clone(), vat_id.clone(), "the recipient has no")
        }
    };
    if name.is_empty() {
        problems.push(problem("recipient.name", format!("{whose} name")));
    }
    if needs_address {
        let small = format!("(an invoice over {SMALL_AMOUNT_MAJOR_UNITS} must carry the recipient's address)");
        for (field, value, what) in [
            ("street", &address.street, "street"),
            ("postalCode", &address.postal_code, "postal code"),
            ("city", &address.city, "city"),
            ("country", &address.country, "country"),
        ] {
            if value.is_none() {
                problems.push(problem(&format!("recipient.{field}"), format!("{whose} {what} {small}")));
            }
        }
    }
    InvoiceRecipient { kind, name, address, vat_id }
}

/// Everything an invoice needs that the issuer chooses.
pub struct Choices<'a> {
    pub language: InvoiceLanguage,
    pub recipient: &'a Recipient,
    pub note: Option<String>,
    pub issue_date: NaiveDate,
}

/// The invoice a folio would be closed into on `choices.issue_date`, numbered `number`; or every reason it cannot be.
pub fn draft(folio: &Folio, choices: &Choices, number: String) -> Result<Draft, Box<Refused>> {
    let mut problems = Vec::new();
    let billing_lines: Vec<&FolioLine> =
        folio.lines.iter().filter(|l| matches!(l.kind, LineKind::Charge | LineKind::Allowance)).collect();
    let open: Vec<&FolioLine> = billing_lines.iter().copied().filter(|l| l.invoice_id.is_none()).collect();
    if billing_lines.is_empty() {
        problems.push(problem("folio", "the folio has no charges to invoice"));
    } else if open.is_empty() {
        let numbers: Vec<&str> = folio
            .invoices
            .iter()
            .filter(|i| i.document.kind == InvoiceKind::Invoice && i.cancelled_by_invoice_id.is_none())
            .map(|i| i.document.number.as_str())
            .collect();
        problems.push(problem(
            "folio",
            format!(
                "every line is already invoiced ({}); cancel that invoice to issue a corrected one",
                numbers.join(", ")
            ),
        ));
    }
    let unposted = open.iter().filter(|l| l.posted_at.is_none()).count();
    if unposted > 0 && folio.reservation.status != ReservationStatus::CheckedOut {
        problems.push(problem(
            "folio",
            format!(
                "{unposted} line(s) are not posted yet: check the guest out first (nights are posted at the end of \
                 each day)"
            ),
        ));
    }
    let lines: Vec<InvoiceLine> = open.iter().map(|l| invoice_line(l)).collect();
    let vat_totals = vat_totals(&lines);
    let sum = |f: fn(&InvoiceVatTotal) -> i64| vat_totals.iter().map(f).fold(0, i64::saturating_add);
    let (total_net, total_vat, total_gross) = (sum(|t| t.net), sum(|t| t.vat), sum(|t| t.gross));
    let currency = folio.hotel.currency.clone();
    let needs_address = total_gross.abs() > small_amount(&currency);
    let issuer = issuer(folio.hotel, folio.billing, &mut problems);
    let recipient = recipient(choices.recipient, folio.guest, needs_address, &mut problems);
    let payments = payments_left(folio.lines, folio.invoices, folio.hotel);
    let paid = payments.iter().map(|p| p.amount).fold(0, i64::saturating_add);
    let first = lines.iter().map(|l| l.service_date).min().unwrap_or(folio.reservation.check_in_date);
    let last = lines.iter().map(|l| l.service_date).max().unwrap_or(first);
    let document = InvoiceDocument {
        number,
        kind: InvoiceKind::Invoice,
        cancels_number: None,
        cancellation_reason: None,
        language: choices.language,
        issue_date: choices.issue_date,
        service_period: ServicePeriod { from: first, to: last },
        currency,
        issuer,
        recipient,
        reservation_reference: folio.reservation.reference.clone(),
        lines,
        vat_totals,
        total_net,
        total_vat,
        total_gross,
        payments,
        paid,
        balance_due: total_gross.saturating_sub(paid),
        payment_terms: folio.billing.payment_terms.clone(),
        note: choices.note.clone(),
    };
    let draft = Draft { document, line_ids: open.iter().map(|l| l.id.clone()).collect() };
    if problems.is_empty() {
        Ok(draft)
    } else {
        Err(Box::new(Refused { draft, problems }))
    }
}

/// The cancellation invoice of `original`: numbered `number`, issued on `issue_date`, every line and total negated,
/// naming the number it cancels and why. It shows no payments: they stay on the folio for the corrected invoice.
pub fn cancellation(
    original: &InvoiceDocument,
    number: String,
    reason: String,
    issue_date: NaiveDate,
) -> InvoiceDocument {
    let lines: Vec<InvoiceLine> = original
        .lines
        .iter()
        .map(|l| InvoiceLine { unit_net: -l.unit_net, net: -l.net, vat: -l.vat, gross: -l.gross, ..l.clone() })
        .collect();
    let vat_totals = vat_totals(&lines);
    InvoiceDocument {
        number,
        kind: InvoiceKind::Cancellation,
        cancels_number: Some(original.number.clone()),
        cancellation_reason: Some(reason),
        issue_date,
        lines,
        vat_totals,
        total_net: -original.total_net,
        total_vat: -original.total_vat,
        total_gross: -original.total_gross,
        payments: Vec::new(),
        paid: 0,
        balance_due: -original.total_gross,
        payment_terms: None,
        note: None,
        ..original.clone()
    }
}

/// Whether the billing settings name an issuer completely (the dashboard says what is missing before anyone tries).
pub fn issuer_is_complete(billing: &BillingSettings) -> bool {
    billing.invoice_issuer.as_ref().is_some_and(|i| {
        i.legal_name.is_some()
            && i.street.is_some()
            && i.postal_code.is_some()
            && i.city.is_some()
            && i.country.is_some()
            && i.vat_id.is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_price_is_the_net_divided_half_up() {
        assert_eq!(unit_net(1000, 3), 333);
        assert_eq!(unit_net(1001, 2), 501);
        assert_eq!(unit_net(-1001, 2), -501);
        assert_eq!(unit_net(999, 1), 999);
        assert_eq!(unit_net(5, 10), 1);
        assert_eq!(unit_net(4, 10), 0);
    }

    #[test]
    fn the_small_amount_is_250_in_major_units() {
        assert_eq!(small_amount("EUR"), 25_000);
        assert_eq!(small_amount("JPY"), 250);
        assert_eq!(small_amount("BHD"), 250_000);
    }
}
