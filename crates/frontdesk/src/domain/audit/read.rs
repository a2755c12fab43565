//! Reading the audit log: the list of `GET /api/auditLog` and the dashboard's log ([`list`]), a record's history on
//! its page ([`history`]), and who may read either ([`may_read`]).

use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;

use crate::domain::access::{Actor, Scope};
use crate::domain::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use crate::domain::validate::{parse_date, Checks};
use crate::domain::{hotels, Error, Result};
use crate::model::audit::AuditEntry;
use crate::store::{self, Db};

/// The query of `GET /api/auditLog`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AuditFilter {
    /// Entries about this record (a reservation, a guest, a folio, …).
    #[param(min_length = 1, max_length = 64)]
    pub record_id: Option<String>,
    /// Entries made by this operator, API key or assistant.
    #[param(min_length = 1, max_length = 64)]
    pub actor_id: Option<String>,
    pub hotel_id: Option<String>,
    /// Written on or after this day (UTC), `YYYY-MM-DD`.
    #[param(format = Date)]
    pub date_from: Option<String>,
    /// Written on or before this day (UTC), `YYYY-MM-DD`.
    #[param(format = Date)]
    pub date_to: Option<String>,
    /// `id` (the default: the order the entries were written).
    #[param(pattern = "^id$")]
    pub sort_field: Option<String>,
}

const VOCABULARY: Vocabulary = Vocabulary { sortable: &[("id", "id")], fields: &[] };

/// The organization's entries (a pinned key's: its hotel's), filtered, paged and streamed like the other lists.
pub async fn list(db: &Db, actor: &Actor, filter: AuditFilter, params: ListParams) -> Result<Listing<AuditEntry>> {
    require_reader(actor)?;
    let page = params.validate(Shape { sort_field: filter.sort_field.as_deref(), fields: None }, &VOCABULARY)?;
    let mut checks = Checks::new();
    let from = filter.date_from.as_deref().and_then(|d| parse_date(&mut checks, "dateFrom", d));
    let to = filter.date_to.as_deref().and_then(|d| parse_date(&mut checks, "dateTo", d));
    if let (Some(from), Some(to)) = (from, to) {
        if to < from {
            checks.fail("dateTo", "must not be before dateFrom");
        }
    }
    for (field, value) in [("recordId", &filter.record_id), ("actorId", &filter.actor_id)] {
        if value.as_deref().is_some_and(|v| v.is_empty() || v.chars().count() > 64 || v.chars().any(char::is_control)) {
            checks.fail(field, "must be an id of 1 to 64 characters");
        }
    }
    checks.finish()?;
    let hotel_id = hotels::optional_filter(&mut *db.read().await?, actor, filter.hotel_id.as_deref()).await?;
    let record_ids = filter.record_id.map(|id| vec![id]);
    let by = store::audit_log::AuditWhere {
        record_ids: record_ids.as_deref(),
        actor_id: filter.actor_id.as_deref(),
        hotel_id: hotel_id.as_deref(),
        from,
        to,
    };
    let total = store::audit_log::count(db, &actor.organization_id, by, &page).await?;
    let items = store::audit_log::list(db, &actor.organization_id, by, &page).await?;
    Ok(Listing { total, items: ListItems::Streamed(items.map_err(Error::from).boxed()), projection: None })
}

/// The most recent entries of a history page.
const HISTORY_LENGTH: u64 = 200;

/// The history of records shown together (a reservation with its folio, a guest), oldest first: the newest
/// [`HISTORY_LENGTH`] entries. The caller has already found the records visible to `actor`.
pub async fn history(db: &Db, actor: &Actor, record_ids: &[String]) -> Result<Vec<AuditEntry>> {
    require_reader(actor)?;
    let mut conn = db.read().await?;
    let entries = store::audit_log::of_records(&mut conn, &actor.organization_id, record_ids, HISTORY_LENGTH).await?;
    Ok(entries.into_iter().filter(|e| actor.sees_hotel(e.hotel_id.as_deref())).collect())
}

/// 403 unless the caller may read the log: owners, managers and accountants, and API keys with `audit:read`.
fn require_reader(actor: &Actor) -> Result<()> {
    actor.require_scope(Scope::AuditRead)
}

/// Whether `actor` may read the log (a page shows a record's history only then).
pub fn may_read(actor: &Actor) -> bool {
    require_reader(actor).is_ok()
}
