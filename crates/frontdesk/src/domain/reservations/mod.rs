//! Reservations: stays of one guest at one hotel, made of reservation rooms, with a folio once confirmed.
//!
//! * [`status`]: the state machine (which moves exist, what each does to rooms and inventory).
//! * [`inventory`]: what a confirmed room takes, checked under a lock so that racing writers never oversell.
//! * [`stay`]: the front desk's rules for a stay in the house: check-in on the stay's dates into a free room,
//!   check-out (early departures release their nights), and undoing a check-out.
//! * [`reference`]: the short reference of each reservation.
//! * [`attention`]: reservations flagged as needing a person (a channel's booking taken overbooked or unmapped).
//! * [`write`]: create, update (moves, dates, assignments), approve and delete, each in one transaction that also
//!   records its webhook event.
//! * this module: the inputs, the filters and the reads (the records themselves are [`crate::model::reservations`]).

pub mod attention;
pub mod inventory;
pub mod reference;
pub mod status;
pub mod stay;
pub mod write;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub use crate::model::reservations::{
    Folio, FolioCharge, Reservation, ReservationRoom, ReservationStatus, RoomStatus, Source,
};

use super::access::{Actor, Scope};
use super::change::{Record, RecordKind};
use super::codes::CurrencyCode;
use super::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use super::validate::Checks;
use super::{hotels, not_null, nullable, Error, Result};
pub use crate::store::reservations::StayFilter;
use crate::store::{self, Db};

/// Longest stay one reservation may span.
pub const MAX_NIGHTS: i64 = 365;
/// Most rooms in one reservation.
pub const MAX_ROOMS: usize = 50;

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservationRoomIn {
    pub room_type_id: String,
    /// The rate plan sold; it must price this room type (or every room type) of the hotel.
    pub rate_plan_id: Option<String>,
    /// A physical room of the room type to assign now.
    pub room_id: Option<String>,
    /// Defaults to 2, or the room type's maximum when that is lower.
    #[schema(minimum = 1, maximum = 100)]
    pub adults: Option<i64>,
    #[schema(minimum = 0, maximum = 100)]
    pub children: Option<i64>,
    #[schema(minimum = 0, maximum = 100)]
    pub infants: Option<i64>,
    /// Price for the whole stay in minor units (at most 10^12). Left out: the rate plan's daily prices summed
    /// (every night must have one).
    #[schema(minimum = 0, maximum = 1000000000000_i64)]
    pub price: Option<i64>,
    /// With `price`, what it is night by night, where the writer knows it (a channel's prices per day); not part of
    /// the API. Kept only when they are exactly the stay's nights and add up to the price
    /// ([`ReservationRoom::nightly`](crate::model::reservations::ReservationRoom::nightly)).
    #[serde(skip)]
    pub night_prices: Option<BTreeMap<NaiveDate, i64>>,
}

/// A room's new price (with its night prices where they are known); see [`ReservationPatch::room_prices`].
#[derive(Debug, Clone, PartialEq)]
pub struct RoomPrice {
    pub room_id: String,
    pub price: i64,
    pub night_prices: Option<BTreeMap<NaiveDate, i64>>,
}

/// A reservation to create. (Serialize: its canonical form is what an idempotency key's request digest covers.)
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservationIn {
    /// The hotel; a key pinned to a hotel may leave it out.
    #[schema(value_type = String, required = true)]
    pub hotel_id: Option<String>,
    pub guest_id: Option<String>,
    /// REQUESTED or CONFIRMED (the default).
    pub status: Option<ReservationStatus>,
    #[schema(format = Date, value_type = String)]
    pub check_in_date: String,
    /// After the check-in date, at most 365 nights later.
    #[schema(format = Date, value_type = String)]
    pub check_out_date: String,
    /// Derived from the check-in date and the hotel's check-in time unless given.
    pub start_time: Option<DateTime<Utc>>,
    /// Derived from the check-out date and the hotel's check-out time unless given.
    pub end_time: Option<DateTime<Utc>>,
    /// Defaults to the rooms' sum.
    #[schema(minimum = 0, maximum = 1000)]
    pub adults: Option<i64>,
    #[schema(minimum = 0, maximum = 1000)]
    pub children: Option<i64>,
    #[schema(minimum = 0, maximum = 1000)]
    pub infants: Option<i64>,
    /// Defaults to the rooms' sum; at most 10^12 minor units.
    #[schema(minimum = 0, maximum = 1000000000000_i64)]
    pub total_price: Option<i64>,
    /// Defaults to the first room's rate plan currency, else the hotel's.
    #[schema(value_type = Option<CurrencyCode>)]
    pub currency: Option<String>,
    /// Defaults to API.
    pub source: Option<Source>,
    #[schema(max_length = 200)]
    pub channel_reference: Option<String>,
    #[schema(max_length = 5000)]
    pub notes: Option<String>,
    /// 1 to 50 rooms.
    #[schema(min_items = 1, max_items = 50)]
    pub rooms: Vec<ReservationRoomIn>,
}

/// Assigns (or, with `null`, unassigns) a physical room to one of the reservation's rooms.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomAssignmentIn {
    /// The reservation room's id.
    pub id: String,
    #[serde(deserialize_with = "nullable", default)]
    #[schema(value_type = Option<String>)]
    pub room_id: Option<Option<String>>,
}

/// Changes to a reservation; fields left out keep their value. `status` moves through the state machine (other
/// moves answer 409); the hotel cannot change (409).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservationPatch {
    /// Must be the reservation's own hotel.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub hotel_id: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub guest_id: Option<Option<String>>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub status: Option<ReservationStatus>,
    #[schema(nullable = false, format = Date, value_type = Option<String>)]
    #[serde(default, deserialize_with = "not_null")]
    pub check_in_date: Option<String>,
    #[schema(nullable = false, format = Date, value_type = Option<String>)]
    #[serde(default, deserialize_with = "not_null")]
    pub check_out_date: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub start_time: Option<DateTime<Utc>>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub end_time: Option<DateTime<Utc>>,
    #[schema(nullable = false, minimum = 0, maximum = 1000)]
    #[serde(default, deserialize_with = "not_null")]
    pub adults: Option<i64>,
    #[schema(nullable = false, minimum = 0, maximum = 1000)]
    #[serde(default, deserialize_with = "not_null")]
    pub children: Option<i64>,
    #[schema(nullable = false, minimum = 0, maximum = 1000)]
    #[serde(default, deserialize_with = "not_null")]
    pub infants: Option<i64>,
    #[schema(nullable = false, minimum = 0, maximum = 1000000000000_i64)]
    #[serde(default, deserialize_with = "not_null")]
    pub total_price: Option<i64>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 200)]
    pub channel_reference: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 5000)]
    pub notes: Option<Option<String>>,
    /// Room assignments to change.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub rooms: Option<Vec<RoomAssignmentIn>>,
    /// With `status: CHECKED_OUT`: why the guest leaves with the folio's balance open (billed to a company, say). A
    /// check-out with a balance other than 0 and no reason answers 409 (an extension; docs/money.md).
    #[schema(nullable = false, min_length = 1, max_length = 500)]
    #[serde(default, deserialize_with = "not_null")]
    pub on_account_reason: Option<String>,
    /// New prices of some of the reservation's rooms, by the room's id: what a channel's modification sells them
    /// for now (`channels/channex/revisions.rs`). Not part of the API: PUT changes the reservation's total only.
    #[serde(skip)]
    pub room_prices: Option<Vec<RoomPrice>>,
}

/// The filters of `GET /api/reservations`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReservationFilter {
    pub hotel_id: Option<String>,
    pub guest_id: Option<String>,
    /// The reservation with this short reference (case, spaces and hyphens are ignored). An extension of the
    /// contract.
    pub reference: Option<String>,
    /// Legacy window: reservations that end after this instant (RFC 3339).
    pub start_time: Option<DateTime<Utc>>,
    /// Legacy window: reservations that start at or before this instant (RFC 3339).
    pub end_time: Option<DateTime<Utc>>,
    /// Stays that check out after this date.
    #[param(format = Date, value_type = Option<String>)]
    pub stay_date_from: Option<String>,
    /// Stays that check in on or before this date.
    #[param(format = Date, value_type = Option<String>)]
    pub stay_date_to: Option<String>,
    /// The field to sort by (default `id`, which is creation order).
    #[param(
        pattern = "^(id|hotelId|guestId|status|checkInDate|checkOutDate|startTime|endTime|adults|children|infants|totalPrice|currency|source|channelReference|createdAt|updatedAt)$"
    )]
    pub sort_field: Option<String>,
    /// Comma-separated field names: answer only these fields of each reservation.
    #[param(
        pattern = "^(id|hotelId|guestId|status|checkInDate|checkOutDate|startTime|endTime|adults|children|infants|totalPrice|currency|source|channelReference|notes|createdAt|updatedAt)(,(id|hotelId|guestId|status|checkInDate|checkOutDate|startTime|endTime|adults|children|infants|totalPrice|currency|source|channelReference|notes|createdAt|updatedAt))*$"
    )]
    pub fields: Option<String>,
}

pub const VOCABULARY: Vocabulary = Vocabulary {
    sortable: &[
        ("id", "id"),
        ("hotelId", "hotel_id"),
        ("guestId", "guest_id"),
        ("status", "status"),
        ("checkInDate", "check_in_date"),
        ("checkOutDate", "check_out_date"),
        ("startTime", "start_time"),
        ("endTime", "end_time"),
        ("adults", "adults"),
        ("children", "children"),
        ("infants", "infants"),
        ("totalPrice", "total_price"),
        ("currency", "currency"),
        ("source", "source"),
        ("channelReference", "channel_reference"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    ],
    fields: &[
        "id",
        "hotelId",
        "guestId",
        "status",
        "checkInDate",
        "checkOutDate",
        "startTime",
        "endTime",
        "adults",
        "children",
        "infants",
        "totalPrice",
        "currency",
        "source",
        "channelReference",
        "notes",
        "createdAt",
        "updatedAt",
    ],
};

/// A reservation the actor may see (without rooms), or 404.
pub async fn visible(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<Reservation> {
    store::reservations::get(conn, &actor.organization_id, id)
        .await?
        .filter(|r| actor.sees_hotel(Some(&r.hotel_id)))
        .ok_or(Error::NotFound("reservation"))
}

/// The reservation with its rooms and folio, as a single read answers it.
pub async fn full(conn: &mut store::Conn, mut r: Reservation) -> Result<Reservation> {
    r.rooms = Some(store::reservations::rooms(conn, &r.id).await?);
    r.folio = store::folios::folio(conn, &r.id).await?;
    Ok(r)
}

/// A single read: the reservation with its rooms and folio (see [`store::reservations::get_full`]).
pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<Reservation> {
    actor.require_scope(Scope::ReservationsRead)?;
    store::reservations::get_full(db, &actor.organization_id, id)
        .await?
        .filter(|r| actor.sees_hotel(Some(&r.hotel_id)))
        .ok_or(Error::NotFound("reservation"))
}

pub async fn list(
    db: &Db,
    actor: &Actor,
    filter: ReservationFilter,
    params: ListParams,
) -> Result<Listing<Reservation>> {
    actor.require_scope(Scope::ReservationsRead)?;
    let shape = Shape { sort_field: filter.sort_field.as_deref(), fields: filter.fields.as_deref() };
    let page = params.validate(shape, &VOCABULARY)?;
    let mut c = Checks::new();
    let from = filter.stay_date_from.as_deref().and_then(|d| super::validate::parse_date(&mut c, "stayDateFrom", d));
    let to = filter.stay_date_to.as_deref().and_then(|d| super::validate::parse_date(&mut c, "stayDateTo", d));
    if let Some(at) = filter.start_time {
        c.instant("startTime", at);
    }
    if let Some(at) = filter.end_time {
        c.instant("endTime", at);
    }
    let reference = filter.reference.as_deref().and_then(|typed| {
        let parsed = reference::parse(typed);
        if parsed.is_none() {
            c.fail("reference", "must be a reservation reference: 8 letters and digits, e.g. K7QM3XHD");
        }
        parsed
    });
    c.finish()?;
    let hotel_id = actor.resolve_hotel(filter.hotel_id.as_deref())?;
    // A stay-window filter is bounded below by the longest stay on record, in the same statement (see
    // `store::reservations`), so that the index range starts near the window.
    let stay = StayFilter {
        hotel_id,
        guest_id: filter.guest_id,
        reference,
        start_time: filter.start_time,
        end_time: filter.end_time,
        stay_date_from: from,
        stay_date_to: to,
        ..StayFilter::default()
    };
    if page.limit.is_some_and(|limit| limit <= store::reservations::PAGE_IN_ONE_STATEMENT) {
        // The common request (a page): the page and the total in one statement. Rows prove the hotel is the
        // organization's; only an empty page asks.
        let (items, total) = store::reservations::page_with_total(db, &actor.organization_id, &stay, &page).await?;
        if items.is_empty() {
            hotels::optional_filter(&mut *db.read().await?, actor, stay.hotel_id.as_deref()).await?;
        }
        let total = match total {
            Some(total) => total,
            None => store::reservations::count(db, &actor.organization_id, &stay, &page).await?,
        };
        return Ok(Listing { total, items: ListItems::Page(items), projection: page.projection });
    }
    hotels::optional_filter(&mut *db.read().await?, actor, stay.hotel_id.as_deref()).await?;
    let total = store::reservations::count(db, &actor.organization_id, &stay, &page).await?;
    let items = store::reservations::list(db, &actor.organization_id, &stay, &page).await?.map_err(Error::from).boxed();
    Ok(Listing { total, items: ListItems::Streamed(items), projection: page.projection })
}

/// A stay's notes are free text about its guest: the log says they changed, and keeps no word of them (anonymising
/// a guest clears them, and must not leave them in the log).
impl Record for Reservation {
    const KIND: RecordKind = RecordKind::Reservation;
    const PRIVATE_FIELDS: &'static [&'static str] = &["notes"];

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }

    /// Without its folio, whose changes are the folio's own entries.
    fn audited(&self) -> serde_json::Result<serde_json::Value> {
        let mut json = serde_json::to_value(self)?;
        if let Some(fields) = json.as_object_mut() {
            fields.remove("folio");
        }
        Ok(json)
    }
}
