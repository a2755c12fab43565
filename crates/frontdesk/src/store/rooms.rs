//! Physical rooms.

use super::{format_ts, RowExt, StoreResult};
use crate::model::rooms::{HousekeepingStatus, Room};
use crate::store::schema::{RoomStatusChanges, Rooms};
use crate::store::statement::{insert_row, one_of_organization, rows, statement, Expr, ExprTrait, Order, Sql};
use crate::store::{Conn, Row};

/// The columns [`room`] reads (by name).
const COLUMNS: [Rooms; 10] = [
    Rooms::Id,
    Rooms::HotelId,
    Rooms::RoomTypeId,
    Rooms::Name,
    Rooms::Floor,
    Rooms::HousekeepingStatus,
    Rooms::HousekeepingChangedAt,
    Rooms::HousekeepingChangedBy,
    Rooms::CreatedAt,
    Rooms::UpdatedAt,
];

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

/// The columns an update writes (an insert writes them too, with the ones a record is created with).
fn written(r: &Room) -> [(Rooms, Expr); 7] {
    [
        (Rooms::RoomTypeId, Expr::val(&r.room_type_id)),
        (Rooms::Name, Expr::val(&r.name)),
        (Rooms::Floor, Expr::val(r.floor)),
        (Rooms::HousekeepingStatus, Expr::val(r.housekeeping_status.as_str())),
        (Rooms::HousekeepingChangedAt, Expr::val(r.housekeeping_changed_at.map(format_ts))),
        (Rooms::HousekeepingChangedBy, Expr::val(r.housekeeping_changed_by.clone())),
        (Rooms::UpdatedAt, Expr::val(format_ts(r.updated_at))),
    ]
}

pub async fn insert(conn: &mut Conn, organization_id: &str, r: &Room) -> StoreResult<()> {
    let insert = insert_row(
        Rooms::Table,
        [
            (Rooms::Id, Expr::val(&r.id)),
            (Rooms::OrganizationId, Expr::val(organization_id)),
            (Rooms::HotelId, Expr::val(&r.hotel_id)),
            (Rooms::CreatedAt, Expr::val(format_ts(r.created_at))),
        ]
        .into_iter()
        .chain(written(r)),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, r: &Room) -> StoreResult<()> {
    let update = Sql::update()
        .table(Rooms::Table)
        .values(written(r))
        .and_where(one_of_organization(Rooms::Id, &r.id, Rooms::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Room>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(Rooms::Table)
        .and_where(one_of_organization(Rooms::Id, id, Rooms::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(room).transpose()
}

pub async fn list(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: Option<&str>,
    room_type_id: Option<&str>,
) -> StoreResult<Vec<Room>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(Rooms::Table).and_where(Expr::col(Rooms::OrganizationId).eq(organization_id));
    if let Some(hotel_id) = hotel_id {
        select.and_where(Expr::col(Rooms::HotelId).eq(hotel_id));
    }
    if let Some(room_type_id) = room_type_id {
        select.and_where(Expr::col(Rooms::RoomTypeId).eq(room_type_id));
    }
    select.order_by(Rooms::HotelId, Order::Asc).order_by(Rooms::Name, Order::Asc).order_by(Rooms::Id, Order::Asc);
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(room).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(Rooms::Table)
        .and_where(one_of_organization(Rooms::Id, id, Rooms::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// Keeps one change of a room's housekeeping status (the room itself carries the latest).
pub async fn record_status_change(
    conn: &mut Conn,
    organization_id: &str,
    room: &Room,
    change_id: &str,
) -> StoreResult<()> {
    let insert = insert_row(
        RoomStatusChanges::Table,
        [
            (RoomStatusChanges::Id, Expr::val(change_id)),
            (RoomStatusChanges::OrganizationId, Expr::val(organization_id)),
            (RoomStatusChanges::RoomId, Expr::val(&room.id)),
            (RoomStatusChanges::Status, Expr::val(room.housekeeping_status.as_str())),
            (RoomStatusChanges::ChangedAt, Expr::val(room.housekeeping_changed_at.map(format_ts))),
            (RoomStatusChanges::ChangedBy, Expr::val(room.housekeeping_changed_by.clone())),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// The housekeeping changes of a room, newest first (at most `limit`): (status, when, by whom).
pub async fn status_changes(
    conn: &mut Conn,
    room_id: &str,
    limit: i64,
) -> StoreResult<Vec<(HousekeepingStatus, chrono::DateTime<chrono::Utc>, String)>> {
    let select = Sql::select()
        .columns([RoomStatusChanges::Status, RoomStatusChanges::ChangedAt, RoomStatusChanges::ChangedBy])
        .from(RoomStatusChanges::Table)
        .and_where(Expr::col(RoomStatusChanges::RoomId).eq(room_id))
        .order_by(RoomStatusChanges::ChangedAt, Order::Desc)
        .order_by(RoomStatusChanges::Id, Order::Desc)
        .limit(rows(limit))
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter()
        .map(|row| {
            let status: String = row.try_get("status")?;
            let status = HousekeepingStatus::parse(&status)
                .ok_or_else(|| super::Error::undecodable(format!("unknown housekeeping status {status}")))?;
            Ok((status, row.get_ts("changed_at")?, row.try_get("changed_by")?))
        })
        .collect()
}
