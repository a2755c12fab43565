//! Reports (an extension of the contract; docs/money.md): the revenue report as JSON, or as CSV when the request
//! accepts `text/csv`. Scope folios:read.

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::finance::invoices::export::{self, InvoiceExport};
use crate::domain::finance::revenue::{self, RevenueQuery, RevenueReport};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(revenue_report)).routes(routes!(invoice_export))
}

/// Whether the request asks for CSV before JSON (`Accept: text/csv`).
fn wants_csv(headers: &HeaderMap) -> bool {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let position = |kind: &str| accept.to_ascii_lowercase().find(kind);
    match (position("text/csv"), position("application/json")) {
        (Some(csv), Some(json)) => csv < json,
        (Some(_), None) => true,
        _ => false,
    }
}

/// A hotel's posted revenue by service date, category and VAT rate, and its payments and refunds by method, for a
/// period of at most 366 days (both dates included). `Accept: text/csv` answers the same as CSV.
#[utoipa::path(
    get,
    path = "/api/reports/revenue",
    tag = "reports",
    security(("apiKey" = []), ("accessToken" = [])),
    params(RevenueQuery),
    responses(
        (status = 200, body = RevenueReport, content(
            (RevenueReport = "application/json"),
            (String = "text/csv", example = "section,date,category,vat_rate_percent,payment_method,currency,net,vat,gross,received,refunded\nrevenue,2026-12-01,ACCOMMODATION,7,,EUR,280.37,19.63,300.00,,\npayments,,,,CARD,EUR,,,,300.00,0.00\n"),
        )),
        (status = 400, description = "Missing or invalid dates, or a period longer than 366 days"),
        (status = 403, description = "The API key lacks folios:read, or is pinned to another hotel"),
        (status = 404, description = "No such hotel for this credential"),
    )
)]
async fn revenue_report(
    State(state): State<AppState>,
    Principal(actor): Principal,
    headers: HeaderMap,
    Query(query): Query<RevenueQuery>,
) -> Result<Response> {
    actor.resolve_hotel(Some(&query.hotel_id))?;
    let report = revenue::report(&state.db, &actor, &query).await?;
    Ok(json_or_csv(&headers, report, revenue::csv_download))
}

/// `report` as JSON, or as the CSV file `csv` makes of it when the request asks for CSV.
fn json_or_csv<T: serde::Serialize>(headers: &HeaderMap, report: T, csv: fn(&T) -> (String, String)) -> Response {
    if !wants_csv(headers) {
        return Json(report).into_response();
    }
    let (disposition, body) = csv(&report);
    crate::app::download::csv(&disposition, body)
}

/// A hotel's invoices and cancellation invoices issued in a period of at most 366 days (both dates included), for an
/// accountant's import: number, date, recipient, net and VAT per rate, gross, and which cancels which.
/// `Accept: text/csv` answers CSV, one row per invoice and VAT rate.
#[utoipa::path(
    get,
    path = "/api/reports/invoices",
    tag = "reports",
    security(("apiKey" = []), ("accessToken" = [])),
    params(RevenueQuery),
    responses(
        (status = 200, body = InvoiceExport, content(
            (InvoiceExport = "application/json"),
            (String = "text/csv", example = "number,kind,issue_date,recipient,recipient_vat_id,currency,vat_rate_percent,net,vat,gross,invoice_net,invoice_vat,invoice_gross,cancels,cancelled_by\nRE-2026-000001,INVOICE,2026-12-03,Ana Silva,,EUR,7,280.37,19.63,300.00,280.37,19.63,300.00,,\n"),
        )),
        (status = 400, description = "Missing or invalid dates, or a period longer than 366 days"),
        (status = 403, description = "The API key lacks folios:read, or is pinned to another hotel"),
        (status = 404, description = "No such hotel for this credential"),
    )
)]
async fn invoice_export(
    State(state): State<AppState>,
    Principal(actor): Principal,
    headers: HeaderMap,
    Query(query): Query<RevenueQuery>,
) -> Result<Response> {
    actor.resolve_hotel(Some(&query.hotel_id))?;
    let report = export::export(&state.db, &actor, &query).await?;
    Ok(json_or_csv(&headers, report, export::csv_download))
}
