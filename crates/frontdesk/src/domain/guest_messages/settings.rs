//! What a hotel sets for its messages: how guests reach it and when the reminder goes out ([`MessageSettings`]),
//! and its own wording of each message in each language (defaults until it saves its own).

use super::{defaults, render, Language, Letter, MessageKind, TemplateError};
use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::{hotels, now, validate, Actor, Error, FieldError, Result};
use crate::store;
use crate::store::guest_messages::{self as rows, SettingsRow};
use crate::store::Db;

/// What a hotel's messages say about reaching it, and when its reminder goes out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSettings {
    pub contact_email: Option<String>,
    pub contact_phone: Option<String>,
    /// Days before the arrival date (0 to 30).
    pub reminder_days_before: i64,
    /// Local hour of the hotel (0 to 23).
    pub reminder_hour: i64,
    /// Whether guests who booked through a channel (Booking.com, …) get these messages too. Off by default: the
    /// channel sends its own, and a second confirmation confuses the guest.
    pub channel_bookings: bool,
}

impl Default for MessageSettings {
    fn default() -> Self {
        MessageSettings {
            contact_email: None,
            contact_phone: None,
            reminder_days_before: 2,
            reminder_hour: 10,
            channel_bookings: false,
        }
    }
}

pub const MAX_REMINDER_DAYS_BEFORE: i64 = 30;

pub(super) async fn settings_of(conn: &mut store::Conn, hotel_id: &str) -> Result<MessageSettings> {
    Ok(rows::settings(conn, hotel_id).await?.map_or_else(MessageSettings::default, |s| MessageSettings {
        contact_email: s.contact_email,
        contact_phone: s.contact_phone,
        reminder_days_before: s.reminder_days_before,
        reminder_hour: s.reminder_hour,
        channel_bookings: s.channel_bookings,
    }))
}

/// A hotel's message settings (defaults until it saves its own).
pub async fn settings(db: &Db, actor: &Actor, hotel_id: &str) -> Result<MessageSettings> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let mut conn = db.read().await?;
    settings_of(&mut conn, &hotel.id).await
}

/// Saves a hotel's message settings. Pending reminders keep their due time; stays confirmed or changed from now on
/// are reminded by the new settings.
pub async fn save_settings(db: &Db, actor: &Actor, hotel_id: &str, s: MessageSettings) -> Result<MessageSettings> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let mut errors = Vec::new();
    if !(0..=MAX_REMINDER_DAYS_BEFORE).contains(&s.reminder_days_before) {
        errors.push(FieldError::field("reminderDaysBefore", format!("must be 0 to {MAX_REMINDER_DAYS_BEFORE}")));
    }
    if !(0..=23).contains(&s.reminder_hour) {
        errors.push(FieldError::field("reminderHour", "must be an hour from 0 to 23"));
    }
    if s.contact_email.as_deref().is_some_and(|e| !validate::is_email(e)) {
        errors.push(FieldError::field("contactEmail", "must be an e-mail address"));
    }
    if s.contact_phone.as_deref().is_some_and(|p| p.chars().count() > 50) {
        errors.push(FieldError::field("contactPhone", "must be at most 50 characters"));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    let mut tx = Change::begin(db, actor).await?;
    let before = settings_of(tx.conn(), &hotel.id).await?;
    let row = SettingsRow {
        contact_email: s.contact_email.clone(),
        contact_phone: s.contact_phone.clone(),
        reminder_days_before: s.reminder_days_before,
        reminder_hour: s.reminder_hour,
        channel_bookings: s.channel_bookings,
    };
    rows::save_settings(tx.conn(), &hotel.id, &row, now()).await?;
    let (before, after) =
        (HotelSettings { hotel_id: &hotel.id, settings: &before }, HotelSettings { hotel_id: &hotel.id, settings: &s });
    tx.updated(&actor.organization_id, &before, &after).await?;
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
    let hotel = hotels::get(db, actor, hotel_id).await?;
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
    let hotel = hotels::get(db, actor, hotel_id).await?;
    if let Some((subject, body)) = wording {
        let mut errors = Vec::new();
        if subject.chars().count() > render::MAX_SUBJECT_CHARS {
            errors.push(FieldError::field(
                "subject",
                format!("must be at most {} characters", render::MAX_SUBJECT_CHARS),
            ));
        } else if let Err(err) = render::check(language, subject, "", &hotel.name).await {
            errors.push(FieldError::field("subject", format!("does not render: {err}")));
        }
        if body.chars().count() > render::MAX_BODY_CHARS {
            errors.push(FieldError::field("body", "must be at most 10,000 characters"));
        } else if let Err(err) = render::check(language, "subject", body, &hotel.name).await {
            errors.push(FieldError::field("body", format!("does not render: {err}")));
        }
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
    }
    let mut tx = Change::begin(db, actor).await?;
    let own = rows::template(tx.conn(), &hotel.id, kind.as_str(), language.code()).await?;
    let before = HotelWording {
        hotel_id: &hotel.id,
        kind,
        language: language.code(),
        own: own.as_ref().map(|(subject, body)| (subject.as_str(), body.as_str())),
    };
    match wording {
        Some((subject, body)) => {
            rows::save_template(tx.conn(), &hotel.id, kind.as_str(), language.code(), subject, body, now()).await?
        }
        None => rows::remove_template(tx.conn(), &hotel.id, kind.as_str(), language.code()).await?,
    }
    let after = HotelWording { own: wording, ..before };
    tx.updated(&actor.organization_id, &before, &after).await?;
    tx.commit().await?;
    Ok(())
}

/// A hotel's message settings, as a change records them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct HotelSettings<'a> {
    hotel_id: &'a str,
    #[serde(flatten)]
    settings: &'a MessageSettings,
}

impl Record for HotelSettings<'_> {
    const KIND: RecordKind = RecordKind::MessageSettings;

    fn hotel_id(&self) -> Option<&str> {
        Some(self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.hotel_id.to_string()
    }
}

/// A hotel's own wording of one message in one language (`None`: the default), as a change records it.
#[derive(Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct HotelWording<'a> {
    hotel_id: &'a str,
    kind: MessageKind,
    language: &'static str,
    /// Subject and body.
    own: Option<(&'a str, &'a str)>,
}

impl Record for HotelWording<'_> {
    const KIND: RecordKind = RecordKind::MessageWording;

    fn hotel_id(&self) -> Option<&str> {
        Some(self.hotel_id)
    }

    fn record_id(&self) -> String {
        format!("{}:{}:{}", self.hotel_id, self.kind.as_str(), self.language)
    }
}

/// A preview of one message with example facts, in the hotel's name.
pub async fn preview(hotel_name: &str, language: Language, subject: &str, body: &str) -> Result<Letter, TemplateError> {
    render::check(language, subject, body, hotel_name).await
}
