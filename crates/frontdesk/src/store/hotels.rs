//! Hotels.

use super::{bool_int, format_ts, RowExt, StoreResult};
use crate::domain::hotels::{Address, Hotel};
use crate::store::{query, Conn, Row};

const COLUMNS: &str = "id, organization_id, name, timezone, currency, check_in_time, check_out_time, \
     address_line1, address_line2, city, postal_code, region, country, public_booking, booking_embed_origins, \
     created_at, updated_at";

fn hotel(row: &Row) -> StoreResult<Hotel> {
    Ok(Hotel {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        timezone: row.try_get("timezone")?,
        currency: row.try_get("currency")?,
        check_in_time: row.try_get("check_in_time")?,
        check_out_time: row.try_get("check_out_time")?,
        address: Address {
            address_line1: row.try_get("address_line1")?,
            address_line2: row.try_get("address_line2")?,
            city: row.try_get("city")?,
            postal_code: row.try_get("postal_code")?,
            region: row.try_get("region")?,
            country: row.try_get("country")?,
        },
        public_booking: row.get_bool("public_booking")?,
        booking_embed_origins: row
            .try_get::<String, _>("booking_embed_origins")?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, h: &Hotel) -> StoreResult<()> {
    query(&format!(
        "INSERT INTO hotels ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
    ))
    .bind(&h.id)
    .bind(organization_id)
    .bind(&h.name)
    .bind(&h.timezone)
    .bind(&h.currency)
    .bind(&h.check_in_time)
    .bind(&h.check_out_time)
    .bind(&h.address.address_line1)
    .bind(&h.address.address_line2)
    .bind(&h.address.city)
    .bind(&h.address.postal_code)
    .bind(&h.address.region)
    .bind(&h.address.country)
    .bind(bool_int(h.public_booking))
    .bind(h.booking_embed_origins.join(" "))
    .bind(format_ts(h.created_at))
    .bind(format_ts(h.updated_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, h: &Hotel) -> StoreResult<()> {
    query(
        "UPDATE hotels SET name = $1, timezone = $2, currency = $3, check_in_time = $4, check_out_time = $5, \
         address_line1 = $6, address_line2 = $7, city = $8, postal_code = $9, region = $10, country = $11, \
         public_booking = $12, booking_embed_origins = $13, updated_at = $14 WHERE organization_id = $15 AND id = $16",
    )
    .bind(&h.name)
    .bind(&h.timezone)
    .bind(&h.currency)
    .bind(&h.check_in_time)
    .bind(&h.check_out_time)
    .bind(&h.address.address_line1)
    .bind(&h.address.address_line2)
    .bind(&h.address.city)
    .bind(&h.address.postal_code)
    .bind(&h.address.region)
    .bind(&h.address.country)
    .bind(bool_int(h.public_booking))
    .bind(h.booking_embed_origins.join(" "))
    .bind(format_ts(h.updated_at))
    .bind(organization_id)
    .bind(&h.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Hotel>> {
    query(&format!("SELECT {COLUMNS} FROM hotels WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(hotel)
        .transpose()
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Hotel>> {
    query(&format!("SELECT {COLUMNS} FROM hotels WHERE organization_id = $1 ORDER BY id"))
        .bind(organization_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(hotel)
        .collect()
}

/// [`get_public`] as read at most [`super::recent::MAX_AGE`] ago and not before a write of this process.
pub async fn get_public_recent(db: &super::Db, id: &str) -> StoreResult<Option<(String, Hotel, i64)>> {
    db.recent
        .public_hotels
        .get_or_read(&db.writes, &id.to_string(), || async { get_public(&mut *db.read().await?, id).await })
        .await
}

/// A hotel by id alone, for the public endpoints, which have no credential to scope by: its organization, the
/// hotel, and its availability version (bumped by the database with every change a search depends on; see
/// migration 0008).
pub async fn get_public(conn: &mut Conn, id: &str) -> StoreResult<Option<(String, Hotel, i64)>> {
    let row = query(&format!("SELECT {COLUMNS}, availability_version FROM hotels WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.map(|row| Ok((row.try_get("organization_id")?, hotel(&row)?, row.try_get("availability_version")?))).transpose()
}
