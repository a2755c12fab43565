//! When a guest hears from the hotel: the messages a reservation's event calls for, planned in the transaction that
//! records the event, and the reminder's due time.

use chrono::{DateTime, Days, NaiveDate, NaiveTime, TimeDelta, TimeZone, Utc};

use super::settings::{settings_of, MessageSettings};
use super::{Language, MessageKind, MessageStatus};
use crate::domain::change::{Action, Change};
use crate::domain::hotels::Hotel;
use crate::domain::reservations::{Reservation, ReservationStatus, Source};
use crate::domain::{new_id, now, Error, Result};
use crate::store;
use crate::store::guest_messages::{self as rows, MessageRow};

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

/// Plans the messages a reservation's change calls for, in the change's own transaction: called by the
/// reservations' writes for every change of a reservation (`reservations::write::wrote`).
pub async fn plan(tx: &mut Change, organization_id: &str, action: Action, r: &Reservation) -> Result<()> {
    let existing = rows::of_reservation(tx.conn(), &r.id).await?;
    let had = |kind: MessageKind| existing.iter().any(|m| m.kind == kind.as_str());
    let pending_reminders: Vec<&MessageRow> = existing
        .iter()
        .filter(|m| m.kind == MessageKind::PreArrivalReminder.as_str() && m.status == MessageStatus::Pending.as_str())
        .collect();
    let at = now();
    let waiting: Vec<String> = pending_reminders.iter().map(|m| m.id.clone()).collect();
    if action == Action::Deleted {
        return cancel(tx, &waiting).await;
    }
    if r.source == Source::Channel && !settings_of(tx.conn(), &r.hotel_id).await?.channel_bookings {
        // The channel writes to its guest itself; the hotel may turn ours on for them too.
        return cancel(tx, &waiting).await;
    }
    let mut wanted = Vec::new();
    match r.status {
        ReservationStatus::Requested if action == Action::Created => {
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
async fn cancel(tx: &mut Change, ids: &[String]) -> Result<()> {
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
    async fn of(tx: &mut Change, organization_id: &str, r: &Reservation) -> Result<Option<Recipient>> {
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
    tx: &mut Change,
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
        invoice_id: None,
    };
    rows::insert(tx.conn(), &row).await?;
    Ok(())
}
