//! The end of day: each hotel has a business date (a new hotel's is its local date) and a local time its day ends
//! (`billing.endOfDay`, 03:00 by default). When that time has come after the business date, the day is closed,
//! once, even with several processes (a lease, as the outbox has):
//!
//! 1. arrivals of the business date still CONFIRMED become NO_SHOW (their inventory and nights to come released,
//!    their event recorded), charged the hotel's no-show fee if it set one;
//! 2. every line of the hotel's folios dated the business date or earlier is posted (its night has passed);
//! 3. the business date moves on one day, and what the close did is kept for the today page.
//!
//! All in one change, made by the end-of-day job. A close missed while the service was down happens when it is back:
//! [`run_due`] closes day after day until the business date is the hotel's to keep.

use chrono::{DateTime, Days, NaiveDate, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::billing::{self, NoShowFeeBasis};
use super::folios::{FolioLine, LineKind, LineSource};
use super::ledger::{self, FeeIn, FeeKind};
use crate::domain::access::Actor;
use crate::domain::change::{Change, Job, Writer};
use crate::domain::reservations::{write, ReservationStatus};
use crate::domain::{hotels, Error, Result};
use crate::model::hotels::Hotel;
use crate::store::{self, Db};

/// How long a process may hold a day's close before another takes it over.
const LEASE: TimeDelta = TimeDelta::minutes(5);

/// What one close did, as the today page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DayClosed {
    pub hotel_id: String,
    /// The business date closed.
    pub closed: NaiveDate,
    pub lines_posted: u64,
    /// The references of the reservations marked no-show.
    pub no_shows: Vec<String>,
    pub at: DateTime<Utc>,
}

/// A hotel's business day now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusinessDay {
    pub business_date: NaiveDate,
    pub end_of_day: String,
    pub last_close: Option<DayClosed>,
}

/// The business day of a hotel the actor sees.
pub async fn business_day(db: &Db, actor: &Actor, hotel_id: &str) -> Result<BusinessDay> {
    let hotel = hotels::get(db, actor, hotel_id).await?;
    let mut conn = db.read().await?;
    let billing = billing::settings_of(&mut conn, &hotel).await?;
    let row = store::business_days::get(&mut conn, &hotel.id).await?;
    Ok(BusinessDay {
        business_date: row.as_ref().map_or_else(|| hotel.today(), |r| r.business_date),
        end_of_day: billing.end_of_day,
        last_close: row.and_then(|r| r.last_run).and_then(|json| serde_json::from_str(&json).ok()),
    })
}

/// When the business day `date` of `hotel` ends: `end_of_day` local time on the next day.
fn ends_at(hotel: &Hotel, date: NaiveDate, end_of_day: &str) -> Option<DateTime<Utc>> {
    Some(hotel.local_instant(date.checked_add_days(Days::new(1))?, end_of_day))
}

/// Closes every hotel's business days that have ended by `at` (the job calls this every minute). Answers what
/// was closed.
pub async fn run_due(db: &Db, at: DateTime<Utc>) -> Result<Vec<DayClosed>> {
    let hotels = store::business_days::hotels(&mut *db.read().await?).await?;
    let mut closed = Vec::new();
    for (organization_id, hotel_id) in hotels {
        match close_hotel(db, &organization_id, &hotel_id, at).await {
            Ok(days) => closed.extend(days),
            // One hotel's failure does not keep the others open; the next round tries again.
            Err(err) => tracing::warn!(hotel = %hotel_id, error = %err, "could not close the business day"),
        }
    }
    Ok(closed)
}

/// Closes a hotel's ended business days, one after the other.
async fn close_hotel(db: &Db, organization_id: &str, hotel_id: &str, at: DateTime<Utc>) -> Result<Vec<DayClosed>> {
    let job = Actor::service(organization_id, Writer::Job(Job::EndOfDay));
    let hotel = hotels::get(db, &job, hotel_id).await?;
    let mut closed = Vec::new();
    loop {
        let (date, billing) = {
            let mut conn = db.read().await?;
            let billing = billing::settings_of(&mut conn, &hotel).await?;
            let row = store::business_days::get(&mut conn, hotel_id).await?;
            (row.map(|r| r.business_date), billing)
        };
        let date = match date {
            Some(date) => date,
            None => {
                // A hotel's first close: its business date is its local date when it was created.
                let mut tx = Change::begin_as(db, Writer::Job(Job::EndOfDay)).await?;
                store::business_days::ensure(tx.conn(), hotel_id, hotel.local_date(hotel.created_at)).await?;
                tx.commit().await?;
                continue;
            }
        };
        if ends_at(&hotel, date, &billing.end_of_day).is_none_or(|end| end > at) {
            return Ok(closed);
        }
        // The lease: whoever takes it closes this date; the others find it closed (or leased) and stop.
        let mut lease = Change::begin_as(db, Writer::Job(Job::EndOfDay)).await?;
        let taken = store::business_days::take_lease(lease.conn(), hotel_id, date, at, at + LEASE).await?;
        lease.commit().await?;
        if !taken {
            return Ok(closed);
        }
        closed.push(close_day(db, &job, &hotel, date, at).await?);
    }
}

/// Closes business date `date` of `hotel` (its lease held).
async fn close_day(db: &Db, job: &Actor, hotel: &Hotel, date: NaiveDate, at: DateTime<Utc>) -> Result<DayClosed> {
    let mut tx = Change::begin(db, job).await?;
    let billing = billing::settings_of(tx.conn(), hotel).await?;
    let confirmed: &'static str = ReservationStatus::Confirmed.into();
    let arrivals = store::business_days::arriving(tx.conn(), &hotel.id, date, confirmed).await?;
    let mut no_shows = Vec::new();
    for id in arrivals {
        // The first night's room charges, read before the no-show releases them.
        let first_night = match store::folios::head_of(tx.conn(), &id).await? {
            Some(head) => first_night(&store::folios::lines(tx.conn(), &head.id).await?, date, &billing),
            None => 0,
        };
        let r = write::no_show_within(&mut tx, job, &id).await?;
        let fee = match &billing.no_show_fee {
            Some(fee) if fee.basis == NoShowFeeBasis::FirstNight => first_night,
            Some(fee) => fee.amount.unwrap_or(0),
            None => 0,
        };
        if let (true, Some(folio)) = (fee > 0, &r.folio) {
            let input = FeeIn { kind: FeeKind::NoShow, amount: fee, category: None, reason: None };
            ledger::record_within(&mut tx, job, &folio.id, ledger::Entry::Fee(input)).await?;
        }
        no_shows.push(r.reference);
    }
    let lines_posted = store::business_days::post_through(tx.conn(), &hotel.id, date, at).await?;
    let next = date.checked_add_days(Days::new(1)).ok_or_else(|| Error::Internal(anyhow::anyhow!("no next day")))?;
    let summary = DayClosed { hotel_id: hotel.id.clone(), closed: date, lines_posted, no_shows, at };
    let json = serde_json::to_string(&summary).map_err(anyhow::Error::from)?;
    store::business_days::close(tx.conn(), &hotel.id, next, at, &json).await?;
    tx.commit().await?;
    Ok(summary)
}

/// The room charges of the night of `date`, as the hotel enters prices.
fn first_night(lines: &[FolioLine], date: NaiveDate, billing: &billing::BillingSettings) -> i64 {
    lines
        .iter()
        .filter(|l| l.kind == LineKind::Charge && l.source == LineSource::RoomNight && l.service_date == date)
        .fold(0_i64, |sum, l| sum.saturating_add(if billing.prices_include_vat { l.gross } else { l.net }))
}
