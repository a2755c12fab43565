//! The invoices a hotel issued in a period, for an accountant's import: number, date, recipient, net and VAT per
//! rate, gross, and which invoice cancels which. JSON, or CSV with one row per invoice and VAT rate.

use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Invoice, InvoiceKind};
use crate::domain::access::{Actor, Scope};
use crate::domain::finance::revenue::{self, csv_field, percent, RevenueQuery};
use crate::domain::{hotels, money, Result};
use crate::model::codes::CurrencyCode;
use crate::model::invoices::InvoiceVatTotal;
use crate::store::{self, Db};

/// One invoice as the export lists it.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ExportedInvoice {
    pub id: String,
    pub number: String,
    pub kind: InvoiceKind,
    #[schema(value_type = String, format = Date)]
    pub issue_date: NaiveDate,
    pub recipient_name: String,
    pub recipient_vat_id: Option<String>,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// By rate, lowest first.
    pub vat_totals: Vec<InvoiceVatTotal>,
    pub total_net: i64,
    pub total_vat: i64,
    pub total_gross: i64,
    /// On a cancellation invoice: the number it cancels.
    pub cancels_number: Option<String>,
    /// The number of the cancellation invoice that cancelled this one.
    pub cancelled_by_number: Option<String>,
}

/// The export of a hotel's invoices issued in a period (both dates included).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceExport {
    pub hotel_id: String,
    #[schema(value_type = String, format = Date)]
    pub date_from: NaiveDate,
    #[schema(value_type = String, format = Date)]
    pub date_to: NaiveDate,
    /// In the order of issue.
    pub invoices: Vec<ExportedInvoice>,
}

/// The export a query asks for (the revenue report's query: a hotel, and at most 366 days), `folios:read`.
pub async fn export(db: &Db, actor: &Actor, query: &RevenueQuery) -> Result<InvoiceExport> {
    actor.require_scope(Scope::FoliosRead)?;
    let (from, to) = revenue::period(query)?;
    let hotel = hotels::get(db, actor, &query.hotel_id).await?;
    let mut conn = db.read().await?;
    let issued = store::invoices::issued_in(&mut conn, &actor.organization_id, &hotel.id, from, to).await?;
    let mut invoices = Vec::with_capacity(issued.len());
    for i in &issued {
        let cancelled_by_number = match &i.cancelled_by_invoice_id {
            None => None,
            Some(id) => match issued.iter().find(|c| &c.id == id) {
                Some(c) => Some(c.document.number.clone()),
                // Cancelled after the period: read the cancellation's number.
                None => store::invoices::get(&mut conn, &actor.organization_id, id).await?.map(|c| c.document.number),
            },
        };
        invoices.push(exported(i, cancelled_by_number));
    }
    Ok(InvoiceExport { hotel_id: hotel.id, date_from: from, date_to: to, invoices })
}

fn exported(i: &Invoice, cancelled_by_number: Option<String>) -> ExportedInvoice {
    let d = &i.document;
    ExportedInvoice {
        id: i.id.clone(),
        number: d.number.clone(),
        kind: d.kind,
        issue_date: d.issue_date,
        recipient_name: d.recipient.name.clone(),
        recipient_vat_id: d.recipient.vat_id.clone(),
        currency: d.currency.clone(),
        vat_totals: d.vat_totals.clone(),
        total_net: d.total_net,
        total_vat: d.total_vat,
        total_gross: d.total_gross,
        cancels_number: d.cancels_number.clone(),
        cancelled_by_number,
    }
}

/// The export as CSV: a header, then one row per invoice and VAT rate (an invoice without lines at any rate has
/// none), amounts in major units with a point. Text fields are quoted and defused against formulas.
pub fn csv(export: &InvoiceExport) -> String {
    let mut out = String::from(
        "number,kind,issue_date,recipient,recipient_vat_id,currency,vat_rate_percent,net,vat,gross,\
         invoice_net,invoice_vat,invoice_gross,cancels,cancelled_by\n",
    );
    for i in &export.invoices {
        let amount = |minor: i64| money::input_value(minor, &i.currency);
        let kind: &'static str = i.kind.into();
        for t in &i.vat_totals {
            out.push_str(&format!(
                "{},{kind},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&i.number),
                i.issue_date,
                csv_field(&i.recipient_name),
                csv_field(i.recipient_vat_id.as_deref().unwrap_or_default()),
                i.currency,
                percent(t.vat_rate_basis_points),
                amount(t.net),
                amount(t.vat),
                amount(t.gross),
                amount(i.total_net),
                amount(i.total_vat),
                amount(i.total_gross),
                csv_field(i.cancels_number.as_deref().unwrap_or_default()),
                csv_field(i.cancelled_by_number.as_deref().unwrap_or_default()),
            ));
        }
    }
    out
}

/// The export as a CSV file to download: its `Content-Disposition` value and its text.
pub fn csv_download(export: &InvoiceExport) -> (String, String) {
    (format!("attachment; filename=\"invoices-{}-{}.csv\"", export.date_from, export.date_to), csv(export))
}
