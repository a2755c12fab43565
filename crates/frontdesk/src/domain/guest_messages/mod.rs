//! Guest messages: the e-mails a hotel sends a guest about a stay, and the rules of when.
//!
//! * **When.** A message follows the reservation's own event ([`plan`], called by [`super::events::record`] in the
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

pub mod defaults;
pub mod render;

use chrono::{DateTime, Days, NaiveDate, NaiveTime, TimeDelta, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use super::events::EventKind;
use super::hotels::Hotel;
use super::reservations::{Reservation, ReservationStatus};
use super::{new_id, now, Actor, Error, FieldError, Result};
use crate::store::guest_messages::{self as rows, AttemptResult, MessageRow, SettingsRow};
use crate::store::{self, Db, WriteTx};
pub use render::{Facts, Letter, TemplateError};

/// The kinds of message a guest receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    RequestReceived,
    StayConfirmed,
    RequestDeclined,
    StayCancelled,
    PreArrivalReminder,
}

impl MessageKind {
    pub const ALL: [MessageKind; 5] = [
        Self::RequestReceived,
        Self::StayConfirmed,
        Self::RequestDeclined,
        Self::StayCancelled,
        Self::PreArrivalReminder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequestReceived => "request_received",
            Self::StayConfirmed => "stay_confirmed",
            Self::RequestDeclined => "request_declined",
            Self::StayCancelled => "stay_cancelled",
            Self::PreArrivalReminder => "pre_arrival_reminder",
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    English,
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
#[derive(Debug, Clone)]
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
        })
    }
}

/// What a hotel's messages say about reaching it, and when its reminder goes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSettings {
    pub contact_email: Option<String>,
    pub contact_phone: Option<String>,
    /// Days before the arrival date (0 to 30).
    pub reminder_days_before: i64,
    /// Local hour of the hotel (0 to 23).
    pub reminder_hour: i64,
}

impl Default for MessageSettings {
    fn default() -> Self {
        MessageSettings { contact_email: None, contact_phone: None, reminder_days_before: 2, reminder_hour: 10 }
    }
}

pub const MAX_REMINDER_DAYS_BEFORE: i64 = 30;

async fn settings_of(conn: &mut sqlx::AnyConnection, hotel_id: &str) -> Result<MessageSettings> {
    Ok(rows::settings(conn, hotel_id).await?.map_or_else(MessageSettings::default, |s| MessageSettings {
        contact_email: s.contact_email,
        contact_phone: s.contact_phone,
        reminder_days_before: s.reminder_days_before,
        reminder_hour: s.reminder_hour,
    }))
}

/// When the reminder of a stay arriving on `check_in` is due.
pub fn reminder_due(hotel: &Hotel, settings: &MessageSettings, check_in: NaiveDate) -> DateTime<Utc> {
    let day = check_in.checked_sub_days(Days::new(settings.reminder_days_before.max(0) as u64)).unwrap_or(check_in);
    let time = NaiveTime::from_hms_opt(settings.reminder_hour.clamp(0, 23) as u32, 0, 0).unwrap_or_default();
    let local = hotel.time_zone().from_local_datetime(&day.and_time(time));
    // A local hour that a clock change skips is sent an hour later; one that happens twice, the first time.
    local
        .earliest()
        .or_else(|| hotel.time_zone().from_local_datetime(&(day.and_time(time) + TimeDelta::hours(1))).earliest())
        .map(|at| at.with_timezone(&Utc))
        .unwrap_or_else(|| day.and_time(time).and_utc())
}

/// Plans the messages a reservation's event calls for, in the transaction that records the event: called by
/// [`super::events::record`] for every reservation event.
pub async fn plan(tx: &mut WriteTx, organization_id: &str, event: EventKind, r: &Reservation) -> Result<()> {
    let existing = rows::of_reservation(tx.conn(), &r.id).await?;
    let had = |kind: MessageKind| existing.iter().any(|m| m.kind == kind.as_str());
    let pending_reminders: Vec<&MessageRow> = existing
        .iter()
        .filter(|m| m.kind == MessageKind::PreArrivalReminder.as_str() && m.status == MessageStatus::Pending.as_str())
        .collect();
    let at = now();
    let waiting: Vec<String> = pending_reminders.iter().map(|m| m.id.clone()).collect();
    if event == EventKind::ReservationDeleted {
        return cancel(tx, &waiting).await;
    }
    let mut wanted = Vec::new();
    match r.status {
        ReservationStatus::Requested if event == EventKind::ReservationCreated => {
            wanted.push(MessageKind::RequestReceived);
        }
        ReservationStatus::Requested => {}
        ReservationStatus::Confirmed => {
            if !had(MessageKind::StayConfirmed) {
                wanted.push(MessageKind::StayConfirmed);
            }
        }
        ReservationStatus::Cancelled => {
            cancel(tx, &waiting).await?;
            if had(MessageKind::StayConfirmed) {
                if !had(MessageKind::StayCancelled) {
                    wanted.push(MessageKind::StayCancelled);
                }
            } else if had(MessageKind::RequestReceived) && !had(MessageKind::RequestDeclined) {
                wanted.push(MessageKind::RequestDeclined);
            }
        }
        ReservationStatus::CheckedIn | ReservationStatus::CheckedOut | ReservationStatus::NoShow => {
            cancel(tx, &waiting).await?;
        }
    }
    let reminder_wanted = r.status == ReservationStatus::Confirmed;
    if wanted.is_empty() && !reminder_wanted {
        return Ok(());
    }
    let Some(recipient) = Recipient::of(tx, organization_id, r).await? else {
        return Ok(());
    };
    for kind in wanted {
        enqueue(tx, organization_id, r, &recipient, kind, at, None).await?;
    }
    if reminder_wanted {
        let hotel =
            store::hotels::get(tx.conn(), organization_id, &r.hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
        let settings = settings_of(tx.conn(), &r.hotel_id).await?;
        let due = reminder_due(&hotel, &settings, r.check_in_date);
        let arrival_ahead = r.check_in_date > hotel.local_date(at);
        // A stay confirmed after its reminder would have been due hears all of it in the confirmation; a stay
        // already confirmed whose dates move closer gets its reminder at once, with the new dates.
        let wanted_now = arrival_ahead && (due > at || had(MessageKind::StayConfirmed));
        let for_check_in = r.check_in_date.to_string();
        match (pending_reminders.first(), wanted_now) {
            (Some(reminder), true) if reminder.for_check_in.as_deref() != Some(&for_check_in) => {
                rows::reschedule(tx.conn(), &reminder.id, &for_check_in, due.max(at), at).await?
            }
            (Some(_), true) => {}
            (Some(_), false) => cancel(tx, &waiting).await?,
            (None, true) if !reminded_for(&existing, &for_check_in) => {
                let due = due.max(at);
                enqueue(tx, organization_id, r, &recipient, MessageKind::PreArrivalReminder, due, Some(for_check_in))
                    .await?
            }
            (None, _) => {}
        }
    }
    Ok(())
}

/// Cancels the waiting reminders `ids`.
async fn cancel(tx: &mut WriteTx, ids: &[String]) -> Result<()> {
    let at = now();
    for id in ids {
        rows::end_pending(tx.conn(), id, MessageStatus::Cancelled.as_str(), at).await?;
    }
    Ok(())
}

/// Whether this arrival date had its reminder already (sent, or tried): a stay gets one reminder per arrival date,
/// so a stay moved to another date after its reminder went out is reminded again, and one whose other details
/// change is not.
fn reminded_for(existing: &[MessageRow], for_check_in: &str) -> bool {
    existing.iter().any(|m| {
        m.kind == MessageKind::PreArrivalReminder.as_str()
            && m.status != MessageStatus::Cancelled.as_str()
            && m.for_check_in.as_deref() == Some(for_check_in)
    })
}

/// Who a reservation's messages go to: its guest, when the guest has an e-mail address.
struct Recipient {
    guest_id: String,
    email: String,
    language: Language,
}

impl Recipient {
    async fn of(tx: &mut WriteTx, organization_id: &str, r: &Reservation) -> Result<Option<Recipient>> {
        let Some(guest_id) = &r.guest_id else { return Ok(None) };
        let Some(guest) = store::guests::get(tx.conn(), organization_id, guest_id).await? else { return Ok(None) };
        Ok(guest.email.filter(|e| !e.trim().is_empty()).map(|email| Recipient {
            guest_id: guest.id,
            email,
            language: Language::for_tag(guest.language.as_deref()),
        }))
    }
}

async fn enqueue(
    tx: &mut WriteTx,
    organization_id: &str,
    r: &Reservation,
    to: &Recipient,
    kind: MessageKind,
    due_at: DateTime<Utc>,
    for_check_in: Option<String>,
) -> Result<()> {
    let at = now();
    let row = MessageRow {
        id: new_id(),
        organization_id: organization_id.to_string(),
        hotel_id: r.hotel_id.clone(),
        guest_id: Some(to.guest_id.clone()),
        reservation_id: Some(r.id.clone()),
        for_check_in,
        kind: kind.as_str().to_string(),
        recipient: to.email.clone(),
        language: to.language.code().to_string(),
        status: MessageStatus::Pending.as_str().to_string(),
        due_at,
        attempts: 0,
        first_tried_at: None,
        last_error: None,
        subject: None,
        sent_at: None,
        created_at: at,
    };
    rows::insert(tx.conn(), &row).await?;
    Ok(())
}

/// A message claimed by a dispatcher for one attempt.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub message: GuestMessage,
    pub organization_id: String,
    pub first_tried_at: DateTime<Utc>,
    pub claimed_until: DateTime<Utc>,
}

/// Claims up to `limit` due messages for `lease` (see `store::guest_messages::claim_due`).
pub async fn claim_due(db: &Db, lease: TimeDelta, limit: i64) -> Result<Vec<Claimed>> {
    let at = now();
    let until = at + lease;
    let mut tx = db.begin_write().await?;
    let claimed = rows::claim_due(tx.conn(), at, until, limit).await?;
    tx.commit().await?;
    claimed
        .into_iter()
        .map(|row| {
            let organization_id = row.organization_id.clone();
            let first_tried_at = row.first_tried_at.unwrap_or(at);
            Ok(Claimed { message: GuestMessage::from_row(row)?, organization_id, first_tried_at, claimed_until: until })
        })
        .collect()
}

/// What to send for a claimed message, or why nothing is sent.
pub enum Composed {
    Send(Letter),
    /// The message is no longer wanted (its stay is gone, or a reminder's stay is no longer coming).
    Skip(&'static str),
}

/// Writes a claimed message from its stay as it is now, in the hotel's wording.
pub async fn compose(db: &Db, claimed: &Claimed) -> Result<Composed> {
    let m = &claimed.message;
    let org = &claimed.organization_id;
    let mut conn = db.read().await?;
    let Some(reservation_id) = &m.reservation_id else { return Ok(Composed::Skip("the message has no stay")) };
    let Some(r) = store::reservations::get(&mut conn, org, reservation_id).await? else {
        return Ok(Composed::Skip("the reservation was deleted"));
    };
    let Some(hotel) = store::hotels::get(&mut conn, org, &m.hotel_id).await? else {
        return Ok(Composed::Skip("the hotel was deleted"));
    };
    if m.kind == MessageKind::PreArrivalReminder
        && (r.status != ReservationStatus::Confirmed || r.check_in_date < hotel.local_date(now()))
    {
        return Ok(Composed::Skip("the stay no longer needs a reminder"));
    }
    let guest = match &m.guest_id {
        Some(id) => store::guests::get(&mut conn, org, id).await?,
        None => None,
    };
    let settings = settings_of(&mut conn, &hotel.id).await?;
    let mut room_types = Vec::new();
    for room in store::reservations::rooms(&mut conn, &r.id).await? {
        if let Some(t) = store::room_types::get(&mut conn, org, &room.room_type_id).await? {
            if !room_types.contains(&t.name) {
                room_types.push(t.name);
            }
        }
    }
    let (subject, body) = wording(&mut conn, &hotel.id, m.kind, m.language).await?;
    let facts = Facts {
        guest_first_name: guest.as_ref().map(|g| g.first_name.clone()).unwrap_or_default(),
        guest_last_name: guest.as_ref().map(|g| g.last_name.clone()).unwrap_or_default(),
        hotel_address: address_lines(&hotel),
        hotel_name: hotel.name.clone(),
        contact_email: settings.contact_email,
        contact_phone: settings.contact_phone,
        check_in_time: hotel.check_in_time.clone(),
        check_out_time: hotel.check_out_time.clone(),
        reference: r.reference.clone(),
        check_in: r.check_in_date,
        check_out: r.check_out_date,
        room_types,
        adults: r.adults,
        children: r.children,
        infants: r.infants,
        total_price: r.total_price,
        currency: r.currency.clone(),
    };
    match render::render(m.language, &subject, &body, &facts) {
        Ok(letter) => Ok(Composed::Send(letter)),
        // A saved template rendered when it was saved; one that no longer does falls back to the default wording
        // rather than leave the guest without the message.
        Err(err) => {
            tracing::warn!(message = %m.id, error = %err, "a hotel's template did not render; the default was used");
            let (subject, body) = defaults::wording(m.kind, m.language);
            Ok(Composed::Send(render::render(m.language, subject, body, &facts).map_err(anyhow::Error::from)?))
        }
    }
}

fn address_lines(hotel: &Hotel) -> Vec<String> {
    let a = &hotel.address;
    let city = [a.postal_code.as_deref(), a.city.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    [a.address_line1.clone(), a.address_line2.clone(), Some(city), a.region.clone(), a.country.clone()]
        .into_iter()
        .flatten()
        .filter(|line| !line.trim().is_empty())
        .collect()
}

/// The hotel's wording of `kind` in `language`, or the default.
async fn wording(
    conn: &mut sqlx::AnyConnection,
    hotel_id: &str,
    kind: MessageKind,
    language: Language,
) -> Result<(String, String)> {
    Ok(match rows::template(conn, hotel_id, kind.as_str(), language.code()).await? {
        Some(own) => own,
        None => {
            let (subject, body) = defaults::wording(kind, language);
            (subject.to_string(), body.to_string())
        }
    })
}

/// How one attempt to send ended.
#[derive(Debug, Clone)]
pub enum Attempt {
    Sent {
        subject: String,
    },
    /// The mail server refused for now (a 4xx answer), or could not be reached, or did not answer in time.
    TemporaryFailure(String),
    /// The mail server refused for good (a 5xx answer), or the message could not be built.
    PermanentFailure(String),
    /// No mail server is configured.
    NotConfigured,
    Skipped(&'static str),
}

/// How long a message is retried after its first try before it is given up.
pub const GIVE_UP_AFTER: TimeDelta = TimeDelta::hours(24);
/// The longest wait between two tries.
pub const LONGEST_RETRY_DELAY: TimeDelta = TimeDelta::hours(2);

/// The wait before try `attempts + 1`: `first_retry`, then doubling, at most [`LONGEST_RETRY_DELAY`].
pub fn retry_delay(first_retry: TimeDelta, attempts: i64) -> TimeDelta {
    let doublings = attempts.clamp(1, 20) - 1;
    let delay = first_retry.checked_mul(1 << doublings).unwrap_or(LONGEST_RETRY_DELAY);
    delay.min(LONGEST_RETRY_DELAY)
}

/// Records how an attempt ended and decides what follows. Answers false when the claim was no longer this
/// dispatcher's (it ran out and another took the message over): nothing is written then.
pub async fn after_attempt(db: &Db, claimed: &Claimed, attempt: &Attempt, first_retry: TimeDelta) -> Result<bool> {
    let at = now();
    let m = &claimed.message;
    let mut result = AttemptResult { status: "", due_at: m.due_at, last_error: None, subject: None, sent_at: None };
    let error;
    match attempt {
        Attempt::Sent { subject } => {
            result.status = MessageStatus::Sent.as_str();
            result.subject = Some(subject);
            result.sent_at = Some(at);
        }
        Attempt::TemporaryFailure(reason) => {
            let next = at + retry_delay(first_retry, m.attempts);
            if next - claimed.first_tried_at > GIVE_UP_AFTER {
                result.status = MessageStatus::Failed.as_str();
                error = format!("{reason} (still refused a day after the first try: given up)");
            } else {
                result.status = MessageStatus::Pending.as_str();
                result.due_at = next;
                error = reason.clone();
            }
            result.last_error = Some(&error);
        }
        Attempt::PermanentFailure(reason) => {
            result.status = MessageStatus::Failed.as_str();
            result.last_error = Some(reason);
        }
        Attempt::NotConfigured => {
            result.status = MessageStatus::NotSent.as_str();
            result.last_error = Some("no mail server is configured (FRONTDESK_SMTP_URL)");
        }
        Attempt::Skipped(reason) => {
            result.status = MessageStatus::Cancelled.as_str();
            result.last_error = Some(reason);
        }
    }
    let mut tx = db.begin_write().await?;
    let recorded = rows::record_attempt(tx.conn(), &m.id, claimed.claimed_until, &result, at).await?;
    tx.commit().await?;
    Ok(recorded)
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
    let mut tx = db.begin_write().await?;
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
    tx.commit().await?;
    GuestMessage::from_row(row)
}

/// A hotel's message settings (defaults until it saves its own).
pub async fn settings(db: &Db, actor: &Actor, hotel_id: &str) -> Result<MessageSettings> {
    let hotel = super::hotels::get(db, actor, hotel_id).await?;
    let mut conn = db.read().await?;
    settings_of(&mut conn, &hotel.id).await
}

/// Saves a hotel's message settings. Pending reminders keep their due time; stays confirmed or changed from now on
/// are reminded by the new settings.
pub async fn save_settings(db: &Db, actor: &Actor, hotel_id: &str, s: MessageSettings) -> Result<MessageSettings> {
    let hotel = super::hotels::get(db, actor, hotel_id).await?;
    let mut errors = Vec::new();
    if !(0..=MAX_REMINDER_DAYS_BEFORE).contains(&s.reminder_days_before) {
        errors.push(FieldError::field("reminderDaysBefore", format!("must be 0 to {MAX_REMINDER_DAYS_BEFORE}")));
    }
    if !(0..=23).contains(&s.reminder_hour) {
        errors.push(FieldError::field("reminderHour", "must be an hour from 0 to 23"));
    }
    if s.contact_email.as_deref().is_some_and(|e| !super::validate::is_email(e)) {
        errors.push(FieldError::field("contactEmail", "must be an e-mail address"));
    }
    if s.contact_phone.as_deref().is_some_and(|p| p.chars().count() > 50) {
        errors.push(FieldError::field("contactPhone", "must be at most 50 characters"));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    let mut tx = db.begin_write().await?;
    let row = SettingsRow {
        contact_email: s.contact_email.clone(),
        contact_phone: s.contact_phone.clone(),
        reminder_days_before: s.reminder_days_before,
        reminder_hour: s.reminder_hour,
    };
    rows::save_settings(tx.conn(), &hotel.id, &row, now()).await?;
    tx.commit().await?;
    Ok(s)
}

/// A hotel's wording of one message, and whether it is the hotel's own.
pub struct Wording {
    pub subject: String,
    pub body: String,
    pub own: bool,
}

pub async fn template(
    db: &Db,
    actor: &Actor,
    hotel_id: &str,
    kind: MessageKind,
    language: Language,
) -> Result<Wording> {
    let hotel = super::hotels::get(db, actor, hotel_id).await?;
    let mut conn = db.read().await?;
    Ok(match rows::template(&mut conn, &hotel.id, kind.as_str(), language.code()).await? {
        Some((subject, body)) => Wording { subject, body, own: true },
        None => {
            let (subject, body) = defaults::wording(kind, language);
            Wording { subject: subject.into(), body: body.into(), own: false }
        }
    })
}

/// Saves a hotel's own wording of one message, once it renders; `None` goes back to the default.
pub async fn save_template(
    db: &Db,
    actor: &Actor,
    hotel_id: &str,
    kind: MessageKind,
    language: Language,
    wording: Option<(&str, &str)>,
) -> Result<()> {
    let hotel = super::hotels::get(db, actor, hotel_id).await?;
    if let Some((subject, body)) = wording {
        let mut errors = Vec::new();
        if subject.chars().count() > 200 {
            errors.push(FieldError::field("subject", "must be at most 200 characters"));
        }
        if body.chars().count() > 10_000 {
            errors.push(FieldError::field("body", "must be at most 10,000 characters"));
        }
        if let Err(err) = render::check(language, subject, "", &hotel.name) {
            errors.push(FieldError::field("subject", format!("does not render: {err}")));
        }
        if let Err(err) = render::check(language, "subject", body, &hotel.name) {
            errors.push(FieldError::field("body", format!("does not render: {err}")));
        }
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
    }
    let mut tx = db.begin_write().await?;
    match wording {
        Some((subject, body)) => {
            rows::save_template(tx.conn(), &hotel.id, kind.as_str(), language.code(), subject, body, now()).await?
        }
        None => rows::remove_template(tx.conn(), &hotel.id, kind.as_str(), language.code()).await?,
    }
    tx.commit().await?;
    Ok(())
}

/// A preview of one message with example facts, in the hotel's name.
pub fn preview(hotel_name: &str, language: Language, subject: &str, body: &str) -> Result<Letter, TemplateError> {
    render::check(language, subject, body, hotel_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_start_at_the_first_delay_and_double_up_to_two_hours() {
        let first = TimeDelta::seconds(30);
        assert_eq!(retry_delay(first, 1), TimeDelta::seconds(30));
        assert_eq!(retry_delay(first, 2), TimeDelta::seconds(60));
        assert_eq!(retry_delay(first, 5), TimeDelta::seconds(480));
        assert_eq!(retry_delay(first, 40), LONGEST_RETRY_DELAY);
    }

    #[test]
    fn languages_follow_the_primary_tag() {
        assert_eq!(Language::for_tag(Some("de-AT")), Language::German);
        assert_eq!(Language::for_tag(Some("DE")), Language::German);
        assert_eq!(Language::for_tag(Some("pt")), Language::English);
        assert_eq!(Language::for_tag(None), Language::English);
    }
}
