//! A hotel's tax and billing settings ([`BillingSettings`]): read by any credential that sees the hotel, changed by
//! an operator. Amounts are in the hotel's currency; the rules they feed are in [`super::tax`] and
//! [`super::city_tax`].

use std::collections::HashSet;

use serde::Deserialize;
use utoipa::ToSchema;

use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::validate::{clean, Checks};
use crate::domain::{hotels, money, not_null, now, nullable, Actor, Error, Result};
pub use crate::model::billing::{
    BillingSettings, CityTaxBasis, CityTaxRule, Extra, ExtraPart, InvoiceIssuerSettings, NoShowFee, NoShowFeeBasis,
    VatRate, ACCOMMODATION, BUILT_IN_CATEGORIES, DEFAULT_INVOICE_NUMBER_PATTERN, OTHER,
};
use crate::model::hotels::Hotel;
use crate::store::{self, Db};

/// The most extras a hotel lists, and the most categories it has.
pub const MAX_EXTRAS: usize = 200;
pub const MAX_CATEGORIES: usize = 20;

/// What is stored: the settings without what the hotel already says (its id, its currency).
#[derive(serde::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    prices_include_vat: bool,
    vat_rates: Vec<VatRate>,
    city_tax: Option<CityTaxRule>,
    extras: Vec<Extra>,
    #[serde(default)]
    no_show_fee: Option<NoShowFee>,
    #[serde(default = "default_end_of_day")]
    end_of_day: String,
    #[serde(default)]
    invoice_issuer: Option<InvoiceIssuerSettings>,
    #[serde(default = "default_invoice_number_pattern")]
    invoice_number_pattern: String,
    #[serde(default)]
    payment_terms: Option<String>,
}

fn default_invoice_number_pattern() -> String {
    DEFAULT_INVOICE_NUMBER_PATTERN.to_string()
}

/// The local time a business day ends when the hotel has not chosen one.
pub const DEFAULT_END_OF_DAY: &str = "03:00";

fn default_end_of_day() -> String {
    DEFAULT_END_OF_DAY.to_string()
}

/// Changes to the settings: fields left out keep their value; a list given replaces the list; `cityTax: null`
/// removes the city tax.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BillingPatch {
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false)]
    pub prices_include_vat: Option<bool>,
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false, max_items = 20)]
    pub vat_rates: Option<Vec<VatRate>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<CityTaxRule>)]
    pub city_tax: Option<Option<CityTaxRule>>,
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false, max_items = 200)]
    pub extras: Option<Vec<Extra>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<NoShowFee>)]
    pub no_show_fee: Option<Option<NoShowFee>>,
    /// `HH:MM`, local.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub end_of_day: Option<String>,
    /// Replaces the issuer whole; `null` removes it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<InvoiceIssuerSettings>)]
    pub invoice_issuer: Option<Option<InvoiceIssuerSettings>>,
    #[serde(default, deserialize_with = "not_null")]
    #[schema(nullable = false, min_length = 3, max_length = 40)]
    pub invoice_number_pattern: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 500)]
    pub payment_terms: Option<Option<String>>,
}

/// The settings of a hotel that has saved none: prices with VAT, the three categories at 0 % until the hotel sets
/// its rates, no city tax, no extras.
fn defaults(hotel: &Hotel) -> BillingSettings {
    BillingSettings {
        hotel_id: hotel.id.clone(),
        currency: hotel.currency.clone(),
        prices_include_vat: true,
        vat_rates: BUILT_IN_CATEGORIES
            .iter()
            .map(|c| VatRate { category: (*c).to_string(), rate_basis_points: 0 })
            .collect(),
        city_tax: None,
        extras: Vec::new(),
        no_show_fee: None,
        end_of_day: default_end_of_day(),
        invoice_issuer: None,
        invoice_number_pattern: default_invoice_number_pattern(),
        payment_terms: None,
        updated_at: None,
    }
}

pub(crate) async fn settings_of(conn: &mut store::Conn, hotel: &Hotel) -> Result<BillingSettings> {
    let Some((json, updated_at)) = store::billing::settings(conn, &hotel.id).await? else {
        return Ok(defaults(hotel));
    };
    let stored: Stored = serde_json::from_str(&json)
        .map_err(|e| Error::Internal(anyhow::anyhow!("billing settings of hotel {}: {e}", hotel.id)))?;
    Ok(BillingSettings {
        hotel_id: hotel.id.clone(),
        currency: hotel.currency.clone(),
        prices_include_vat: stored.prices_include_vat,
        vat_rates: stored.vat_rates,
        city_tax: stored.city_tax,
        extras: stored.extras,
        no_show_fee: stored.no_show_fee,
        end_of_day: stored.end_of_day,
        invoice_issuer: stored.invoice_issuer,
        invoice_number_pattern: stored.invoice_number_pattern,
        payment_terms: stored.payment_terms,
        updated_at: Some(updated_at),
    })
}

/// A hotel's settings (the defaults until it saves its own).
pub async fn get(db: &Db, actor: &Actor, hotel_id: &str) -> Result<BillingSettings> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    settings_of(&mut *db.read().await?, &hotel).await
}

/// Changes a hotel's settings (an operator's).
pub async fn update(db: &Db, actor: &Actor, hotel_id: &str, patch: BillingPatch) -> Result<BillingSettings> {
    actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let mut tx = Change::begin(db, actor).await?;
    let before = settings_of(tx.conn(), &hotel).await?;
    let mut after = before.clone();
    if let Some(v) = patch.prices_include_vat {
        after.prices_include_vat = v;
    }
    if let Some(v) = patch.vat_rates {
        after.vat_rates = v;
    }
    if let Some(v) = patch.city_tax {
        after.city_tax = v;
    }
    if let Some(v) = patch.extras {
        after.extras = v;
    }
    if let Some(v) = patch.no_show_fee {
        after.no_show_fee = v;
    }
    if let Some(v) = patch.end_of_day {
        after.end_of_day = v;
    }
    if let Some(v) = patch.invoice_issuer {
        after.invoice_issuer = v.map(cleaned_issuer);
    }
    if let Some(v) = patch.invoice_number_pattern {
        after.invoice_number_pattern = v;
    }
    if let Some(v) = patch.payment_terms {
        after.payment_terms = v.map(|t| clean(&t)).filter(|t| !t.is_empty());
    }
    check(&after)?;
    let at = now();
    after.updated_at = Some(at);
    let stored = Stored {
        prices_include_vat: after.prices_include_vat,
        vat_rates: after.vat_rates.clone(),
        city_tax: after.city_tax.clone(),
        extras: after.extras.clone(),
        no_show_fee: after.no_show_fee.clone(),
        end_of_day: after.end_of_day.clone(),
        invoice_issuer: after.invoice_issuer.clone(),
        invoice_number_pattern: after.invoice_number_pattern.clone(),
        payment_terms: after.payment_terms.clone(),
    };
    let json = serde_json::to_string(&stored).map_err(anyhow::Error::from)?;
    store::billing::save(tx.conn(), &hotel.id, &json, at).await?;
    tx.updated(&actor.organization_id, &before, &after).await?;
    tx.commit().await?;
    Ok(after)
}

fn is_code(value: &str, first: impl Fn(char) -> bool, rest: impl Fn(char) -> bool, max: usize) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(first) && chars.all(rest) && value.len() <= max
}

fn is_category(value: &str) -> bool {
    is_code(value, |c| c.is_ascii_uppercase(), |c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_', 32)
}

fn is_extra_code(value: &str) -> bool {
    let part = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    is_code(value, part, |c| part(c) || c == '_' || c == '-', 32)
}

fn rate(checks: &mut Checks, field: &str, bp: i64) {
    if !(0..=super::tax::WHOLE).contains(&bp) {
        checks.fail(field, "must be basis points from 0 to 10000 (0 % to 100 %)");
    }
}

/// Every problem of the settings at once.
fn check(s: &BillingSettings) -> Result<()> {
    let mut checks = Checks::new();
    let mut categories = HashSet::new();
    if s.vat_rates.len() > MAX_CATEGORIES {
        checks.fail("vatRates", format!("must list at most {MAX_CATEGORIES} categories"));
    }
    for (i, r) in s.vat_rates.iter().enumerate() {
        if !is_category(&r.category) {
            checks.fail(&format!("vatRates[{i}].category"), "must be capitals, digits and _ (at most 32), e.g. SPA");
        } else if !categories.insert(r.category.as_str()) {
            checks.fail(&format!("vatRates[{i}].category"), format!("{} is listed twice", r.category));
        }
        rate(&mut checks, &format!("vatRates[{i}].rateBasisPoints"), r.rate_basis_points);
    }
    for built_in in BUILT_IN_CATEGORIES {
        if !categories.contains(built_in) {
            checks.fail("vatRates", format!("must list {built_in}"));
        }
    }
    if let Some(t) = &s.city_tax {
        checks.line("cityTax.name", &t.name, 100);
        match t.basis {
            CityTaxBasis::PerPersonPerNight | CityTaxBasis::PerRoomPerNight => match t.amount {
                Some(a) if money::in_bounds(a) => {}
                Some(_) => checks.fail("cityTax.amount", money::out_of_bounds_message()),
                None => checks.fail("cityTax.amount", "is required for a city tax per night"),
            },
            CityTaxBasis::PercentOfNet | CityTaxBasis::PercentOfGross => match t.rate_basis_points {
                Some(bp) => rate(&mut checks, "cityTax.rateBasisPoints", bp),
                None => checks.fail("cityTax.rateBasisPoints", "is required for a city tax in percent"),
            },
        }
        if t.max_nights.is_some_and(|n| !(1..=366).contains(&n)) {
            checks.fail("cityTax.maxNights", "must be 1 to 366 nights, or null for every night");
        }
        rate(&mut checks, "cityTax.vatRateBasisPoints", t.vat_rate_basis_points);
    }
    if s.extras.len() > MAX_EXTRAS {
        checks.fail("extras", format!("must list at most {MAX_EXTRAS} extras"));
    }
    let mut codes = HashSet::new();
    for (i, e) in s.extras.iter().enumerate() {
        let field = |name: &str| format!("extras[{i}].{name}");
        if !is_extra_code(&e.code) {
            checks.fail(&field("code"), "must be capitals, digits, _ and - (at most 32), e.g. BREAKFAST");
        } else if !codes.insert(e.code.as_str()) {
            checks.fail(&field("code"), format!("{} is listed twice", e.code));
        }
        checks.line(&field("name"), &e.name, 200);
        if !money::in_bounds(e.unit_price) {
            checks.fail(&field("unitPrice"), money::out_of_bounds_message());
        }
        if e.parts.is_empty() || e.parts.len() > 10 {
            checks.fail(&field("parts"), "must be 1 to 10 parts");
        }
        for (j, p) in e.parts.iter().enumerate() {
            if !categories.contains(p.category.as_str()) {
                checks.fail(&format!("extras[{i}].parts[{j}].category"), "must be a category of vatRates");
            }
            if !(1..=super::tax::WHOLE).contains(&p.share_basis_points) {
                checks.fail(&format!("extras[{i}].parts[{j}].shareBasisPoints"), "must be 1 to 10000 basis points");
            }
        }
        if e.parts.iter().map(|p| p.share_basis_points).sum::<i64>() != super::tax::WHOLE {
            checks.fail(&field("parts"), "the shares must add up to 10000 basis points (100 %)");
        }
    }
    if let Some(fee) = &s.no_show_fee {
        match (fee.basis, fee.amount) {
            (NoShowFeeBasis::Fixed, Some(a)) if money::in_bounds(a) => {}
            (NoShowFeeBasis::Fixed, Some(_)) => checks.fail("noShowFee.amount", money::out_of_bounds_message()),
            (NoShowFeeBasis::Fixed, None) => checks.fail("noShowFee.amount", "is required for a FIXED fee"),
            (NoShowFeeBasis::FirstNight, Some(_)) => {
                checks.fail("noShowFee.amount", "comes from the first night: leave it out with FIRST_NIGHT")
            }
            (NoShowFeeBasis::FirstNight, None) => {}
        }
    }
    checks.clock_time("endOfDay", &s.end_of_day);
    if let Some(issuer) = &s.invoice_issuer {
        check_issuer(&mut checks, issuer);
    }
    if let Err(message) = super::invoices::numbering::Pattern::parse(&s.invoice_number_pattern) {
        checks.fail("invoiceNumberPattern", message);
    }
    checks.opt_line("paymentTerms", s.payment_terms.as_deref(), 500);
    checks.finish()
}

/// The issuer with its text trimmed, empty fields as none, and the VAT id without spaces in capitals.
fn cleaned_issuer(issuer: InvoiceIssuerSettings) -> InvoiceIssuerSettings {
    let text = |v: Option<String>| v.map(|t| clean(&t)).filter(|t| !t.is_empty());
    InvoiceIssuerSettings {
        legal_name: text(issuer.legal_name),
        street: text(issuer.street),
        postal_code: text(issuer.postal_code),
        city: text(issuer.city),
        country: text(issuer.country),
        vat_id: text(issuer.vat_id)
            .map(|v| v.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_uppercase()),
        tax_number: text(issuer.tax_number),
    }
}

fn check_issuer(checks: &mut Checks, issuer: &InvoiceIssuerSettings) {
    checks.opt_line("invoiceIssuer.legalName", issuer.legal_name.as_deref(), 200);
    checks.opt_line("invoiceIssuer.street", issuer.street.as_deref(), 200);
    checks.opt_line("invoiceIssuer.postalCode", issuer.postal_code.as_deref(), 20);
    checks.opt_line("invoiceIssuer.city", issuer.city.as_deref(), 100);
    checks.opt_line("invoiceIssuer.taxNumber", issuer.tax_number.as_deref(), 30);
    if let Some(country) = &issuer.country {
        if !is_country(country) {
            checks.fail("invoiceIssuer.country", "must be an ISO 3166-1 alpha-2 code such as DE");
        }
    }
    if let Some(vat_id) = &issuer.vat_id {
        if !is_vat_id(vat_id) {
            checks.fail("invoiceIssuer.vatId", "must be two letters and 2 to 13 letters or digits, e.g. DE123456789");
        }
    }
}

/// An ISO 3166-1 alpha-2 code's shape: two capitals.
pub fn is_country(value: &str) -> bool {
    value.len() == 2 && value.chars().all(|c| c.is_ascii_uppercase())
}

/// A VAT identification number's shape: a two-letter prefix (the country; `EL` for Greece) and 2 to 13 letters or
/// digits.
pub fn is_vat_id(value: &str) -> bool {
    let chars: Vec<char> = value.chars().collect();
    chars.len() >= 4
        && chars.len() <= 15
        && chars[..2].iter().all(char::is_ascii_uppercase)
        && chars[2..].iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

impl BillingSettings {
    /// The VAT rate of `category`, if the hotel has it.
    pub fn rate_of(&self, category: &str) -> Option<i64> {
        self.vat_rates.iter().find(|r| r.category == category).map(|r| r.rate_basis_points)
    }

    /// The accommodation VAT rate (every hotel's settings have one).
    pub fn accommodation_rate(&self) -> i64 {
        self.rate_of(ACCOMMODATION).unwrap_or(0)
    }
}

impl Record for BillingSettings {
    const KIND: RecordKind = RecordKind::BillingSettings;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.hotel_id.clone()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_vat_id_is_two_letters_and_2_to_13_letters_or_digits() {
        for good in ["DE123456789", "EL12", "ATU12345678", "NL123456789B01"] {
            assert!(super::is_vat_id(good), "{good}");
        }
        for bad in
            ["", "DE", "DE1", "de123456789", "123456789", "DE 123", "\u{202e}\u{feff}😀é", "ÄÖ1234", "DE12345678901234"]
        {
            assert!(!super::is_vat_id(bad), "{bad:?}");
        }
    }
}
