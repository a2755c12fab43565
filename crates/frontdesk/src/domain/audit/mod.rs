//! The audit log: who changed which record, when, and how (docs/audit-log.md).
//!
//! Entries come from one place: the one door for writes ([`crate::domain::change::Change`]) collects a [`Draft`] as
//! its write reports records, and writes the entries in the same transaction when it commits ([`Draft::write`]).
//! A change that commits leaves its entries; one that fails or is dropped leaves none. Records written many at a
//! time (daily rates) make one summary entry per change. Reading the log is in [`read`]: the list of the API and the
//! dashboard ([`read::list`]) and a record's history ([`read::history`]); pruning the entries whose retention has ended
//! is in [`retention`]. Neither is named here, so the one door for writes, which drafts through this module, is not
//! named back by it (pruning begins a change of its own).

pub mod entry;
pub mod read;
pub mod retention;

use chrono::{DateTime, NaiveDate, Utc};

use self::entry::{Bulk, Written};
use super::access::{Actor, Credential};
use super::Result;
use crate::model::audit::{AuditActor, AuditEntry};
use crate::model::changes::{Action, Job, RecordKind, Writer};
use crate::store::{self, Conn};

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
