//! Room types.

use super::{format_ts, RowExt, StoreResult};
use crate::model::room_types::RoomType;
use crate::store::schema::RoomTypes as T;
use crate::store::statement::{insert_row, one_of_organization, statement, Expr, ExprTrait, Order, Sql};
use crate::store::{Conn, Row};

/// The columns [`room_type`] reads (by name).
const COLUMNS: [T; 9] = [
    T::Id,
    T::HotelId,
    T::Name,
    T::Description,
    T::MaxOccupancy,
    T::MaxAdults,
    T::MaxChildren,
    T::CreatedAt,
    T::UpdatedAt,
];

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
    let insert = insert_row(
        T::Table,
        [
            (T::Id, Expr::val(&t.id)),
            (T::OrganizationId, Expr::val(organization_id)),
            (T::HotelId, Expr::val(&t.hotel_id)),
            (T::Name, Expr::val(&t.name)),
            (T::Description, Expr::val(t.description.clone())),
            (T::MaxOccupancy, Expr::val(t.max_occupancy)),
            (T::MaxAdults, Expr::val(t.max_adults)),
            (T::MaxChildren, Expr::val(t.max_children)),
            (T::CreatedAt, Expr::val(format_ts(t.created_at))),
            (T::UpdatedAt, Expr::val(format_ts(t.updated_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, t: &RoomType) -> StoreResult<()> {
    let update = Sql::update()
        .table(T::Table)
        .values([
            (T::Name, Expr::val(&t.name)),
            (T::Description, Expr::val(t.description.clone())),
            (T::MaxOccupancy, Expr::val(t.max_occupancy)),
            (T::MaxAdults, Expr::val(t.max_adults)),
            (T::MaxChildren, Expr::val(t.max_children)),
            (T::UpdatedAt, Expr::val(format_ts(t.updated_at))),
        ])
        .and_where(one_of_organization(T::Id, &t.id, T::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<RoomType>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(T::Table)
        .and_where(one_of_organization(T::Id, id, T::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(room_type).transpose()
}

pub async fn list(conn: &mut Conn, organization_id: &str, hotel_id: Option<&str>) -> StoreResult<Vec<RoomType>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(T::Table).and_where(Expr::col(T::OrganizationId).eq(organization_id));
    if let Some(hotel_id) = hotel_id {
        select.and_where(Expr::col(T::HotelId).eq(hotel_id));
    }
    select.order_by(T::HotelId, Order::Asc).order_by(T::Name, Order::Asc).order_by(T::Id, Order::Asc);
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(room_type).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(T::Table)
        .and_where(one_of_organization(T::Id, id, T::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
