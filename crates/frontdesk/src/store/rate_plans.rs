//! Rate plans.

use super::sql::Conditions;
use super::{bool_int, format_ts, Engine, RowExt, StoreResult};
use crate::domain::rate_plans::RatePlan;
use crate::store::{query, query_with, Conn, Row};

const COLUMNS: &str = "id, hotel_id, room_type_id, name, code, currency, active, created_at, updated_at";

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
    query(
        "INSERT INTO rate_plans (id, organization_id, hotel_id, room_type_id, name, code, currency, active, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&p.id)
    .bind(organization_id)
    .bind(&p.hotel_id)
    .bind(&p.room_type_id)
    .bind(&p.name)
    .bind(&p.code)
    .bind(&p.currency)
    .bind(bool_int(p.active))
    .bind(format_ts(p.created_at))
    .bind(format_ts(p.updated_at))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, p: &RatePlan) -> StoreResult<()> {
    query(
        "UPDATE rate_plans SET room_type_id = $1, name = $2, code = $3, currency = $4, active = $5, updated_at = $6 \
         WHERE organization_id = $7 AND id = $8",
    )
    .bind(&p.room_type_id)
    .bind(&p.name)
    .bind(&p.code)
    .bind(&p.currency)
    .bind(bool_int(p.active))
    .bind(format_ts(p.updated_at))
    .bind(organization_id)
    .bind(&p.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<RatePlan>> {
    query(&format!("SELECT {COLUMNS} FROM rate_plans WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(rate_plan)
        .transpose()
}

pub async fn list(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    room_type_id: Option<&str>,
) -> StoreResult<Vec<RatePlan>> {
    let mut filter = Conditions::new(Engine::of(conn));
    filter.push("organization_id = ?", organization_id.to_string());
    filter.push("hotel_id = ?", hotel_id.to_string());
    if let Some(room_type_id) = room_type_id {
        filter.push("room_type_id = ?", room_type_id.to_string());
    }
    let sql = format!("SELECT {COLUMNS} FROM rate_plans{} ORDER BY name, id", filter.where_clause());
    query_with(&sql, filter).fetch_all(conn).await?.iter().map(rate_plan).collect()
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
    let mut filter = Conditions::new(Engine::of(conn));
    filter.push("organization_id = ?", organization_id.to_string());
    let placeholders: Vec<String> = ids.iter().map(|id| filter.bind(id.to_string())).collect();
    let sql = format!(
        "SELECT {COLUMNS} FROM rate_plans{} AND id IN ({}) ORDER BY id{}",
        filter.where_clause(),
        placeholders.join(", "),
        engine.lock_rows()
    );
    query_with(&sql, filter).fetch_all(conn).await?.iter().map(rate_plan).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM rate_plans WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
