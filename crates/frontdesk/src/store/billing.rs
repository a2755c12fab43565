//! A hotel's billing settings: one JSON document per hotel, which the domain (`domain::finance::billing`) reads and
//! writes whole.

use chrono::{DateTime, Utc};

use super::{format_ts, RowExt, StoreResult};
use crate::store::schema::HotelBillingSettings as B;
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, OnConflict, Sql};
use crate::store::Conn;

/// The settings document of a hotel and when it was saved, if it has saved one.
pub async fn settings(conn: &mut Conn, hotel_id: &str) -> StoreResult<Option<(String, DateTime<Utc>)>> {
    let select = Sql::select()
        .columns([B::Settings, B::UpdatedAt])
        .from(B::Table)
        .and_where(Expr::col(B::HotelId).eq(hotel_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| Ok((row.try_get("settings")?, row.get_ts("updated_at")?))).transpose()
}

pub async fn save(conn: &mut Conn, hotel_id: &str, settings: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let mut upsert = insert_row(
        B::Table,
        [
            (B::HotelId, Expr::val(hotel_id)),
            (B::Settings, Expr::val(settings)),
            (B::UpdatedAt, Expr::val(format_ts(at))),
        ],
    );
    upsert.on_conflict(OnConflict::column(B::HotelId).update_columns([B::Settings, B::UpdatedAt]).to_owned());
    statement(conn.engine(), &upsert).execute(conn).await?;
    Ok(())
}
