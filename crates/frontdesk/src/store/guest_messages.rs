//! Guest messages, the settings of a hotel's messages and its own templates. Rows are plain text here: the domain
//! (`domain::guest_messages`) gives them their meaning.

use chrono::{DateTime, Utc};

use super::{format_ts, Engine, RowExt, StoreResult};
use crate::store::{query, Conn, Row};

const COLUMNS: &str =
    "id, organization_id, hotel_id, guest_id, reservation_id, for_check_in, kind, recipient, language, status, \
                       due_at, attempts, first_tried_at, last_error, subject, sent_at, created_at";

/// A message as stored.
#[derive(Debug, Clone)]
pub struct MessageRow {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: String,
    pub guest_id: Option<String>,
    pub reservation_id: Option<String>,
    /// A reminder's arrival date, `YYYY-MM-DD`.
    pub for_check_in: Option<String>,
    pub kind: String,
    pub recipient: String,
    pub language: String,
    pub status: String,
    pub due_at: DateTime<Utc>,
    pub attempts: i64,
    pub first_tried_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub subject: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

fn message(row: &Row) -> StoreResult<MessageRow> {
    Ok(MessageRow {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        hotel_id: row.try_get("hotel_id")?,
        guest_id: row.try_get("guest_id")?,
        reservation_id: row.try_get("reservation_id")?,
        for_check_in: row.try_get("for_check_in")?,
        kind: row.try_get("kind")?,
        recipient: row.try_get("recipient")?,
        language: row.try_get("language")?,
        status: row.try_get("status")?,
        due_at: row.get_ts("due_at")?,
        attempts: row.try_get("attempts")?,
        first_tried_at: row.get_opt_ts("first_tried_at")?,
        last_error: row.try_get("last_error")?,
        subject: row.try_get("subject")?,
        sent_at: row.get_opt_ts("sent_at")?,
        created_at: row.get_ts("created_at")?,
    })
}

pub async fn insert(conn: &mut Conn, m: &MessageRow) -> StoreResult<()> {
    query(
        "INSERT INTO guest_messages (id, organization_id, hotel_id, guest_id, reservation_id, for_check_in, kind, \
         recipient, language, status, due_at, attempts, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $12, $12)",
    )
    .bind(&m.id)
    .bind(&m.organization_id)
    .bind(&m.hotel_id)
    .bind(&m.guest_id)
    .bind(&m.reservation_id)
    .bind(&m.for_check_in)
    .bind(&m.kind)
    .bind(&m.recipient)
    .bind(&m.language)
    .bind(&m.status)
    .bind(format_ts(m.due_at))
    .bind(format_ts(m.created_at))
    .execute(conn)
    .await?;
    Ok(())
}

/// The messages of a reservation, oldest first.
pub async fn of_reservation(conn: &mut Conn, reservation_id: &str) -> StoreResult<Vec<MessageRow>> {
    query(&format!("SELECT {COLUMNS} FROM guest_messages WHERE reservation_id = $1 ORDER BY id"))
        .bind(reservation_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(message)
        .collect()
}

/// The messages to a guest of the organization, newest first.
pub async fn of_guest(
    conn: &mut Conn,
    organization_id: &str,
    guest_id: &str,
    limit: i64,
) -> StoreResult<Vec<MessageRow>> {
    query(&format!(
        "SELECT {COLUMNS} FROM guest_messages WHERE organization_id = $1 AND guest_id = $2 ORDER BY id DESC LIMIT $3"
    ))
    .bind(organization_id)
    .bind(guest_id)
    .bind(limit)
    .fetch_all(conn)
    .await?
    .iter()
    .map(message)
    .collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<MessageRow>> {
    query(&format!("SELECT {COLUMNS} FROM guest_messages WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(message)
        .transpose()
}

/// Moves a reminder waiting to be sent to another arrival date and time.
pub async fn reschedule(
    conn: &mut Conn,
    id: &str,
    for_check_in: &str,
    due_at: DateTime<Utc>,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    query(
        "UPDATE guest_messages SET for_check_in = $1, due_at = $2, updated_at = $3 WHERE id = $4 AND status = 'pending'",
    )
    .bind(for_check_in)
    .bind(format_ts(due_at))
        .bind(format_ts(at))
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Sets the status of a message that has not been sent (nor given up on) yet.
pub async fn end_pending(conn: &mut Conn, id: &str, status: &str, at: DateTime<Utc>) -> StoreResult<()> {
    query(
        "UPDATE guest_messages SET status = $1, claimed_until = NULL, updated_at = $2 WHERE id = $3 AND status = 'pending'",
    )
    .bind(status)
    .bind(format_ts(at))
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Claims up to `limit` messages due by `now` that nobody holds (never claimed, or whose claim ran out because its
/// process died) until `until`, soonest due first, counting the attempt. On PostgreSQL rows another process is
/// claiming right now are skipped, so two dispatchers never claim the same message.
pub async fn claim_due(
    conn: &mut Conn,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<MessageRow>> {
    let lock = Engine::of(conn).lock_rows_skip_locked();
    let now = format_ts(now);
    let sql = format!(
        "UPDATE guest_messages SET claimed_until = $1, attempts = attempts + 1, \
         first_tried_at = COALESCE(first_tried_at, $2) WHERE id IN \
         (SELECT id FROM guest_messages WHERE status = 'pending' AND due_at <= $2 \
         AND (claimed_until IS NULL OR claimed_until < $2) ORDER BY due_at LIMIT $3{lock}) RETURNING {COLUMNS}"
    );
    let mut rows = query(&sql)
        .bind(format_ts(until))
        .bind(&now)
        .bind(limit)
        .fetch_all(conn)
        .await?
        .iter()
        .map(message)
        .collect::<StoreResult<Vec<_>>>()?;
    rows.sort_by_key(|m| m.due_at);
    Ok(rows)
}

/// What became of one attempt, written only while the attempt's claim is still this dispatcher's (`claimed_until`
/// as claimed), so that a dispatcher whose claim ran out and was taken over does not overwrite the newer attempt.
pub struct AttemptResult<'a> {
    pub status: &'a str,
    pub due_at: DateTime<Utc>,
    pub last_error: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub sent_at: Option<DateTime<Utc>>,
}

pub async fn record_attempt(
    conn: &mut Conn,
    id: &str,
    claimed_until: DateTime<Utc>,
    result: &AttemptResult<'_>,
    at: DateTime<Utc>,
) -> StoreResult<bool> {
    let done = query(
        "UPDATE guest_messages SET status = $1, due_at = $2, last_error = $3, subject = COALESCE($4, subject), \
         sent_at = $5, claimed_until = NULL, updated_at = $6 WHERE id = $7 AND claimed_until = $8",
    )
    .bind(result.status)
    .bind(format_ts(result.due_at))
    .bind(result.last_error)
    .bind(result.subject)
    .bind(result.sent_at.map(format_ts))
    .bind(format_ts(at))
    .bind(id)
    .bind(format_ts(claimed_until))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A hotel's message settings as stored; `None` when the hotel never saved any.
pub struct SettingsRow {
    pub contact_email: Option<String>,
    pub contact_phone: Option<String>,
    pub reminder_days_before: i64,
    pub reminder_hour: i64,
}

pub async fn settings(conn: &mut Conn, hotel_id: &str) -> StoreResult<Option<SettingsRow>> {
    let row = query(
        "SELECT contact_email, contact_phone, reminder_days_before, reminder_hour FROM hotel_message_settings \
         WHERE hotel_id = $1",
    )
    .bind(hotel_id)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(SettingsRow {
            contact_email: row.try_get("contact_email")?,
            contact_phone: row.try_get("contact_phone")?,
            reminder_days_before: row.try_get("reminder_days_before")?,
            reminder_hour: row.try_get("reminder_hour")?,
        })
    })
    .transpose()
}

pub async fn save_settings(conn: &mut Conn, hotel_id: &str, s: &SettingsRow, at: DateTime<Utc>) -> StoreResult<()> {
    query(
        "INSERT INTO hotel_message_settings (hotel_id, contact_email, contact_phone, reminder_days_before, \
         reminder_hour, updated_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (hotel_id) DO UPDATE SET \
         contact_email = excluded.contact_email, contact_phone = excluded.contact_phone, \
         reminder_days_before = excluded.reminder_days_before, reminder_hour = excluded.reminder_hour, \
         updated_at = excluded.updated_at",
    )
    .bind(hotel_id)
    .bind(&s.contact_email)
    .bind(&s.contact_phone)
    .bind(s.reminder_days_before)
    .bind(s.reminder_hour)
    .bind(format_ts(at))
    .execute(conn)
    .await?;
    Ok(())
}

/// A hotel's own template: subject and body.
pub async fn template(
    conn: &mut Conn,
    hotel_id: &str,
    kind: &str,
    language: &str,
) -> StoreResult<Option<(String, String)>> {
    let row = query("SELECT subject, body FROM message_templates WHERE hotel_id = $1 AND kind = $2 AND language = $3")
        .bind(hotel_id)
        .bind(kind)
        .bind(language)
        .fetch_optional(conn)
        .await?;
    row.map(|row| Ok((row.try_get("subject")?, row.try_get("body")?))).transpose()
}

pub async fn save_template(
    conn: &mut Conn,
    hotel_id: &str,
    kind: &str,
    language: &str,
    subject: &str,
    body: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    query(
        "INSERT INTO message_templates (hotel_id, kind, language, subject, body, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (hotel_id, kind, language) DO UPDATE SET \
         subject = excluded.subject, body = excluded.body, updated_at = excluded.updated_at",
    )
    .bind(hotel_id)
    .bind(kind)
    .bind(language)
    .bind(subject)
    .bind(body)
    .bind(format_ts(at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn remove_template(conn: &mut Conn, hotel_id: &str, kind: &str, language: &str) -> StoreResult<()> {
    query("DELETE FROM message_templates WHERE hotel_id = $1 AND kind = $2 AND language = $3")
        .bind(hotel_id)
        .bind(kind)
        .bind(language)
        .execute(conn)
        .await?;
    Ok(())
}
