//! Invoices in the dashboard: issued from a reservation's folio after a preview (language, recipient, note), listed
//! and searched by number and date, read, downloaded as PDF, e-mailed to the guest and cancelled with a reason. Each
//! calls the same domain function as its REST route (`domain::finance::invoices`).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;

use super::{refusal, HotelPage};
use crate::app::AppState;
use crate::domain::finance::invoices::{
    self, CancellationIn, Invoice, InvoiceDocument, InvoiceFilter, InvoiceIn, InvoiceKind, InvoiceLanguage,
    RecipientIn, RecipientKind,
};
use crate::domain::listing::{ListItems, ListParams};
use crate::domain::{front_office, money, Error};
use crate::web::form::{optional, FormErrors};
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/invoices", get(list))
        .route("/hotels/{hotel_id}/invoices/{id}", get(detail))
        .route("/hotels/{hotel_id}/invoices/{id}/pdf", get(pdf))
        .route("/hotels/{hotel_id}/invoices/{id}/send", post(send))
        .route("/hotels/{hotel_id}/invoices/{id}/cancel", post(cancel))
        .route("/hotels/{hotel_id}/reservations/{id}/invoice", get(issue_page).post(issue))
}

/// An invoice in a list: the folio's, the guest's, the hotel's.
pub struct InvoiceLink {
    pub number: String,
    pub kind: &'static str,
    pub date: String,
    pub recipient: String,
    pub total: String,
    pub href: String,
    /// The number of the cancellation invoice that cancelled it.
    pub cancelled_by: Option<String>,
    pub cancels: Option<String>,
}

fn kind_label(kind: InvoiceKind) -> &'static str {
    match kind {
        InvoiceKind::Invoice => "Invoice",
        InvoiceKind::Cancellation => "Cancellation invoice",
    }
}

impl InvoiceLink {
    /// The link to `invoice` on its hotel's pages; `numbers` names the invoices it may refer to.
    pub fn of(invoice: &Invoice, numbers: &[(String, String)]) -> InvoiceLink {
        let d = &invoice.document;
        let number_of = |id: &Option<String>| {
            id.as_ref().map(|id| {
                numbers.iter().find(|(i, _)| i == id).map_or_else(|| "a cancellation".to_string(), |(_, n)| n.clone())
            })
        };
        InvoiceLink {
            number: d.number.clone(),
            kind: kind_label(d.kind),
            date: view::date_short(d.issue_date),
            recipient: d.recipient.name.clone(),
            total: money::format(d.total_gross, &d.currency),
            href: format!("/hotels/{}/invoices/{}", invoice.hotel_id, invoice.id),
            cancelled_by: number_of(&invoice.cancelled_by_invoice_id),
            cancels: d.cancels_number.clone(),
        }
    }

    /// Links to `invoices`, each naming the others by number.
    pub fn all(invoices: &[Invoice]) -> Vec<InvoiceLink> {
        Self::naming(invoices, &[])
    }

    /// Links to `invoices`, naming by number the others and the cancellations in `also`.
    fn naming(invoices: &[Invoice], also: &[Invoice]) -> Vec<InvoiceLink> {
        let numbers: Vec<(String, String)> =
            invoices.iter().chain(also).map(|i| (i.id.clone(), i.document.number.clone())).collect();
        invoices.iter().map(|i| InvoiceLink::of(i, &numbers)).collect()
    }
}

/// An invoice's document as the pages show it (amounts with their currency).
struct DocumentView {
    number: String,
    title: &'static str,
    language: &'static str,
    issue_date: String,
    period: String,
    issuer: Vec<String>,
    recipient: Vec<String>,
    lines: Vec<(String, String, String, String, String, String, String)>,
    vat_totals: Vec<(String, String, String, String)>,
    total_net: String,
    total_vat: String,
    total_gross: String,
    payments: Vec<(String, &'static str, String, String)>,
    paid: String,
    balance_due: String,
    payment_terms: Option<String>,
    note: Option<String>,
    cancels: Option<String>,
    cancellation_reason: Option<String>,
}

fn address_lines(name: &str, a: &crate::model::invoices::PostalAddress, vat_id: Option<&str>) -> Vec<String> {
    let city = [a.postal_code.as_deref(), a.city.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let mut lines: Vec<String> = [Some(name.to_string()), a.street.clone(), Some(city), a.country.clone()]
        .into_iter()
        .flatten()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if let Some(v) = vat_id.filter(|v| !v.is_empty()) {
        lines.push(format!("VAT ID {v}"));
    }
    lines
}

impl DocumentView {
    fn of(d: &InvoiceDocument) -> DocumentView {
        let m = |minor: i64| money::format(minor, &d.currency);
        let mut issuer = address_lines(&d.issuer.legal_name, &d.issuer.address, Some(&d.issuer.vat_id));
        if let Some(tax) = &d.issuer.tax_number {
            issuer.push(format!("Tax number {tax}"));
        }
        DocumentView {
            number: d.number.clone(),
            title: kind_label(d.kind),
            language: match d.language {
                InvoiceLanguage::En => "English",
                InvoiceLanguage::De => "German",
            },
            issue_date: view::date_long(d.issue_date),
            period: if d.service_period.from == d.service_period.to {
                view::date_long(d.service_period.from)
            } else {
                format!("{} to {}", view::date_long(d.service_period.from), view::date_long(d.service_period.to))
            },
            issuer,
            recipient: address_lines(&d.recipient.name, &d.recipient.address, d.recipient.vat_id.as_deref()),
            lines: d
                .lines
                .iter()
                .map(|l| {
                    (
                        view::date_short(l.service_date),
                        l.description.clone(),
                        l.quantity.to_string(),
                        view::percent(l.vat_rate_basis_points),
                        m(l.net),
                        m(l.vat),
                        m(l.gross),
                    )
                })
                .collect(),
            vat_totals: d
                .vat_totals
                .iter()
                .map(|t| (view::percent(t.vat_rate_basis_points), m(t.net), m(t.vat), m(t.gross)))
                .collect(),
            total_net: m(d.total_net),
            total_vat: m(d.total_vat),
            total_gross: m(d.total_gross),
            payments: d
                .payments
                .iter()
                .map(|p| {
                    (
                        view::date_short(p.paid_on),
                        p.method.label(),
                        p.reference.clone().unwrap_or_default(),
                        m(p.amount),
                    )
                })
                .collect(),
            paid: m(d.paid),
            balance_due: m(d.balance_due),
            payment_terms: d.payment_terms.clone(),
            note: d.note.clone(),
            cancels: d.cancels_number.clone(),
            cancellation_reason: d.cancellation_reason.clone(),
        }
    }
}

/// An invoice of this hotel, or the 404 page.
async fn of_hotel(state: &AppState, page: &HotelPage, id: &str) -> Result<Invoice, WebError> {
    let invoice = invoices::get(&state.db, &page.session.actor, id).await?;
    if invoice.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("invoice")));
    }
    Ok(invoice)
}

#[derive(Deserialize, Default)]
struct SearchForm {
    #[serde(default)]
    number: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

#[derive(Template)]
#[template(path = "invoices/list.html")]
struct ListTemplate {
    chrome: Chrome,
    form: SearchForm,
    errors: FormErrors,
    invoices: Vec<InvoiceLink>,
    total: i64,
    export_href: String,
}

/// The most invoices one page of the list shows.
const PAGE: i64 = 100;

/// `GET /hotels/{id}/invoices?number=&from=&to=`: the hotel's invoices, newest first, searched by number and date.
async fn list(State(state): State<AppState>, page: HotelPage, Query(form): Query<SearchForm>) -> WebResult {
    let chrome = page.chrome(&state, Section::Reports, "Invoices").await?;
    let filter = InvoiceFilter {
        hotel_id: Some(page.hotel.id.clone()),
        date_from: optional(&form.from),
        date_to: optional(&form.to),
        number: optional(&form.number),
        sort_field: None,
    };
    let params = ListParams { limit: Some(PAGE), sort_direction: Some("DESC".into()), ..ListParams::default() };
    let mut errors = FormErrors::default();
    let (invoices, total) = match invoices::list(&state.db, &page.session.actor, filter, params).await {
        Ok(listing) => {
            let found: Vec<Invoice> = match listing.items {
                ListItems::Page(items) => items,
                ListItems::Streamed(stream) => {
                    use futures::TryStreamExt;
                    stream.try_collect().await?
                }
            };
            // The cancellations of listed invoices that the search left out, to name them by number.
            let mut cancellations = Vec::new();
            for id in found.iter().filter_map(|i| i.cancelled_by_invoice_id.as_ref()) {
                if !found.iter().any(|i| &i.id == id) {
                    cancellations.push(invoices::get(&state.db, &page.session.actor, id).await?);
                }
            }
            (InvoiceLink::naming(&found, &cancellations), listing.total)
        }
        Err(err) => {
            errors.absorb(err)?;
            (Vec::new(), 0)
        }
    };
    let today = page.hotel.today();
    let first = chrono::Datelike::with_day(&today, 1).unwrap_or(today);
    let export = serde_urlencoded::to_string([
        ("from", optional(&form.from).unwrap_or_else(|| first.to_string())),
        ("to", optional(&form.to).unwrap_or_else(|| today.to_string())),
    ])
    .unwrap_or_default();
    let template = ListTemplate {
        chrome,
        form,
        errors,
        invoices,
        total,
        export_href: page.path(&format!("reports/invoices.csv?{export}")),
    };
    Ok(render_page(&template, &page.session, &state))
}

#[derive(Template)]
#[template(path = "invoices/detail.html")]
struct DetailTemplate {
    chrome: Chrome,
    doc: DocumentView,
    href: String,
    reservation_href: String,
    cancelled_by: Option<InvoiceLink>,
    cancels_href: Option<String>,
    /// Whether it can be cancelled (an invoice not yet cancelled).
    cancellable: bool,
    guest_email: Option<String>,
}

/// `GET /hotels/{id}/invoices/{invoice}`: the invoice as issued, with what can be done with it.
async fn detail(State(state): State<AppState>, page: HotelPage, Path((_, id)): Path<(String, String)>) -> WebResult {
    let invoice = of_hotel(&state, &page, &id).await?;
    let actor = &page.session.actor;
    let chrome = page.chrome(&state, Section::Reports, &format!("Invoice {}", invoice.document.number)).await?;
    let cancelled_by = match &invoice.cancelled_by_invoice_id {
        Some(by) => Some(InvoiceLink::of(&invoices::get(&state.db, actor, by).await?, &[])),
        None => None,
    };
    let stay = front_office::stay(&state.db, actor, &invoice.reservation_id).await.ok();
    let guest_email = stay.as_ref().and_then(|s| s.guest.as_ref()).and_then(|g| g.email.clone());
    let template = DetailTemplate {
        chrome,
        doc: DocumentView::of(&invoice.document),
        href: page.path(&format!("invoices/{}", invoice.id)),
        reservation_href: page.path(&format!("reservations/{}", invoice.reservation_id)),
        cancellable: invoice.document.kind == InvoiceKind::Invoice && invoice.cancelled_by_invoice_id.is_none(),
        cancels_href: invoice.cancels_invoice_id.as_ref().map(|c| page.path(&format!("invoices/{c}"))),
        cancelled_by,
        guest_email,
    };
    Ok(render_page(&template, &page.session, &state))
}

/// `GET /hotels/{id}/invoices/{invoice}/pdf`: the PDF, as the REST API serves it.
async fn pdf(State(state): State<AppState>, page: HotelPage, Path((_, id)): Path<(String, String)>) -> WebResult {
    let invoice = of_hotel(&state, &page, &id).await?;
    let bytes = crate::documents::invoice_pdf::render(&invoice.document)
        .map_err(|e| WebError(Error::Internal(anyhow::anyhow!("invoice {} as PDF: {e}", invoice.id))))?;
    Ok(crate::app::download::pdf(&invoices::pdf_disposition(&invoice), bytes))
}

#[derive(Deserialize)]
struct Empty {}

/// `POST /hotels/{id}/invoices/{invoice}/send`: e-mails it to the guest.
async fn send(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    _posted: Posted<Empty>,
) -> WebResult {
    let invoice = of_hotel(&state, &page, &id).await?;
    let flash = match invoices::send(&state.db, &page.session.actor, &invoice.id).await {
        Ok(message) => {
            Flash::success(format!("Invoice {} is being e-mailed to {}.", invoice.document.number, message.recipient))
        }
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&page.path(&format!("invoices/{id}")), flash, &state))
}

#[derive(Deserialize)]
struct CancelForm {
    #[serde(default)]
    reason: String,
}

/// `POST /hotels/{id}/invoices/{invoice}/cancel`: issues its cancellation invoice and shows it.
async fn cancel(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<CancelForm>,
) -> WebResult {
    let invoice = of_hotel(&state, &page, &id).await?;
    let input = CancellationIn { reason: posted.form.reason };
    match invoices::cancel(&state.db, &page.session.actor, &invoice.id, input).await {
        Ok(cancellation) => {
            let flash = Flash::success(format!(
                "Invoice {} is cancelled by {}. The folio's lines can be invoiced again.",
                invoice.document.number, cancellation.document.number
            ));
            Ok(session::redirect_with(&page.path(&format!("invoices/{}", cancellation.id)), flash, &state))
        }
        Err(err) => {
            let flash = refusal(err)?;
            Ok(session::redirect_with(&page.path(&format!("invoices/{id}")), flash, &state))
        }
    }
}

/// The issue form: what the preview and the issue are made from.
#[derive(Deserialize, Default, Clone)]
struct IssueForm {
    #[serde(default)]
    language: String,
    /// `guest` or `company`.
    #[serde(default)]
    to: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    street: String,
    #[serde(rename = "postalCode", default)]
    postal_code: String,
    #[serde(default)]
    city: String,
    #[serde(default)]
    country: String,
    #[serde(rename = "vatId", default)]
    vat_id: String,
    #[serde(default)]
    note: String,
}

impl IssueForm {
    fn input(&self) -> InvoiceIn {
        let company = self.to == "company";
        InvoiceIn {
            language: Some(if self.language == "de" { InvoiceLanguage::De } else { InvoiceLanguage::En }),
            recipient: company.then(|| RecipientIn {
                kind: Some(RecipientKind::Company),
                name: optional(&self.name),
                street: optional(&self.street),
                postal_code: optional(&self.postal_code),
                city: optional(&self.city),
                country: optional(&self.country).map(|c| c.to_uppercase()),
                vat_id: optional(&self.vat_id).map(|v| v.to_uppercase()),
            }),
            note: optional(&self.note),
        }
    }
}

#[derive(Template)]
#[template(path = "invoices/issue.html")]
struct IssueTemplate {
    chrome: Chrome,
    form: IssueForm,
    errors: FormErrors,
    /// The invoice as it would be issued now, and what stands in its way.
    preview: Option<DocumentView>,
    problems: Vec<String>,
    action: String,
    back: String,
    guest_name: String,
}

/// The reservation's folio id, for a reservation of this hotel.
async fn folio_of(state: &AppState, page: &HotelPage, id: &str) -> Result<(String, String), WebError> {
    let line = front_office::stay(&state.db, &page.session.actor, id).await?;
    if line.reservation.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("reservation")));
    }
    let folio = line.reservation.folio.as_ref().ok_or(WebError(Error::NotFound("folio")))?;
    let guest = line.guest.as_ref().map(front_office::guest_name).unwrap_or_default();
    Ok((folio.id.clone(), guest))
}

async fn issue_form(
    state: &AppState,
    page: &HotelPage,
    id: &str,
    form: IssueForm,
    mut errors: FormErrors,
) -> WebResult {
    let (folio, guest_name) = folio_of(state, page, id).await?;
    let chrome = page.chrome(state, Section::Reservations, "Issue an invoice").await?;
    let (preview, problems) = match invoices::preview(&state.db, &page.session.actor, &folio, form.input()).await {
        Ok(p) => (Some(DocumentView::of(&p.invoice)), p.problems.into_iter().map(|e| e.message).collect()),
        Err(err) => {
            errors.absorb(err)?;
            (None, Vec::new())
        }
    };
    let template = IssueTemplate {
        chrome,
        form,
        errors,
        preview,
        problems,
        action: page.path(&format!("reservations/{id}/invoice")),
        back: page.path(&format!("reservations/{id}#folio-title")),
        guest_name,
    };
    Ok(render_page(&template, &page.session, state))
}

/// `GET /hotels/{id}/reservations/{r}/invoice?…`: the invoice the folio would be issued as, with the form that
/// chooses its language and recipient.
async fn issue_page(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    Query(form): Query<IssueForm>,
) -> WebResult {
    issue_form(&state, &page, &id, form, FormErrors::default()).await
}

/// `POST /hotels/{id}/reservations/{r}/invoice`: issues it, and shows the invoice; or the form with the reasons.
async fn issue(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<IssueForm>,
) -> WebResult {
    let (folio, _) = folio_of(&state, &page, &id).await?;
    let form = posted.form;
    match invoices::issue(&state.db, &page.session.actor, &folio, form.input(), None).await {
        Ok(invoice) => {
            let flash = Flash::success(format!("Invoice {} issued.", invoice.document.number));
            Ok(session::redirect_with(&page.path(&format!("invoices/{}", invoice.id)), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            issue_form(&state, &page, &id, form, errors).await
        }
    }
}
