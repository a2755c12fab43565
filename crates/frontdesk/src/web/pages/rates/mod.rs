//! Rates and availability: a calendar of a hotel's rate plans (rows, grouped by room type) over 14 to 31 nights
//! (columns), each night with its price, the rooms left and its restrictions; a form per night; and the bulk edit
//! (a range of dates, some weekdays, one or many plans, one change), previewed before it is applied.
//!
//! Every write goes through the daily rates' one write path: a night's form through `daily_rates::upsert`, what
//! `POST /api/dailyRates` runs; a bulk edit through `rate_calendar::apply`, which writes all its nights in one
//! transaction through the same path without the API's 500-entry limit.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use chrono::{Months, NaiveDate};
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::money;
use crate::domain::rate_calendar::{self, MAX_DAYS, MIN_DAYS};
use crate::domain::rate_plans::RatePlan;
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view;

mod amounts;
mod bulk;
mod night;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/rates", get(calendar))
        .route("/hotels/{hotel_id}/rates/bulk", get(bulk::form).post(bulk::post))
        .route("/hotels/{hotel_id}/rates/{plan_id}/{date}", get(night::form).post(night::post))
}

/// The nights the calendar shows unless asked otherwise: two weeks fit a laptop's width without scrolling.
const DEFAULT_DAYS: u32 = 14;

#[derive(Debug, Default, Deserialize)]
struct CalendarQuery {
    #[serde(default)]
    from: String,
    days: Option<u32>,
}

#[derive(Template)]
#[template(path = "rates/calendar.html")]
struct CalendarTemplate {
    chrome: Chrome,
    heading: String,
    days: Vec<DayHead>,
    groups: Vec<GroupView>,
    span: u32,
    from_value: String,
    links: NavLinks,
    bulk_href: String,
    errors: FormErrors,
    has_plans: bool,
}

struct NavLinks {
    month_back: String,
    week_back: String,
    today: String,
    week_on: String,
    month_on: String,
    other_span: (u32, String),
}

struct DayHead {
    weekday: String,
    day: String,
    month: String,
    class: &'static str,
    label: String,
    today: bool,
}

struct GroupView {
    name: String,
    rows: Vec<RowView>,
}

struct RowView {
    plan: String,
    /// The plan's own page (name, code, room type, active), for the roles that change rates.
    plan_href: Option<String>,
    /// Code, currency and what else a row needs said: "BAR · EUR · all room types · inactive".
    note: String,
    cells: Vec<CellView>,
}

struct CellView {
    /// The night's form (relative to the calendar's address); none for past nights.
    href: Option<String>,
    price: String,
    left: String,
    /// Short marks with their meaning: ("Stop", "stop-sell").
    marks: Vec<(String, &'static str)>,
    class: String,
}

fn calendar_link(page: &HotelPage, from: NaiveDate, days: u32) -> String {
    format!("{}?from={from}&days={days}", page.path("rates"))
}

async fn calendar(State(state): State<AppState>, page: HotelPage, Query(q): Query<CalendarQuery>) -> WebResult {
    let today = page.hotel.today();
    let mut errors = FormErrors::default();
    let from = errors.date("from", &q.from, false).unwrap_or(today);
    let span = q.days.filter(|d| (MIN_DAYS..=MAX_DAYS).contains(d)).unwrap_or(DEFAULT_DAYS);
    let cal = rate_calendar::calendar(&state.db, &page.session.actor, &page.hotel.id, from, span).await?;
    let last = cal.dates.last().copied().unwrap_or(from);
    let back = format!("from={from}&days={span}");
    // Nights and plans link to their forms for the roles that change rates; the others read the grid.
    let editable = page.session.actor.require_scope(crate::domain::access::Scope::RatesWrite).is_ok();
    let groups = cal
        .groups
        .iter()
        .map(|group| GroupView {
            name: group.room_type.name.clone(),
            rows: group
                .rows
                .iter()
                .map(|row| {
                    let plan = &row.plan;
                    RowView {
                        plan: plan.name.clone(),
                        plan_href: editable.then(|| format!("/setup/hotels/{}/rate-plans/{}", page.hotel.id, plan.id)),
                        note: plan_note(plan, None),
                        cells: row.nights.iter().map(|night| cell(night, plan, cal.today, &back, editable)).collect(),
                    }
                })
                .collect(),
        })
        .collect();
    let shift = |d: NaiveDate, days: i64| d.checked_add_signed(chrono::TimeDelta::days(days)).unwrap_or(d);
    let other = if span == MAX_DAYS { DEFAULT_DAYS } else { MAX_DAYS };
    let template = CalendarTemplate {
        chrome: page.chrome(&state, Section::Rates, "Rates and availability").await?,
        heading: format!("{} to {}", view::date_long(from), view::date_long(last)),
        days: cal
            .dates
            .iter()
            .map(|d| DayHead {
                weekday: d.format("%a").to_string(),
                day: d.format("%-d").to_string(),
                month: d.format("%b").to_string(),
                class: if *d == cal.today {
                    "today"
                } else if view::is_weekend(*d) {
                    "weekend"
                } else {
                    ""
                },
                label: if *d == cal.today { format!("{}, today", view::date_long(*d)) } else { view::date_long(*d) },
                today: *d == cal.today,
            })
            .collect(),
        links: NavLinks {
            month_back: calendar_link(&page, from.checked_sub_months(Months::new(1)).unwrap_or(from), span),
            week_back: calendar_link(&page, shift(from, -7), span),
            today: calendar_link(&page, today, span),
            week_on: calendar_link(&page, shift(from, 7), span),
            month_on: calendar_link(&page, from.checked_add_months(Months::new(1)).unwrap_or(from), span),
            other_span: (other, calendar_link(&page, from, other)),
        },
        bulk_href: format!("{}?from={}&to={last}", page.path("rates/bulk"), from.max(today)),
        has_plans: !cal.plans.is_empty(),
        groups,
        span,
        from_value: from.to_string(),
        errors,
    };
    Ok(render_page(&template, &page.session, &state))
}

/// "BAR · EUR", plus "all room types" for a plan of the whole hotel and "inactive" for one not offered.
fn plan_note(plan: &RatePlan, room_type: Option<&str>) -> String {
    let mut parts: Vec<String> = plan.code.iter().cloned().collect();
    parts.push(plan.currency.clone());
    match (&plan.room_type_id, room_type) {
        (None, _) => parts.push("all room types".into()),
        (Some(_), Some(name)) => parts.push(name.to_string()),
        (Some(_), None) => {}
    }
    if !plan.active {
        parts.push("inactive".into());
    }
    parts.join(" · ")
}

fn cell(
    night: &rate_calendar::CalendarNight,
    plan: &RatePlan,
    today: NaiveDate,
    back: &str,
    editable: bool,
) -> CellView {
    let mut class = String::new();
    if night.date == today {
        class.push_str("today ");
    } else if view::is_weekend(night.date) {
        class.push_str("weekend ");
    }
    let href = (editable && night.date >= today).then(|| format!("rates/{}/{}?{back}", plan.id, night.date));
    if night.date < today {
        class.push_str("past ");
    }
    let Some(rate) = &night.rate else {
        class.push_str("no-rate");
        return CellView { href, price: "No rate".into(), left: String::new(), marks: Vec::new(), class };
    };
    let mut marks = Vec::new();
    if rate.stop_sell {
        class.push_str("stop ");
        marks.push(("Stop".to_string(), "stop-sell: nothing sells"));
    }
    if rate.closed_to_arrival {
        marks.push(("CTA".to_string(), "closed to arrival"));
    }
    if rate.closed_to_departure {
        marks.push(("CTD".to_string(), "closed to departure"));
    }
    if let Some(min) = rate.min_stay {
        marks.push((format!("≥{min}"), "minimum stay in nights"));
    }
    if let Some(max) = rate.max_stay {
        marks.push((format!("≤{max}"), "maximum stay in nights"));
    }
    let left = night.rooms_left.unwrap_or(0);
    if left < 1 {
        class.push_str("sold-out");
    }
    CellView {
        href,
        price: money::format_amount(rate.price, &plan.currency),
        left: format!("{left} left"),
        marks,
        class: class.trim().to_string(),
    }
}

fn unprocessable(mut response: Response) -> Response {
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    response
}
