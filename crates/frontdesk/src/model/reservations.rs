//! Reservations: their states, their rooms and their folio.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::CurrencyCode;
use super::folios::LineSource;
use super::json_time;

/// Who made a reservation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Source {
    Api,
    Dashboard,
    BookingPage,
    Channel,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Source> {
        s.parse().ok()
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum ReservationStatus {
    Requested,
    Confirmed,
    CheckedIn,
    CheckedOut,
    Cancelled,
    NoShow,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum RoomStatus {
    Pending,
    Confirmed,
    Cancelled,
}

impl ReservationStatus {
    pub const ALL: [ReservationStatus; 6] =
        [Self::Requested, Self::Confirmed, Self::CheckedIn, Self::CheckedOut, Self::Cancelled, Self::NoShow];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

impl RoomStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReservationRoom {
    pub id: String,
    pub room_type_id: String,
    pub rate_plan_id: Option<String>,
    /// The physical room; `null` while unassigned.
    pub room_id: Option<String>,
    pub status: RoomStatus,
    pub adults: i64,
    pub children: i64,
    pub infants: i64,
    /// Price of this room for the whole stay, in minor units of the reservation's currency.
    pub price: i64,
    /// The price of each night where it is known night by night (a rate plan's daily prices, a channel's prices
    /// per day). The folio charges them while they are exactly the stay's nights and add up to `price`
    /// ([`ReservationRoom::nightly`]); not in answers (the folio's lines show them).
    #[serde(skip)]
    pub night_prices: Option<BTreeMap<NaiveDate, i64>>,
}

impl ReservationRoom {
    /// The room's price night by night for a stay of `[check_in, check_out)`, where its night prices are exactly
    /// those nights and add up to its price; `None` otherwise (a price given for the whole stay, or dates changed
    /// since the nights were priced), and the price is spread evenly.
    pub fn nightly(&self, check_in: NaiveDate, check_out: NaiveDate) -> Option<Vec<i64>> {
        let prices = self.night_prices.as_ref()?;
        let nights: Vec<NaiveDate> = check_in.iter_days().take_while(|d| *d < check_out).collect();
        let exact = prices.len() == nights.len() && nights.iter().all(|night| prices.contains_key(night));
        let sum = prices.values().try_fold(0_i64, |sum, p| if *p < 0 { None } else { sum.checked_add(*p) });
        (exact && sum == Some(self.price)).then(|| prices.values().copied().collect())
    }
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FolioCharge {
    pub id: String,
    pub folio_id: String,
    #[serde(serialize_with = "json_time::date")]
    pub date: NaiveDate,
    pub description: String,
    pub amount: i64,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Where the charge comes from (the folio's own lines say it: `GET /api/folios/{folioId}`).
    #[serde(skip)]
    pub source: LineSource,
    /// Whether it is posted (it no longer follows the stay's changes).
    #[serde(skip)]
    pub posted: bool,
}

/// The bill of a confirmed reservation: one room charge per room and night, and what else the guest is charged
/// (city tax, extras, fees). Its lines, payments and totals per VAT rate: `GET /api/folios/{folioId}`.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Folio {
    pub id: String,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub charges: Vec<FolioCharge>,
    /// Sum of the charges.
    pub total: i64,
    /// What the guest still owes: the charges less allowances and payments, plus refunds (an extension).
    pub balance: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    pub id: String,
    /// A short code for people (8 characters, unique in the organization, no look-alike characters), e.g.
    /// `K7QM3XHD`: shown on the dashboard and the booking page's receipt, searchable, filterable.
    pub reference: String,
    pub hotel_id: String,
    pub guest_id: Option<String>,
    pub status: ReservationStatus,
    #[serde(serialize_with = "json_time::date")]
    pub check_in_date: NaiveDate,
    #[serde(serialize_with = "json_time::date")]
    pub check_out_date: NaiveDate,
    /// Legacy: the instant of check-in (the check-in date at the hotel's check-in time, in its time zone).
    #[serde(serialize_with = "json_time::instant")]
    pub start_time: DateTime<Utc>,
    /// Legacy: the instant of check-out.
    #[serde(serialize_with = "json_time::instant")]
    pub end_time: DateTime<Utc>,
    pub adults: i64,
    pub children: i64,
    pub infants: i64,
    /// In minor units of `currency`.
    pub total_price: i64,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub source: Source,
    /// The booking's reference at the channel that sent it.
    pub channel_reference: Option<String>,
    pub notes: Option<String>,
    #[serde(serialize_with = "json_time::instant")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "json_time::instant")]
    pub updated_at: DateTime<Utc>,
    /// The rooms (single reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rooms: Option<Vec<ReservationRoom>>,
    /// The folio, once confirmed (single reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folio: Option<Folio>,
}

impl Reservation {
    pub fn nights(&self) -> i64 {
        (self.check_out_date - self.check_in_date).num_days()
    }
}

/// Why a reservation needs a person's attention: a channel's booking is sold already, so it is taken even when it
/// does not fit (docs/channels.md, "Bookings that are taken whatever").
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum AttentionReason {
    /// Some night of the stay had no room of its type free.
    Overbooked,
    /// A room type or rate plan of the booking is not mapped to ours.
    Unmapped,
    /// The channel changed the booking's rooms, which only the desk can follow.
    Changed,
    /// A room was sold for a party larger than its room type holds here.
    Party,
}

impl AttentionReason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// In the desk's words.
    pub fn label(self) -> &'static str {
        match self {
            AttentionReason::Overbooked => "Overbooked",
            AttentionReason::Unmapped => "Unmapped",
            AttentionReason::Changed => "Rooms changed by the channel",
            AttentionReason::Party => "Party larger than the room",
        }
    }
}

/// A reservation flagged as needing attention, until someone marks it handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attention {
    pub reservation_id: String,
    pub hotel_id: String,
    pub reasons: Vec<AttentionReason>,
    /// What exactly, in words (which night, which room type).
    pub detail: String,
    pub raised_at: DateTime<Utc>,
    pub handled_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(price: i64, nights: &[(u32, i64)]) -> ReservationRoom {
        ReservationRoom {
            id: "r".into(),
            room_type_id: "t".into(),
            rate_plan_id: None,
            room_id: None,
            status: RoomStatus::Confirmed,
            adults: 2,
            children: 0,
            infants: 0,
            price,
            night_prices: Some(nights.iter().map(|(d, p)| (date(*d), *p)).collect()),
        }
    }

    fn date(day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, day).unwrap()
    }

    #[test]
    fn night_prices_count_only_when_they_are_the_stays_nights_and_its_price() {
        let priced = room(370, &[(1, 100), (2, 120), (3, 150)]);
        assert_eq!(priced.nightly(date(1), date(4)), Some(vec![100, 120, 150]));
        // The dates moved since they were priced, or the price changed: spread evenly instead.
        assert_eq!(priced.nightly(date(1), date(3)), None);
        assert_eq!(priced.nightly(date(2), date(5)), None);
        assert_eq!(room(400, &[(1, 100), (2, 120), (3, 150)]).nightly(date(1), date(4)), None);
        assert_eq!(ReservationRoom { night_prices: None, ..priced.clone() }.nightly(date(1), date(4)), None);
        // Amounts that would wrap, or below zero, are not prices.
        assert_eq!(room(-2, &[(1, i64::MAX), (2, i64::MAX)]).nightly(date(1), date(3)), None);
        assert_eq!(room(1, &[(1, 2), (2, -1)]).nightly(date(1), date(3)), None);
    }
}
