//! The end of day: each hotel has a business date (a new hotel's is its local date) and a local time its day ends
//! (`billing.endOfDay`, 03:00 by default). When that time has come after the business date, the day is closed,
//! once, even with several processes (a lease, as the outbox has):
//!
//! 1. arrivals of the business date still CONFIRMED become NO_SHOW (their inventory and nights to come released,
//!    their event recorded), charged the hotel's no-show fee if it set one;
//! 2. every line of the hotel's folios dated the business date or earlier is posted (its night has passed);
//! 3. the business date moves on one day, and what the close did is kept for the today page.
//!
//! Made by the end-of-day job in steps, each a change of its own: one per no-show, then one that finds no arrival
//! left and in the same change posts the lines and moves the date (so a date never moves on with an arrival still
//! unmarked). A close interrupted between steps (its process stopped) is finished once its lease has lapsed, by the
//! next run of any process, which marks the arrivals still left; its summary lists those. A close missed while the
//! service was down happens when it is back: [`run_due`] closes day after day until the business date is the
//! hotel's to keep.

use std::time::Instant;

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

/// How long a close rests after each no-show, as a multiple of the time the no-show took: a night audit shares the
/// machine with the front desk instead of taking a core from it while guests are served. With 3, a close works a
/// quarter of the time it runs: a 300-room hotel's close of 12 no-shows takes 133–489 ms alone instead of 59–126 ms,
/// and the API beside it keeps more of its speed (docs/money-measurements.md, "End of day in steps").
const REST_PER_STEP: u32 = 3;

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
        closed.push(close_day(db, &job, &hotel, &billing, date, at).await?);
    }
}

/// Closes business date `date` of `hotel` (its lease held), in steps, each a change of its own: one step per
/// arrival that did not come (made a no-show and charged its fee), then the step that finds no arrival left and, in
/// the same change, posts the passed lines and moves the business date on. After each no-show the close rests
/// [`REST_PER_STEP`] times as long as the step took; the writer is held for one no-show at a time, never for the
/// whole close. The no-show fee is the one `billing` (read as the close began) sets.
async fn close_day(
    db: &Db,
    job: &Actor,
    hotel: &Hotel,
    billing: &billing::BillingSettings,
    date: NaiveDate,
    at: DateTime<Utc>,
) -> Result<DayClosed> {
    let confirmed: &'static str = ReservationStatus::Confirmed.into();
    let mut no_shows = Vec::new();
    loop {
        let started = Instant::now();
        let mut tx = Change::begin(db, job).await?;
        // Read again in each step: a guest checked in meanwhile is no longer an arrival to mark.
        let arrivals = store::business_days::arriving(tx.conn(), &hotel.id, date, confirmed).await?;
        if let Some(id) = arrivals.first() {
            no_shows.push(no_show(&mut tx, job, billing, id, date).await?);
            tx.commit().await?;
            tokio::time::sleep(started.elapsed() * REST_PER_STEP).await;
            continue;
        }
        let lines_posted = store::business_days::post_through(tx.conn(), &hotel.id, date, at).await?;
        let next =
            date.checked_add_days(Days::new(1)).ok_or_else(|| Error::Internal(anyhow::anyhow!("no next day")))?;
        let summary = DayClosed { hotel_id: hotel.id.clone(), closed: date, lines_posted, no_shows, at };
        let json = serde_json::to_string(&summary).map_err(anyhow::Error::from)?;
        store::business_days::close(tx.conn(), &hotel.id, next, at, &json).await?;
        tx.commit().await?;
        return Ok(summary);
    }
}

/// Marks arrival `id` of business date `date` a no-show and charges it the hotel's no-show fee, if any. Answers its
/// reference.
async fn no_show(
    tx: &mut Change,
    job: &Actor,
    billing: &billing::BillingSettings,
    id: &str,
    date: NaiveDate,
) -> Result<String> {
    // The first night's room charges, read before the no-show releases them.
    let first_night = match store::folios::head_of(tx.conn(), id).await? {
        Some(head) => first_night(&store::folios::lines(tx.conn(), &head.id).await?, date, billing),
        None => 0,
    };
    let r = write::no_show_within(tx, job, id).await?;
    let fee = match &billing.no_show_fee {
        Some(fee) if fee.basis == NoShowFeeBasis::FirstNight => first_night,
        Some(fee) => fee.amount.unwrap_or(0),
        None => 0,
    };
    if let (true, Some(folio)) = (fee > 0, &r.folio) {
        let input = FeeIn { kind: FeeKind::NoShow, amount: fee, category: None, reason: None };
        ledger::record_within(tx, job, &folio.id, ledger::Entry::Fee(input)).await?;
    }
    Ok(r.reference)
}

/// The room charges of the night of `date`, as the hotel enters prices.
fn first_night(lines: &[FolioLine], date: NaiveDate, billing: &billing::BillingSettings) -> i64 {
    lines
        .iter()
        .filter(|l| l.kind == LineKind::Charge && l.source == LineSource::RoomNight && l.service_date == date)
        .fold(0_i64, |sum, l| sum.saturating_add(if billing.prices_include_vat { l.gross } else { l.net }))
}
