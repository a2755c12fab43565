//! Invoices: the immutable document a folio is closed into ([`InvoiceDocument`], stored as issued and never
//! changed), with what happened to it later ([`Invoice`]: the cancellation that cancels it). An extension of the
//! contract (`/api/folios/{folioId}/invoices`, `/api/invoices`); the rules are in `domain::finance::invoices` and
//! docs/invoices.md.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::CurrencyCode;
use super::folios::PaymentMethod;

/// The language an invoice is written in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum InvoiceLanguage {
    En,
    De,
}

/// An invoice, or the cancellation invoice that cancels one (its lines negated).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum InvoiceKind {
    Invoice,
    Cancellation,
}

/// A postal address as printed on an invoice.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PostalAddress {
    pub street: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: Option<String>,
}

/// Who issues the invoice: the hotel's operating company (billing settings `issuer`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceIssuer {
    /// The legal name, e.g. "Harbour Hotels GmbH".
    pub legal_name: String,
    /// The hotel's name as guests know it.
    pub hotel_name: String,
    pub address: PostalAddress,
    /// The VAT identification number, e.g. `DE123456789`.
    pub vat_id: String,
    /// The national tax number, where one is printed as well.
    pub tax_number: Option<String>,
}

/// Who the invoice is addressed to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum RecipientKind {
    Guest,
    Company,
}

/// The recipient as issued.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceRecipient {
    pub kind: RecipientKind,
    pub name: String,
    pub address: PostalAddress,
    /// A company's VAT identification number.
    pub vat_id: Option<String>,
}

/// One line as issued. Amounts in minor units of the invoice's currency; negative on a cancellation invoice.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceLine {
    /// The folio line it was made from.
    pub folio_line_id: String,
    #[serde(with = "date_text")]
    #[schema(value_type = String, format = Date)]
    pub service_date: NaiveDate,
    pub description: String,
    pub quantity: i64,
    /// The price of one without VAT (`net / quantity`, rounded half up), as Art. 226 (8) asks.
    pub unit_net: i64,
    pub vat_rate_basis_points: i64,
    pub net: i64,
    pub vat: i64,
    pub gross: i64,
}

/// The totals of one VAT rate.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceVatTotal {
    pub vat_rate_basis_points: i64,
    pub net: i64,
    pub vat: i64,
    pub gross: i64,
}

/// A payment received (less what was refunded of it), as issued.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoicePayment {
    #[serde(with = "date_text")]
    #[schema(value_type = String, format = Date)]
    pub paid_on: NaiveDate,
    pub method: PaymentMethod,
    pub reference: Option<String>,
    pub amount: i64,
}

/// The first and the last day of service.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServicePeriod {
    #[serde(with = "date_text")]
    #[schema(value_type = String, format = Date)]
    pub from: NaiveDate,
    #[serde(with = "date_text")]
    #[schema(value_type = String, format = Date)]
    pub to: NaiveDate,
}

/// The document as issued: everything printed on it, never changed afterwards (stored as this JSON).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceDocument {
    /// The number from the hotel's series, e.g. `RE-2026-000001`.
    pub number: String,
    pub kind: InvoiceKind,
    /// On a cancellation invoice: the number of the invoice it cancels.
    pub cancels_number: Option<String>,
    /// Why a cancellation invoice was issued.
    pub cancellation_reason: Option<String>,
    pub language: InvoiceLanguage,
    #[serde(with = "date_text")]
    #[schema(value_type = String, format = Date)]
    pub issue_date: NaiveDate,
    pub service_period: ServicePeriod,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub issuer: InvoiceIssuer,
    pub recipient: InvoiceRecipient,
    /// The reservation's confirmation number, for the guest's and the accountant's reference.
    pub reservation_reference: String,
    pub lines: Vec<InvoiceLine>,
    /// By rate, lowest first.
    pub vat_totals: Vec<InvoiceVatTotal>,
    pub total_net: i64,
    pub total_vat: i64,
    pub total_gross: i64,
    pub payments: Vec<InvoicePayment>,
    /// The sum of `payments`.
    pub paid: i64,
    /// `totalGross - paid`: what is still to be paid (negative: what the hotel owes).
    pub balance_due: i64,
    /// The hotel's payment terms (billing settings), e.g. "Payable on receipt without deduction."
    pub payment_terms: Option<String>,
    /// A note given when issuing.
    pub note: Option<String>,
}

/// An issued invoice: its document, and what happened to it since.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    pub id: String,
    pub hotel_id: String,
    pub folio_id: String,
    pub reservation_id: String,
    /// The invoice this cancellation invoice cancels.
    pub cancels_invoice_id: Option<String>,
    /// The cancellation invoice that cancelled this invoice.
    pub cancelled_by_invoice_id: Option<String>,
    /// Who issued it: `operator:<id>`, `api_key:<id>`.
    pub issued_by: String,
    pub created_at: DateTime<Utc>,
    #[serde(flatten)]
    pub document: InvoiceDocument,
}

/// Dates as `YYYY-MM-DD`, both ways (the document is stored as JSON and read back).
mod date_text {
    use chrono::NaiveDate;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(date: &NaiveDate, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&date.format("%Y-%m-%d"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<NaiveDate, D::Error> {
        let text = String::deserialize(deserializer)?;
        NaiveDate::parse_from_str(&text, "%Y-%m-%d").map_err(serde::de::Error::custom)
    }
}
