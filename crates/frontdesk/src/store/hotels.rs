//! Hotels.

use super::{format_ts, RowExt, StoreResult};
use crate::model::hotels::{Address, Hotel};
use crate::store::schema::Hotels;
use crate::store::statement::{insert_row, one_of_organization, statement, Expr, ExprTrait, Order, Sql};
use crate::store::{Conn, Row};

/// The columns [`hotel`] reads (by name), and the organization's.
const COLUMNS: [Hotels; 17] = [
    Hotels::Id,
    Hotels::OrganizationId,
    Hotels::Name,
    Hotels::Timezone,
    Hotels::Currency,
    Hotels::CheckInTime,
    Hotels::CheckOutTime,
    Hotels::AddressLine1,
    Hotels::AddressLine2,
    Hotels::City,
    Hotels::PostalCode,
    Hotels::Region,
    Hotels::Country,
    Hotels::PublicBooking,
    Hotels::BookingEmbedOrigins,
    Hotels::CreatedAt,
    Hotels::UpdatedAt,
];

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

/// The columns an update writes (an insert writes them too, with the ones a record is created with).
fn written(h: &Hotel) -> [(Hotels, Expr); 14] {
    [
        (Hotels::Name, Expr::val(&h.name)),
        (Hotels::Timezone, Expr::val(&h.timezone)),
        (Hotels::Currency, Expr::val(&h.currency)),
        (Hotels::CheckInTime, Expr::val(&h.check_in_time)),
        (Hotels::CheckOutTime, Expr::val(&h.check_out_time)),
        (Hotels::AddressLine1, Expr::val(h.address.address_line1.clone())),
        (Hotels::AddressLine2, Expr::val(h.address.address_line2.clone())),
        (Hotels::City, Expr::val(h.address.city.clone())),
        (Hotels::PostalCode, Expr::val(h.address.postal_code.clone())),
        (Hotels::Region, Expr::val(h.address.region.clone())),
        (Hotels::Country, Expr::val(h.address.country.clone())),
        (Hotels::PublicBooking, Expr::val(h.public_booking)),
        (Hotels::BookingEmbedOrigins, Expr::val(h.booking_embed_origins.join(" "))),
        (Hotels::UpdatedAt, Expr::val(format_ts(h.updated_at))),
    ]
}

pub async fn insert(conn: &mut Conn, organization_id: &str, h: &Hotel) -> StoreResult<()> {
    let insert = insert_row(
        Hotels::Table,
        [
            (Hotels::Id, Expr::val(&h.id)),
            (Hotels::OrganizationId, Expr::val(organization_id)),
            (Hotels::CreatedAt, Expr::val(format_ts(h.created_at))),
        ]
        .into_iter()
        .chain(written(h)),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, h: &Hotel) -> StoreResult<()> {
    let update = Sql::update()
        .table(Hotels::Table)
        .values(written(h))
        .and_where(one_of_organization(Hotels::Id, &h.id, Hotels::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Hotel>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(Hotels::Table)
        .and_where(one_of_organization(Hotels::Id, id, Hotels::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(hotel).transpose()
}

pub async fn list(conn: &mut Conn, organization_id: &str) -> StoreResult<Vec<Hotel>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(Hotels::Table)
        .and_where(Expr::col(Hotels::OrganizationId).eq(organization_id))
        .order_by(Hotels::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(hotel).collect()
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
    let select = Sql::select()
        .columns(COLUMNS)
        .column(Hotels::AvailabilityVersion)
        .from(Hotels::Table)
        .and_where(Expr::col(Hotels::Id).eq(id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| Ok((row.try_get("organization_id")?, hotel(&row)?, row.try_get("availability_version")?))).transpose()
}
