//! How a folio line is made: what it has in common with the other lines of its folio ([`LineOrigin`]), and its
//! amounts. Both the lines that follow the stay (`folios`) and those people record (`ledger`) are made here.

use chrono::{DateTime, NaiveDate, Utc};

use super::tax;
use crate::domain::new_id;
use crate::model::folios::{FolioLine, LineKind, LineSource};

/// What a new line has in common with every other of its folio.
pub(crate) struct LineOrigin<'a> {
    pub folio_id: &'a str,
    pub currency: &'a str,
    pub made_by: String,
    pub at: DateTime<Utc>,
}

impl LineOrigin<'_> {
    /// A new unposted line of `kind`, with no amounts yet.
    pub(crate) fn line(&self, kind: LineKind, source: LineSource, date: NaiveDate, description: String) -> FolioLine {
        FolioLine {
            id: new_id(),
            folio_id: self.folio_id.to_string(),
            kind,
            source,
            service_date: date,
            description,
            quantity: 1,
            category: None,
            vat_rate_basis_points: 0,
            gross: 0,
            net: 0,
            vat: 0,
            currency: self.currency.to_string(),
            corrects_line_id: None,
            method: None,
            reference: None,
            paid_at: None,
            reason: None,
            made_by: self.made_by.clone(),
            created_at: self.at,
            posted_at: None,
            invoice_id: None,
        }
    }

    /// An unposted charge of `source` on `date`.
    pub(crate) fn charge(
        &self,
        source: LineSource,
        date: NaiveDate,
        description: String,
        category: &str,
        amounts: tax::LineAmounts,
        rate_bp: i64,
    ) -> FolioLine {
        with_amounts(self.line(LineKind::Charge, source, date, description), category, rate_bp, amounts)
    }
}

/// `line` with its category, VAT rate and amounts.
pub(crate) fn with_amounts(mut line: FolioLine, category: &str, rate_bp: i64, amounts: tax::LineAmounts) -> FolioLine {
    line.category = Some(category.to_string());
    line.vat_rate_basis_points = rate_bp;
    line.gross = amounts.gross;
    line.net = amounts.net;
    line.vat = amounts.vat;
    line
}
