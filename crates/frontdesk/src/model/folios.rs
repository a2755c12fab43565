//! The folio as a ledger: its lines ([`FolioLine`]) of four kinds, and the folio with its totals and balance
//! ([`FolioLedger`]). An extension of the contract (`/api/folios/{folioId}`); the rules are in
//! `domain::finance::folios` and docs/money.md.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::CurrencyCode;
use super::json_time;

/// What a line is. Amounts are positive; the kind gives their sign in the balance:
/// `balance = charges - allowances - payments + refunds`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum LineKind {
    /// Something the guest owes: a room night, the city tax, an extra, a fee.
    Charge,
    /// A correction against one charge (which, once posted, never changes itself).
    Allowance,
    /// Money received, taken elsewhere (a card terminal, a bank, a channel).
    Payment,
    /// Money given back against one payment.
    Refund,
}

impl LineKind {
    /// The sign of a line's amount in the balance: +1 for what the guest owes, -1 for what settles it.
    pub fn sign(self) -> i64 {
        match self {
            LineKind::Charge | LineKind::Refund => 1,
            LineKind::Allowance | LineKind::Payment => -1,
        }
    }
}

/// Where a line comes from. Room nights and the city tax are made by the reservation's writes and follow its
/// changes until they are posted; the others are made by someone, once.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum LineSource {
    RoomNight,
    CityTax,
    /// One of the hotel's extras (`billing.extras`), or a charge described by the desk.
    Extra,
    /// A no-show or cancellation fee.
    Fee,
    /// An allowance, a payment or a refund.
    Entry,
}

impl LineSource {
    /// Whether lines of this source are made by the reservation's writes (and remade until posted).
    pub fn follows_the_stay(self) -> bool {
        matches!(self, LineSource::RoomNight | LineSource::CityTax)
    }
}

/// How a payment was made. The service records payments taken elsewhere: it processes no card and stores no card
/// data.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentMethod {
    Card,
    BankTransfer,
    /// Paid to the channel that sold the stay, which pays the hotel.
    ChannelPrepaid,
    Voucher,
    Cash,
    Other,
}

impl PaymentMethod {
    /// Every method with how people name it, in the order a form offers them.
    pub const CHOICES: [(&'static str, &'static str); 6] = [
        ("CARD", "Card"),
        ("BANK_TRANSFER", "Bank transfer"),
        ("CHANNEL_PREPAID", "Prepaid to the channel"),
        ("VOUCHER", "Voucher"),
        ("CASH", "Cash"),
        ("OTHER", "Other"),
    ];
}

impl PaymentMethod {
    /// How people name the method ("Bank transfer").
    pub fn label(self) -> &'static str {
        let name: &'static str = self.into();
        Self::CHOICES.iter().find(|(value, _)| *value == name).map_or(name, |(_, label)| label)
    }
}

/// One line of a folio.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FolioLine {
    pub id: String,
    pub folio_id: String,
    pub kind: LineKind,
    pub source: LineSource,
    /// The day the service was given (a room night's date), or the day of the payment.
    #[serde(serialize_with = "json_time::date")]
    pub service_date: NaiveDate,
    pub description: String,
    pub quantity: i64,
    /// The charge's category (its VAT rate's); `null` for payments and refunds.
    pub category: Option<String>,
    pub vat_rate_basis_points: i64,
    /// In minor units of `currency`: `gross = net + vat`, all positive.
    pub gross: i64,
    pub net: i64,
    pub vat: i64,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// The charge an allowance corrects, or the payment a refund gives back.
    pub corrects_line_id: Option<String>,
    /// A payment's method.
    pub method: Option<PaymentMethod>,
    /// A payment's reference (a terminal's receipt number, a bank transfer's reference).
    pub reference: Option<String>,
    /// When a payment was received.
    pub paid_at: Option<DateTime<Utc>>,
    /// Why an allowance, a refund or a fee was made.
    pub reason: Option<String>,
    /// Who made it: `operator:<id>`, `api_key:<id>`, `booking_page`, `channel:<name>`, `job:<name>`, `command_line`.
    pub made_by: String,
    pub created_at: DateTime<Utc>,
    /// When it was posted (its night passed, or the guest checked out, or at once for what a person records);
    /// `null`: it still follows the stay's changes.
    pub posted_at: Option<DateTime<Utc>>,
    /// The invoice the line is on (charges and allowances); `null`: on none yet.
    pub invoice_id: Option<String>,
}

/// The totals of one VAT rate: sums of the charges less the allowances at that rate.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VatTotal {
    pub vat_rate_basis_points: i64,
    pub net: i64,
    pub vat: i64,
    pub gross: i64,
}

/// A folio with its lines, totals and balance.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FolioLedger {
    pub id: String,
    pub reservation_id: String,
    pub hotel_id: String,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub lines: Vec<FolioLine>,
    /// By rate, lowest first.
    pub vat_totals: Vec<VatTotal>,
    pub charges: i64,
    pub allowances: i64,
    pub payments: i64,
    pub refunds: i64,
    /// `charges - allowances - payments + refunds`: what the guest still owes (negative: what the hotel owes).
    pub balance: i64,
    /// Why the guest checked out with the balance open, if they did.
    pub on_account_reason: Option<String>,
    /// Why the stay is exempt from the city tax, if it is (no unposted city-tax lines are made while it is).
    pub city_tax_exempt_reason: Option<String>,
}
