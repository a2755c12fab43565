//! Hotels: created and changed by operators, readable by any credential of the organization (a pinned key sees
//! its own hotel only).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Actor;
use super::codes::{CurrencyCode, TimezoneName};
use super::validate::{clean, Checks};
use super::{new_id, not_null, now, nullable, Error, Result};
use crate::store::{self, Db};

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
    pub region: Option<String>,
    /// ISO 3166-1 alpha-2 country code.
    pub country: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hotel {
    pub id: String,
    pub name: String,
    /// IANA time zone, e.g. `Europe/Lisbon`.
    #[schema(value_type = TimezoneName)]
    pub timezone: String,
    /// ISO 4217 code; prices of the hotel are integers in its minor units.
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Local check-in time `HH:MM`.
    pub check_in_time: String,
    /// Local check-out time `HH:MM`.
    pub check_out_time: String,
    #[serde(flatten)]
    pub address: Address,
    /// Whether the public availability and booking endpoints serve this hotel.
    pub public_booking: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HotelIn {
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: String,
    #[schema(value_type = TimezoneName)]
    pub timezone: String,
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    #[schema(example = "15:00", pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub check_in_time: Option<String>,
    #[schema(example = "11:00", pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub check_out_time: Option<String>,
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
    pub region: Option<String>,
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    pub public_booking: Option<bool>,
}

impl HotelIn {
    /// A hotel with the required fields only; every other field takes its default.
    pub fn new(name: impl Into<String>, timezone: impl Into<String>, currency: impl Into<String>) -> HotelIn {
        HotelIn {
            name: name.into(),
            timezone: timezone.into(),
            currency: currency.into(),
            check_in_time: None,
            check_out_time: None,
            address_line1: None,
            address_line2: None,
            city: None,
            postal_code: None,
            region: None,
            country: None,
            public_booking: None,
        }
    }
}

/// Changes to a hotel: fields left out keep their value; address fields may be set to `null` to clear them.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HotelPatch {
    #[schema(nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub name: Option<String>,
    #[schema(nullable = false, value_type = Option<TimezoneName>)]
    #[serde(default, deserialize_with = "not_null")]
    pub timezone: Option<String>,
    #[schema(nullable = false, value_type = Option<CurrencyCode>)]
    #[serde(default, deserialize_with = "not_null")]
    pub currency: Option<String>,
    #[schema(nullable = false, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    #[serde(default, deserialize_with = "not_null")]
    pub check_in_time: Option<String>,
    #[schema(nullable = false, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    #[serde(default, deserialize_with = "not_null")]
    pub check_out_time: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub address_line1: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub address_line2: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub city: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub postal_code: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub region: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, pattern = "^[A-Z]{2}$")]
    pub country: Option<Option<String>>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub public_booking: Option<bool>,
}

fn validate(h: &Hotel) -> Result<()> {
    let mut c = Checks::new();
    c.text("name", &h.name, 200);
    c.timezone("timezone", &h.timezone);
    c.currency("currency", &h.currency);
    c.clock_time("checkInTime", &h.check_in_time);
    c.clock_time("checkOutTime", &h.check_out_time);
    let a = &h.address;
    for (field, value) in [
        ("addressLine1", &a.address_line1),
        ("addressLine2", &a.address_line2),
        ("city", &a.city),
        ("postalCode", &a.postal_code),
        ("region", &a.region),
    ] {
        c.opt_text(field, value.as_deref(), 200);
    }
    if let Some(country) = &a.country {
        if country.len() != 2 || !country.chars().all(|ch| ch.is_ascii_uppercase()) {
            c.fail("country", "must be an ISO 3166-1 alpha-2 code such as PT");
        }
    }
    c.finish()
}

pub async fn create(db: &Db, actor: &Actor, input: HotelIn) -> Result<Hotel> {
    actor.require_operator()?;
    create_for_organization(db, &actor.organization_id, input).await
}

/// Creates a hotel in an organization (the operator check is the caller's; the demo seeding calls this directly).
pub async fn create_for_organization(db: &Db, organization_id: &str, input: HotelIn) -> Result<Hotel> {
    let at = now();
    let hotel = Hotel {
        id: new_id(),
        name: clean(&input.name),
        timezone: input.timezone,
        currency: input.currency,
        check_in_time: input.check_in_time.unwrap_or_else(|| "15:00".into()),
        check_out_time: input.check_out_time.unwrap_or_else(|| "11:00".into()),
        address: Address {
            address_line1: input.address_line1,
            address_line2: input.address_line2,
            city: input.city,
            postal_code: input.postal_code,
            region: input.region,
            country: input.country,
        },
        public_booking: input.public_booking.unwrap_or(true),
        created_at: at,
        updated_at: at,
    };
    validate(&hotel)?;
    let mut tx = db.begin_write().await?;
    store::hotels::insert(tx.conn(), organization_id, &hotel).await?;
    tx.commit().await?;
    Ok(hotel)
}

pub async fn list(db: &Db, actor: &Actor) -> Result<Vec<Hotel>> {
    let hotels = store::hotels::list(&mut *db.read().await?, &actor.organization_id).await?;
    Ok(hotels.into_iter().filter(|h| actor.sees_hotel(Some(&h.id))).collect())
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<Hotel> {
    if !actor.sees_hotel(Some(id)) {
        return Err(Error::NotFound("hotel"));
    }
    store::hotels::get(&mut *db.read().await?, &actor.organization_id, id).await?.ok_or(Error::NotFound("hotel"))
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: HotelPatch) -> Result<Hotel> {
    actor.require_operator()?;
    let mut tx = db.begin_write().await?;
    let mut h = store::hotels::get(tx.conn(), &actor.organization_id, id).await?.ok_or(Error::NotFound("hotel"))?;
    macro_rules! apply {
        ($($field:ident => $target:expr),* $(,)?) => {
            $(if let Some(v) = patch.$field { $target = v; })*
        };
    }
    apply!(
        name => h.name,
        timezone => h.timezone,
        currency => h.currency,
        check_in_time => h.check_in_time,
        check_out_time => h.check_out_time,
        address_line1 => h.address.address_line1,
        address_line2 => h.address.address_line2,
        city => h.address.city,
        postal_code => h.address.postal_code,
        region => h.address.region,
        country => h.address.country,
        public_booking => h.public_booking,
    );
    h.name = clean(&h.name);
    h.updated_at = now();
    validate(&h)?;
    store::hotels::update(tx.conn(), &actor.organization_id, &h).await?;
    tx.commit().await?;
    Ok(h)
}

/// The hotel a request names (or, when it names none, the key's pin): 403 when a pinned key names another hotel,
/// 404 when the hotel is not the organization's, and a validation error when none is named at all.
pub async fn require_named(conn: &mut sqlx::AnyConnection, actor: &Actor, requested: Option<&str>) -> Result<Hotel> {
    let hotel_id = actor.require_hotel(requested)?;
    store::hotels::get(conn, &actor.organization_id, &hotel_id).await?.ok_or(Error::NotFound("hotel"))
}

/// A hotel filter of a list: like [`require_named`], but naming no hotel is allowed (all visible hotels).
pub async fn optional_filter(
    conn: &mut sqlx::AnyConnection,
    actor: &Actor,
    requested: Option<&str>,
) -> Result<Option<String>> {
    match actor.resolve_hotel(requested)? {
        Some(hotel_id) => {
            store::hotels::get(conn, &actor.organization_id, &hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
            Ok(Some(hotel_id))
        }
        None => Ok(None),
    }
}
