//! Hotels: created and changed by operators, readable by any credential of the organization (a pinned key sees
//! its own hotel only).

use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Utc};
use serde::Deserialize;
use utoipa::ToSchema;

use super::access::Actor;
use super::codes::{CurrencyCode, TimezoneName};
use super::validate::{clean, Checks};
use super::{new_id, not_null, now, nullable, Error, Result};
use crate::domain::change::{Change, Record, RecordKind, Writer};
pub use crate::model::hotels::{Address, EmbedOrigin, Hotel, EMBED_ORIGIN_PATTERN};
use crate::store::{self, Db};

impl Hotel {
    /// The hotel's time zone (UTC if the stored name is unknown, which validation prevents).
    pub fn time_zone(&self) -> chrono_tz::Tz {
        self.timezone.parse().unwrap_or(chrono_tz::UTC)
    }

    /// `date` at the hotel's local `time` (`HH:MM`), in UTC: when a stay starts or ends. A local time that a DST
    /// change skips is taken an hour later.
    pub fn local_instant(&self, date: NaiveDate, time: &str) -> DateTime<Utc> {
        let time = NaiveTime::parse_from_str(time, "%H:%M").unwrap_or_default();
        let local = date.and_time(time);
        let tz = self.time_zone();
        tz.from_local_datetime(&local)
            .earliest()
            .or_else(|| tz.from_local_datetime(&(local + chrono::TimeDelta::hours(1))).earliest())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(|| Utc.from_utc_datetime(&local))
    }

    /// The calendar date it is now at the hotel: the front desk's "today".
    pub fn today(&self) -> NaiveDate {
        self.local_date(now())
    }

    /// The hotel's calendar date at `at`.
    pub fn local_date(&self, at: DateTime<Utc>) -> NaiveDate {
        at.with_timezone(&self.time_zone()).date_naive()
    }
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
    /// Default none. At most 10 origins (`http(s)://host[:port]`, lower case, no path).
    #[schema(max_items = 10, value_type = Option<Vec<EmbedOrigin>>)]
    pub booking_embed_origins: Option<Vec<String>>,
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
            booking_embed_origins: None,
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
    /// Replaces the list; `[]` clears it.
    #[schema(max_items = 10, value_type = Option<Vec<EmbedOrigin>>)]
    pub booking_embed_origins: Option<Vec<String>>,
}

/// Most origins a hotel may allow to embed its booking page.
pub const MAX_EMBED_ORIGINS: usize = 10;

/// An origin a booking page may be framed by, in the form browsers compare (`https://www.example.com`, default
/// port left out), or `None` for anything that does not match [`EMBED_ORIGIN_PATTERN`]: another scheme, plain
/// http or a bare IP address (but for `localhost` and `127.0.0.1`, for development), a path, a query, credentials,
/// a wildcard, upper case. A page framed over plain http, or by an address rather than a name, could be any
/// network's, which is what naming origins is meant to rule out.
pub fn embed_origin(value: &str) -> Option<String> {
    if value.len() > 200 {
        return None;
    }
    let (https, rest) = match value.strip_prefix("https://") {
        Some(rest) => (true, rest),
        None => (false, value.strip_prefix("http://")?),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let port_ok = port.is_none_or(|p| {
        !p.starts_with('0')
            && p.len() <= 5
            && p.chars().all(|c| c.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    });
    let octet = |o: &str| {
        !o.is_empty()
            && o.len() <= 3
            && o.chars().all(|c| c.is_ascii_digit())
            && (o == "0" || !o.starts_with('0'))
            && o.parse::<u16>().is_ok_and(|n| n <= 255)
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.split('-')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
    };
    let labels: Vec<&str> = host.split('.').collect();
    let ipv4 = labels.len() == 4 && labels.iter().all(|l| octet(l));
    let name = labels.iter().all(|l| label(l))
        && labels.last().is_some_and(|last| last.starts_with(|c: char| c.is_ascii_lowercase()));
    let development = host == "localhost" || host == "127.0.0.1";
    if !port_ok || !(ipv4 || name) || !(development || (https && name)) {
        return None;
    }
    Some(url::Url::parse(value).ok()?.origin().ascii_serialization())
}

/// The embedding origins of a hotel, normalized and without repeats; a validation error names each bad entry.
fn embed_origins(c: &mut Checks, values: &[String]) -> Vec<String> {
    if values.len() > MAX_EMBED_ORIGINS {
        c.fail("bookingEmbedOrigins", format!("at most {MAX_EMBED_ORIGINS} origins"));
    }
    let mut origins: Vec<String> = Vec::new();
    for value in values {
        match embed_origin(value) {
            Some(origin) if !origins.contains(&origin) => origins.push(origin),
            Some(_) => {}
            None => c.fail(
                "bookingEmbedOrigins",
                format!(
                    "{value:?} is not an origin such as https://www.example.com (https and a host name, an optional \
                     port, no path; plain http only for localhost)"
                ),
            ),
        }
    }
    origins
}

/// Checks a hotel before it is written, and puts its embedding origins in their normal form.
fn validate(h: &mut Hotel) -> Result<()> {
    let mut c = Checks::new();
    c.line("name", &h.name, 200);
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
        c.opt_line(field, value.as_deref(), 200);
    }
    if let Some(country) = &a.country {
        if country.len() != 2 || !country.chars().all(|ch| ch.is_ascii_uppercase()) {
            c.fail("country", "must be an ISO 3166-1 alpha-2 code such as PT");
        }
    }
    h.booking_embed_origins = embed_origins(&mut c, &h.booking_embed_origins);
    c.finish()
}

pub async fn create(db: &Db, actor: &Actor, input: HotelIn) -> Result<Hotel> {
    actor.require(crate::domain::access::Task::Administer)?;
    create_as(db, Writer::for_actor(actor), &actor.organization_id, input).await
}

/// Creates a hotel in an organization, by the service's administrator (the command line, benchmarks).
pub async fn create_for_organization(db: &Db, organization_id: &str, input: HotelIn) -> Result<Hotel> {
    create_as(db, Writer::CommandLine, organization_id, input).await
}

/// Creates a hotel in an organization, by `writer` (the operator check is the caller's).
pub async fn create_as(db: &Db, writer: Writer, organization_id: &str, input: HotelIn) -> Result<Hotel> {
    let at = now();
    let mut hotel = Hotel {
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
        booking_embed_origins: input.booking_embed_origins.unwrap_or_default(),
        created_at: at,
        updated_at: at,
    };
    validate(&mut hotel)?;
    let mut tx = Change::begin_as(db, writer).await?;
    store::hotels::insert(tx.conn(), organization_id, &hotel).await?;
    tx.created(organization_id, &hotel).await?;
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
    actor.require(crate::domain::access::Task::ConfigureHotel)?;
    if !actor.sees_hotel(Some(id)) {
        return Err(Error::NotFound("hotel"));
    }
    let mut tx = Change::begin(db, actor).await?;
    let mut h = store::hotels::get(tx.conn(), &actor.organization_id, id).await?.ok_or(Error::NotFound("hotel"))?;
    let before = h.clone();
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
        booking_embed_origins => h.booking_embed_origins,
    );
    h.name = clean(&h.name);
    h.updated_at = now();
    validate(&mut h)?;
    // Money already kept is in the old currency: a folio's lines, payments and invoices cannot change theirs.
    if h.currency != before.currency && store::folios::hotel_has_lines(tx.conn(), &h.id).await? {
        return Err(Error::Conflict(format!(
            "the hotel's folios hold money in {}: its currency cannot change",
            before.currency
        )));
    }
    store::hotels::update(tx.conn(), &actor.organization_id, &h).await?;
    tx.updated(&actor.organization_id, &before, &h).await?;
    tx.commit().await?;
    Ok(h)
}

/// The hotel a request names (or, when it names none, the key's pin): 403 when a pinned key names another hotel,
/// 404 when the hotel is not the organization's, and a validation error when none is named at all.
pub async fn require_named(conn: &mut store::Conn, actor: &Actor, requested: Option<&str>) -> Result<Hotel> {
    let hotel_id = actor.require_hotel(requested)?;
    store::hotels::get(conn, &actor.organization_id, &hotel_id).await?.ok_or(Error::NotFound("hotel"))
}

/// A hotel filter of a list: like [`require_named`], but naming no hotel is allowed (all visible hotels).
pub async fn optional_filter(conn: &mut store::Conn, actor: &Actor, requested: Option<&str>) -> Result<Option<String>> {
    match actor.resolve_hotel(requested)? {
        Some(hotel_id) => {
            store::hotels::get(conn, &actor.organization_id, &hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
            Ok(Some(hotel_id))
        }
        None => Ok(None),
    }
}

impl Record for Hotel {
    const KIND: RecordKind = RecordKind::Hotel;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::embed_origin;

    #[test]
    fn embedding_origins_are_scheme_host_and_port_only() {
        assert_eq!(embed_origin("https://www.example.com").as_deref(), Some("https://www.example.com"));
        assert_eq!(embed_origin("https://www.example.com/").as_deref(), Some("https://www.example.com"));
        assert_eq!(embed_origin("https://example.com:443").as_deref(), Some("https://example.com"));
        assert_eq!(embed_origin("http://127.0.0.1:8000").as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(embed_origin("http://localhost:65535").as_deref(), Some("http://localhost:65535"));
        assert_eq!(embed_origin("https://localhost").as_deref(), Some("https://localhost"));
        assert_eq!(embed_origin("https://x1.a-b.c").as_deref(), Some("https://x1.a-b.c"));
        for bad in [
            "http://www.example.com",
            "http://example.com:8080",
            "https://93.184.216.34",
            "http://93.184.216.34",
            "https://10.0.0.1:8443",
            "http://127.0.0.2",
            "http://localhost.example.com",
            "",
            " https://example.com",
            "HTTPS://WWW.Example.com",
            "https://example.com:0",
            "https://example.com:65536",
            "https://example.com:080",
            "https://256.1.1.1",
            "https://1.2.3",
            "https://a.1",
            "https://xn--a.com",
            "https://-a.com",
            "https://example.com//",
            "example.com",
            "https://example.com/book",
            "https://example.com/?x",
            "https://example.com#top",
            "https://user@example.com",
            "https://*.example.com",
            "ftp://example.com",
            "javascript:alert(1)",
            "https://exa mple.com",
            "https://example.com 'unsafe-inline'",
        ] {
            assert_eq!(embed_origin(bad), None, "{bad:?}");
        }
    }
}
