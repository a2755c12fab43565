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
    // The hotel's organization leads the index of a hotel's reservations by status and check-in date
    // (`reservations_hotel_status`), which answers this without reading the table; without it, every reservation of
    // the hotel was read (the only index that starts with the hotel is by length of stay).
    let organization = Sql::select()
        .column(Hotels::OrganizationId)
        .from(Hotels::Table)
        .and_where(Expr::col(Hotels::Id).eq(hotel_id))
        .take();
    let select = Sql::select()
        .column(R::Id)
        .from(R::Table)
        .and_where(Expr::col(R::OrganizationId).in_subquery(organization))
        .and_where(Expr::col(R::HotelId).eq(hotel_id))
        .and_where(Expr::col(R::Status).eq(status))
        .and_where(Expr::col(R::CheckInDate).eq(format_date(date)))
        .take();
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter().map(|row| row.try_get("id")).collect()
}

/// Posts the unposted lines of a hotel's folios dated `through` or earlier: how many.
///
/// The lines are found from the date: every close posts all a hotel's lines through its date, so the unposted lines
/// dated through a business date are about a day's lines of the hotels not closed yet, whatever the size of the
/// history. The index on the date of the unposted lines (`folio_lines_unposted`, migration 0028) is on an expression
/// (the date while the line is unposted, NULL once posted) and not a partial index: PostgreSQL keeps statistics of an
/// index's expression, and so knows the range is small; with a date and a posted instant it would take them as
/// independent (most lines dated through the date, most lines unposted: the future's) and read every folio of the
/// hotel, as it did when the lines were found from the hotel's folios.
pub async fn post_through(conn: &mut Conn, hotel_id: &str, through: NaiveDate, at: DateTime<Utc>) -> StoreResult<u64> {
    let of_hotel = Sql::select()
        .expr(Expr::cust("1"))
        .from(Folios::Table)
        .inner_join(R::Table, Expr::col((R::Table, R::Id)).equals((Folios::Table, Folios::ReservationId)))
        .and_where(Expr::col((Folios::Table, Folios::Id)).equals((L::Table, L::FolioId)))
        .and_where(Expr::col((R::Table, R::HotelId)).eq(hotel_id))
        .take();
    let unposted_date = Expr::case(Expr::col((L::Table, L::PostedAt)).is_null(), Expr::col((L::Table, L::ServiceDate)));
    let update = Sql::update()
        .table(L::Table)
        .value(L::PostedAt, format_ts(at))
        .and_where(Expr::expr(unposted_date).lte(format_date(through)))
        .and_where(Expr::col((L::Table, L::PostedAt)).is_null())
        .and_where(Expr::exists(of_hotel))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected())
}
