//! The folio of a stay: the lines the stay itself makes (a room charge per room and night, and the city tax), kept
//! in step with the reservation until they are posted, and the folio as the ledger reads it.
//!
//! Room nights and city tax are made when a reservation is confirmed and made again when its dates, rooms or
//! prices change (`reservations::write`, `reservations::stay`): [`follow_the_stay`] removes the unposted ones and
//! makes them anew. A posted line never changes: a change that would remove a posted night is refused (409), and
//! a posted night is not made twice.

use std::collections::BTreeSet;

use chrono::{Days, NaiveDate};

use super::billing::{self, BillingSettings};
use super::city_tax::{self, Night, Party, Pricing};
use super::ledger;
use super::lines::LineOrigin;
use super::tax;
use crate::domain::change::Change;
use crate::domain::{new_id, now, Error, Result};
pub use crate::model::folios::{FolioLedger, FolioLine, LineKind, LineSource, PaymentMethod, VatTotal};
use crate::model::hotels::Hotel;
use crate::model::reservations::{Folio, Reservation, ReservationRoom, RoomStatus};
use crate::store;

/// The sources of the lines that follow the stay.
pub const FOLLOWING: [LineSource; 2] = [LineSource::RoomNight, LineSource::CityTax];

fn fault(what: &str) -> Error {
    Error::Internal(anyhow::anyhow!("a folio line could not be computed: {what}"))
}

/// The lines the stay makes: one room charge per room and night (each night at its own price where the room has
/// them for exactly these nights, as a rate plan or a channel priced it; else the room's price spread evenly over
/// the nights, the remainder on the first nights; either way they add up to the price exactly), VAT at the
/// accommodation rate, and the city tax of each night the rule charges.
pub(crate) fn stay_lines(
    origin: &LineOrigin,
    r: &Reservation,
    rooms: &[ReservationRoom],
    billing: &BillingSettings,
    city_tax_exempt: bool,
) -> Result<Vec<FolioLine>> {
    let nights = r.nights().max(1);
    let rate = billing.accommodation_rate();
    let billable: Vec<&ReservationRoom> = rooms.iter().filter(|room| room.status != RoomStatus::Cancelled).collect();
    let mut lines = Vec::new();
    let mut per_night: Vec<Night> = (0..nights)
        .map(|n| Night {
            date: r.check_in_date.checked_add_days(Days::new(n as u64)).unwrap_or(r.check_in_date),
            rooms: billable.len() as i64,
            room_price: 0,
        })
        .collect();
    for (n, room) in billable.iter().enumerate() {
        let base = room.price / nights;
        let remainder = room.price % nights;
        let nightly = room.nightly(r.check_in_date, r.check_out_date);
        for (night, slot) in per_night.iter_mut().enumerate() {
            let amount = match &nightly {
                Some(prices) => prices.get(night).copied().unwrap_or(0),
                None => base + i64::from((night as i64) < remainder),
            };
            slot.room_price = slot.room_price.checked_add(amount).ok_or_else(|| fault("a night's room price"))?;
            let amounts = tax::line(amount, rate, billing.prices_include_vat).ok_or_else(|| fault("a room night"))?;
            let date = slot.date;
            let description = format!("Room {} of {}, night of {date}", n + 1, billable.len());
            lines.push(origin.charge(LineSource::RoomNight, date, description, billing::ACCOMMODATION, amounts, rate));
        }
    }
    if let Some(rule) = billing.city_tax.as_ref().filter(|_| !city_tax_exempt) {
        let party = Party { adults: r.adults, children: r.children };
        let pricing = Pricing { prices_include_vat: billing.prices_include_vat, accommodation_rate_bp: rate };
        let taxed = city_tax::nightly(rule, &per_night, party, pricing).ok_or_else(|| fault("the city tax"))?;
        for (date, amounts) in taxed {
            let description = format!("{}, night of {date}", rule.name);
            let category = billing::OTHER;
            lines.push(origin.charge(
                LineSource::CityTax,
                date,
                description,
                category,
                amounts,
                rule.vat_rate_basis_points,
            ));
        }
    }
    Ok(lines)
}

/// Makes the stay's lines of `r` anew: its folio is made if it has none; the unposted room nights and city tax
/// are replaced (no city tax while the stay is exempt from it); posted ones stay, and a change that would remove a
/// posted night is refused. Records `folio.updated` when the lines changed. Answers the folio as the reservation
/// shows it.
pub(crate) async fn follow_the_stay(
    tx: &mut Change,
    organization_id: &str,
    hotel: &Hotel,
    r: &Reservation,
    rooms: &[ReservationRoom],
) -> Result<Folio> {
    let at = now();
    let billing = billing::settings_of(tx.conn(), hotel).await?;
    let head = store::folios::ensure(tx.conn(), &r.id, &r.currency, &new_id(), at).await?;
    let before = store::folios::lines(tx.conn(), &head.id).await?;
    let posted: BTreeSet<(NaiveDate, &'static str)> = before
        .iter()
        .filter(|l| l.posted_at.is_some() && l.source.follows_the_stay())
        .map(|l| (l.service_date, l.source.into()))
        .collect();
    let stay: BTreeSet<NaiveDate> = r.check_in_date.iter_days().take_while(|d| *d < r.check_out_date).collect();
    if let Some((night, _)) = posted.iter().find(|(date, _)| !stay.contains(date)) {
        return Err(Error::Conflict(format!(
            "the night of {night} is posted and cannot be removed; correct its charge with an allowance instead"
        )));
    }
    let exempt = store::folios::city_tax_exemption(tx.conn(), &head.id).await?.is_some();
    let origin = LineOrigin { folio_id: &head.id, currency: &head.currency, made_by: tx.writer().label(), at };
    let lines: Vec<FolioLine> = stay_lines(&origin, r, rooms, &billing, exempt)?
        .into_iter()
        .filter(|l| !posted.contains(&(l.service_date, l.source.into())))
        .collect();
    store::folios::remove_unposted(tx.conn(), &head.id, &FOLLOWING, None).await?;
    store::folios::insert(tx.conn(), &lines).await?;
    let after = ledger::stay_changed(tx, organization_id, &head.id, before, &lines).await?;
    Ok(store::folios::folio_from(head, &after.lines))
}

/// A room night's price as the hotel enters its prices (with VAT or without), which is what a reservation's
/// total price adds up.
fn room_price(line: &FolioLine, billing: &BillingSettings) -> i64 {
    if billing.prices_include_vat {
        line.gross
    } else {
        line.net
    }
}

/// The room price a reservation's folio charges now (its room nights, posted or not).
pub(crate) async fn room_price_charged(tx: &mut Change, hotel: &Hotel, reservation_id: &str) -> Result<i64> {
    let Some(head) = store::folios::head_of(tx.conn(), reservation_id).await? else { return Ok(0) };
    let billing = billing::settings_of(tx.conn(), hotel).await?;
    let lines = store::folios::lines(tx.conn(), &head.id).await?;
    let nights = lines.iter().filter(|l| l.kind == LineKind::Charge && l.source == LineSource::RoomNight);
    Ok(nights.fold(0_i64, |sum, l| sum.saturating_add(room_price(l, &billing))))
}

/// An early departure: the unposted nights (and their city tax) from `leaves` on are removed. Answers the room
/// price removed.
pub(crate) async fn leave_early(
    tx: &mut Change,
    organization_id: &str,
    hotel: &Hotel,
    reservation_id: &str,
    leaves: NaiveDate,
) -> Result<i64> {
    let charged = room_price_charged(tx, hotel, reservation_id).await?;
    if let Some(head) = store::folios::head_of(tx.conn(), reservation_id).await? {
        let before = store::folios::lines(tx.conn(), &head.id).await?;
        store::folios::remove_unposted(tx.conn(), &head.id, &FOLLOWING, Some(leaves)).await?;
        ledger::stay_changed(tx, organization_id, &head.id, before, &[]).await?;
    }
    Ok(charged - room_price_charged(tx, hotel, reservation_id).await?)
}

/// At check-out: every line is posted, and the balance must be 0 unless `on_account` says why it stays open (which
/// the folio keeps). 409 with the balance otherwise.
pub(crate) async fn settle_at_check_out(tx: &mut Change, reservation_id: &str, on_account: Option<&str>) -> Result<()> {
    let Some(head) = store::folios::head_of(tx.conn(), reservation_id).await? else { return Ok(()) };
    store::folios::post(tx.conn(), &head.id, None, now()).await?;
    let folio = store::folios::folio_with_lines(tx.conn(), head).await?;
    let reason = on_account.map(crate::domain::validate::clean).filter(|r| !r.is_empty());
    if reason.as_ref().is_some_and(|r| r.chars().count() > 500) {
        return Err(Error::Validation(vec![crate::domain::FieldError::field(
            "onAccountReason",
            "must be at most 500 characters",
        )]));
    }
    if folio.balance != 0 && reason.is_none() {
        return Err(Error::Conflict(format!(
            "the folio's balance is {}: take a payment (or refund) first, or give onAccountReason to leave it open",
            crate::domain::money::format(folio.balance, &folio.currency)
        )));
    }
    let reason = reason.filter(|_| folio.balance != 0);
    store::folios::set_on_account(tx.conn(), &folio.id, reason.as_deref()).await?;
    Ok(())
}

/// Whether a reservation's folio holds money the law keeps: a posted line, or a payment or refund. Such a
/// reservation is cancelled, never deleted.
pub(crate) async fn keeps_money(tx: &mut Change, reservation_id: &str) -> Result<bool> {
    let Some(head) = store::folios::head_of(tx.conn(), reservation_id).await? else { return Ok(false) };
    let lines = store::folios::lines(tx.conn(), &head.id).await?;
    Ok(lines.iter().any(|l| l.posted_at.is_some() || matches!(l.kind, LineKind::Payment | LineKind::Refund)))
}

/// A cancelled stay or a no-show: its unposted nights and city tax go (posted ones, and what people recorded, stay).
pub(crate) async fn release(tx: &mut Change, organization_id: &str, reservation_id: &str) -> Result<()> {
    if let Some(head) = store::folios::head_of(tx.conn(), reservation_id).await? {
        let before = store::folios::lines(tx.conn(), &head.id).await?;
        store::folios::remove_unposted(tx.conn(), &head.id, &FOLLOWING, None).await?;
        ledger::stay_changed(tx, organization_id, &head.id, before, &[]).await?;
    }
    Ok(())
}
