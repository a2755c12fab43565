//! Reports: the revenue of a period (posted charges less allowances by day, category and VAT rate; payments and
//! refunds by method), from the same domain function as `GET /api/reports/revenue`, with its CSV to download.

use askama::Template;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::Router;
use chrono::{Datelike, NaiveDate};
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::finance::revenue::{self, RevenueQuery, RevenueReport};
use crate::domain::money;
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/reports", get(revenue_page))
        .route("/hotels/{hotel_id}/reports/revenue.csv", get(revenue_csv))
        .route("/hotels/{hotel_id}/reports/invoices.csv", get(invoices_csv))
}

#[derive(Deserialize, Default)]
struct PeriodForm {
    from: Option<String>,
    to: Option<String>,
}

impl PeriodForm {
    /// The period asked for; this month to the hotel's today when none was.
    fn query(&self, page: &HotelPage) -> RevenueQuery {
        let today = page.hotel.today();
        let first = today.with_day(1).unwrap_or(today);
        let pick = |given: &Option<String>, default: NaiveDate| {
            given.as_deref().map(str::trim).filter(|t| !t.is_empty()).map_or(default.to_string(), str::to_string)
        };
        RevenueQuery {
            hotel_id: page.hotel.id.clone(),
            date_from: pick(&self.from, first),
            date_to: pick(&self.to, today),
        }
    }
}

struct RevenueLine {
    date: String,
    category: String,
    rate: String,
    net: String,
    vat: String,
    gross: String,
}

struct PaymentLine {
    method: &'static str,
    received: String,
    refunded: String,
    net: String,
}

struct TotalLine {
    currency: String,
    net: String,
    vat: String,
    gross: String,
    vat_totals: Vec<(String, String, String, String)>,
    received: String,
    refunded: String,
}

#[derive(Template)]
#[template(path = "reports/revenue.html")]
struct RevenueTemplate {
    chrome: Chrome,
    from: String,
    to: String,
    errors: FormErrors,
    /// The period in words, when the report was made.
    period: Option<String>,
    revenue: Vec<RevenueLine>,
    payments: Vec<PaymentLine>,
    totals: Vec<TotalLine>,
    csv_href: String,
}

fn lines(report: &RevenueReport) -> (Vec<RevenueLine>, Vec<PaymentLine>, Vec<TotalLine>) {
    let revenue = report
        .revenue
        .iter()
        .map(|r| RevenueLine {
            date: view::date_short(r.date),
            category: view::category_label(&r.category),
            rate: view::percent(r.vat_rate_basis_points),
            net: money::format(r.net, &r.currency),
            vat: money::format(r.vat, &r.currency),
            gross: money::format(r.gross, &r.currency),
        })
        .collect();
    let payments = report
        .payments
        .iter()
        .map(|p| PaymentLine {
            method: p.method.label(),
            received: money::format(p.received, &p.currency),
            refunded: money::format(p.refunded, &p.currency),
            net: money::format(p.net, &p.currency),
        })
        .collect();
    let totals = report
        .totals
        .iter()
        .map(|t| {
            let m = |minor: i64| money::format(minor, &t.currency);
            TotalLine {
                currency: t.currency.clone(),
                net: m(t.net),
                vat: m(t.vat),
                gross: m(t.gross),
                vat_totals: t
                    .vat_totals
                    .iter()
                    .map(|v| (view::percent(v.vat_rate_basis_points), m(v.net), m(v.vat), m(v.gross)))
                    .collect(),
                received: m(t.received),
                refunded: m(t.refunded),
            }
        })
        .collect();
    (revenue, payments, totals)
}

/// `GET /hotels/{id}/reports?from=&to=`: the revenue report of the period (this month by default).
async fn revenue_page(State(state): State<AppState>, page: HotelPage, Query(form): Query<PeriodForm>) -> WebResult {
    let query = form.query(&page);
    let chrome = page.chrome(&state, Section::Reports, "Revenue").await?;
    let mut errors = FormErrors::default();
    let report = match revenue::report(&state.db, &page.session.actor, &query).await {
        Ok(report) => Some(report),
        Err(err) => {
            errors.absorb(err)?;
            None
        }
    };
    let (revenue, payments, totals) = report.as_ref().map(lines).unwrap_or_default();
    let csv = serde_urlencoded::to_string([("from", &query.date_from), ("to", &query.date_to)]).unwrap_or_default();
    let template = RevenueTemplate {
        chrome,
        period: report.as_ref().map(|r| format!("{} to {}", view::date_long(r.date_from), view::date_long(r.date_to))),
        from: query.date_from,
        to: query.date_to,
        errors,
        revenue,
        payments,
        totals,
        csv_href: page.path(&format!("reports/revenue.csv?{csv}")),
    };
    Ok(render_page(&template, &page.session, &state))
}

/// `GET /hotels/{id}/reports/revenue.csv?from=&to=`: the same report as the accountant's CSV.
async fn revenue_csv(State(state): State<AppState>, page: HotelPage, Query(form): Query<PeriodForm>) -> WebResult {
    let query = form.query(&page);
    let report = revenue::report(&state.db, &page.session.actor, &query).await?;
    let (disposition, body) = revenue::csv_download(&report);
    Ok(crate::app::download::csv(&disposition, body))
}

/// `GET /hotels/{id}/reports/invoices.csv?from=&to=`: the invoices issued in the period, as the accountant's CSV.
async fn invoices_csv(State(state): State<AppState>, page: HotelPage, Query(form): Query<PeriodForm>) -> WebResult {
    let query = form.query(&page);
    let export = crate::domain::finance::invoices::export::export(&state.db, &page.session.actor, &query).await?;
    let (disposition, body) = crate::domain::finance::invoices::export::csv_download(&export);
    Ok(crate::app::download::csv(&disposition, body))
}
