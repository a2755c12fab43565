//! Lists of reservations: the filters of the REST API and the dashboard as SQL, a page with its total, a streamed
//! list, counts, and what bounds a search by stay dates (the longest stay on record).

use chrono::{DateTime, NaiveDate, Utc};
use sea_query::QueryStatementBuilder;

use super::{reservation, AFTER_COLUMNS, COLUMNS};
use crate::model::reservations::{Reservation, ReservationStatus, Source};
use crate::store::format_date;
use crate::store::reservation_counts;
use crate::store::schema::Reservations as R;
use crate::store::sql::Conditions;
use crate::store::statement::{
    order_and_page, rendered, statement, Asterisk, Cond, Expr, ExprTrait, Func, SelectStatement, Sql,
};
use crate::store::Conn;
use crate::store::Page;
use crate::store::{self, format_ts, Db, Engine, StoreResult};
use crate::store::{FromPortableRow, PortableRow};

/// The filters of a list of reservations, validated (the REST list's and the dashboard's).
#[derive(Debug, Default, Clone)]
pub struct StayFilter {
    pub hotel_id: Option<String>,
    pub guest_id: Option<String>,
    /// A normalised reference (upper case, no spaces or hyphens).
    pub reference: Option<String>,
    pub start_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
    pub stay_date_from: Option<NaiveDate>,
    pub stay_date_to: Option<NaiveDate>,
    /// A lower bound on check-in dates. Without one, a `stay_date_from` is bounded by the longest stay on record in
    /// the list's own statement, which lets the stay-window index start near the window instead of at the beginning
    /// of time.
    pub check_in_from: Option<NaiveDate>,
    /// Only these statuses (empty: any). The dashboard's filters; the REST list has none of these.
    pub statuses: Vec<ReservationStatus>,
    pub source: Option<Source>,
    /// Only reservations of these guests (an empty list matches nothing).
    pub guest_ids: Option<Vec<String>>,
    /// Stays that check in on exactly this date.
    pub check_in_date: Option<NaiveDate>,
    /// Stays that check out on exactly this date.
    pub check_out_date: Option<NaiveDate>,
}

/// Reservations of a hotel in one status (the dashboard's badge of booking requests waiting), from the counts.
pub async fn count_in_status(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    status: ReservationStatus,
) -> StoreResult<i64> {
    let filter = StayFilter { hotel_id: Some(hotel_id.to_string()), statuses: vec![status], ..StayFilter::default() };
    let select = Sql::select().expr_as(reservation_counts::total(organization_id, &filter), "n").take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("n")
}

/// The longest stay (in nights) among the organization's reservations, of one hotel when given.
pub async fn longest_stay(conn: &mut Conn, organization_id: &str, hotel_id: Option<&str>) -> StoreResult<i64> {
    let select = Sql::select()
        .expr_as(Expr::col(R::Nights).max(), "n")
        .from(R::Table)
        .and_where(scope(organization_id, hotel_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    Ok(row.try_get::<Option<i64>, _>("n")?.unwrap_or(0))
}

/// The reservations of one hotel, or of the organization.
fn scope(organization_id: &str, hotel_id: Option<&str>) -> Expr {
    match hotel_id {
        Some(hotel_id) => Expr::col(R::HotelId).eq(hotel_id),
        None => Expr::col(R::OrganizationId).eq(organization_id),
    }
}

/// The longest stay that can touch a window starting on `from`: the bound is read in the statement that needs it
/// from the `(hotel_id, nights)` index (one index descent), so it is always exact and costs no statement of its own.
fn check_in_bound(engine: Engine, from: String, scope: Expr) -> Expr {
    let longest = Sql::select()
        .expr(Func::coalesce([Expr::col(R::Nights).max(), Expr::cust("0")]))
        .from(R::Table)
        .and_where(scope)
        .take();
    let longest = Expr::SubQuery(None, Box::new(longest.into_sub_query_statement()));
    let earliest = match engine {
        // Date arithmetic is each engine's own: SQLite's `date()` modifiers, PostgreSQL's `date - integer`.
        Engine::Sqlite => Expr::cust_with_exprs("date(?, '-' || ? || ' days')", [Expr::val(from), longest]),
        Engine::Postgres => Expr::val(from).cast_as("DATE").sub(longest.cast_as("INTEGER")),
    };
    Expr::col(R::CheckInDate).gte(earliest)
}

/// The conditions of a list of reservations.
fn filter(engine: Engine, organization_id: &str, f: &StayFilter, page: &Page) -> Cond {
    let mut cond = Cond::all();
    // A few guests' stays are found through the guest index. SQLite's planner, which has no statistics, would rather
    // read the whole hotel in check-in order for the sake of the ORDER BY; `+column` keeps a term off any index.
    let (organization, hotel) = match (engine, &f.guest_ids) {
        (Engine::Sqlite, Some(_)) => (Expr::cust(r#"+"organization_id""#), Expr::cust(r#"+"hotel_id""#)),
        _ => (Expr::col(R::OrganizationId), Expr::col(R::HotelId)),
    };
    cond = cond.add(organization.eq(organization_id));
    if let Some(v) = &f.hotel_id {
        cond = cond.add(hotel.eq(v));
    }
    if let Some(v) = &f.guest_id {
        cond = cond.add(Expr::col(R::GuestId).eq(v));
    }
    if let Some(v) = &f.reference {
        cond = cond.add(Expr::col(R::Reference).eq(v));
    }
    if let Some(v) = f.start_time {
        cond = cond.add(Expr::col(R::EndTime).gt(format_ts(v)));
    }
    if let Some(v) = f.end_time {
        cond = cond.add(Expr::col(R::StartTime).lte(format_ts(v)));
    }
    match (f.check_in_from, f.stay_date_from) {
        (Some(v), _) => cond = cond.add(Expr::col(R::CheckInDate).gte(format_date(v))),
        (None, Some(from)) => {
            cond = cond.add(check_in_bound(engine, format_date(from), scope(organization_id, f.hotel_id.as_deref())))
        }
        (None, None) => {}
    }
    if let Some(v) = f.stay_date_from {
        cond = cond.add(Expr::col(R::CheckOutDate).gt(format_date(v)));
    }
    if let Some(v) = f.stay_date_to {
        cond = cond.add(Expr::col(R::CheckInDate).lte(format_date(v)));
    }
    if let Some(v) = f.check_in_date {
        cond = cond.add(Expr::col(R::CheckInDate).eq(format_date(v)));
    }
    if let Some(v) = f.check_out_date {
        cond = cond.add(Expr::col(R::CheckOutDate).eq(format_date(v)));
    }
    if !f.statuses.is_empty() {
        cond = cond.add(Expr::col(R::Status).is_in(f.statuses.iter().map(|s| s.as_str())));
    }
    if let Some(v) = f.source {
        cond = cond.add(Expr::col(R::Source).eq(v.as_str()));
    }
    if let Some(ids) = &f.guest_ids {
        cond = cond.add(Expr::col(R::GuestId).is_in(ids.iter().map(String::as_str)));
    }
    if let Some(ids) = &page.ids {
        cond = cond.add(Expr::col(R::Id).is_in(ids.iter().map(String::as_str)));
    }
    cond
}

/// How many reservations match: from the counts where they answer ([`reservation_counts::answers`]), else counted.
pub async fn count(db: &Db, organization_id: &str, filter: &StayFilter, page: &Page) -> StoreResult<i64> {
    let counted = if reservation_counts::answers(filter, page) {
        Sql::select().expr_as(reservation_counts::total(organization_id, filter), "n").take()
    } else {
        Sql::select()
            .expr_as(Expr::col(Asterisk).count(), "n")
            .from(R::Table)
            .cond_where(self::filter(db.engine(), organization_id, filter, page))
            .take()
    };
    let (sql, values) = rendered(db.engine(), &counted)?;
    store::count(db, &sql, values).await
}

/// Most rows of a page read in one statement with its total ([`page_with_total`]); larger pages are streamed.
pub const PAGE_IN_ONE_STATEMENT: i64 = 1000;

/// A page of the matches and how many match in all, in one statement (the total is a subquery). The total is
/// `None` when the page is empty and skipped rows: no row carried it.
pub async fn page_with_total(
    db: &Db,
    organization_id: &str,
    filter: &StayFilter,
    page: &Page,
) -> StoreResult<(Vec<Reservation>, Option<i64>)> {
    let engine = db.engine();
    let select = page_statement(engine, organization_id, filter, page);
    let rows = statement(engine, &select).fetch_records::<PageRow>(&mut *db.read().await?).await?;
    let total = rows.first().map(|row| row.total);
    let items = rows.into_iter().map(|row| row.reservation).collect();
    Ok((items, total.or((page.skip == 0).then_some(0))))
}

/// The statement [`page_with_total`] sends, as text and the values it binds: for reading its plan (`EXPLAIN`).
pub fn page_statement_rendered(
    engine: Engine,
    organization_id: &str,
    filter: &StayFilter,
    page: &Page,
) -> StoreResult<(String, Conditions)> {
    rendered(engine, &page_statement(engine, organization_id, filter, page))
}

/// The statement of [`page_with_total`]: the page's rows, each with the total of the matches.
fn page_statement(engine: Engine, organization_id: &str, filter: &StayFilter, page: &Page) -> SelectStatement {
    let total = if reservation_counts::answers(filter, page) {
        reservation_counts::total(organization_id, filter)
    } else {
        let counted = Sql::select()
            .expr(Expr::col(Asterisk).count())
            .from(R::Table)
            .cond_where(self::filter(engine, organization_id, filter, page))
            .take();
        Expr::SubQuery(None, Box::new(counted.into_sub_query_statement()))
    };
    let mut select = Sql::select();
    select.columns(COLUMNS).expr_as(total, "total_count").from(R::Table).cond_where(self::filter(
        engine,
        organization_id,
        filter,
        page,
    ));
    order_and_page(&mut select, page);
    select
}

/// One row of [`page_with_total`]: a reservation and the total of the page's matches.
struct PageRow {
    reservation: Reservation,
    total: i64,
}

impl FromPortableRow for PageRow {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self> {
        Ok(PageRow { reservation: reservation(row)?, total: row.integer(AFTER_COLUMNS)? })
    }
}

pub async fn list(
    db: &Db,
    organization_id: &str,
    filter: &StayFilter,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<Reservation>>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(R::Table).cond_where(self::filter(db.engine(), organization_id, filter, page));
    order_and_page(&mut select, page);
    let (sql, values) = rendered(db.engine(), &select)?;
    store::stream(db, sql, values, reservation).await
}

/// Whether the organization has a reservation with this reference.
pub async fn reference_taken(conn: &mut Conn, organization_id: &str, reference: &str) -> StoreResult<bool> {
    let select = Sql::select()
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(R::Table)
        .and_where(Expr::col(R::OrganizationId).eq(organization_id))
        .and_where(Expr::col(R::Reference).eq(reference))
        .take();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use sea_query::{PostgresQueryBuilder, SqliteQueryBuilder};

    use super::*;

    fn page() -> Page {
        Page { limit: Some(50), skip: 0, sort_column: "check_in_date", descending: false, projection: None, ids: None }
    }

    #[test]
    fn a_stay_window_is_bounded_by_the_longest_stay_in_each_engines_date_arithmetic() {
        let from = NaiveDate::from_ymd_opt(2026, 12, 1);
        let filter = StayFilter { hotel_id: Some("h".into()), stay_date_from: from, ..StayFilter::default() };
        let select = page_statement(Engine::Postgres, "o", &filter, &page());
        let (sql, _) = select.build(PostgresQueryBuilder);
        assert!(
            sql.contains(r#""check_in_date" >= CAST($8 AS DATE) - CAST((SELECT COALESCE(MAX("nights"), 0) FROM "reservations" WHERE "hotel_id" = $9) AS INTEGER)"#),
            "{sql}"
        );
        let select = page_statement(Engine::Sqlite, "o", &filter, &page());
        let (sql, _) = select.build(SqliteQueryBuilder);
        assert!(
            sql.contains(r#""check_in_date" >= (date(?, '-' || (SELECT COALESCE(MAX("nights"), 0) FROM "reservations" WHERE "hotel_id" = ?) || ' days'))"#),
            "{sql}"
        );
        assert!(sql.ends_with(r#"ORDER BY "check_in_date" ASC, "id" ASC LIMIT ? OFFSET ?"#), "{sql}");
    }

    #[test]
    fn a_total_the_counts_answer_is_read_from_them_in_the_pages_statement() {
        let filter = StayFilter { hotel_id: Some("h".into()), ..StayFilter::default() };
        let (sql, values) = page_statement(Engine::Postgres, "o", &filter, &page()).build(PostgresQueryBuilder);
        assert!(
            sql.contains(r#"CAST(((SELECT COALESCE(SUM("n"), 0) FROM "reservation_counts" WHERE "organization_id" = $1 AND "hotel_id" = $2) + (SELECT COALESCE(SUM("delta"), 0) FROM "reservation_count_changes" WHERE "organization_id" = $3 AND "hotel_id" = $4)) AS BIGINT) AS "total_count""#),
            "{sql}"
        );
        assert!(sql.contains(r#"FROM "reservations" WHERE "organization_id" = $5 AND "hotel_id" = $6"#), "{sql}");
        assert_eq!(values.0.len(), 8, "{sql}");
    }

    #[test]
    fn a_few_guests_stays_keep_sqlite_off_the_hotel_index() {
        let filter =
            StayFilter { hotel_id: Some("h".into()), guest_ids: Some(vec!["g".into()]), ..StayFilter::default() };
        let (sql, _) = page_statement(Engine::Sqlite, "o", &filter, &page()).build(SqliteQueryBuilder);
        assert!(sql.contains(r#"WHERE (+"organization_id") = ? AND (+"hotel_id") = ?"#), "{sql}");
        let (sql, _) = page_statement(Engine::Postgres, "o", &filter, &page()).build(PostgresQueryBuilder);
        assert!(sql.contains(r#"WHERE "organization_id" = $"#), "{sql}");
    }
}
