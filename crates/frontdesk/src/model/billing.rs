//! A hotel's tax and billing settings: how its prices carry VAT, the VAT rate of each category of charge, its city
//! tax and the extras its desk charges from a list. An extension of the contract (`GET`/`PUT
//! /api/hotels/{hotelId}/billing`); the rules are in `domain::finance` and docs/money.md.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::CurrencyCode;

/// The categories every hotel has. A hotel may add its own (`SPA`, `PARKING`).
pub const ACCOMMODATION: &str = "ACCOMMODATION";
pub const FOOD_AND_BEVERAGE: &str = "FOOD_AND_BEVERAGE";
pub const OTHER: &str = "OTHER";
pub const BUILT_IN_CATEGORIES: [&str; 3] = [ACCOMMODATION, FOOD_AND_BEVERAGE, OTHER];

/// The VAT rate of one category of charge.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VatRate {
    /// `ACCOMMODATION`, `FOOD_AND_BEVERAGE`, `OTHER`, or a category of the hotel's own (capitals, digits and `_`).
    #[schema(pattern = "^[A-Z][A-Z0-9_]{0,31}$")]
    pub category: String,
    /// The rate in basis points: 700 is 7 %, 1900 is 19 %, 0 is none.
    #[schema(minimum = 0, maximum = 10000)]
    pub rate_basis_points: i64,
}

/// How the city tax is reckoned.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CityTaxBasis {
    /// `amount` for each guest who pays it, each night.
    PerPersonPerNight,
    /// `amount` for each room, each night.
    PerRoomPerNight,
    /// `rateBasisPoints` of each night's room price without its VAT.
    PercentOfNet,
    /// `rateBasisPoints` of each night's room price as the guest pays it.
    PercentOfGross,
}

/// A city's tax on overnight stays (Berlin's City Tax, Basel's Kurtaxe, Lisbon's Taxa Turística).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CityTaxRule {
    /// What the guest reads on the offer and the folio, e.g. "City tax".
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    pub basis: CityTaxBasis,
    /// For `PER_PERSON_PER_NIGHT` and `PER_ROOM_PER_NIGHT`: the amount in minor units of the hotel's currency.
    #[serde(default)]
    pub amount: Option<i64>,
    /// For `PERCENT_OF_NET` and `PERCENT_OF_GROSS`: the rate in basis points (750 is 7.5 %).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 10000)]
    pub rate_basis_points: Option<i64>,
    /// The most nights it is charged for, counted from arrival (Berlin 21, Basel 30); `null`: every night.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 366)]
    pub max_nights: Option<i64>,
    /// Whether children (the reservation's `children`) pay none. Infants never pay.
    #[serde(default)]
    pub children_exempt: bool,
    /// The VAT on the city tax itself, in basis points (none in most places).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 10000)]
    pub vat_rate_basis_points: i64,
}

/// One part of an extra, with its category's VAT: a breakfast may be 70 % food at 7 % and 30 % drinks at 19 %.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtraPart {
    /// A category of `vatRates`.
    pub category: String,
    /// Its share of the price in basis points; the shares of an extra add up to 10000.
    #[schema(minimum = 1, maximum = 10000)]
    pub share_basis_points: i64,
}

/// Something the desk charges from a list: breakfast, parking, a late check-out.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Extra {
    /// Unique in the hotel; capitals, digits, `_` and `-`.
    #[schema(pattern = "^[A-Z0-9][A-Z0-9_-]{0,31}$")]
    pub code: String,
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// The price of one, in minor units: with VAT when `pricesIncludeVat`, without it otherwise.
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub unit_price: i64,
    /// One part for an extra of one category; several for a package.
    #[schema(min_items = 1, max_items = 10)]
    pub parts: Vec<ExtraPart>,
}

/// How a no-show is charged.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoShowFeeBasis {
    /// The room charges of the stay's first night.
    FirstNight,
    /// `amount`, in minor units.
    Fixed,
}

/// The fee the end of day charges a no-show.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NoShowFee {
    pub basis: NoShowFeeBasis,
    /// For `FIXED`: the amount in minor units (with VAT when prices include it; at the accommodation rate).
    #[serde(default)]
    pub amount: Option<i64>,
}

impl CityTaxRule {
    /// The basis as the API names it (`PER_PERSON_PER_NIGHT`).
    pub fn basis_name(&self) -> &'static str {
        match self.basis {
            CityTaxBasis::PerPersonPerNight => "PER_PERSON_PER_NIGHT",
            CityTaxBasis::PerRoomPerNight => "PER_ROOM_PER_NIGHT",
            CityTaxBasis::PercentOfNet => "PERCENT_OF_NET",
            CityTaxBasis::PercentOfGross => "PERCENT_OF_GROSS",
        }
    }
}

impl NoShowFee {
    /// The basis as the API names it (`FIRST_NIGHT`).
    pub fn basis_name(&self) -> &'static str {
        match self.basis {
            NoShowFeeBasis::FirstNight => "FIRST_NIGHT",
            NoShowFeeBasis::Fixed => "FIXED",
        }
    }
}

/// Who issues a hotel's invoices: its operating company, as every invoice must name it (VAT Directive Art. 226).
/// Each field may be left out while the hotel sets up; an invoice is refused until the legal name, the address
/// and the VAT id are all given.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvoiceIssuerSettings {
    /// The company's legal name, e.g. "Harbour Hotels GmbH".
    #[serde(default)]
    #[schema(max_length = 200)]
    pub legal_name: Option<String>,
    #[serde(default)]
    #[schema(max_length = 200)]
    pub street: Option<String>,
    #[serde(default)]
    #[schema(max_length = 20)]
    pub postal_code: Option<String>,
    #[serde(default)]
    #[schema(max_length = 100)]
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[serde(default)]
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    /// The VAT identification number: two letters and 2 to 13 letters or digits, e.g. `DE123456789`.
    #[serde(default)]
    #[schema(pattern = "^[A-Z]{2}[A-Z0-9]{2,13}$")]
    pub vat_id: Option<String>,
    /// A national tax number printed beside the VAT id (Germany's Steuernummer), if wanted.
    #[serde(default)]
    #[schema(max_length = 30)]
    pub tax_number: Option<String>,
}

/// The number pattern of a hotel that has chosen none.
pub const DEFAULT_INVOICE_NUMBER_PATTERN: &str = "RE-{year}-{n:06}";

/// A hotel's tax and billing settings.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct BillingSettings {
    pub hotel_id: String,
    /// The hotel's currency: every amount here is in its minor units.
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Whether prices (rates, extras) are entered with VAT included, as European hotels show them (the default).
    pub prices_include_vat: bool,
    /// The VAT rate of each category: always `ACCOMMODATION`, `FOOD_AND_BEVERAGE` and `OTHER`, and the hotel's own.
    pub vat_rates: Vec<VatRate>,
    /// The city tax, if the hotel's city has one.
    pub city_tax: Option<CityTaxRule>,
    pub extras: Vec<Extra>,
    /// What a guest who never arrives is charged at the end of day; `null`: nothing.
    pub no_show_fee: Option<NoShowFee>,
    /// The local time (`HH:MM`) the hotel's business day ends: the passed nights are posted and arrivals not checked
    /// in become no-shows (03:00 by default).
    pub end_of_day: String,
    /// Who issues the invoices; `null` until set.
    pub invoice_issuer: Option<InvoiceIssuerSettings>,
    /// How invoices are numbered: literal text with `{n}` (the number in its series, or `{n:06}` padded to 6
    /// digits) and optionally `{year}` (the year of issue: each year starts again at 1). `RE-{year}-{n:06}` by
    /// default, giving `RE-2026-000001`.
    pub invoice_number_pattern: String,
    /// Printed on every invoice, e.g. "Payable on receipt without deduction."
    pub payment_terms: Option<String>,
    /// When they were last saved; `null`: never (these are the defaults, and every VAT rate is 0).
    pub updated_at: Option<DateTime<Utc>>,
}
