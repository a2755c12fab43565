//! How records read on a page: dates, parties, statuses, money, and a reservation as one table row. Templates get
//! these ready-made strings, so they stay free of logic.

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};

use crate::domain::front_office::{self, StayLine};
use crate::domain::reservations::{ReservationStatus, Source};
use crate::domain::rooms::HousekeepingStatus;
use crate::domain::{hotels, money, rate_plans, room_types, rooms, Actor, Result};
use crate::store::Db;

/// A rate in basis points as people read it: 700 is "7 %", 750 "7.5 %".
pub fn percent(bp: i64) -> String {
    let whole = bp / 100;
    match bp % 100 {
        0 => format!("{whole} %"),
        rest if rest % 10 == 0 => format!("{whole}.{} %", rest / 10),
        rest => format!("{whole}.{rest:02} %"),
    }
}

/// A VAT category as people read it: `FOOD_AND_BEVERAGE` is "Food and beverage".
pub fn category_label(category: &str) -> String {
    match category {
        "ACCOMMODATION" => "Accommodation".into(),
        "FOOD_AND_BEVERAGE" => "Food and beverage".into(),
        "OTHER" => "Other".into(),
        // A hotel's own category (`SPA`, `PARKING`): as it was named, its words spaced.
        own => own.replace('_', " "),
    }
}

/// `Mon 23 Nov`.
pub fn date_short(d: NaiveDate) -> String {
    d.format("%a %-d %b").to_string()
}

/// `Mon 23 Nov 2026`.
pub fn date_long(d: NaiveDate) -> String {
    d.format("%a %-d %b %Y").to_string()
}

pub fn nights(n: i64) -> String {
    match n {
        1 => "1 night".into(),
        n => format!("{n} nights"),
    }
}

/// A wait in words: `1 second`, `40 seconds`, `2 minutes` (rounded up).
pub fn wait_words(secs: u64) -> String {
    match secs {
        0..=1 => "1 second".to_string(),
        2..=90 => format!("{secs} seconds"),
        _ => format!("{} minutes", secs.div_ceil(60)),
    }
}

/// `2 adults, 1 child`.
pub fn party(adults: i64, children: i64, infants: i64) -> String {
    let mut parts = vec![plural(adults, "adult", "adults")];
    if children > 0 {
        parts.push(plural(children, "child", "children"));
    }
    if infants > 0 {
        parts.push(plural(infants, "infant", "infants"));
    }
    parts.join(", ")
}

fn plural(n: i64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

pub fn status_label(s: ReservationStatus) -> &'static str {
    match s {
        ReservationStatus::Requested => "Requested",
        ReservationStatus::Confirmed => "Confirmed",
        ReservationStatus::CheckedIn => "Checked in",
        ReservationStatus::CheckedOut => "Checked out",
        ReservationStatus::Cancelled => "Cancelled",
        ReservationStatus::NoShow => "No-show",
    }
}

/// The CSS class of a status pill or rack bar.
pub fn status_class(s: ReservationStatus) -> &'static str {
    match s {
        ReservationStatus::Requested => "requested",
        ReservationStatus::Confirmed => "confirmed",
        ReservationStatus::CheckedIn => "checked-in",
        ReservationStatus::CheckedOut => "checked-out",
        ReservationStatus::Cancelled => "cancelled",
        ReservationStatus::NoShow => "no-show",
    }
}

pub fn housekeeping_label(s: HousekeepingStatus) -> &'static str {
    match s {
        HousekeepingStatus::Clean => "Clean",
        HousekeepingStatus::Dirty => "Dirty",
        HousekeepingStatus::Inspected => "Inspected",
        HousekeepingStatus::OutOfOrder => "Out of order",
    }
}

pub fn housekeeping_class(s: HousekeepingStatus) -> &'static str {
    match s {
        HousekeepingStatus::Clean => "clean",
        HousekeepingStatus::Dirty => "dirty",
        HousekeepingStatus::Inspected => "inspected",
        HousekeepingStatus::OutOfOrder => "out-of-order",
    }
}

pub fn source_label(s: Source) -> &'static str {
    match s {
        Source::Api => "API",
        Source::Dashboard => "Dashboard",
        Source::BookingPage => "Booking page",
        Source::Channel => "Channel",
    }
}

pub fn is_weekend(d: NaiveDate) -> bool {
    matches!(d.weekday(), chrono::Weekday::Sat | chrono::Weekday::Sun)
}

/// The names of a hotel's room types, rooms and rate plans, looked up once per page.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    pub room_types: HashMap<String, String>,
    pub rooms: HashMap<String, String>,
    /// Each room's housekeeping status, shown next to it where the desk picks or checks in.
    pub room_status: HashMap<String, HousekeepingStatus>,
    pub rate_plans: HashMap<String, String>,
    /// The hotel's time zone, for the times of day a page shows.
    pub time_zone: chrono_tz::Tz,
    /// Rooms a checked-in stay is in (room id to reservation id), when the page knows them: an arrival's room that
    /// another stay still occupies says so.
    pub occupied_by: HashMap<String, String>,
}

impl Catalog {
    pub async fn load(db: &Db, actor: &Actor, hotel_id: &str) -> Result<Catalog> {
        let hotel = hotels::get(db, actor, hotel_id).await?;
        let types = room_types::list(db, actor, Some(hotel_id)).await?;
        let rooms = rooms::list(db, actor, Some(hotel_id), None).await?;
        let plans = rate_plans::list(db, actor, Some(hotel_id), None).await?;
        Ok(Catalog {
            room_types: types.into_iter().map(|t| (t.id, t.name)).collect(),
            room_status: rooms.iter().map(|r| (r.id.clone(), r.housekeeping_status)).collect(),
            rooms: rooms.into_iter().map(|r| (r.id, r.name)).collect(),
            rate_plans: plans.into_iter().map(|p| (p.id, p.name)).collect(),
            time_zone: hotel.time_zone(),
            occupied_by: HashMap::new(),
        })
    }

    /// Notes the rooms that the checked-in stays among `lines` are in.
    pub fn note_occupants(&mut self, lines: &[StayLine]) {
        for line in lines.iter().filter(|l| l.reservation.status == ReservationStatus::CheckedIn) {
            for room in line.rooms.iter().filter_map(|r| r.room_id.clone()) {
                self.occupied_by.insert(room, line.reservation.id.clone());
            }
        }
    }

    /// "101 (dirty)", or "101 (dirty, guest still in)" when another stay occupies it: a room as the desk needs to
    /// see it for `reservation_id`.
    pub fn room_with_status(&self, id: &str, reservation_id: &str) -> String {
        let occupied = self.occupied_by.get(id).is_some_and(|r| r != reservation_id);
        match (self.room_status.get(id), occupied) {
            (Some(status), true) => {
                format!("{} ({}, guest still in)", self.room(id), housekeeping_label(*status).to_lowercase())
            }
            (Some(status), false) => format!("{} ({})", self.room(id), housekeeping_label(*status).to_lowercase()),
            (None, _) => self.room(id),
        }
    }

    pub fn room_type(&self, id: &str) -> String {
        self.room_types.get(id).cloned().unwrap_or_else(|| "Unknown room type".into())
    }

    pub fn room(&self, id: &str) -> String {
        self.rooms.get(id).cloned().unwrap_or_else(|| "?".into())
    }

    pub fn rate_plan(&self, id: Option<&str>) -> String {
        id.and_then(|id| self.rate_plans.get(id).cloned()).unwrap_or_else(|| "No rate plan".into())
    }
}

/// A reservation as one row of a table.
#[derive(Debug, Clone)]
pub struct StayRow {
    pub id: String,
    pub href: String,
    pub guest: String,
    pub guest_email: String,
    pub check_in: String,
    pub check_out: String,
    pub nights: String,
    pub party: String,
    /// Room numbers, or the room types still to assign.
    pub rooms: String,
    /// The same with each room's housekeeping status: "101 (dirty)".
    pub rooms_with_status: String,
    /// The reservation's short reference.
    pub reference: String,
    /// The expected arrival, the hotel's local time of `startTime` ("15:00").
    pub arrival: String,
    pub notes: String,
    pub rate_plans: String,
    pub unassigned: bool,
    pub status: ReservationStatus,
    pub status_label: &'static str,
    pub status_class: &'static str,
    pub total: String,
    pub source: &'static str,
    pub channel_reference: String,
}

impl StayRow {
    pub fn new(line: &StayLine, catalog: &Catalog) -> StayRow {
        let r = &line.reservation;
        let live_rooms: Vec<_> = line
            .rooms
            .iter()
            .filter(|room| room.status != crate::domain::reservations::RoomStatus::Cancelled)
            .collect();
        let room_names = |with_status: bool| -> Vec<String> {
            live_rooms
                .iter()
                .map(|room| match &room.room_id {
                    Some(id) if with_status => catalog.room_with_status(id, &r.id),
                    Some(id) => catalog.room(id),
                    None => format!("{} (unassigned)", catalog.room_type(&room.room_type_id)),
                })
                .collect()
        };
        let rooms = room_names(false);
        let mut plans: Vec<String> =
            live_rooms.iter().map(|room| catalog.rate_plan(room.rate_plan_id.as_deref())).collect();
        plans.dedup();
        StayRow {
            id: r.id.clone(),
            href: format!("/hotels/{}/reservations/{}", r.hotel_id, r.id),
            guest: line.guest.as_ref().map(front_office::guest_name).unwrap_or_else(|| "No guest".into()),
            guest_email: line.guest.as_ref().and_then(|g| g.email.clone()).unwrap_or_default(),
            check_in: date_short(r.check_in_date),
            check_out: date_short(r.check_out_date),
            nights: nights(r.nights()),
            party: party(r.adults, r.children, r.infants),
            unassigned: live_rooms.iter().any(|room| room.room_id.is_none()),
            rooms: rooms.join(", "),
            rooms_with_status: room_names(true).join(", "),
            reference: r.reference.clone(),
            arrival: r.start_time.with_timezone(&catalog.time_zone).format("%H:%M").to_string(),
            notes: r.notes.clone().unwrap_or_default(),
            rate_plans: plans.join(", "),
            status: r.status,
            status_label: status_label(r.status),
            status_class: status_class(r.status),
            total: money::format(r.total_price, &r.currency),
            source: source_label(r.source),
            channel_reference: r.channel_reference.clone().unwrap_or_default(),
        }
    }

    pub fn rows(lines: &[StayLine], catalog: &Catalog) -> Vec<StayRow> {
        lines.iter().map(|line| StayRow::new(line, catalog)).collect()
    }
}
