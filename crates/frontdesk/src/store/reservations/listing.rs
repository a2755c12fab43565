//! Lists of reservations: the filters of the REST API and the dashboard as SQL, a page with its total, a streamed
//! list, counts, and what bounds a search by stay dates (the longest stay on record).

use super::{column_list, reservation, AFTER_COLUMNS};
use crate::domain::listing::Page;
use crate::domain::reservations::{Reservation, ReservationStatus, StayFilter};
use crate::store::format_date;
use crate::store::reservation_counts;
use crate::store::schema::Reservations as R;
use crate::store::sql::Conditions;
use crate::store::statement::{statement, Asterisk, Expr, ExprTrait, Sql};
use crate::store::{self, format_ts, Db, Engine, StoreResult};
use crate::store::{query_with, Conn};
use crate::store::{FromPortableRow, PortableRow};

/// Reservations of a hotel in one status (the dashboard's badge of booking requests waiting), from the counts.
pub async fn count_in_status(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    status: ReservationStatus,
) -> StoreResult<i64> {
    let filter = StayFilter { hotel_id: Some(hotel_id.to_string()), statuses: vec![status], ..StayFilter::default() };
    let mut c = Conditions::new(Engine::of(conn));
    let sql = format!("SELECT {} AS n", reservation_counts::total(&mut c, organization_id, &filter));
    query_with(&sql, c).fetch_one(conn).await?.try_get("n")
}

/// The longest stay (in nights) among the organization's reservations, of one hotel when given.
pub async fn longest_stay(conn: &mut Conn, organization_id: &str, hotel_id: Option<&str>) -> StoreResult<i64> {
    let scope = match hotel_id {
        Some(hotel_id) => Expr::col(R::HotelId).eq(hotel_id),
        None => Expr::col(R::OrganizationId).eq(organization_id),
    };
    let select = Sql::select().expr_as(Expr::col(R::Nights).max(), "n").from(R::Table).and_where(scope).to_owned();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    Ok(row.try_get::<Option<i64>, _>("n")?.unwrap_or(0))
}

/// The longest stay that can touch a window starting on a date, as SQL: the bound is read in the statement that
/// needs it from the `(hotel_id, nights)` index (one index descent), so it is always exact and costs no statement of
/// its own. `?` stands for the window's first date, then the hotel or organization.
fn check_in_bound(engine: Engine, by_hotel: bool) -> &'static str {
    match (engine, by_hotel) {
        (Engine::Sqlite, true) => {
            "check_in_date >= date(?, '-' || (SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE hotel_id = ?) || ' days')"
        }
        (Engine::Sqlite, false) => {
            "check_in_date >= date(?, '-' || (SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE organization_id = ?) || ' days')"
        }
        (Engine::Postgres, true) => {
            "check_in_date >= CAST(? AS DATE) - CAST((SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE hotel_id = ?) AS INTEGER)"
        }
        (Engine::Postgres, false) => {
            "check_in_date >= CAST(? AS DATE) - CAST((SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE organization_id = ?) AS INTEGER)"
        }
    }
}

fn conditions(engine: Engine, organization_id: &str, f: &StayFilter, page: &Page) -> Conditions {
    let mut c = Conditions::new(engine);
    push_conditions(&mut c, organization_id, f, page);
    c
}

fn push_conditions(c: &mut Conditions, organization_id: &str, f: &StayFilter, page: &Page) {
    let engine = c.engine();
    // A few guests' stays are found through the guest index. SQLite's planner, which has no statistics, would rather
    // read the whole hotel in check-in order for the sake of the ORDER BY; `+column` keeps a term off any index.
    let (organization, hotel) = match (engine, &f.guest_ids) {
        (Engine::Sqlite, Some(_)) => ("+organization_id = ?", "+hotel_id = ?"),
        _ => ("organization_id = ?", "hotel_id = ?"),
    };
    c.push(organization, organization_id.to_string());
    if let Some(v) = &f.hotel_id {
        c.push(hotel, v.clone());
    }
    if let Some(v) = &f.guest_id {
        c.push("guest_id = ?", v.clone());
    }
    if let Some(v) = &f.reference {
        c.push("reference = ?", v.clone());
    }
    if let Some(v) = f.start_time {
        c.push("end_time > ?", format_ts(v));
    }
    if let Some(v) = f.end_time {
        c.push("start_time <= ?", format_ts(v));
    }
    match (f.check_in_from, f.stay_date_from) {
        (Some(v), _) => {
            c.push("check_in_date >= ?", format_date(v));
        }
        (None, Some(from)) => {
            let (by_hotel, scope) = match &f.hotel_id {
                Some(hotel) => (true, hotel.clone()),
                None => (false, organization_id.to_string()),
            };
            c.push_all(check_in_bound(engine, by_hotel), vec![format_date(from), scope]);
        }
        (None, None) => {}
    }
    if let Some(v) = f.stay_date_from {
        c.push("check_out_date > ?", format_date(v));
    }
    if let Some(v) = f.stay_date_to {
        c.push("check_in_date <= ?", format_date(v));
    }
    if let Some(v) = f.check_in_date {
        c.push("check_in_date = ?", format_date(v));
    }
    if let Some(v) = f.check_out_date {
        c.push("check_out_date = ?", format_date(v));
    }
    if !f.statuses.is_empty() {
        let statuses: Vec<String> = f.statuses.iter().map(|s| s.as_str().to_string()).collect();
        c.push_in("status", &statuses);
    }
    if let Some(v) = f.source {
        c.push("source = ?", v.as_str().to_string());
    }
    if let Some(ids) = &f.guest_ids {
        c.push_in("guest_id", ids);
    }
    if let Some(ids) = &page.ids {
        c.push_in("id", ids);
    }
}

/// How many reservations match: from the counts where they answer ([`reservation_counts::answers`]), else counted.
pub async fn count(db: &Db, organization_id: &str, filter: &StayFilter, page: &Page) -> StoreResult<i64> {
    if reservation_counts::answers(filter, page) {
        let mut c = Conditions::new(db.engine());
        let sql = format!("SELECT {} AS n", reservation_counts::total(&mut c, organization_id, filter));
        return store::count(db, &sql, c).await;
    }
    let c = conditions(db.engine(), organization_id, filter, page);
    let sql = format!("SELECT COUNT(*) AS n FROM reservations{}", c.where_clause());
    store::count(db, &sql, c).await
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
    let mut c = Conditions::new(db.engine());
    // The total's values first: its subquery comes first in the statement.
    let total = if reservation_counts::answers(filter, page) {
        reservation_counts::total(&mut c, organization_id, filter)
    } else {
        push_conditions(&mut c, organization_id, filter, page);
        format!("(SELECT COUNT(*) FROM reservations{})", c.take_where_clause())
    };
    push_conditions(&mut c, organization_id, filter, page);
    let page_where = c.take_where_clause();
    let order = c.order_and_page(page);
    let sql = format!("SELECT {}, {total} AS total_count FROM reservations{page_where}{order}", column_list());
    let rows = query_with(&sql, c).fetch_records::<PageRow>(&mut *db.read().await?).await?;
    let total = rows.first().map(|row| row.total);
    let items = rows.into_iter().map(|row| row.reservation).collect();
    Ok((items, total.or((page.skip == 0).then_some(0))))
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
    let mut c = conditions(db.engine(), organization_id, filter, page);
    let order = c.order_and_page(page);
    let sql = format!("SELECT {} FROM reservations{}{order}", column_list(), c.where_clause());
    store::stream(db, sql, c, reservation).await
}

/// Whether the organization has a reservation with this reference.
pub async fn reference_taken(conn: &mut Conn, organization_id: &str, reference: &str) -> StoreResult<bool> {
    let select = Sql::select()
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(R::Table)
        .and_where(Expr::col(R::OrganizationId).eq(organization_id))
        .and_where(Expr::col(R::Reference).eq(reference))
        .to_owned();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}
