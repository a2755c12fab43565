//! Invoices (an extension of the contract; docs/invoices.md): previewed and issued from a folio, read as JSON or
//! PDF, listed, cancelled by a cancellation invoice. Scopes: invoices:write issues and cancels, folios:read reads.
//! There is no PUT and no DELETE: an issued invoice never changes.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::finance::invoices::{
    self, CancellationIn, Invoice, InvoiceFilter, InvoiceIn, InvoicePreview, PreviewQuery,
};
use crate::domain::listing::ListParams;
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{idempotency_key, Json, Path, Query};
use crate::http::listing;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(preview_invoice))
        .routes(routes!(issue_invoice, invoices_of_folio))
        .routes(routes!(list_invoices))
        .routes(routes!(get_invoice))
        .routes(routes!(invoice_pdf))
        .routes(routes!(cancel_invoice))
        .routes(routes!(send_invoice))
}

/// What issuing an invoice from the folio would give now (with the number it would take), and every reason it
/// cannot be issued yet.
#[utoipa::path(
    get,
    path = "/api/folios/{folioId}/invoice-preview",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("folioId" = String, Path), PreviewQuery),
    responses(
        (status = 200, body = InvoicePreview),
        (status = 400, description = "A malformed recipient or note; every problem is listed with its field"),
        (status = 403, description = "The API key lacks folios:read"),
        (status = 404, description = "No such folio for this credential"),
    )
)]
async fn preview_invoice(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Query(query): Query<PreviewQuery>,
) -> Result<Json<InvoicePreview>> {
    invoices::preview(&state.db, &actor, &id, query.into()).await.map(Json)
}

/// Issues the folio's lines not yet invoiced as an invoice numbered from the hotel's series. Refused with 422,
/// listing every reason, while lines are not posted (the guest is not checked out), when nothing is left to invoice,
/// when the recipient lacks a name or (above 250.00) an address, or the billing settings lack the issuer.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/invoices",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key issues once"),
    ),
    request_body = InvoiceIn,
    responses(
        (status = 201, body = Invoice),
        (status = 400, description = "A malformed language, recipient or note; every problem is listed"),
        (status = 403, description = "The API key lacks invoices:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "Another invoice took the lines meanwhile, or the idempotency key was used for a different request"),
        (status = 422, description = "The folio cannot be invoiced as it stands; every reason is listed with its field"),
    )
)]
async fn issue_invoice(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<InvoiceIn>,
) -> Result<Response> {
    let key = idempotency_key(&headers)?;
    let invoice = invoices::issue(&state.db, &actor, &id, input, key.as_deref()).await?;
    let location = HeaderValue::from_str(&format!("/api/invoices/{}", invoice.id)).ok();
    let mut response = (axum::http::StatusCode::CREATED, Json(invoice)).into_response();
    if let Some(location) = location {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

/// The folio's invoices and cancellation invoices, oldest first.
#[utoipa::path(
    get,
    path = "/api/folios/{folioId}/invoices",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("folioId" = String, Path)),
    responses(
        (status = 200, body = Vec<Invoice>),
        (status = 403, description = "The API key lacks folios:read"),
        (status = 404, description = "No such folio for this credential"),
    )
)]
async fn invoices_of_folio(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Vec<Invoice>>> {
    invoices::of_folio(&state.db, &actor, &id).await.map(Json)
}

/// The organization's invoices (a pinned key's: its hotel's), by hotel, period of issue and number; paged and
/// streamed like the other lists (`X-Total-Count`).
#[utoipa::path(
    get,
    path = "/api/invoices",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(InvoiceFilter, ListParams),
    responses(
        (status = 200, body = Vec<Invoice>, headers(("X-Total-Count" = i64, description = "Matches in all"))),
        (status = 400, description = "Invalid filter or paging"),
        (status = 403, description = "The API key lacks folios:read, or is pinned to another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_invoices(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(filter): Query<InvoiceFilter>,
    Query(params): Query<ListParams>,
) -> Result<Response> {
    invoices::list(&state.db, &actor, filter, params).await.map(listing::respond)
}

/// One invoice as issued, with the cancellation that cancelled it, if one did.
#[utoipa::path(
    get,
    path = "/api/invoices/{invoiceId}",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("invoiceId" = String, Path)),
    responses(
        (status = 200, body = Invoice),
        (status = 403, description = "The API key lacks folios:read"),
        (status = 404, description = "No such invoice for this credential"),
    )
)]
async fn get_invoice(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<Invoice>> {
    invoices::get(&state.db, &actor, &id).await.map(Json)
}

/// The invoice as a PDF (A4, the same bytes each time it is fetched).
#[utoipa::path(
    get,
    path = "/api/invoices/{invoiceId}/pdf",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("invoiceId" = String, Path)),
    responses(
        (status = 200, description = "The PDF", content_type = "application/pdf", body = Vec<u8>),
        (status = 403, description = "The API key lacks folios:read"),
        (status = 404, description = "No such invoice for this credential"),
    )
)]
async fn invoice_pdf(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Response> {
    let invoice = invoices::get(&state.db, &actor, &id).await?;
    let bytes = crate::documents::invoice_pdf::render(&invoice.document)
        .map_err(|e| crate::domain::Error::Internal(anyhow::anyhow!("invoice {} as PDF: {e}", invoice.id)))?;
    Ok(crate::app::download::pdf(&invoices::pdf_disposition(&invoice), bytes))
}

/// Cancels an invoice: issues its cancellation invoice (the next number, every line negated, naming the number it
/// cancels); the folio's lines may then be invoiced again.
#[utoipa::path(
    post,
    path = "/api/invoices/{invoiceId}/cancel",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("invoiceId" = String, Path)),
    request_body = CancellationIn,
    responses(
        (status = 201, body = Invoice, description = "The cancellation invoice"),
        (status = 400, description = "A missing or malformed reason"),
        (status = 403, description = "The API key lacks invoices:write"),
        (status = 404, description = "No such invoice for this credential"),
        (status = 409, description = "A cancellation invoice, or an invoice already cancelled"),
    )
)]
async fn cancel_invoice(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(input): Json<CancellationIn>,
) -> Result<Response> {
    let cancellation = invoices::cancel(&state.db, &actor, &id, input).await?;
    Ok((axum::http::StatusCode::CREATED, Json(cancellation)).into_response())
}

/// The e-mail an invoice was queued in.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct InvoiceMail {
    /// The guest message (the guest's page lists it with its delivery).
    message_id: String,
    /// `pending`: queued; the mail dispatcher sends it.
    status: String,
}

/// E-mails the invoice to the guest of its stay with the PDF attached, through the guest-message outbox.
#[utoipa::path(
    post,
    path = "/api/invoices/{invoiceId}/send",
    tag = "invoices",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("invoiceId" = String, Path)),
    responses(
        (status = 202, body = InvoiceMail, description = "Queued for sending"),
        (status = 403, description = "The API key lacks invoices:write"),
        (status = 404, description = "No such invoice for this credential"),
        (status = 409, description = "The stay has no guest, or the guest no e-mail address"),
    )
)]
async fn send_invoice(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Response> {
    let message = invoices::send(&state.db, &actor, &id).await?;
    let answer = InvoiceMail { message_id: message.id, status: message.status.as_str().to_string() };
    Ok((axum::http::StatusCode::ACCEPTED, Json(answer)).into_response())
}
