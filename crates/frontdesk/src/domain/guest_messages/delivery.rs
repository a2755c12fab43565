//! Delivery of a message, as `worker::mail` drives it: claimed when due ([`claim_due`]), written from its stay as
//! it is then ([`compose`]), and after each attempt sent, retried with growing delays, or given up
//! ([`after_attempt`]).

use chrono::{DateTime, TimeDelta, Utc};

use super::settings::settings_of;
use super::{defaults, render, Facts, GuestMessage, Language, Letter, MessageKind, MessageStatus};
use crate::domain::change::{Change, Job, Writer};
use crate::domain::hotels::Hotel;
use crate::domain::reservations::ReservationStatus;
use crate::domain::{now, Result};
use crate::model::invoices::Invoice;
use crate::store::guest_messages::{self as rows, AttemptResult};
use crate::store::{self, Db};

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
    let mut tx = Change::begin_as(db, Writer::Job(Job::MailDispatcher)).await?;
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
    /// The letter, and the invoice to attach as PDF (an invoice e-mail's).
    Send(Letter, Option<Box<Invoice>>),
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
    let invoice = match (&m.kind, &m.invoice_id) {
        (MessageKind::InvoiceIssued, Some(id)) => match store::invoices::get(&mut conn, org, id).await? {
            Some(invoice) => Some(Box::new(invoice)),
            None => return Ok(Composed::Skip("the invoice is not there")),
        },
        (MessageKind::InvoiceIssued, None) => return Ok(Composed::Skip("the message names no invoice")),
        _ => None,
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
        invoice: invoice.as_ref().map(|i| (i.document.number.clone(), i.document.total_gross)),
    };
    match render::render(m.language, &subject, &body, &facts).await {
        Ok(letter) => Ok(Composed::Send(letter, invoice)),
        // A saved wording rendered with the example facts when it was saved; one that does not render now (saved
        // before today's bounds, or too long with this stay's facts) falls back to the default wording rather than
        // leave the guest without the message.
        Err(err) => {
            tracing::warn!(message = %m.id, error = %err, "a hotel's template did not render; the default was used");
            let (subject, body) = defaults::wording(m.kind, m.language);
            let letter = render::render(m.language, subject, body, &facts).await.map_err(anyhow::Error::from)?;
            Ok(Composed::Send(letter, invoice))
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
    conn: &mut store::Conn,
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
    let mut tx = Change::begin_as(db, Writer::Job(Job::MailDispatcher)).await?;
    let recorded = rows::record_attempt(tx.conn(), &m.id, claimed.claimed_until, &result, at).await?;
    tx.commit().await?;
    Ok(recorded)
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
}
