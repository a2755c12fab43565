//! Folios as ledgers (an extension of the contract; docs/money.md): scopes folios:read, folios:write (charges,
//! allowances, fees) and payments:write (payments, refunds). Every write takes an `Idempotency-Key`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::finance::city_tax_exemption::{self, CityTaxExemptionIn};
use crate::domain::finance::folios::FolioLedger;
use crate::domain::finance::ledger::{self, AllowanceIn, ChargeIn, Entry, FeeIn, PaymentIn, RefundIn};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{idempotency_key, Json, Path};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_folio))
        .routes(routes!(add_charge))
        .routes(routes!(add_allowance))
        .routes(routes!(add_payment))
        .routes(routes!(add_refund))
        .routes(routes!(add_fee))
        .routes(routes!(exempt_from_city_tax, lift_city_tax_exemption))
}

/// Whether the request asks for the short answer (`Prefer: return=minimal`, RFC 7240).
fn prefers_minimal(headers: &HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split([',', ';']).any(|p| p.trim().eq_ignore_ascii_case("return=minimal")))
}

/// Records `entry` and answers the whole folio, or with `Prefer: return=minimal` its sums and the lines added.
async fn record(
    state: &AppState,
    actor: &crate::domain::Actor,
    id: &str,
    headers: &HeaderMap,
    entry: Entry,
) -> Result<Response> {
    let key = idempotency_key(headers)?;
    let recorded = ledger::record(&state.db, actor, id, entry, key.as_deref()).await?;
    let mut response = if prefers_minimal(headers) {
        let mut response = Json(recorded.folio).into_response();
        response.headers_mut().insert("preference-applied", HeaderValue::from_static("return=minimal"));
        response
    } else {
        // Read after the write, outside it: the folio as it is now.
        Json(ledger::get_for_writer(&state.db, actor, id).await?).into_response()
    };
    if recorded.replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// A folio: its lines (charges, allowances, payments, refunds), totals per VAT rate and balance.
#[utoipa::path(
    get,
    path = "/api/folios/{folioId}",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("folioId" = String, Path, description = "The folio's id (a reservation's `folio.id`)")),
    responses(
        (status = 200, body = FolioLedger),
        (status = 403, description = "The API key lacks folios:read"),
        (status = 404, description = "No such folio for this credential"),
    )
)]
async fn get_folio(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<FolioLedger>> {
    ledger::get(&state.db, &actor, &id).await.map(Json)
}

/// Charges one of the hotel's extras (a package becomes one line per part, each at its VAT rate) or a charge
/// described here; posted at once.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/charges",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key is recorded once"),
        ("Prefer" = Option<String>, Header, description = "`return=minimal`: answer the folio's sums and the lines this write added (a FolioSummary) instead of the whole folio"),
    ),
    request_body = ChargeIn,
    responses(
        (status = 200, body = FolioLedger, description = "The folio with the new lines (with `Prefer: return=minimal`, a FolioSummary)"),
        (status = 400, description = "Invalid charge; every problem is listed with its field"),
        (status = 403, description = "The API key lacks folios:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "The idempotency key was used for a different request"),
    )
)]
async fn add_charge(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<ChargeIn>,
) -> Result<Response> {
    record(&state, &actor, &id, &headers, Entry::Charge(input)).await
}

/// Corrects a charge with an allowance (up to what is left of it): a posted charge never changes itself.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/charges/{lineId}/allowances",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("lineId" = String, Path, description = "The charge's line id"),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key is recorded once"),
        ("Prefer" = Option<String>, Header, description = "`return=minimal`: answer the folio's sums and the lines this write added (a FolioSummary) instead of the whole folio"),
    ),
    request_body = AllowanceIn,
    responses(
        (status = 200, body = FolioLedger),
        (status = 400, description = "Invalid allowance (above what is left of the charge, say)"),
        (status = 403, description = "The API key lacks folios:write"),
        (status = 404, description = "No such folio or charge for this credential"),
        (status = 409, description = "The idempotency key was used for a different request"),
    )
)]
async fn add_allowance(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path((id, line_id)): Path<(String, String)>,
    headers: HeaderMap,
    Json(allowance): Json<AllowanceIn>,
) -> Result<Response> {
    record(&state, &actor, &id, &headers, Entry::Allowance { charge_id: line_id, allowance }).await
}

/// Records a payment taken elsewhere (no card is processed and no card data is stored). CASH is refused for
/// hotels in Germany (409) until a certified cash-register security module exists.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/payments",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key is recorded once"),
        ("Prefer" = Option<String>, Header, description = "`return=minimal`: answer the folio's sums and the lines this write added (a FolioSummary) instead of the whole folio"),
    ),
    request_body = PaymentIn,
    responses(
        (status = 200, body = FolioLedger),
        (status = 400, description = "Invalid payment (another currency than the folio's, say)"),
        (status = 403, description = "The API key lacks payments:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "CASH at a hotel in Germany, or the idempotency key was used for a different request"),
    )
)]
async fn add_payment(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<PaymentIn>,
) -> Result<Response> {
    record(&state, &actor, &id, &headers, Entry::Payment(input)).await
}

/// Refunds (part of) a payment, up to what is left of it.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/payments/{lineId}/refunds",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("lineId" = String, Path, description = "The payment's line id"),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key is recorded once"),
        ("Prefer" = Option<String>, Header, description = "`return=minimal`: answer the folio's sums and the lines this write added (a FolioSummary) instead of the whole folio"),
    ),
    request_body = RefundIn,
    responses(
        (status = 200, body = FolioLedger),
        (status = 400, description = "Invalid refund (above what is left of the payment, say)"),
        (status = 403, description = "The API key lacks payments:write"),
        (status = 404, description = "No such folio or payment for this credential"),
        (status = 409, description = "The idempotency key was used for a different request"),
    )
)]
async fn add_refund(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path((id, line_id)): Path<(String, String)>,
    headers: HeaderMap,
    Json(refund): Json<RefundIn>,
) -> Result<Response> {
    record(&state, &actor, &id, &headers, Entry::Refund { payment_id: line_id, refund }).await
}

/// Charges a no-show or cancellation fee.
#[utoipa::path(
    post,
    path = "/api/folios/{folioId}/fees",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(
        ("folioId" = String, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "The same request with the same key is recorded once"),
        ("Prefer" = Option<String>, Header, description = "`return=minimal`: answer the folio's sums and the lines this write added (a FolioSummary) instead of the whole folio"),
    ),
    request_body = FeeIn,
    responses(
        (status = 200, body = FolioLedger),
        (status = 400, description = "Invalid fee"),
        (status = 403, description = "The API key lacks folios:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "The idempotency key was used for a different request"),
    )
)]
async fn add_fee(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
    Json(input): Json<FeeIn>,
) -> Result<Response> {
    record(&state, &actor, &id, &headers, Entry::Fee(input)).await
}

/// Exempts the stay from the city tax, with the reason (business travel, say): its unposted city-tax lines go and
/// are not made again while the exemption stands. Posted ones stay (an allowance corrects one).
#[utoipa::path(
    put,
    path = "/api/folios/{folioId}/cityTaxExemption",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("folioId" = String, Path)),
    request_body = CityTaxExemptionIn,
    responses(
        (status = 200, body = FolioLedger, description = "The folio without unposted city tax"),
        (status = 400, description = "A reason is required (at most 500 characters)"),
        (status = 403, description = "The API key lacks folios:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "The stay is not CONFIRMED or CHECKED_IN: its lines no longer follow it"),
    )
)]
async fn exempt_from_city_tax(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(input): Json<CityTaxExemptionIn>,
) -> Result<Json<FolioLedger>> {
    city_tax_exemption::exempt_from_city_tax(&state.db, &actor, &id, Some(input)).await.map(Json)
}

/// Lifts the stay's exemption from the city tax: its nights to come are charged the city tax again.
#[utoipa::path(
    delete,
    path = "/api/folios/{folioId}/cityTaxExemption",
    tag = "folios",
    security(("apiKey" = []), ("accessToken" = [])),
    params(("folioId" = String, Path)),
    responses(
        (status = 200, body = FolioLedger, description = "The folio with its city tax made again"),
        (status = 403, description = "The API key lacks folios:write"),
        (status = 404, description = "No such folio for this credential"),
        (status = 409, description = "The stay is not CONFIRMED or CHECKED_IN: its lines no longer follow it"),
    )
)]
async fn lift_city_tax_exemption(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<FolioLedger>> {
    city_tax_exemption::exempt_from_city_tax(&state.db, &actor, &id, None).await.map(Json)
}
