//! Physical rooms.

use super::sql::Conditions;
use super::{format_ts, Engine, RowExt, StoreResult};
use crate::domain::rooms::{HousekeepingStatus, Room};
use crate::store::{query, query_with, Conn, Row};

const COLUMNS: &str = "id, hotel_id, room_type_id, name, floor, housekeeping_status, housekeeping_changed_at, \
     housekeeping_changed_by, created_at, updated_at";

fn room(row: &Row) -> StoreResult<Room> {
    let status: String = row.try_get("housekeeping_status")?;
    Ok(Room {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        room_type_id: row.try_get("room_type_id")?,
        name: row.try_get("name")?,
        floor: row.try_get("floor")?,
        housekeeping_status: HousekeepingStatus::parse(&status)
            .ok_or_else(|| super::Error::undecodable(format!("unknown housekeeping status {status}")))?,
        housekeeping_changed_at: row.get_opt_ts("housekeeping_changed_at")?,
        housekeeping_changed_by: row.try_get("housekeeping_changed_by")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, r: &Room) -> StoreResult<()> {
    query(
        "INSERT INTO rooms (id, organization_id, hotel_id, room_type_id, name, floor, housekeeping_status, \
         housekeeping_changed_at, housekeeping_changed_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&r.id)
    .bind(organization_id)
    .bind(&r.hotel_id)
    .bind(&r.room_type_id)
    .bind(&r.name)
    .bind(r.floor)
    .bind(r.housekeeping_status.as_str())
    .bind(r.housekeeping_changed_at.map(format_ts))
    .bind(&r.housekeeping_changed_by)
    .bind(format_ts(r.created_at))
    .bind(format_ts(r.updated_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, r: &Room) -> StoreResult<()> {
    query(
        "UPDATE rooms SET room_type_id = $1, name = $2, floor = $3, housekeeping_status = $4, \
         housekeeping_changed_at = $5, housekeeping_changed_by = $6, updated_at = $7 \
         WHERE organization_id = $8 AND id = $9",
    )
    .bind(&r.room_type_id)
    .bind(&r.name)
    .bind(r.floor)
    .bind(r.housekeeping_status.as_str())
    .bind(r.housekeeping_changed_at.map(format_ts))
    .bind(&r.housekeeping_changed_by)
    .bind(format_ts(r.updated_at))
    .bind(organization_id)
    .bind(&r.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Room>> {
    query(&format!("SELECT {COLUMNS} FROM rooms WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(room)
        .transpose()
}

pub async fn list(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: Option<&str>,
    room_type_id: Option<&str>,
) -> StoreResult<Vec<Room>> {
    let mut filter = Conditions::new(Engine::of(conn));
    filter.push("organization_id = ?", organization_id.to_string());
    if let Some(hotel_id) = hotel_id {
        filter.push("hotel_id = ?", hotel_id.to_string());
    }
    if let Some(room_type_id) = room_type_id {
        filter.push("room_type_id = ?", room_type_id.to_string());
    }
    let sql = format!("SELECT {COLUMNS} FROM rooms{} ORDER BY hotel_id, name, id", filter.where_clause());
    query_with(&sql, filter).fetch_all(conn).await?.iter().map(room).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM rooms WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Keeps one change of a room's housekeeping status (the room itself carries the latest).
pub async fn record_status_change(
    conn: &mut Conn,
    organization_id: &str,
    room: &Room,
    change_id: &str,
) -> StoreResult<()> {
    query(
        "INSERT INTO room_status_changes (id, organization_id, room_id, status, changed_at, changed_by) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(change_id)
    .bind(organization_id)
    .bind(&room.id)
    .bind(room.housekeeping_status.as_str())
    .bind(room.housekeeping_changed_at.map(format_ts))
    .bind(&room.housekeeping_changed_by)
    .execute(conn)
    .await?;
    Ok(())
}

/// The housekeeping changes of a room, newest first (at most `limit`): (status, when, by whom).
pub async fn status_changes(
    conn: &mut Conn,
    room_id: &str,
    limit: i64,
) -> StoreResult<Vec<(HousekeepingStatus, chrono::DateTime<chrono::Utc>, String)>> {
    let rows = query(
        "SELECT status, changed_at, changed_by FROM room_status_changes WHERE room_id = $1 \
         ORDER BY changed_at DESC, id DESC LIMIT $2",
    )
    .bind(room_id)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            let status: String = row.try_get("status")?;
            let status = HousekeepingStatus::parse(&status)
                .ok_or_else(|| super::Error::undecodable(format!("unknown housekeeping status {status}")))?;
            Ok((status, row.get_ts("changed_at")?, row.try_get("changed_by")?))
        })
        .collect()
}
