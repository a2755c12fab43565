//! Room types.

use super::sql::Conditions;
use super::{format_ts, Engine, RowExt, StoreResult};
use crate::domain::room_types::RoomType;
use crate::store::{query, query_with, Conn, Row};

const COLUMNS: &str =
    "id, hotel_id, name, description, max_occupancy, max_adults, max_children, created_at, updated_at";

fn room_type(row: &Row) -> StoreResult<RoomType> {
    Ok(RoomType {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        max_occupancy: row.try_get("max_occupancy")?,
        max_adults: row.try_get("max_adults")?,
        max_children: row.try_get("max_children")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, t: &RoomType) -> StoreResult<()> {
    query(
        "INSERT INTO room_types (id, organization_id, hotel_id, name, description, max_occupancy, max_adults, \
         max_children, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&t.id)
    .bind(organization_id)
    .bind(&t.hotel_id)
    .bind(&t.name)
    .bind(&t.description)
    .bind(t.max_occupancy)
    .bind(t.max_adults)
    .bind(t.max_children)
    .bind(format_ts(t.created_at))
    .bind(format_ts(t.updated_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, t: &RoomType) -> StoreResult<()> {
    query(
        "UPDATE room_types SET name = $1, description = $2, max_occupancy = $3, max_adults = $4, max_children = $5, \
         updated_at = $6 WHERE organization_id = $7 AND id = $8",
    )
    .bind(&t.name)
    .bind(&t.description)
    .bind(t.max_occupancy)
    .bind(t.max_adults)
    .bind(t.max_children)
    .bind(format_ts(t.updated_at))
    .bind(organization_id)
    .bind(&t.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<RoomType>> {
    query(&format!("SELECT {COLUMNS} FROM room_types WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(room_type)
        .transpose()
}

pub async fn list(conn: &mut Conn, organization_id: &str, hotel_id: Option<&str>) -> StoreResult<Vec<RoomType>> {
    let mut filter = Conditions::new(Engine::of(conn));
    filter.push("organization_id = ?", organization_id.to_string());
    if let Some(hotel_id) = hotel_id {
        filter.push("hotel_id = ?", hotel_id.to_string());
    }
    let sql = format!("SELECT {COLUMNS} FROM room_types{} ORDER BY hotel_id, name, id", filter.where_clause());
    query_with(&sql, filter).fetch_all(conn).await?.iter().map(room_type).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM room_types WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
