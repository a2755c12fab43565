//! The audit log (an extension of the contract; docs/audit-log.md): who changed which record, when, with the fields
//! before and after. Read only: no route changes or deletes an entry. Scope `audit:read`.

use axum::extract::State;
use axum::response::Response;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::audit::read::{self as audit, AuditFilter};
use crate::domain::listing::ListParams;
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::Query;
use crate::http::listing;
use crate::model::audit::AuditEntry;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit_log))
}

/// The organization's audit log (a pinned key's: its hotel's), oldest first unless `sortDirection=DESC`, by record,
/// actor, hotel and day; paged and streamed like the other lists (`X-Total-Count`).
#[utoipa::path(
    get,
    path = "/api/auditLog",
    tag = "audit",
    security(("apiKey" = []), ("accessToken" = [])),
    params(AuditFilter, ListParams),
    responses(
        (status = 200, body = Vec<AuditEntry>, headers(("X-Total-Count" = i64, description = "Matches in all"))),
        (status = 400, description = "Invalid filter or paging"),
        (status = 403, description = "The API key lacks audit:read, or is pinned to another hotel"),
        (status = 404, description = "No such hotel"),
    )
)]
async fn list_audit_log(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Query(filter): Query<AuditFilter>,
    Query(params): Query<ListParams>,
) -> Result<Response> {
    audit::list(&state.db, &actor, filter, params).await.map(listing::respond)
}
