//! The ARI record: one row per (rate plan, night).

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::sql::Conditions;
use super::{bool_int, format_ts, Engine, RowExt, StoreResult};
use crate::domain::daily_rates::DailyRate;

const COLUMNS: &str = "rate_plan_id, date, price, availability, stop_sell, closed_to_arrival, closed_to_departure, \
     min_stay, max_stay, updated_at";

/// Rows per INSERT statement: 10 parameters each keeps a statement far below either engine's parameter limit.
const ROWS_PER_STATEMENT: usize = 500;

fn daily_rate(row: &AnyRow, currency: &str) -> StoreResult<DailyRate> {
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

pub fn format_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// The records of one rate plan over `[from, to]`, by date.
pub async fn range(
    conn: &mut AnyConnection,
    rate_plan_id: &str,
    currency: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<DailyRate>> {
    sqlx::query(&format!(
        "SELECT {COLUMNS} FROM daily_rates WHERE rate_plan_id = $1 AND date >= $2 AND date <= $3 ORDER BY date"
    ))
    .bind(rate_plan_id)
    .bind(format_date(from))
    .bind(format_date(to))
    .fetch_all(conn)
    .await?
    .iter()
    .map(|row| daily_rate(row, currency))
    .collect()
}

/// Inserts or replaces whole records, a few hundred per statement.
pub async fn upsert(conn: &mut AnyConnection, rates: &[DailyRate], at: DateTime<Utc>) -> StoreResult<()> {
    let at = format_ts(at);
    for chunk in rates.chunks(ROWS_PER_STATEMENT) {
        let mut values = Conditions::new(Engine::of(conn));
        let mut tuples = Vec::with_capacity(chunk.len());
        for r in chunk {
            let placeholders = [
                values.bind(r.rate_plan_id.clone()),
                values.bind(format_date(r.date)),
                values.bind(r.price),
                values.bind(r.availability),
                values.bind(bool_int(r.stop_sell)),
                values.bind(bool_int(r.closed_to_arrival)),
                values.bind(bool_int(r.closed_to_departure)),
                values.bind(r.min_stay),
                values.bind(r.max_stay),
                values.bind(at.clone()),
            ];
            tuples.push(format!("({})", placeholders.join(", ")));
        }
        let sql = format!(
            "INSERT INTO daily_rates ({COLUMNS}) VALUES {} ON CONFLICT (rate_plan_id, date) DO UPDATE SET \
             price = excluded.price, availability = excluded.availability, stop_sell = excluded.stop_sell, \
             closed_to_arrival = excluded.closed_to_arrival, closed_to_departure = excluded.closed_to_departure, \
             min_stay = excluded.min_stay, max_stay = excluded.max_stay, updated_at = excluded.updated_at",
            tuples.join(", ")
        );
        sqlx::query_with(&sql, values.into_args()).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The stored records of several rate plans between two nights (inclusive), for merging a batch.
pub async fn for_plans(
    conn: &mut AnyConnection,
    rate_plan_ids: &[&str],
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<DailyRate>> {
    if rate_plan_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut filter = Conditions::new(Engine::of(conn));
    filter.push("date >= ?", format_date(from));
    filter.push("date <= ?", format_date(to));
    let placeholders: Vec<String> = rate_plan_ids.iter().map(|id| filter.bind(id.to_string())).collect();
    let sql = format!(
        "SELECT {COLUMNS} FROM daily_rates{} AND rate_plan_id IN ({})",
        filter.where_clause(),
        placeholders.join(", ")
    );
    // The currency is the plan's; the caller, who holds the plans, fills it in where it matters.
    sqlx::query_with(&sql, filter.into_args()).fetch_all(conn).await?.iter().map(|row| daily_rate(row, "")).collect()
}
