//! Each hotel's business date and end of day, with the lease that lets one process close a day.

use chrono::{DateTime, NaiveDate, Utc};

use super::{format_date, format_ts, RowExt, StoreResult};
use crate::store::schema::{FolioLines as L, Folios, HotelBusinessDays as B, Hotels, Reservations as R};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, OnConflict, Sql};
use crate::store::Conn;

/// A hotel's business day as stored.
#[derive(Debug, Clone)]
pub struct BusinessDayRow {
    pub business_date: NaiveDate,
    pub last_run_at: Option<DateTime<Utc>>,
    /// What the last close did (JSON the domain wrote).
    pub last_run: Option<String>,
}

/// Every hotel: its organization and id.
pub async fn hotels(conn: &mut Conn) -> StoreResult<Vec<(String, String)>> {
    let select = Sql::select().columns([Hotels::OrganizationId, Hotels::Id]).from(Hotels::Table).take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter().map(|row| Ok((row.try_get("organization_id")?, row.try_get("id")?))).collect()
}

pub async fn get(conn: &mut Conn, hotel_id: &str) -> StoreResult<Option<BusinessDayRow>> {
    let select = Sql::select()
        .columns([B::BusinessDate, B::LastRunAt, B::LastRun])
        .from(B::Table)
        .and_where(Expr::col(B::HotelId).eq(hotel_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(BusinessDayRow {
            business_date: row.get_date("business_date")?,
            last_run_at: row.get_opt_ts("last_run_at")?,
            last_run: row.try_get("last_run")?,
        })
    })
    .transpose()
}

/// Makes a hotel's row, if it has none.
pub async fn ensure(conn: &mut Conn, hotel_id: &str, business_date: NaiveDate) -> StoreResult<()> {
    let mut insert = insert_row(
        B::Table,
        [(B::HotelId, Expr::val(hotel_id)), (B::BusinessDate, Expr::val(format_date(business_date)))],
    );
    insert.on_conflict(OnConflict::column(B::HotelId).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// Takes the lease on closing `business_date` until `until`, if nobody holds it: whether it was taken.
pub async fn take_lease(
    conn: &mut Conn,
    hotel_id: &str,
    business_date: NaiveDate,
    at: DateTime<Utc>,
    until: DateTime<Utc>,
) -> StoreResult<bool> {
    let update = Sql::update()
        .table(B::Table)
        .value(B::LeaseUntil, format_ts(until))
        .and_where(Expr::col(B::HotelId).eq(hotel_id))
        .and_where(Expr::col(B::BusinessDate).eq(format_date(business_date)))
        .and_where(Expr::col(B::LeaseUntil).is_null().or(Expr::col(B::LeaseUntil).lt(format_ts(at))))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// Moves the business date on, records what the close did and gives the lease up.
pub async fn close(
    conn: &mut Conn,
    hotel_id: &str,
    next: NaiveDate,
    at: DateTime<Utc>,
    summary: &str,
) -> StoreResult<()> {
    let update = Sql::update()
        .table(B::Table)
        .value(B::BusinessDate, format_date(next))
        .value(B::LeaseUntil, Option::<String>::None)
        .value(B::LastRunAt, format_ts(at))
        .value(B::LastRun, summary)
        .and_where(Expr::col(B::HotelId).eq(hotel_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// The reservations of a hotel arriving on `date` in `status`.
pub async fn arriving(conn: &mut Conn, hotel_id: &str, date: NaiveDate, status: &str) -> StoreResult<Vec<String>> {
    let select = Sql::select()
        .column(R::Id)
        .from(R::Table)
        .and_where(Expr::col(R::HotelId).eq(hotel_id))
        .and_where(Expr::col(R::CheckInDate).eq(format_date(date)))
        .and_where(Expr::col(R::Status).eq(status))
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter().map(|row| row.try_get("id")).collect()
}

/// Posts the unposted lines of a hotel's folios dated `through` or earlier: how many.
pub async fn post_through(conn: &mut Conn, hotel_id: &str, through: NaiveDate, at: DateTime<Utc>) -> StoreResult<u64> {
    let folios = Sql::select()
        .column((Folios::Table, Folios::Id))
        .from(Folios::Table)
        .inner_join(R::Table, Expr::col((R::Table, R::Id)).equals((Folios::Table, Folios::ReservationId)))
        .and_where(Expr::col((R::Table, R::HotelId)).eq(hotel_id))
        .take();
    let update = Sql::update()
        .table(L::Table)
        .value(L::PostedAt, format_ts(at))
        .and_where(Expr::col(L::PostedAt).is_null())
        .and_where(Expr::col(L::ServiceDate).lte(format_date(through)))
        .and_where(Expr::col(L::FolioId).in_subquery(folios))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected())
}
