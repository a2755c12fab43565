//! A hotel's taxes and billing (`/setup/hotels/{id}/billing`): VAT rates by category, whether prices include VAT,
//! the city tax, the end of day and the no-show fee, and the extras the desk charges. Saved through
//! `finance::billing::update`, as `PUT /api/hotels/{id}/billing` saves them. An extra split into parts at several
//! rates (a breakfast package) is set through the API; the page adds extras of one category.

use std::collections::HashMap;

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;

use super::{render_form, Area, SetupChrome, SetupPage};
use crate::app::AppState;
use crate::domain::finance::billing::{
    self, BillingPatch, BillingSettings, CityTaxBasis, CityTaxRule, Extra, ExtraPart, InvoiceIssuerSettings, NoShowFee,
    NoShowFeeBasis, VatRate,
};
use crate::domain::money;
use crate::web::form::{optional, FormErrors};
use crate::web::page::WebResult;
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash};
use crate::web::step_up::StepUpForm;

pub fn router() -> Router<AppState> {
    Router::new().route("/setup/hotels/{hotel_id}/billing", get(show).post(save))
}

/// A rate in basis points as the form shows it: "7", "7.5".
fn percent(bp: i64) -> String {
    money::input_value(bp, "EUR").trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A percentage typed with up to two decimals ("19", "7.5") in basis points, or the message for its field.
fn basis_points(errors: &mut FormErrors, field: &str, text: &str) -> Option<i64> {
    // Percent with two decimals is basis points, as euros with two decimals are cents.
    match money::parse(text, "EUR") {
        Ok(bp) => Some(bp),
        Err(_) => {
            errors.add(field, "Enter a percentage such as 7 or 7.5.");
            None
        }
    }
}

struct RateRow {
    category: String,
    percent: String,
}

struct ExtraRow {
    code: String,
    name: String,
    price: String,
    parts: String,
}

#[derive(Template)]
#[template(path = "setup/billing.html")]
struct BillingTemplate {
    chrome: SetupChrome,
    hotel_id: String,
    hotel_name: String,
    currency: String,
    s: BillingSettings,
    rates: Vec<RateRow>,
    extras: Vec<ExtraRow>,
    city_tax_amount: String,
    city_tax_percent: String,
    city_tax_vat: String,
    no_show_amount: String,
    /// (value, label, selected) of the city tax's basis and of the no-show fee.
    bases: Vec<(&'static str, &'static str, bool)>,
    no_show_choices: Vec<(&'static str, &'static str, bool)>,
    errors: Vec<String>,
}

async fn page(state: &AppState, hotel: &HotelPage, s: BillingSettings, errors: Vec<String>) -> WebResult {
    let setup = SetupPage { session: hotel.session.clone() };
    let currency = hotel.hotel.currency.clone();
    let m = |minor: Option<i64>| minor.map(|a| money::input_value(a, &currency)).unwrap_or_default();
    let refused = !errors.is_empty();
    let template = BillingTemplate {
        chrome: setup.chrome(state, Area::Hotels, format!("Taxes and billing of {}", hotel.hotel.name)).await?,
        hotel_id: hotel.hotel.id.clone(),
        hotel_name: hotel.hotel.name.clone(),
        rates: s
            .vat_rates
            .iter()
            .map(|r| RateRow { category: r.category.clone(), percent: percent(r.rate_basis_points) })
            .collect(),
        extras: s
            .extras
            .iter()
            .map(|e| ExtraRow {
                code: e.code.clone(),
                name: e.name.clone(),
                price: money::format(e.unit_price, &currency),
                parts: e
                    .parts
                    .iter()
                    .map(|p| format!("{} {} %", p.category, percent(p.share_basis_points)))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .collect(),
        city_tax_amount: m(s.city_tax.as_ref().and_then(|t| t.amount)),
        city_tax_percent: s.city_tax.as_ref().and_then(|t| t.rate_basis_points).map(percent).unwrap_or_default(),
        city_tax_vat: s.city_tax.as_ref().map(|t| percent(t.vat_rate_basis_points)).unwrap_or_else(|| "0".into()),
        no_show_amount: m(s.no_show_fee.as_ref().and_then(|f| f.amount)),
        bases: [
            ("PER_PERSON_PER_NIGHT", "per person and night"),
            ("PER_ROOM_PER_NIGHT", "per room and night"),
            ("PERCENT_OF_NET", "percent of the room price without VAT"),
            ("PERCENT_OF_GROSS", "percent of the room price"),
        ]
        .into_iter()
        .map(|(value, label)| (value, label, s.city_tax.as_ref().is_some_and(|t| t.basis_name() == value)))
        .collect(),
        no_show_choices: [("", "nothing"), ("FIRST_NIGHT", "the first night"), ("FIXED", "a fixed fee")]
            .into_iter()
            .map(|(value, label)| (value, label, s.no_show_fee.as_ref().map_or("", |f| f.basis_name()) == value))
            .collect(),
        currency,
        s,
        errors,
    };
    Ok(render_form(&template, &hotel.session, state, refused))
}

async fn show(State(state): State<AppState>, hotel: HotelPage) -> WebResult {
    let s = billing::get(&state.db, &hotel.session.actor, &hotel.hotel.id).await?;
    page(&state, &hotel, s, Vec::new()).await
}

async fn save(State(state): State<AppState>, hotel: HotelPage, form: StepUpForm<HashMap<String, String>>) -> WebResult {
    let posted = match form.confirmed(&state, "Changing billing settings").await {
        Ok(posted) => posted,
        Err(asked) => return Ok(asked),
    };
    let f = posted.form;
    let field = |name: &str| f.get(name).map(String::as_str).unwrap_or_default();
    let ticked = |name: &str| f.contains_key(name);
    let text = |name: &str| optional(field(name));
    let currency = hotel.hotel.currency.clone();
    let current = billing::get(&state.db, &hotel.session.actor, &hotel.hotel.id).await?;
    let mut errors = FormErrors::default();

    let mut vat_rates = Vec::new();
    for rate in &current.vat_rates {
        let name = format!("rate:{}", rate.category);
        if let Some(bp) = basis_points(&mut errors, &name, field(&name)) {
            vat_rates.push(VatRate { category: rate.category.clone(), rate_basis_points: bp });
        }
    }
    if let Some(category) = optional(field("newCategory")) {
        if let Some(bp) = basis_points(&mut errors, "newRate", field("newRate")) {
            vat_rates.push(VatRate { category: category.to_uppercase().replace(' ', "_"), rate_basis_points: bp });
        }
    }
    let city_tax = if ticked("cityTax") {
        let basis = match field("cityTaxBasis") {
            "PER_ROOM_PER_NIGHT" => CityTaxBasis::PerRoomPerNight,
            "PERCENT_OF_NET" => CityTaxBasis::PercentOfNet,
            "PERCENT_OF_GROSS" => CityTaxBasis::PercentOfGross,
            _ => CityTaxBasis::PerPersonPerNight,
        };
        let percent_basis = matches!(basis, CityTaxBasis::PercentOfNet | CityTaxBasis::PercentOfGross);
        Some(CityTaxRule {
            name: optional(field("cityTaxName")).unwrap_or_else(|| "City tax".into()),
            basis,
            amount: if percent_basis { None } else { errors.money("cityTaxAmount", field("cityTaxAmount"), &currency) },
            rate_basis_points: if percent_basis {
                basis_points(&mut errors, "cityTaxPercent", field("cityTaxPercent"))
            } else {
                None
            },
            max_nights: match field("cityTaxMaxNights").trim() {
                "" => None,
                n => n.parse().ok().or_else(|| {
                    errors.add("cityTaxMaxNights", "Enter a number of nights, or leave it empty for every night.");
                    None
                }),
            },
            children_exempt: ticked("cityTaxChildrenExempt"),
            vat_rate_basis_points: basis_points(&mut errors, "cityTaxVat", field("cityTaxVat")).unwrap_or(0),
        })
    } else {
        None
    };
    let no_show_fee = match field("noShowFee") {
        "FIRST_NIGHT" => Some(NoShowFee { basis: NoShowFeeBasis::FirstNight, amount: None }),
        "FIXED" => Some(NoShowFee {
            basis: NoShowFeeBasis::Fixed,
            amount: errors.money("noShowAmount", field("noShowAmount"), &currency),
        }),
        _ => None,
    };
    let mut extras: Vec<Extra> =
        current.extras.iter().filter(|e| !ticked(&format!("remove:{}", e.code))).cloned().collect();
    if let Some(name) = optional(field("newExtraName")) {
        let code = optional(field("newExtraCode")).unwrap_or_else(|| name.to_uppercase().replace(' ', "_"));
        let price = errors.money("newExtraPrice", field("newExtraPrice"), &currency);
        if price.is_none() && !errors.has("newExtraPrice") {
            errors.add("newExtraPrice", "Enter the price of one.");
        }
        let category = optional(field("newExtraCategory")).unwrap_or_else(|| billing::OTHER.to_string());
        extras.push(Extra {
            code: code.to_uppercase(),
            name,
            unit_price: price.unwrap_or(0),
            parts: vec![ExtraPart { category, share_basis_points: 10_000 }],
        });
    }
    let typed = |errors: &FormErrors| errors.unplaced(&[]);
    if !errors.is_empty() {
        let shown = typed(&errors);
        return page(&state, &hotel, current, shown).await;
    }
    let patch = BillingPatch {
        prices_include_vat: Some(ticked("pricesIncludeVat")),
        vat_rates: Some(vat_rates),
        city_tax: Some(city_tax),
        extras: Some(extras),
        no_show_fee: Some(no_show_fee),
        end_of_day: Some(field("endOfDay").trim().to_string()),
        invoice_issuer: Some(Some(InvoiceIssuerSettings {
            legal_name: text("issuerLegalName"),
            street: text("issuerStreet"),
            postal_code: text("issuerPostalCode"),
            city: text("issuerCity"),
            country: text("issuerCountry").map(|c| c.to_uppercase()),
            vat_id: text("issuerVatId"),
            tax_number: text("issuerTaxNumber"),
        })),
        invoice_number_pattern: Some(field("invoiceNumberPattern").trim().to_string()),
        payment_terms: Some(text("paymentTerms")),
    };
    match billing::update(&state.db, &hotel.session.actor, &hotel.hotel.id, patch).await {
        Ok(_) => {
            let flash = Flash::success(format!("Saved the taxes and billing of {}.", hotel.hotel.name));
            Ok(session::redirect_with(&format!("/setup/hotels/{}/billing", hotel.hotel.id), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            let mut shown = errors.general.clone().into_iter().collect::<Vec<_>>();
            shown.extend(typed(&errors));
            page(&state, &hotel, current, shown).await
        }
    }
}
