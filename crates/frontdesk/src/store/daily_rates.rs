//! The ARI record: one row per (rate plan, night).

use chrono::{DateTime, NaiveDate, Utc};

use super::{format_date, format_ts, RowExt, StoreResult};
use crate::model::daily_rates::DailyRate;
use crate::store::schema::DailyRates as D;
use crate::store::statement::{statement, Expr, ExprTrait, OnConflict, Order, Sql};
use crate::store::{Conn, Row};

/// What a stay needs from one rate plan's daily rates, as searches and bookings read it.
#[derive(Debug, Clone, PartialEq)]
pub struct StayRates {
    pub rate_plan_id: String,
    /// By night of the stay (index 0 is the check-in night); `None` where the night has no record.
    pub nights: Vec<Option<NightRate>>,
    /// The check-in night's arrival restrictions (`false`/`None` when it has no record).
    pub closed_to_arrival: bool,
    pub min_stay: Option<i64>,
    pub max_stay: Option<i64>,
    /// Whether the check-out date's record closes departures.
    pub closed_to_departure: bool,
    /// Whether any night of the stay is stop-sell.
    pub stop_sell: bool,
}

/// The part of one night's record that prices and caps a stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NightRate {
    pub price: i64,
    pub availability: Option<i64>,
}

/// The columns [`daily_rate`] reads (by name), in the order [`upsert`] writes them.
const COLUMNS: [D; 10] = [
    D::RatePlanId,
    D::Date,
    D::Price,
    D::Availability,
    D::StopSell,
    D::ClosedToArrival,
    D::ClosedToDeparture,
    D::MinStay,
    D::MaxStay,
    D::UpdatedAt,
];

/// Rows per INSERT statement: 10 parameters each keeps a statement far below either engine's parameter limit.
const ROWS_PER_STATEMENT: usize = 500;

fn daily_rate(row: &Row, currency: &str) -> StoreResult<DailyRate> {
    Ok(DailyRate {
        rate_plan_id: row.try_get("rate_plan_id")?,
        date: row.get_date("date")?,
        price: row.try_get("price")?,
        currency: currency.to_string(),
        availability: row.try_get("availability")?,
        stop_sell: row.get_bool("stop_sell")?,
        closed_to_arrival: row.get_bool("closed_to_arrival")?,
        closed_to_departure: row.get_bool("closed_to_departure")?,
        min_stay: row.try_get("min_stay")?,
        max_stay: row.try_get("max_stay")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

/// The records of one rate plan over `[from, to]`, by date.
pub async fn range(
    conn: &mut Conn,
    rate_plan_id: &str,
    currency: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<DailyRate>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(D::Table)
        .and_where(Expr::col(D::RatePlanId).eq(rate_plan_id))
        .and_where(Expr::col(D::Date).gte(format_date(from)))
        .and_where(Expr::col(D::Date).lte(format_date(to)))
        .order_by(D::Date, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(|row| daily_rate(row, currency)).collect()
}

/// Inserts or replaces whole records, a few hundred per statement.
pub async fn upsert(conn: &mut Conn, rates: &[DailyRate], at: DateTime<Utc>) -> StoreResult<()> {
    let at = format_ts(at);
    for chunk in rates.chunks(ROWS_PER_STATEMENT) {
        let mut insert = Sql::insert();
        insert.into_table(D::Table).columns(COLUMNS);
        for r in chunk {
            // Cannot panic: one value for each of the ten COLUMNS, in their order.
            insert.values_panic([
                Expr::val(&r.rate_plan_id),
                Expr::val(format_date(r.date)),
                Expr::val(r.price),
                Expr::val(r.availability),
                Expr::val(r.stop_sell),
                Expr::val(r.closed_to_arrival),
                Expr::val(r.closed_to_departure),
                Expr::val(r.min_stay),
                Expr::val(r.max_stay),
                Expr::val(&at),
            ]);
        }
        insert.on_conflict(
            OnConflict::columns([D::RatePlanId, D::Date])
                // Every column but the key, (rate plan, night), the first two.
                .update_columns(COLUMNS.into_iter().skip(2))
                .to_owned(),
        );
        statement(conn.engine(), &insert).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The stored records of several rate plans between two nights (inclusive), for merging a batch.
pub async fn for_plans(
    conn: &mut Conn,
    rate_plan_ids: &[&str],
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<DailyRate>> {
    // The currency is the plan's; the caller, who holds the plans, fills it in where it matters.
    in_range(conn, &COLUMNS, rate_plan_ids, from, to).await?.iter().map(|row| daily_rate(row, "")).collect()
}

/// `columns` of the records of several rate plans between two nights (inclusive).
async fn in_range(
    conn: &mut Conn,
    columns: &[D],
    rate_plan_ids: &[&str],
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<Row>> {
    if rate_plan_ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .columns(columns.iter().copied())
        .from(D::Table)
        .and_where(Expr::col(D::Date).gte(format_date(from)))
        .and_where(Expr::col(D::Date).lte(format_date(to)))
        .and_where(Expr::col(D::RatePlanId).is_in(rate_plan_ids.iter().copied()))
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await
}

/// What a stay of `[check_in, check_out)` needs from the daily rates of several rate plans, one row per plan that has
/// any record: each night's price and allotment, whether any night is stop-sell, the check-in night's arrival
/// restrictions and the check-out date's departure restriction.
///
/// Each plan's records are folded into one row (columns per night) by the database: a week's search of a hotel
/// with a hundred plans then reads 100 rows instead of 800, and with sqlx each row costs microseconds of copying
/// and thread hand-off (SQLite). Each folded column costs the database a comparison per record, so
/// only what pricing needs is folded per night. `(rate_plan_id, date)` is the primary key, so every
/// `MAX(CASE WHEN date = … THEN … END)` picks the one record of its night, or NULL when there is none.
pub async fn for_stay(
    conn: &mut Conn,
    rate_plan_ids: &[&str],
    check_in: NaiveDate,
    check_out: NaiveDate,
) -> StoreResult<Vec<StayRates>> {
    let nights: Vec<String> = check_in.iter_days().take_while(|night| *night < check_out).map(format_date).collect();
    if rate_plan_ids.is_empty() || nights.is_empty() {
        return Ok(Vec::new());
    }
    let (arrival, departure) = (format_date(check_in), format_date(check_out));
    // `MAX(CASE WHEN <on the night> THEN <value> END)`: the value of one night's record, or NULL.
    let of_night = |night: Expr, value: Expr| Expr::expr(Expr::case(night, value)).max();
    // A flag as 1 or 0, which `MAX` takes on both engines (PostgreSQL has no MAX of booleans).
    let as_integer = |flag: D| Expr::case(Expr::col(flag), Expr::cust("1")).finally(Expr::cust("0"));
    let on = |night: &str| Expr::col(D::Date).eq(night);
    let mut select = Sql::select();
    // The column positions are the ones `stay_rates` decodes.
    select
        .column(D::RatePlanId)
        .expr(of_night(on(&arrival), as_integer(D::ClosedToArrival).into()))
        .expr(of_night(on(&arrival), Expr::col(D::MinStay)))
        .expr(of_night(on(&arrival), Expr::col(D::MaxStay)))
        .expr(of_night(on(&departure), as_integer(D::ClosedToDeparture).into()))
        .expr(of_night(Expr::col(D::Date).lt(departure.as_str()), as_integer(D::StopSell).into()));
    for night in &nights {
        select.expr(of_night(on(night), Expr::col(D::Price))).expr(of_night(on(night), Expr::col(D::Availability)));
    }
    select
        .from(D::Table)
        .and_where(Expr::col(D::Date).gte(arrival.as_str()))
        .and_where(Expr::col(D::Date).lte(departure.as_str()))
        .and_where(Expr::col(D::RatePlanId).is_in(rate_plan_ids.iter().copied()))
        .group_by_col(D::RatePlanId);
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(|row| stay_rates(row, nights.len())).collect()
}

/// Decodes a row of [`for_stay`] by position: the plan, five restrictions, then (price, availability) per night.
fn stay_rates(row: &Row, nights: usize) -> StoreResult<StayRates> {
    let flag = |i: usize| -> StoreResult<bool> { Ok(row.try_get::<Option<i64>, _>(i)?.is_some_and(|v| v != 0)) };
    let mut prices = Vec::with_capacity(nights);
    for n in 0..nights {
        let first = 6 + 2 * n;
        prices.push(match row.try_get::<Option<i64>, _>(first)? {
            Some(price) => Some(NightRate { price, availability: row.try_get(first + 1)? }),
            None => None,
        });
    }
    Ok(StayRates {
        rate_plan_id: row.try_get(0)?,
        nights: prices,
        closed_to_arrival: flag(1)?,
        min_stay: row.try_get(2)?,
        max_stay: row.try_get(3)?,
        closed_to_departure: flag(4)?,
        stop_sell: flag(5)?,
    })
}

/// One night of a rate plan as availability searches read it: the record without its bookkeeping.
#[derive(Debug, Clone)]
pub struct RateNight {
    pub rate_plan_id: String,
    pub date: NaiveDate,
    pub price: i64,
    pub availability: Option<i64>,
    pub stop_sell: bool,
    pub closed_to_arrival: bool,
    pub closed_to_departure: bool,
    pub min_stay: Option<i64>,
    pub max_stay: Option<i64>,
}

/// The records of several rate plans from `from` to `to` (both included), read for an in-memory copy: only the
/// columns pricing needs, decoded by position (thousands of rows at a time, where per-row costs add up).
pub async fn nights_for_plans(
    conn: &mut Conn,
    rate_plan_ids: &[&str],
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<RateNight>> {
    // Every column but the last, `updated_at`.
    in_range(conn, &COLUMNS[..COLUMNS.len() - 1], rate_plan_ids, from, to)
        .await?
        .iter()
        .map(|row| {
            let date: String = row.try_get(1)?;
            Ok(RateNight {
                rate_plan_id: row.try_get(0)?,
                date: NaiveDate::parse_from_str(&date, "%Y-%m-%d").map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
                price: row.try_get(2)?,
                availability: row.try_get(3)?,
                stop_sell: row.try_get::<i64, _>(4)? != 0,
                closed_to_arrival: row.try_get::<i64, _>(5)? != 0,
                closed_to_departure: row.try_get::<i64, _>(6)? != 0,
                min_stay: row.try_get(7)?,
                max_stay: row.try_get(8)?,
            })
        })
        .collect()
}
