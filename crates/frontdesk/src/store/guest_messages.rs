//! Guest messages, the settings of a hotel's messages and its own templates. Rows are plain text here: the domain
//! (`domain::guest_messages`) gives them their meaning.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::schema::{GuestMessages as M, HotelMessageSettings as Hs, MessageTemplates as T};
use crate::store::statement::{
    in_taken, insert_row, one_of_organization, rows, statement, Expr, ExprTrait, Func, OnConflict, Order, RowLocks, Sql,
};
use crate::store::{Conn, Row};

/// The columns [`message`] reads.
const COLUMNS: [M; 18] = [
    M::Id,
    M::OrganizationId,
    M::HotelId,
    M::GuestId,
    M::ReservationId,
    M::ForCheckIn,
    M::Kind,
    M::Recipient,
    M::Language,
    M::Status,
    M::DueAt,
    M::Attempts,
    M::FirstTriedAt,
    M::LastError,
    M::Subject,
    M::SentAt,
    M::CreatedAt,
    M::InvoiceId,
];

/// The status of a message waiting to be sent.
const PENDING: &str = "pending";

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
    /// The invoice an `invoice_issued` message carries.
    pub invoice_id: Option<String>,
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
        invoice_id: row.try_get("invoice_id")?,
    })
}

pub async fn insert(conn: &mut Conn, m: &MessageRow) -> StoreResult<()> {
    let insert = insert_row(
        M::Table,
        [
            (M::Id, Expr::val(&m.id)),
            (M::OrganizationId, Expr::val(&m.organization_id)),
            (M::HotelId, Expr::val(&m.hotel_id)),
            (M::GuestId, Expr::val(m.guest_id.clone())),
            (M::ReservationId, Expr::val(m.reservation_id.clone())),
            (M::ForCheckIn, Expr::val(m.for_check_in.clone())),
            (M::Kind, Expr::val(&m.kind)),
            (M::Recipient, Expr::val(&m.recipient)),
            (M::Language, Expr::val(&m.language)),
            (M::Status, Expr::val(&m.status)),
            (M::DueAt, Expr::val(format_ts(m.due_at))),
            (M::Attempts, Expr::val(0)),
            (M::CreatedAt, Expr::val(format_ts(m.created_at))),
            (M::UpdatedAt, Expr::val(format_ts(m.created_at))),
            (M::InvoiceId, Expr::val(m.invoice_id.clone())),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// The messages of a reservation, oldest first.
pub async fn of_reservation(conn: &mut Conn, reservation_id: &str) -> StoreResult<Vec<MessageRow>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(M::Table)
        .and_where(Expr::col(M::ReservationId).eq(reservation_id))
        .order_by(M::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(message).collect()
}

/// The messages to a guest of the organization, newest first.
/// Blanks the recipient address of every message to a guest (the guest was anonymised): how many.
pub async fn forget_recipient(conn: &mut Conn, organization_id: &str, guest_id: &str) -> StoreResult<u64> {
    let update = Sql::update()
        .table(M::Table)
        .value(M::Recipient, "")
        .and_where(Expr::col(M::OrganizationId).eq(organization_id))
        .and_where(Expr::col(M::GuestId).eq(guest_id))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected())
}

pub async fn of_guest(
    conn: &mut Conn,
    organization_id: &str,
    guest_id: &str,
    limit: i64,
) -> StoreResult<Vec<MessageRow>> {
    let limit = rows(limit);
    let select = Sql::select()
        .columns(COLUMNS)
        .from(M::Table)
        .and_where(Expr::col(M::OrganizationId).eq(organization_id))
        .and_where(Expr::col(M::GuestId).eq(guest_id))
        .order_by(M::Id, Order::Desc)
        .limit(limit)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(message).collect()
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<MessageRow>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(M::Table)
        .and_where(one_of_organization(M::Id, id, M::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(message).transpose()
}

/// Moves a reminder waiting to be sent to another arrival date and time.
pub async fn reschedule(
    conn: &mut Conn,
    id: &str,
    for_check_in: &str,
    due_at: DateTime<Utc>,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let update = Sql::update()
        .table(M::Table)
        .values([
            (M::ForCheckIn, Expr::val(for_check_in)),
            (M::DueAt, Expr::val(format_ts(due_at))),
            (M::UpdatedAt, Expr::val(format_ts(at))),
        ])
        .and_where(Expr::col(M::Id).eq(id))
        .and_where(Expr::col(M::Status).eq(PENDING))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Sets the status of a message that has not been sent (nor given up on) yet.
pub async fn end_pending(conn: &mut Conn, id: &str, status: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(M::Table)
        .values([
            (M::Status, Expr::val(status)),
            (M::ClaimedUntil, Expr::null()),
            (M::UpdatedAt, Expr::val(format_ts(at))),
        ])
        .and_where(Expr::col(M::Id).eq(id))
        .and_where(Expr::col(M::Status).eq(PENDING))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
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
    let limit = rows(limit);
    let now = format_ts(now);
    let due = Sql::select()
        .column(M::Id)
        .from(M::Table)
        .and_where(Expr::col(M::Status).eq(PENDING))
        .and_where(Expr::col(M::DueAt).lte(&now))
        .and_where(Expr::col(M::ClaimedUntil).is_null().or(Expr::col(M::ClaimedUntil).lt(&now)))
        .order_by(M::DueAt, Order::Asc)
        .limit(limit)
        .lock_skipping_held()
        .take();
    let update = Sql::update()
        .table(M::Table)
        .values([
            (M::ClaimedUntil, Expr::val(format_ts(until))),
            (M::Attempts, Expr::col(M::Attempts).add(1)),
            (M::FirstTriedAt, Func::coalesce([Expr::col(M::FirstTriedAt), Expr::val(&now)]).into()),
        ])
        .and_where(in_taken(conn.engine(), M::Id, due))
        .returning(Sql::returning().columns(COLUMNS))
        .take();
    let mut rows = statement(conn.engine(), &update)
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
    let update = Sql::update()
        .table(M::Table)
        .values([
            (M::Status, Expr::val(result.status)),
            (M::DueAt, Expr::val(format_ts(result.due_at))),
            (M::LastError, Expr::val(result.last_error)),
            (M::Subject, Func::coalesce([Expr::val(result.subject), Expr::col(M::Subject)]).into()),
            (M::SentAt, Expr::val(result.sent_at.map(format_ts))),
            (M::ClaimedUntil, Expr::null()),
            (M::UpdatedAt, Expr::val(format_ts(at))),
        ])
        .and_where(Expr::col(M::Id).eq(id))
        .and_where(Expr::col(M::ClaimedUntil).eq(format_ts(claimed_until)))
        .take();
    let done = statement(conn.engine(), &update).execute(conn).await?;
    Ok(done.rows_affected() == 1)
}

/// A hotel's message settings as stored; `None` when the hotel never saved any.
pub struct SettingsRow {
    pub contact_email: Option<String>,
    pub contact_phone: Option<String>,
    pub reminder_days_before: i64,
    pub reminder_hour: i64,
    pub channel_bookings: bool,
}

pub async fn settings(conn: &mut Conn, hotel_id: &str) -> StoreResult<Option<SettingsRow>> {
    let select = Sql::select()
        .columns([Hs::ContactEmail, Hs::ContactPhone, Hs::ReminderDaysBefore, Hs::ReminderHour, Hs::ChannelBookings])
        .from(Hs::Table)
        .and_where(Expr::col(Hs::HotelId).eq(hotel_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(SettingsRow {
            contact_email: row.try_get("contact_email")?,
            contact_phone: row.try_get("contact_phone")?,
            reminder_days_before: row.try_get("reminder_days_before")?,
            reminder_hour: row.try_get("reminder_hour")?,
            channel_bookings: row.get_bool("channel_bookings")?,
        })
    })
    .transpose()
}

pub async fn save_settings(conn: &mut Conn, hotel_id: &str, s: &SettingsRow, at: DateTime<Utc>) -> StoreResult<()> {
    let mut upsert = insert_row(
        Hs::Table,
        [
            (Hs::HotelId, Expr::val(hotel_id)),
            (Hs::ContactEmail, Expr::val(s.contact_email.clone())),
            (Hs::ContactPhone, Expr::val(s.contact_phone.clone())),
            (Hs::ReminderDaysBefore, Expr::val(s.reminder_days_before)),
            (Hs::ReminderHour, Expr::val(s.reminder_hour)),
            (Hs::ChannelBookings, Expr::val(s.channel_bookings)),
            (Hs::UpdatedAt, Expr::val(format_ts(at))),
        ],
    );
    upsert.on_conflict(
        OnConflict::column(Hs::HotelId)
            .update_columns([
                Hs::ContactEmail,
                Hs::ContactPhone,
                Hs::ReminderDaysBefore,
                Hs::ReminderHour,
                Hs::ChannelBookings,
                Hs::UpdatedAt,
            ])
            .to_owned(),
    );
    statement(conn.engine(), &upsert).execute(conn).await?;
    Ok(())
}

/// A hotel's own template: subject and body.
pub async fn template(
    conn: &mut Conn,
    hotel_id: &str,
    kind: &str,
    language: &str,
) -> StoreResult<Option<(String, String)>> {
    let select = Sql::select()
        .columns([T::Subject, T::Body])
        .from(T::Table)
        .and_where(Expr::col(T::HotelId).eq(hotel_id))
        .and_where(Expr::col(T::Kind).eq(kind))
        .and_where(Expr::col(T::Language).eq(language))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
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
    let mut upsert = insert_row(
        T::Table,
        [
            (T::HotelId, Expr::val(hotel_id)),
            (T::Kind, Expr::val(kind)),
            (T::Language, Expr::val(language)),
            (T::Subject, Expr::val(subject)),
            (T::Body, Expr::val(body)),
            (T::UpdatedAt, Expr::val(format_ts(at))),
        ],
    );
    upsert.on_conflict(
        OnConflict::columns([T::HotelId, T::Kind, T::Language])
            .update_columns([T::Subject, T::Body, T::UpdatedAt])
            .to_owned(),
    );
    statement(conn.engine(), &upsert).execute(conn).await?;
    Ok(())
}

pub async fn remove_template(conn: &mut Conn, hotel_id: &str, kind: &str, language: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(T::Table)
        .and_where(Expr::col(T::HotelId).eq(hotel_id))
        .and_where(Expr::col(T::Kind).eq(kind))
        .and_where(Expr::col(T::Language).eq(language))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
