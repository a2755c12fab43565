//! The audit log in the dashboard: the history block of a reservation's, a guest's and a room's page
//! ([`history`], template `audit/history.html`), and the log of the hotel or the whole organization with filters
//! (`/hotels/{id}/audit-log`), both read through the same domain functions as `GET /api/auditLog`.

use askama::Template;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use serde_json::Value;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::audit::read::{self as audit, AuditFilter};
use crate::domain::listing::ListParams;
use crate::model::audit::{AuditEntry, FieldChange};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};

pub fn router() -> Router<AppState> {
    Router::new().route("/hotels/{hotel_id}/audit-log", get(log_page))
}

/// One entry as a person reads it: when, who, what, and each field's change in words.
pub struct HistoryLine {
    pub at: String,
    pub who: String,
    pub what: String,
    pub changes: Vec<String>,
}

/// The history of records shown on one page (a reservation and its folio), oldest first.
pub async fn history(
    state: &AppState,
    page: &HotelPage,
    record_ids: &[String],
) -> Result<Option<Vec<HistoryLine>>, WebError> {
    if !audit::may_read(&page.session.actor) {
        return Ok(None);
    }
    let entries = audit::history(&state.db, &page.session.actor, record_ids).await?;
    Ok(Some(entries.iter().map(HistoryLine::of).collect()))
}

impl HistoryLine {
    pub fn of(entry: &AuditEntry) -> HistoryLine {
        HistoryLine {
            at: entry.at.format("%-d %b %Y %H:%M:%S UTC").to_string(),
            who: who(entry),
            what: what(entry),
            changes: entry.fields.iter().map(change).collect(),
        }
    }
}

fn who(entry: &AuditEntry) -> String {
    let a = &entry.actor;
    let name = a.name.clone();
    match a.kind.as_str() {
        "operator" => {
            let name = name.unwrap_or_else(|| "A removed operator".into());
            match a.role.as_deref().and_then(crate::model::identity::Role::parse) {
                Some(role) => format!("{name} ({})", role.label()),
                None => name,
            }
        }
        "api_key" => format!("API key “{}”", name.unwrap_or_else(|| "removed".into())),
        "booking_page" => match &a.address {
            Some(address) => format!("Booking page ({address})"),
            None => "Booking page".into(),
        },
        "assistant" => "An assistant".into(),
        "visitor" => match &a.address {
            Some(address) => format!("Someone signing in ({address})"),
            None => "Someone signing in".into(),
        },
        _ => name.unwrap_or_else(|| a.kind.replace('_', " ")),
    }
}

fn what(entry: &AuditEntry) -> String {
    let kind = entry.record_kind.replace('_', " ");
    if let Some(summary) = &entry.summary {
        let plans = match summary.parents.len() {
            1 => "1 plan".to_string(),
            n => format!("{n} plans"),
        };
        let range = match (summary.date_from, summary.date_to) {
            (Some(from), Some(to)) if from == to => format!(", {}", from.format("%-d %b %Y")),
            (Some(from), Some(to)) => format!(", {} – {}", from.format("%-d %b %Y"), to.format("%-d %b %Y")),
            _ => String::new(),
        };
        let fields = if summary.fields.is_empty() { String::new() } else { format!(": {}", summary.fields.join(", ")) };
        return format!("Daily rates of {plans} set for {} nights{range}{fields}", summary.count);
    }
    let mut kind = kind;
    if let Some(first) = kind.get(0..1) {
        kind = first.to_uppercase() + &kind[1..];
    }
    format!("{kind} {}", entry.action)
}

/// A field's change in words: `status: CONFIRMED → CHECKED_IN`, `email: changed`.
fn change(field: &FieldChange) -> String {
    if field.redacted {
        return format!("{}: changed", field.field);
    }
    match (&field.before, &field.after) {
        (None, Some(after)) => format!("{}: {}", field.field, shown(after)),
        (Some(before), None) => format!("{}: {} → none", field.field, shown(before)),
        (Some(before), Some(after)) => format!("{}: {} → {}", field.field, shown(before), shown(after)),
        (None, None) => format!("{}: changed", field.field),
    }
}

/// A value short enough for a line: text as it is, a list of lines by their descriptions, anything else as JSON;
/// at most 80 characters.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        text.chars().take(79).chain(['…']).collect()
    } else {
        text
    }
}

#[derive(Deserialize, Default)]
struct LogForm {
    from: Option<String>,
    to: Option<String>,
    /// `organization`: every hotel's and the organization's own entries; otherwise this hotel's.
    scope: Option<String>,
}

#[derive(Template)]
#[template(path = "audit/log.html")]
struct LogTemplate {
    chrome: Chrome,
    from: String,
    to: String,
    whole_organization: bool,
    errors: FormErrors,
    total: i64,
    shown: usize,
    history: Vec<HistoryLine>,
}

/// The newest entries a page shows.
const PAGE_LENGTH: i64 = 200;

/// `GET /hotels/{id}/audit-log?from=&to=&scope=`: the newest entries of the hotel (or the organization), with
/// filters by day.
async fn log_page(State(state): State<AppState>, page: HotelPage, Query(form): Query<LogForm>) -> WebResult {
    let whole_organization = form.scope.as_deref() == Some("organization");
    let blank = |v: &Option<String>| v.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned);
    let filter = AuditFilter {
        hotel_id: (!whole_organization).then(|| page.hotel.id.clone()),
        date_from: blank(&form.from),
        date_to: blank(&form.to),
        ..AuditFilter::default()
    };
    let params = ListParams { limit: Some(PAGE_LENGTH), sort_direction: Some("DESC".into()), ..ListParams::default() };
    let chrome = page.chrome(&state, Section::Reports, "Audit log").await?;
    let mut errors = FormErrors::default();
    let (total, history) = match audit::list(&state.db, &page.session.actor, filter, params).await {
        Ok(listing) => {
            use futures::TryStreamExt;
            let total = listing.total;
            let entries: Vec<AuditEntry> = listing.items.into_stream().try_collect().await?;
            (total, entries.iter().map(HistoryLine::of).collect())
        }
        Err(err) => {
            errors.absorb(err)?;
            (0, Vec::new())
        }
    };
    let template = LogTemplate {
        chrome,
        from: form.from.unwrap_or_default(),
        to: form.to.unwrap_or_default(),
        whole_organization,
        errors,
        total,
        shown: history.len(),
        history,
    };
    Ok(render_page(&template, &page.session, &state))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn changes_read_as_words() {
        let f = |before: Option<Value>, after: Option<Value>| FieldChange {
            field: "status".into(),
            before,
            after,
            redacted: false,
        };
        assert_eq!(change(&f(Some(json!("CONFIRMED")), Some(json!("CHECKED_IN")))), "status: CONFIRMED → CHECKED_IN");
        assert_eq!(change(&f(None, Some(json!(2)))), "status: 2");
        assert_eq!(change(&f(Some(json!(true)), None)), "status: true → none");
        let secret = FieldChange { field: "email".into(), before: None, after: None, redacted: true };
        assert_eq!(change(&secret), "email: changed");
        let lines = json!(["CHARGE Minibar ×1 EUR 4.50", "PAYMENT Card ×1 EUR 10.00"]);
        assert_eq!(shown(&lines), "CHARGE Minibar ×1 EUR 4.50, PAYMENT Card ×1 EUR 10.00");
        assert_eq!(shown(&json!("x".repeat(100))).chars().count(), 80);
    }
}
