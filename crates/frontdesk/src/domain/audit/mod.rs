//! The audit log: who changed which record, when, and how (docs/audit-log.md).
//!
//! Entries come from one place: the one door for writes ([`crate::domain::change::Change`]) collects a [`Draft`] as
//! its write reports records, and writes the entries in the same transaction when it commits ([`Draft::write`]).
//! A change that commits leaves its entries; one that fails or is dropped leaves none. Records written many at a
//! time (daily rates) make one summary entry per change. Reading is here too: the list of the API and the dashboard
//! ([`list`]) and a record's history ([`history`]); and the pruning of entries whose retention has ended ([`prune`]).

pub mod entry;

use chrono::{DateTime, NaiveDate, Utc};
use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;

use self::entry::{Bulk, Written};
use super::access::{Actor, Credential, Scope};
use super::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use super::validate::{parse_date, Checks};
use super::{hotels, Error, Result};
use crate::model::audit::{AuditActor, AuditEntry};
use crate::model::changes::{Action, Job, RecordKind, Writer};
use crate::store::{self, Conn, Db};

pub use crate::model::audit::{BulkSummary, FieldChange};

/// The entries a change has to write, collected as it reports its records.
#[derive(Debug, Default)]
pub struct Draft {
    written: Vec<Written>,
    bulks: Vec<Bulk>,
}

impl Draft {
    pub fn is_empty(&self) -> bool {
        self.written.is_empty() && self.bulks.is_empty()
    }

    pub fn add(&mut self, written: Written) {
        self.written.push(written);
    }

    /// The change's summary of the records of `kind` and `hotel_id` written many at a time.
    pub fn bulk(&mut self, organization_id: &str, hotel_id: Option<&str>, kind: RecordKind) -> &mut Bulk {
        let same =
            |b: &Bulk| b.kind == kind && b.hotel_id.as_deref() == hotel_id && b.organization_id == organization_id;
        match self.bulks.iter().position(same) {
            Some(at) => &mut self.bulks[at],
            None => {
                self.bulks.push(Bulk::new(organization_id, hotel_id, kind));
                let last = self.bulks.len() - 1;
                &mut self.bulks[last]
            }
        }
    }

    /// Counts a record written many at a time into the change's summary of its kind and hotel.
    pub fn add_to_bulk(&mut self, written: Written, parent: &str, date: NaiveDate) {
        let bulk = self.bulk(&written.organization_id, written.hotel_id.as_deref(), written.kind);
        bulk.add(parent, date, written.action, &written.fields);
    }

    /// The entries to write, made by `writer` (`actor` when its credential already names it): one per record, one
    /// per bulk, each of its organization; and until when they are kept. Read in the change's transaction (the
    /// actor's name, when the credential did not carry it); written by the change with its events.
    pub async fn entries(
        self,
        conn: &mut Conn,
        writer: &Writer,
        actor: Option<AuditActor>,
        retention_days: u32,
    ) -> Result<(Vec<(String, AuditEntry)>, DateTime<Utc>)> {
        let at = Utc::now();
        let keep_until = at + chrono::TimeDelta::days(i64::from(retention_days));
        if self.is_empty() {
            return Ok((Vec::new(), keep_until));
        }
        let actor = match actor {
            Some(actor) => actor,
            None => actor_of(conn, writer).await?,
        };
        let change_id = store::new_id();
        let entry = |written: Written| AuditEntry {
            id: store::new_id(),
            at,
            change_id: change_id.clone(),
            hotel_id: written.hotel_id,
            actor: actor.clone(),
            record_kind: kind_name(written.kind),
            record_id: written.record_id,
            action: action_name(written.action),
            fields: written.fields,
            summary: None,
        };
        let mut entries: Vec<(String, AuditEntry)> =
            self.written.into_iter().map(|w| (w.organization_id.clone(), entry(w))).collect();
        for bulk in self.bulks {
            let (record_id, summary) = bulk.summary();
            let action = if bulk.created == bulk.count { Action::Created } else { Action::Updated };
            let mut summarised = entry(Written {
                organization_id: bulk.organization_id.clone(),
                hotel_id: bulk.hotel_id.clone(),
                kind: bulk.kind,
                record_id,
                action,
                fields: Vec::new(),
            });
            summarised.summary = Some(summary);
            entries.push((bulk.organization_id, summarised));
        }
        Ok((entries, keep_until))
    }
}

/// Who `actor` is, as the log keeps it, when its credential already says (an operator's and a key's name come with
/// the credential, read anyway to authenticate); `None` when it must be read ([`actor_of`]).
pub fn actor_named(actor: &Actor) -> Option<AuditActor> {
    match &actor.credential {
        Credential::Operator { operator_id, name, role, .. } => Some(AuditActor {
            kind: "operator".into(),
            id: Some(operator_id.clone()),
            name: Some(name.clone()),
            role: Some(role.as_str().to_string()),
            address: None,
        }),
        Credential::ApiKey { key_id, name, .. } => Some(AuditActor {
            kind: "api_key".into(),
            id: Some(key_id.clone()),
            name: Some(name.clone()),
            role: None,
            address: None,
        }),
        Credential::Assistant { .. } | Credential::System(_) => None,
    }
}

fn kind_name(kind: RecordKind) -> String {
    <&'static str>::from(kind).to_string()
}

fn action_name(action: Action) -> String {
    <&'static str>::from(action).to_string()
}

/// What a job is called in the log ("system: end of day").
fn job_name(job: Job) -> &'static str {
    match job {
        Job::Demo => "system: demo data",
        Job::Startup => "system: start-up",
        Job::Migration => "system: migration",
        Job::MailDispatcher => "system: guest e-mails",
        Job::WebhookDispatcher => "system: webhooks",
        Job::LastUse => "system: last use",
        Job::EndOfDay => "system: end of day",
        Job::AuditRetention => "system: audit retention",
        Job::ChannelDispatcher => "system: channel manager",
    }
}

/// Who `writer` is, as the log keeps it: kind, id, and the name an operator or a key has now.
async fn actor_of(conn: &mut Conn, writer: &Writer) -> Result<AuditActor> {
    let actor = |kind: &str, id: Option<String>, name: Option<String>, address: Option<String>| AuditActor {
        kind: kind.to_string(),
        id,
        name,
        role: None,
        address,
    };
    Ok(match writer {
        Writer::Operator { operator_id } => {
            let found = store::audit_log::operator_name_and_role(conn, operator_id).await?;
            let (name, role) = found.map_or((None, None), |(name, role)| (Some(name), Some(role)));
            AuditActor { role, ..actor("operator", Some(operator_id.clone()), name, None) }
        }
        Writer::ApiKey { key_id } => {
            let name = store::audit_log::api_key_name(conn, key_id).await?;
            actor("api_key", Some(key_id.clone()), name, None)
        }
        Writer::BookingPage { address } => {
            actor("booking_page", None, Some("booking page".into()), Some(address.clone()))
        }
        Writer::Assistant { client_id } => actor("assistant", Some(client_id.clone()), None, None),
        Writer::Channel { channel } => actor("channel", Some(channel.clone()), Some(channel.clone()), None),
        Writer::Visitor { address } => actor("visitor", None, None, Some(address.clone())),
        Writer::Job(job) => {
            let id = format!("{job:?}");
            actor("job", Some(id), Some(job_name(*job).into()), None)
        }
        Writer::CommandLine => actor("command_line", None, Some("command line".into()), None),
    })
}

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

/// Entries deleted per statement by [`prune`], so that a long backlog never holds the write lock for long.
const PRUNE_BATCH: u64 = 1000;

/// Deletes the entries whose retention has ended; answers how many.
pub async fn prune(db: &Db, now: DateTime<Utc>) -> Result<u64> {
    let mut pruned = 0;
    loop {
        let mut tx = super::change::Change::begin_as(db, Writer::Job(Job::AuditRetention)).await?;
        let deleted = store::audit_log::prune(tx.conn(), now, PRUNE_BATCH).await?;
        tx.commit().await?;
        pruned += deleted;
        if deleted < PRUNE_BATCH {
            return Ok(pruned);
        }
    }
}
