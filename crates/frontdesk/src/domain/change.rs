//! The one door for writes. A write begins a [`Change`] with who makes it ([`Writer`]: from the caller's
//! [`Actor`], or named by a job, the booking page, a sign-in), which holds the write transaction. It reads and
//! writes through [`Change::conn`], and says what it wrote, record by record: [`Change::created`],
//! [`Change::updated`] (with the record as it was), [`Change::deleted`]. From that one call come the webhook event
//! where the contract has one ([`event_of`]) and the audit log's entry ([`crate::domain::audit`]), both in the same
//! transaction; the channel change row will come from the same place. [`Change::commit`] ends it; dropping it rolls
//! everything back.
//!
//! A reaction that belongs to another area is called by the area that owns the write (the guest e-mails a
//! reservation's change calls for are planned by `reservations::write`), never chosen here by the record's type.
//!
//! Bookkeeping that changes no record (counts of attempts, leases, last uses, the outbox's hand-out) begins a
//! change too, so that every write knows who makes it; it has nothing to say.
//!
//! `tests/it/layers.rs` refuses a write that begins anywhere else.

use chrono::NaiveDate;
use serde::Serialize;

use super::access::{Actor, Credential};
use super::audit::entry::{self, Written};
use super::audit::{self, Draft};
use super::Result;
use crate::model::audit::AuditActor;
pub use crate::model::changes::{Action, Job, RecordKind, Writer};
pub use crate::model::channels::{ChannelChangeKind, CHANNEL_HORIZON_DAYS};
use crate::model::events::EventKind;
use crate::store::outbox::{NewEvent, PendingEvent};
use crate::store::{self, Conn, Db, Engine, WriteTx};

/// A record a change writes: its kind, its id, and the hotel it belongs to (the event's and the audit entry's).
pub trait Record: Serialize {
    const KIND: RecordKind;

    /// Top-level fields holding a person's contact details: the audit log says they changed, never their values.
    const PRIVATE_FIELDS: &'static [&'static str] = &[];

    fn hotel_id(&self) -> Option<&str>;

    /// The id the audit log names the record by.
    fn record_id(&self) -> String;

    /// A record written many at a time (a rate plan's night) answers its parent and date: the audit log sums up
    /// a change's records of its kind in one entry instead of one each.
    fn bulk_key(&self) -> Option<(&str, NaiveDate)> {
        None
    }

    /// The record as the audit log compares it: its JSON, unless a record keeps a shorter account (an invoice's
    /// document is kept whole elsewhere).
    fn audited(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }

    /// For a record written many at a time, created (`before` is `None`) or updated: the names of its top-level
    /// fields that a summary lists as changed (a created record's non-empty ones), compared as typed values. A
    /// summary keeps only these names, so a record that can answer spares the write its JSON twice over (hundreds
    /// of nights in one batch). `None`: compare the JSON ([`Record::audited`]).
    fn changed_fields(&self, _before: Option<&Self>) -> Option<Vec<&'static str>> {
        None
    }
}

/// The webhook event of an action on a record of `kind`, where the contract has one (`reservation.*`, `guest.*`)
/// or an extension does (`folio.updated`, `payment.created`). A table, like the moves of `ReservationStatus`.
pub fn event_of(kind: RecordKind, action: Action) -> Option<EventKind> {
    Some(match (kind, action) {
        (RecordKind::Reservation, Action::Created) => EventKind::ReservationCreated,
        (RecordKind::Reservation, Action::Updated) => EventKind::ReservationUpdated,
        (RecordKind::Reservation, Action::Deleted) => EventKind::ReservationDeleted,
        (RecordKind::Guest, Action::Created) => EventKind::GuestCreated,
        (RecordKind::Guest, Action::Updated) => EventKind::GuestUpdated,
        (RecordKind::Guest, Action::Deleted) => EventKind::GuestDeleted,
        (RecordKind::Folio, Action::Updated) => EventKind::FolioUpdated,
        (RecordKind::Payment, Action::Created) => EventKind::PaymentCreated,
        (RecordKind::Invoice, Action::Created) => EventKind::InvoiceCreated,
        _ => return None,
    })
}

impl Writer {
    /// Who writes for `actor`: the operator, the API key, or what the service acts as.
    pub fn for_actor(actor: &Actor) -> Writer {
        match &actor.credential {
            Credential::Operator { operator_id, .. } => Writer::Operator { operator_id: operator_id.clone() },
            Credential::ApiKey { key_id, .. } => Writer::ApiKey { key_id: key_id.clone() },
            Credential::Assistant { client_id, .. } => Writer::Assistant { client_id: client_id.clone() },
            Credential::System(writer) => writer.clone(),
        }
    }

    /// Who makes a change, as a record keeps it (a folio line's `madeBy`): `operator:<id>`, `api_key:<id>`,
    /// `booking_page`, `job:<name>`, …
    pub fn label(&self) -> String {
        match self {
            Writer::Operator { operator_id } => format!("operator:{operator_id}"),
            Writer::ApiKey { key_id } => format!("api_key:{key_id}"),
            Writer::BookingPage { .. } => "booking_page".into(),
            Writer::Assistant { client_id } => format!("assistant:{client_id}"),
            Writer::Channel { channel } => format!("channel:{channel}"),
            Writer::Visitor { .. } => "visitor".into(),
            Writer::Job(job) => format!("job:{}", format!("{job:?}").to_lowercase()),
            Writer::CommandLine => "command_line".into(),
        }
    }
}

/// A write in progress: who makes it, its transaction, and the audit entries it will write.
pub struct Change {
    tx: WriteTx,
    writer: Writer,
    /// Who writes, as the audit log names them, when the credential already says (saves reading it again).
    named: Option<AuditActor>,
    audit: Draft,
    /// The webhook events of the records written, inserted with the audit entries when the change commits.
    events: Vec<PendingEvent>,
}

impl Change {
    /// Begins a change made by `actor`.
    pub async fn begin(db: &Db, actor: &Actor) -> Result<Change> {
        let mut change = Change::begin_as(db, Writer::for_actor(actor)).await?;
        change.named = audit::actor_named(actor);
        Ok(change)
    }

    /// Begins a change made by `writer` (a job, the booking page, someone signing in).
    pub async fn begin_as(db: &Db, writer: Writer) -> Result<Change> {
        Ok(Change { tx: db.begin_write().await?, writer, named: None, audit: Draft::default(), events: Vec::new() })
    }

    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    pub fn conn(&mut self) -> &mut Conn {
        self.tx.conn()
    }

    pub fn engine(&self) -> Engine {
        self.tx.engine()
    }

    /// `record` of `organization_id` was created (`after` as GET answers it).
    pub async fn created<R: Record>(&mut self, organization_id: &str, after: &R) -> Result<()> {
        self.wrote(organization_id, Action::Created, None, after).await
    }

    /// A record of `organization_id` was updated: `before` as it was, `after` as GET answers it now.
    pub async fn updated<R: Record>(&mut self, organization_id: &str, before: &R, after: &R) -> Result<()> {
        self.wrote(organization_id, Action::Updated, Some(before), after).await
    }

    /// A record of `organization_id` was deleted (`before`: as it was).
    pub async fn deleted<R: Record>(&mut self, organization_id: &str, before: &R) -> Result<()> {
        self.wrote(organization_id, Action::Deleted, None, before).await
    }

    /// Records what follows from writing `record` (as it is now; as it was when deleted): its webhook event, if the
    /// contract has one, and its audit entry, which compares it with `before`.
    async fn wrote<R: Record>(
        &mut self,
        organization_id: &str,
        action: Action,
        before: Option<&R>,
        record: &R,
    ) -> Result<()> {
        if let Some(kind) = event_of(R::KIND, action) {
            let payload = serde_json::to_string(record).map_err(anyhow::Error::from)?;
            let event = NewEvent { organization_id, hotel_id: record.hotel_id(), kind: kind.as_str(), payload };
            self.events.push(PendingEvent::new(event));
        }
        if let (Some((parent, date)), false) = (record.bulk_key(), action == Action::Deleted) {
            if let Some(names) = record.changed_fields(before) {
                let bulk = self.audit.bulk(organization_id, record.hotel_id(), R::KIND);
                bulk.add_names(parent, date, action, names);
                return Ok(());
            }
        }
        let json = |r: &R| r.audited().map_err(anyhow::Error::from);
        let (was, is) = match action {
            Action::Deleted => (Some(json(record)?), None),
            _ => (before.map(json).transpose()?, Some(json(record)?)),
        };
        let written = Written {
            organization_id: organization_id.to_string(),
            hotel_id: record.hotel_id().map(str::to_owned),
            kind: R::KIND,
            record_id: record.record_id(),
            action,
            fields: entry::fields(action, was.as_ref(), is.as_ref(), R::PRIVATE_FIELDS),
        };
        match record.bulk_key() {
            Some((parent, date)) => self.audit.add_to_bulk(written, parent, date),
            None => self.audit.add(written),
        }
        Ok(())
    }

    /// Writes the webhook events and the audit entries of what was reported (one round trip), then commits.
    pub async fn commit(mut self) -> Result<()> {
        let draft = std::mem::take(&mut self.audit);
        let retention_days = self.tx.audit_retention_days();
        let (entries, keep_until) =
            draft.entries(self.tx.conn(), &self.writer, self.named.take(), retention_days).await?;
        self.tx.write_trail(&self.events, &entries, keep_until).await?;
        Ok(self.tx.commit().await?)
    }

    /// What channels see of `hotel_id` changed: its `kind` (availability or rates) over the nights `[from, to]`,
    /// of `subject` (the room type whose availability, or the rate plan whose rates changed) or of all (`None`).
    /// Records a channel change row in this transaction when the hotel has a channel connection, for the channel
    /// dispatcher to send (docs/channels.md); nothing otherwise.
    pub async fn channel_dirty(
        &mut self,
        hotel_id: &str,
        subject: Option<&str>,
        from: NaiveDate,
        to: NaiveDate,
        kind: ChannelChangeKind,
    ) -> Result<()> {
        if from > to || !store::channels::hotel_connected(self.tx.conn(), hotel_id).await? {
            return Ok(());
        }
        store::channels::record_change(self.tx.conn(), hotel_id, kind, subject, from, to, chrono::Utc::now()).await?;
        Ok(())
    }

    /// [`Change::channel_dirty`] for every night a channel is told of (from yesterday, for hotels west of UTC, to
    /// the end of the horizon): a change that is not about given nights (a rate plan turned off, a room out of
    /// order).
    pub async fn channel_dirty_ahead(
        &mut self,
        hotel_id: &str,
        subject: Option<&str>,
        kind: ChannelChangeKind,
    ) -> Result<()> {
        let today = chrono::Utc::now().date_naive();
        let from = today - chrono::Days::new(1);
        let to = today + chrono::Days::new(CHANNEL_HORIZON_DAYS);
        self.channel_dirty(hotel_id, subject, from, to, kind).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contracts_events_and_no_others() {
        use Action::*;
        assert_eq!(event_of(RecordKind::Reservation, Created), Some(EventKind::ReservationCreated));
        assert_eq!(event_of(RecordKind::Guest, Deleted), Some(EventKind::GuestDeleted));
        for kind in [RecordKind::Room, RecordKind::RatePlan, RecordKind::DailyRate, RecordKind::Hotel] {
            for action in [Created, Updated, Deleted] {
                assert_eq!(event_of(kind, action), None, "{kind:?} {action:?}");
            }
        }
    }
}
