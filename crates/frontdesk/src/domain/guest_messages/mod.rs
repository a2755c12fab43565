//! Guest messages: the e-mails a hotel sends a guest about a stay, and the rules of when.
//!
//! * **When.** A message follows the reservation's own event ([`plan`], called by the reservations' writes in the
//!   write's transaction), so it is enqueued exactly when the change that causes it commits, whoever wrote it (the
//!   REST API, the dashboard, the booking page). A booking request gets "request received"; a stay that becomes
//!   CONFIRMED gets "stay confirmed" once and a pre-arrival reminder; a request turned down gets "request
//!   declined", a confirmed stay cancelled "stay cancelled". The reminder is a row with a due time: the hotel's
//!   `reminder_days_before` days before arrival at `reminder_hour` o'clock in the hotel's time zone (2 days, 10:00
//!   unless the hotel says otherwise); it moves with the stay's dates and is cancelled with the stay.
//! * **What.** A message is written when it is sent ([`compose`]), from the stay as it is then, in the guest's
//!   language when there is wording for it (English, German), else English; see [`render`].
//! * **Delivery** is `worker::mail`'s: it claims due messages, sends them and reports each attempt to
//!   [`after_attempt`], which decides what follows: sent, retried with growing delays, or failed for good.
//!
//! A guest without an e-mail address gets no message, and nothing fails for it.
//!
//! Where things are: `planning.rs` decides when ([`plan`], [`reminder_due`]), `delivery.rs` writes and sends
//! ([`claim_due`], [`compose`], [`after_attempt`]), `settings.rs` keeps what a hotel sets (contact details, reminder
//! time, its own wording); this file holds the messages' types and their log ([`of_guest`], [`resend`]).

pub mod defaults;
mod delivery;
mod planning;
pub mod render;
mod settings;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{new_id, now, Actor, Error, Result};
use crate::domain::change::{Change, Record, RecordKind};
use crate::store::guest_messages::{self as rows, MessageRow};
use crate::store::{self, Db};
pub use delivery::{
    after_attempt, claim_due, compose, retry_delay, Attempt, Claimed, Composed, GIVE_UP_AFTER, LONGEST_RETRY_DELAY,
};
pub use planning::{plan, reminder_due};
pub use render::{Facts, Letter, TemplateError};
pub use settings::{
    preview, save_settings, save_template, settings, template, MessageSettings, Wording, MAX_REMINDER_DAYS_BEFORE,
};

/// The kinds of message a guest receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    RequestReceived,
    StayConfirmed,
    RequestDeclined,
    StayCancelled,
    PreArrivalReminder,
    /// An issued invoice, sent by someone (never planned): the PDF is attached.
    InvoiceIssued,
}

impl MessageKind {
    pub const ALL: [MessageKind; 6] = [
        Self::RequestReceived,
        Self::StayConfirmed,
        Self::RequestDeclined,
        Self::StayCancelled,
        Self::PreArrivalReminder,
        Self::InvoiceIssued,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequestReceived => "request_received",
            Self::StayConfirmed => "stay_confirmed",
            Self::RequestDeclined => "request_declined",
            Self::StayCancelled => "stay_cancelled",
            Self::PreArrivalReminder => "pre_arrival_reminder",
            Self::InvoiceIssued => "invoice_issued",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// What an operator reads in the message log.
    pub fn label(self) -> &'static str {
        match self {
            Self::RequestReceived => "Booking request received",
            Self::StayConfirmed => "Stay confirmed",
            Self::RequestDeclined => "Request declined",
            Self::StayCancelled => "Stay cancelled",
            Self::PreArrivalReminder => "Reminder before arrival",
            Self::InvoiceIssued => "Invoice",
        }
    }
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Waiting for its due time (or for its next try after a temporary failure).
    Pending,
    Sent,
    /// Refused for good by the mail server, or still refused a day after the first try.
    Failed,
    /// No longer wanted (a reminder for a stay that was cancelled, moved into the past or already begun).
    Cancelled,
    /// Due while no mail server was configured: recorded, not sent.
    NotSent,
}

impl MessageStatus {
    pub const ALL: [MessageStatus; 5] = [Self::Pending, Self::Sent, Self::Failed, Self::Cancelled, Self::NotSent];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Sent => "sent",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::NotSent => "not_sent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// The languages messages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Language {
    #[serde(rename = "en")]
    English,
    #[serde(rename = "de")]
    German,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::English, Language::German];

    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::German => "de",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::English => "English",
            Language::German => "Deutsch",
        }
    }

    /// The language for a guest's language tag (`de`, `de-AT`, `DE`): English unless there is wording in theirs.
    pub fn for_tag(tag: Option<&str>) -> Language {
        let primary = tag.and_then(|t| t.split(['-', '_']).next()).unwrap_or_default().to_ascii_lowercase();
        match primary.as_str() {
            "de" => Language::German,
            _ => Language::English,
        }
    }
}

/// A message as the dashboard shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuestMessage {
    pub id: String,
    pub hotel_id: String,
    pub guest_id: Option<String>,
    pub reservation_id: Option<String>,
    pub kind: MessageKind,
    pub recipient: String,
    pub language: Language,
    pub status: MessageStatus,
    pub due_at: DateTime<Utc>,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub subject: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// The invoice an invoice e-mail carries.
    pub invoice_id: Option<String>,
}

impl GuestMessage {
    fn from_row(row: MessageRow) -> Result<GuestMessage> {
        let odd =
            |what: &str, value: &str| Error::Internal(anyhow::anyhow!("guest message {}: {what} {value}", row.id));
        Ok(GuestMessage {
            kind: MessageKind::parse(&row.kind).ok_or_else(|| odd("kind", &row.kind))?,
            status: MessageStatus::parse(&row.status).ok_or_else(|| odd("status", &row.status))?,
            language: Language::for_tag(Some(&row.language)),
            id: row.id,
            hotel_id: row.hotel_id,
            guest_id: row.guest_id,
            reservation_id: row.reservation_id,
            recipient: row.recipient,
            due_at: row.due_at,
            attempts: row.attempts,
            last_error: row.last_error,
            subject: row.subject,
            sent_at: row.sent_at,
            created_at: row.created_at,
            invoice_id: row.invoice_id,
        })
    }
}

/// The messages to a guest of the actor's organization, newest first.
pub async fn of_guest(db: &Db, actor: &Actor, guest_id: &str) -> Result<Vec<GuestMessage>> {
    let mut conn = db.read().await?;
    let guest =
        store::guests::get(&mut conn, &actor.organization_id, guest_id).await?.ok_or(Error::NotFound("guest"))?;
    if !actor.sees_hotel(guest.hotel_id.as_deref()) {
        return Err(Error::NotFound("guest"));
    }
    rows::of_guest(&mut conn, &actor.organization_id, guest_id, 100)
        .await?
        .into_iter()
        .map(GuestMessage::from_row)
        .collect()
}

/// Sends a message again: a new message of the same kind about the same stay, to the guest's address as it is
/// now, due at once. A reminder for a stay that no longer needs one is skipped when its time comes, as any.
pub async fn resend(db: &Db, actor: &Actor, message_id: &str) -> Result<GuestMessage> {
    let mut tx = Change::begin(db, actor).await?;
    let original = rows::get(tx.conn(), &actor.organization_id, message_id).await?.ok_or(Error::NotFound("message"))?;
    if !actor.sees_hotel(Some(&original.hotel_id)) {
        return Err(Error::NotFound("message"));
    }
    let guest = match &original.guest_id {
        Some(id) => store::guests::get(tx.conn(), &actor.organization_id, id).await?,
        None => None,
    };
    let Some(email) = guest.as_ref().and_then(|g| g.email.clone()).filter(|e| !e.trim().is_empty()) else {
        return Err(Error::Conflict("the guest has no e-mail address to send to".into()));
    };
    let at = now();
    let row = MessageRow {
        id: new_id(),
        recipient: email,
        language: Language::for_tag(guest.as_ref().and_then(|g| g.language.as_deref())).code().to_string(),
        status: MessageStatus::Pending.as_str().to_string(),
        due_at: at,
        attempts: 0,
        first_tried_at: None,
        last_error: None,
        subject: None,
        sent_at: None,
        created_at: at,
        ..original
    };
    rows::insert(tx.conn(), &row).await?;
    let message = GuestMessage::from_row(row)?;
    tx.created(&actor.organization_id, &message).await?;
    tx.commit().await?;
    Ok(message)
}

/// The file name of an invoice attached to its e-mail: `RE-2026-000001.pdf`.
pub fn attachment_name(invoice: &crate::model::invoices::Invoice) -> String {
    let name: String = invoice
        .document
        .number
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' })
        .collect();
    format!("{name}.pdf")
}

/// Enqueues the e-mail that carries invoice `invoice` (attached as PDF when it is sent) to the guest of its stay,
/// inside the change that asks for it, in the invoice's language. 409 when the guest has no e-mail address.
pub(crate) async fn send_invoice(
    tx: &mut Change,
    organization_id: &str,
    invoice: &crate::model::invoices::Invoice,
    guest: Option<&crate::model::guests::Guest>,
) -> Result<GuestMessage> {
    let Some(guest) = guest else {
        return Err(Error::Conflict("the stay has no guest to send the invoice to".into()));
    };
    let Some(email) = guest.email.clone().filter(|e| !e.trim().is_empty()) else {
        return Err(Error::Conflict("the guest has no e-mail address to send the invoice to".into()));
    };
    let language: &'static str = invoice.document.language.into();
    let at = now();
    let row = MessageRow {
        id: new_id(),
        organization_id: organization_id.to_string(),
        hotel_id: invoice.hotel_id.clone(),
        guest_id: Some(guest.id.clone()),
        reservation_id: Some(invoice.reservation_id.clone()),
        for_check_in: None,
        kind: MessageKind::InvoiceIssued.as_str().to_string(),
        recipient: email,
        language: Language::for_tag(Some(language)).code().to_string(),
        status: MessageStatus::Pending.as_str().to_string(),
        due_at: at,
        attempts: 0,
        first_tried_at: None,
        last_error: None,
        subject: None,
        sent_at: None,
        created_at: at,
        invoice_id: Some(invoice.id.clone()),
    };
    rows::insert(tx.conn(), &row).await?;
    let message = GuestMessage::from_row(row)?;
    tx.created(organization_id, &message).await?;
    Ok(message)
}

impl Record for GuestMessage {
    const KIND: RecordKind = RecordKind::GuestMessage;
    const PRIVATE_FIELDS: &'static [&'static str] = &["recipient"];

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_follow_the_primary_tag() {
        assert_eq!(Language::for_tag(Some("de-AT")), Language::German);
        assert_eq!(Language::for_tag(Some("DE")), Language::German);
        assert_eq!(Language::for_tag(Some("pt")), Language::English);
        assert_eq!(Language::for_tag(None), Language::English);
    }
}
