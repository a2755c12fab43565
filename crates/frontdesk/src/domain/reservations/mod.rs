//! Reservations: stays of one guest at one hotel, made of reservation rooms, with a folio once confirmed.
//!
//! * [`status`]: the state machine (which moves exist, what each does to rooms and inventory).
//! * [`inventory`]: what a confirmed room takes, checked under a lock so that racing writers never oversell.
//! * [`stay`]: the front desk's rules for a stay in the house: check-in on the stay's dates into a free room,
//!   check-out (early departures release their nights), and undoing a check-out.
//! * [`reference`]: the short reference of each reservation.
//! * [`write`]: create, update (moves, dates, assignments), approve and delete, each in one transaction that also
//!   records its webhook event.
//! * this module: the records, their inputs, and the reads.

pub mod inventory;
pub mod reference;
pub mod status;
pub mod stay;
pub mod write;

use chrono::{DateTime, NaiveDate, Utc};
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub use status::{ReservationStatus, RoomStatus};

use super::access::{Actor, Scope};
use super::codes::CurrencyCode;
use super::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use super::validate::Checks;
use super::{hotels, json_time, not_null, nullable, Error, Result};
use crate::store::{self, Db};

/// Longest stay one reservation may span.
pub const MAX_NIGHTS: i64 = 365;
/// Most rooms in one reservation.
pub const MAX_ROOMS: usize = 50;

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
}

/// The bill of a confirmed reservation: one room charge per room and night.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Folio {
    pub id: String,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    pub charges: Vec<FolioCharge>,
    /// Sum of the charges.
    pub total: i64,
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

/// [`ReservationFilter`], validated.
#[derive(Debug, Default, Clone)]
pub struct StayFilter {
    pub hotel_id: Option<String>,
    pub guest_id: Option<String>,
    /// A normalised reference ([`reference::parse`]).
    pub reference: Option<String>,
    pub start_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
    pub stay_date_from: Option<NaiveDate>,
    pub stay_date_to: Option<NaiveDate>,
    /// A lower bound on check-in dates. Without one, a `stay_date_from` is bounded by the longest stay on record in
    /// the list's own statement, which lets the stay-window index start near the window instead of at the beginning
    /// of time.
    pub check_in_from: Option<NaiveDate>,
    /// Only these statuses (empty: any). The dashboard's filters; the REST list has none of these.
    pub statuses: Vec<ReservationStatus>,
    pub source: Option<Source>,
    /// Only reservations of these guests (an empty list matches nothing).
    pub guest_ids: Option<Vec<String>>,
    /// Stays that check in on exactly this date.
    pub check_in_date: Option<NaiveDate>,
    /// Stays that check out on exactly this date.
    pub check_out_date: Option<NaiveDate>,
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
    r.folio = store::reservations::folio(conn, &r.id).await?;
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
