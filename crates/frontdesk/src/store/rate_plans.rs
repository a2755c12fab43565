//! Rate plans.

use super::{format_ts, Engine, RowExt, StoreResult};
use crate::model::rate_plans::RatePlan;
use crate::store::schema::RatePlans as P;
use crate::store::statement::{insert_row, one_of_organization, statement, Expr, ExprTrait, Order, RowLocks, Sql};
use crate::store::{Conn, Row};

/// The columns [`rate_plan`] reads (by name).
const COLUMNS: [P; 9] =
    [P::Id, P::HotelId, P::RoomTypeId, P::Name, P::Code, P::Currency, P::Active, P::CreatedAt, P::UpdatedAt];

fn rate_plan(row: &Row) -> StoreResult<RatePlan> {
    Ok(RatePlan {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        room_type_id: row.try_get("room_type_id")?,
        name: row.try_get("name")?,
        code: row.try_get("code")?,
        currency: row.try_get("currency")?,
        active: row.get_bool("active")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, p: &RatePlan) -> StoreResult<()> {
    let insert = insert_row(
        P::Table,
        [
            (P::Id, Expr::val(&p.id)),
            (P::OrganizationId, Expr::val(organization_id)),
            (P::HotelId, Expr::val(&p.hotel_id)),
            (P::RoomTypeId, Expr::val(p.room_type_id.clone())),
            (P::Name, Expr::val(&p.name)),
            (P::Code, Expr::val(p.code.clone())),
            (P::Currency, Expr::val(&p.currency)),
            (P::Active, Expr::val(p.active)),
            (P::CreatedAt, Expr::val(format_ts(p.created_at))),
            (P::UpdatedAt, Expr::val(format_ts(p.updated_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, p: &RatePlan) -> StoreResult<()> {
    let update = Sql::update()
        .table(P::Table)
        .values([
            (P::RoomTypeId, Expr::val(p.room_type_id.clone())),
            (P::Name, Expr::val(&p.name)),
            (P::Code, Expr::val(p.code.clone())),
            (P::Currency, Expr::val(&p.currency)),
            (P::Active, Expr::val(p.active)),
            (P::UpdatedAt, Expr::val(format_ts(p.updated_at))),
        ])
        .and_where(one_of_organization(P::Id, &p.id, P::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<RatePlan>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(P::Table)
        .and_where(one_of_organization(P::Id, id, P::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(rate_plan).transpose()
}

pub async fn list(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    room_type_id: Option<&str>,
) -> StoreResult<Vec<RatePlan>> {
    let mut select = Sql::select();
    select
        .columns(COLUMNS)
        .from(P::Table)
        .and_where(Expr::col(P::OrganizationId).eq(organization_id))
        .and_where(Expr::col(P::HotelId).eq(hotel_id));
    if let Some(room_type_id) = room_type_id {
        select.and_where(Expr::col(P::RoomTypeId).eq(room_type_id));
    }
    select.order_by(P::Name, Order::Asc).order_by(P::Id, Order::Asc);
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(rate_plan).collect()
}

/// The organization's rate plans among `ids`, locked until the transaction ends on engines that need it, so that
/// concurrent writers of the same plans' daily rates take turns.
pub async fn lock_many(
    conn: &mut Conn,
    engine: Engine,
    organization_id: &str,
    ids: &[&str],
) -> StoreResult<Vec<RatePlan>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .columns(COLUMNS)
        .from(P::Table)
        .and_where(Expr::col(P::OrganizationId).eq(organization_id))
        .and_where(Expr::col(P::Id).is_in(ids.iter().copied()))
        .order_by(P::Id, Order::Asc)
        .lock_for_writing()
        .take();
    statement(engine, &select).fetch_all(conn).await?.iter().map(rate_plan).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(P::Table)
        .and_where(one_of_organization(P::Id, id, P::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
