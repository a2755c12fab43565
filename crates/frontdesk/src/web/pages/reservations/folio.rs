//! The folio on a reservation's page: a charge (one of the hotel's extras, or described), a payment, a correction
//! of a charge, a refund of a payment. Each calls the ledger's one function (`finance::ledger::record`), as the
//! REST routes do, and comes back to the folio with what it did or why not.

use axum::extract::State;
use serde::Deserialize;

use super::super::HotelPage;
use super::{of_hotel, refusal};
use crate::app::AppState;
use crate::domain::finance::city_tax_exemption::{self, CityTaxExemptionIn};
use crate::domain::finance::folios::PaymentMethod;
use crate::domain::finance::ledger::{self, AllowanceIn, ChargeIn, Entry, PaymentIn, RefundIn};
use crate::domain::{money, Error};
use crate::web::form::{optional, FormErrors};
use crate::web::page::{WebError, WebResult};
use crate::web::session::{self, Flash, Posted};

/// The folio of a reservation of this hotel, or the 404 page.
async fn folio_of(state: &AppState, page: &HotelPage, id: &str) -> Result<(String, String), WebError> {
    let line = of_hotel(state, page, id).await?;
    let folio = line.reservation.folio.ok_or(WebError(Error::NotFound("folio")))?;
    Ok((folio.id, folio.currency))
}

/// Records `entry`, and goes back to the folio with `done` or the reason it was refused.
async fn record(state: &AppState, page: &HotelPage, id: &str, folio_id: &str, entry: Entry, done: String) -> WebResult {
    let flash = match ledger::record(&state.db, &page.session.actor, folio_id, entry, None).await {
        Ok(_) => Flash::success(done),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&page.path(&format!("reservations/{id}#folio-title")), flash, state))
}

/// An amount typed in the folio's currency (required), or the refusal to show.
fn amount(errors: &mut FormErrors, field: &str, text: &str, currency: &str) -> Option<i64> {
    let minor = errors.money(field, text, currency);
    if minor.is_none() && !errors.has(field) {
        errors.add(field, "Enter an amount.");
    }
    minor
}

fn refused(errors: FormErrors) -> Flash {
    Flash::error(errors.general.clone().unwrap_or_else(|| errors.unplaced(&[]).join("; ")))
}

#[derive(Deserialize)]
pub(super) struct ChargeForm {
    /// An extra's code, or empty for a described charge.
    #[serde(default)]
    extra: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    price: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    quantity: String,
}

/// `POST …/folio/charges`.
pub(super) async fn add_charge(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<ChargeForm>,
) -> WebResult {
    let (folio_id, currency) = folio_of(&state, &page, &id).await?;
    let form = posted.form;
    let mut errors = FormErrors::default();
    let quantity = match form.quantity.trim() {
        "" => Some(1),
        text => text.parse::<i64>().ok().or_else(|| {
            errors.add("quantity", "Enter a whole number.");
            None
        }),
    };
    let extra = optional(&form.extra);
    let input = match &extra {
        Some(code) => ChargeIn { extra_code: Some(code.clone()), quantity, ..ChargeIn::default() },
        None => ChargeIn {
            description: Some(form.description.clone()),
            unit_price: amount(&mut errors, "price", &form.price, &currency),
            category: optional(&form.category),
            quantity,
            ..ChargeIn::default()
        },
    };
    if !errors.is_empty() {
        return Ok(session::redirect_with(
            &page.path(&format!("reservations/{id}#folio-title")),
            refused(errors),
            &state,
        ));
    }
    let what = extra.unwrap_or_else(|| form.description.trim().to_string());
    record(&state, &page, &id, &folio_id, Entry::Charge(input), format!("Charged {what}.")).await
}

#[derive(Deserialize)]
pub(super) struct PaymentForm {
    method: PaymentMethod,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    reference: String,
}

/// `POST …/folio/payments`.
pub(super) async fn take_payment(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<PaymentForm>,
) -> WebResult {
    let (folio_id, currency) = folio_of(&state, &page, &id).await?;
    let form = posted.form;
    let mut errors = FormErrors::default();
    let Some(paid) = amount(&mut errors, "amount", &form.amount, &currency) else {
        return Ok(session::redirect_with(
            &page.path(&format!("reservations/{id}#folio-title")),
            refused(errors),
            &state,
        ));
    };
    let input = PaymentIn {
        method: form.method,
        amount: paid,
        currency: None,
        reference: optional(&form.reference),
        paid_at: None,
    };
    let done = format!("Recorded a payment of {}.", money::format(paid, &currency));
    record(&state, &page, &id, &folio_id, Entry::Payment(input), done).await
}

#[derive(Deserialize)]
pub(super) struct CorrectionForm {
    line: String,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    reason: String,
}

/// `POST …/folio/allowances`: a correction against one charge.
pub(super) async fn correct_charge(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<CorrectionForm>,
) -> WebResult {
    against_a_line(&state, &page, &id, posted.form, Against::Charge).await
}

/// `POST …/folio/refunds`: money given back against one payment.
pub(super) async fn refund_payment(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<CorrectionForm>,
) -> WebResult {
    against_a_line(&state, &page, &id, posted.form, Against::Payment).await
}

/// What a line's own form records against it.
enum Against {
    /// An allowance against a charge.
    Charge,
    /// A refund against a payment.
    Payment,
}

async fn against_a_line(
    state: &AppState,
    page: &HotelPage,
    id: &str,
    form: CorrectionForm,
    against: Against,
) -> WebResult {
    let (folio_id, currency) = folio_of(state, page, id).await?;
    let mut errors = FormErrors::default();
    let Some(amount) = amount(&mut errors, "amount", &form.amount, &currency) else {
        return Ok(session::redirect_with(
            &page.path(&format!("reservations/{id}#folio-title")),
            refused(errors),
            state,
        ));
    };
    let shown = money::format(amount, &currency);
    let (entry, done) = match against {
        Against::Charge => (
            Entry::Allowance { charge_id: form.line, allowance: AllowanceIn { amount, reason: form.reason } },
            format!("Corrected a charge by {shown}."),
        ),
        Against::Payment => (
            Entry::Refund { payment_id: form.line, refund: RefundIn { amount, reason: optional(&form.reason) } },
            format!("Refunded {shown}."),
        ),
    };
    record(state, page, id, &folio_id, entry, done).await
}

#[derive(Deserialize)]
pub(super) struct CityTaxForm {
    /// `yes` to exempt the stay, `no` to charge the city tax again.
    exempt: String,
    #[serde(default)]
    reason: String,
}

/// `POST …/folio/city-tax`: exempts the stay from the city tax with a reason, or lifts the exemption.
pub(super) async fn city_tax(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<CityTaxForm>,
) -> WebResult {
    let (folio_id, _) = folio_of(&state, &page, &id).await?;
    let form = posted.form;
    let (exemption, done) = match form.exempt.as_str() {
        "yes" => (Some(CityTaxExemptionIn { reason: form.reason }), "The stay is exempt from the city tax."),
        _ => (None, "The city tax is charged again."),
    };
    let flash =
        match city_tax_exemption::exempt_from_city_tax(&state.db, &page.session.actor, &folio_id, exemption).await {
            Ok(_) => Flash::success(done),
            Err(err) => refusal(err)?,
        };
    Ok(session::redirect_with(&page.path(&format!("reservations/{id}#folio-title")), flash, &state))
}

#[derive(askama::Template)]
#[template(path = "reservations/folio_print.html")]
pub(super) struct FolioPrintTemplate {
    css: String,
    hotel: crate::domain::hotels::Hotel,
    hotel_address: Vec<String>,
    guest: String,
    reference: String,
    stay: String,
    printed: String,
    folio: super::detail::FolioView,
    back: String,
}

/// `GET …/folio/print`: the folio on a page of its own, laid out for paper (the guest's copy of their account).
pub(super) async fn print(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let r = &line.reservation;
    let folio = r.folio.as_ref().ok_or(WebError(Error::NotFound("folio")))?;
    let actor = &page.session.actor;
    let ledger = ledger::get(&state.db, actor, &folio.id).await?;
    let billing = crate::domain::finance::billing::get(&state.db, actor, &page.hotel.id).await?;
    let a = &page.hotel.address;
    let locality = [a.postal_code.clone(), a.city.clone()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let hotel_address = [a.address_line1.clone(), a.address_line2.clone(), Some(locality), a.country.clone()]
        .into_iter()
        .flatten()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let template = FolioPrintTemplate {
        css: crate::web::assets::url("app.css"),
        hotel: page.hotel.clone(),
        hotel_address,
        guest: super::guest_title(&line.guest),
        reference: r.reference.clone(),
        stay: format!(
            "{} to {} ({})",
            crate::web::view::date_long(r.check_in_date),
            crate::web::view::date_long(r.check_out_date),
            crate::web::view::nights(r.nights())
        ),
        printed: crate::web::view::date_long(page.hotel.local_date(crate::domain::now())),
        folio: super::detail::folio_view(ledger, &billing, r.status, actor),
        back: page.path(&format!("reservations/{id}#folio-title")),
    };
    Ok(crate::web::page::render_page(&template, &page.session, &state))
}
