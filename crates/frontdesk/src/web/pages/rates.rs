//! Rates and availability: a calendar of a hotel's rate plans (rows, grouped by room type) over 14 to 31 nights
//! (columns), each night with its price, the rooms left and its restrictions; a form per night; and the bulk edit
//! (a range of dates, some weekdays, one or many plans, one change), previewed before it is applied.
//!
//! Every write goes through the daily rates' one write path: a night's form through `daily_rates::upsert`, what
//! `POST /api/dailyRates` runs; a bulk edit through `rate_calendar::apply`, which writes all its nights in one
//! transaction through the same path without the API's 500-entry limit.

use askama::Template;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use chrono::{Days, Months, NaiveDate, Weekday};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::HotelPage;
use crate::app::AppState;
use crate::domain::daily_rates::{DailyRateIn, MAX_STAY_NIGHTS};
use crate::domain::rate_calendar::{self, BulkEdit, BulkOutcome, Change, PriceChange, MAX_DAYS, MIN_DAYS};
use crate::domain::rate_plans::RatePlan;
use crate::domain::{money, Error};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/rates", get(calendar))
        .route("/hotels/{hotel_id}/rates/bulk", get(bulk_form).post(bulk_post))
        .route("/hotels/{hotel_id}/rates/{plan_id}/{date}", get(night_form).post(night_post))
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
#[template(path = "rates.html")]
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
                        note: plan_note(plan, None),
                        cells: row.nights.iter().map(|night| cell(night, plan, cal.today, &back)).collect(),
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

fn cell(night: &rate_calendar::CalendarNight, plan: &RatePlan, today: NaiveDate, back: &str) -> CellView {
    let mut class = String::new();
    if night.date == today {
        class.push_str("today ");
    } else if view::is_weekend(night.date) {
        class.push_str("weekend ");
    }
    let href = (night.date >= today).then(|| format!("rates/{}/{}?{back}", plan.id, night.date));
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

// ---- One night's form ----

#[derive(Template)]
#[template(path = "rate_night.html")]
struct NightTemplate {
    chrome: Chrome,
    plan: String,
    plan_note: String,
    date: String,
    price_label: String,
    rooms_left: String,
    action: String,
    back: String,
    form: NightForm,
    errors: FormErrors,
    unplaced: Vec<String>,
}

/// The night's form as typed (prices in major units).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct NightForm {
    price: String,
    availability: String,
    stop_sell: Option<String>,
    closed_to_arrival: Option<String>,
    closed_to_departure: Option<String>,
    min_stay: String,
    max_stay: String,
    /// The calendar's window to return to: `from=…&days=…`.
    back: String,
}

const NIGHT_FIELDS: [&str; 7] =
    ["price", "availability", "stopSell", "closedToArrival", "closedToDeparture", "minStay", "maxStay"];

#[derive(Debug, Default, Deserialize)]
struct BackQuery {
    #[serde(default)]
    from: String,
    #[serde(default)]
    days: String,
}

/// Where a night's form returns: the calendar's window it came from (only `from` and `days`, read as such).
fn back_to(page: &HotelPage, back: &str, date: NaiveDate) -> String {
    let q: BackQuery = serde_urlencoded::from_str(back).unwrap_or_default();
    let from = crate::domain::validate::calendar_date(&q.from).unwrap_or(date);
    let days = q.days.parse().ok().filter(|d| (MIN_DAYS..=MAX_DAYS).contains(d)).unwrap_or(DEFAULT_DAYS);
    calendar_link(page, from, days)
}

/// The plan and night of a night's address: 404 for a plan of another hotel or organization, or no date.
async fn plan_and_night(
    state: &AppState,
    page: &HotelPage,
    plan_id: &str,
    date: &str,
) -> Result<(RatePlan, NaiveDate), WebError> {
    let date = crate::domain::validate::calendar_date(date).ok_or(WebError(Error::NotFound("night")))?;
    let plan = crate::domain::rate_plans::get(&state.db, &page.session.actor, plan_id).await?;
    if plan.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("rate plan")));
    }
    Ok((plan, date))
}

async fn night_form(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, plan_id, date)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
) -> WebResult {
    let (plan, date) = plan_and_night(&state, &page, &plan_id, &date).await?;
    let night = rate_calendar::night(&state.db, &page.session.actor, &plan, date).await?;
    let flag = |on: bool| on.then(|| "on".to_string());
    let back = query.unwrap_or_default();
    let form = match &night.rate {
        Some(r) => NightForm {
            price: money::input_value(r.price, &plan.currency),
            availability: r.availability.map(|a| a.to_string()).unwrap_or_default(),
            stop_sell: flag(r.stop_sell),
            closed_to_arrival: flag(r.closed_to_arrival),
            closed_to_departure: flag(r.closed_to_departure),
            min_stay: r.min_stay.map(|n| n.to_string()).unwrap_or_default(),
            max_stay: r.max_stay.map(|n| n.to_string()).unwrap_or_default(),
            back,
        },
        None => NightForm { back, ..NightForm::default() },
    };
    let t = night_template(&state, &page, &plan, date, &night, form, FormErrors::default()).await?;
    Ok(render_page(&t, &page.session, &state))
}

async fn night_template(
    state: &AppState,
    page: &HotelPage,
    plan: &RatePlan,
    date: NaiveDate,
    night: &rate_calendar::PlanNight,
    form: NightForm,
    errors: FormErrors,
) -> Result<NightTemplate, WebError> {
    let title = format!("{} on {}", plan.name, view::date_long(date));
    Ok(NightTemplate {
        chrome: page.chrome(state, Section::Rates, &title).await?,
        plan: plan.name.clone(),
        plan_note: plan_note(plan, None),
        date: view::date_long(date),
        price_label: format!("Price ({})", plan.currency),
        rooms_left: match (&night.rate, night.rooms_left.as_slice()) {
            (None, _) => "No rate yet: nothing sells this night under this plan.".into(),
            (Some(_), []) => "No room type to sell under this plan.".into(),
            (Some(_), left) => {
                left.iter().map(|(room_type, n)| format!("{room_type}: {n} left")).collect::<Vec<_>>().join(" · ")
            }
        },
        action: page.path(&format!("rates/{}/{date}", plan.id)),
        back: back_to(page, &form.back, date),
        unplaced: errors.unplaced(&NIGHT_FIELDS),
        form,
        errors,
    })
}

/// A blank field is `None`; otherwise a whole number from `min` to `max`.
fn optional_count(errors: &mut FormErrors, field: &str, value: &str, min: i64, max: i64) -> Option<i64> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    match value.parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            errors.add(field, format!("Enter a whole number from {min} to {max}, or leave it blank."));
            None
        }
    }
}

async fn night_post(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, plan_id, date)): Path<(String, String, String)>,
    posted: Posted<NightForm>,
) -> WebResult {
    let (plan, date) = plan_and_night(&state, &page, &plan_id, &date).await?;
    let form = posted.form;
    let mut errors = FormErrors::default();
    let price = match signed_amount(&form.price, &plan.currency) {
        _ if form.price.trim().is_empty() => {
            errors.add("price", "Enter the night's price.");
            None
        }
        Ok(price) if price < 0 => {
            errors.add("price", "A price cannot be negative.");
            None
        }
        Ok(price) => Some(price),
        Err(message) => {
            errors.add("price", message);
            None
        }
    };
    let availability = optional_count(&mut errors, "availability", &form.availability, 0, 1_000_000);
    let min_stay = optional_count(&mut errors, "minStay", &form.min_stay, 1, MAX_STAY_NIGHTS);
    let max_stay = optional_count(&mut errors, "maxStay", &form.max_stay, 1, MAX_STAY_NIGHTS);
    let outcome = match price {
        Some(price) if errors.is_empty() => {
            let entry = DailyRateIn {
                rate_plan_id: plan.id.clone(),
                date: date.to_string(),
                price,
                availability: Some(availability),
                stop_sell: Some(form.stop_sell.is_some()),
                closed_to_arrival: Some(form.closed_to_arrival.is_some()),
                closed_to_departure: Some(form.closed_to_departure.is_some()),
                min_stay: Some(min_stay),
                max_stay: Some(max_stay),
            };
            Some(rate_calendar::edit_night(&state.db, &page.session.actor, &page.hotel.id, entry).await)
        }
        _ => None,
    };
    match outcome {
        Some(Ok(_)) => {
            let flash = Flash::success(format!(
                "Saved {} on {}: {}.",
                plan.name,
                view::date_long(date),
                money::format(price.unwrap_or_default(), &plan.currency)
            ));
            Ok(session::redirect_with(&back_to(&page, &form.back, date), flash, &state))
        }
        Some(Err(err)) => {
            errors.absorb(err)?;
            night_refused(&state, &page, &plan, date, form, errors).await
        }
        None => night_refused(&state, &page, &plan, date, form, errors).await,
    }
}

async fn night_refused(
    state: &AppState,
    page: &HotelPage,
    plan: &RatePlan,
    date: NaiveDate,
    form: NightForm,
    errors: FormErrors,
) -> WebResult {
    let night = rate_calendar::night(&state.db, &page.session.actor, plan, date).await?;
    let t = night_template(state, page, plan, date, &night, form, errors).await?;
    Ok(unprocessable(render_page(&t, &page.session, state)))
}

fn unprocessable(mut response: Response) -> Response {
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    response
}

/// An amount in major units with an optional sign (`-5.50`, `+10`, `−3`), as minor units of `currency`.
fn signed_amount(text: &str, currency: &str) -> Result<i64, String> {
    let text = text.trim();
    let (negative, magnitude) = match text.chars().next() {
        Some('-') | Some('−') => (true, text.trim_start_matches(['-', '−'])),
        Some('+') => (false, text.trim_start_matches('+')),
        _ => (false, text),
    };
    let minor = money::parse(magnitude, currency).map_err(|message| capitalize(&message) + ".")?;
    Ok(if negative { -minor } else { minor })
}

/// A percentage with at most two decimals (`10`, `-12.5`, `7.25 %`) in hundredths of a per cent.
fn percent_hundredths(text: &str) -> Result<i64, String> {
    let text = text.trim().trim_end_matches('%').trim();
    let (negative, magnitude) = match text.chars().next() {
        Some('-') | Some('−') => (true, text.trim_start_matches(['-', '−'])),
        Some('+') => (false, text.trim_start_matches('+')),
        _ => (false, text),
    };
    let (whole, fraction) = magnitude.split_once('.').unwrap_or((magnitude, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) || whole.len() > 6 {
        return Err("Enter a percentage such as 10 or -12.5.".into());
    }
    if fraction.len() > 2 {
        return Err("A percentage may have two decimals at most.".into());
    }
    let value =
        format!("{whole}{fraction:0<2}").parse::<i64>().map_err(|_| "Enter a percentage such as 10.".to_string())?;
    Ok(if negative { -value } else { value })
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

// ---- Bulk edit ----

const WEEKDAYS: [(Weekday, &str, &str); 7] = [
    (Weekday::Mon, "mon", "Mon"),
    (Weekday::Tue, "tue", "Tue"),
    (Weekday::Wed, "wed", "Wed"),
    (Weekday::Thu, "thu", "Thu"),
    (Weekday::Fri, "fri", "Fri"),
    (Weekday::Sat, "sat", "Sat"),
    (Weekday::Sun, "sun", "Sun"),
];

const BULK_FIELDS: [&str; 13] = [
    "from",
    "to",
    "weekdays",
    "ratePlanIds",
    "priceAction",
    "price",
    "availabilityAction",
    "availability",
    "stopSell",
    "closedToArrival",
    "closedToDeparture",
    "minStay",
    "maxStay",
];

/// The bulk form as typed: every field as text, the checkboxes as lists.
#[derive(Debug, Clone, Default)]
struct BulkForm {
    from: String,
    to: String,
    weekdays: Vec<String>,
    plans: Vec<String>,
    price_action: String,
    price: String,
    availability_action: String,
    availability: String,
    stop_sell: String,
    closed_to_arrival: String,
    closed_to_departure: String,
    min_stay_action: String,
    min_stay: String,
    max_stay_action: String,
    max_stay: String,
    /// `apply` to apply; anything else previews.
    step: String,
    /// The fingerprint of the form a preview was shown for.
    previewed: String,
}

impl BulkForm {
    fn from_pairs(pairs: &[(String, String)]) -> BulkForm {
        let mut form = BulkForm::default();
        for (name, value) in pairs {
            let value = value.clone();
            match name.as_str() {
                "from" => form.from = value,
                "to" => form.to = value,
                "weekdays" => form.weekdays.push(value),
                "ratePlanIds" => form.plans.push(value),
                "priceAction" => form.price_action = value,
                "price" => form.price = value,
                "availabilityAction" => form.availability_action = value,
                "availability" => form.availability = value,
                "stopSell" => form.stop_sell = value,
                "closedToArrival" => form.closed_to_arrival = value,
                "closedToDeparture" => form.closed_to_departure = value,
                "minStayAction" => form.min_stay_action = value,
                "minStay" => form.min_stay = value,
                "maxStayAction" => form.max_stay_action = value,
                "maxStay" => form.max_stay = value,
                "step" => form.step = value,
                "previewed" => form.previewed = value,
                _ => {}
            }
        }
        form
    }

    /// A digest of what the form asks (not how it is sent): a preview's Apply applies exactly what was previewed.
    fn fingerprint(&self) -> String {
        let mut weekdays = self.weekdays.clone();
        weekdays.sort();
        let mut plans = self.plans.clone();
        plans.sort();
        let text = format!(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            self.from.trim(),
            self.to.trim(),
            weekdays.join(","),
            plans.join(","),
            self.price_action,
            self.price.trim(),
            self.availability_action,
            self.availability.trim(),
            self.stop_sell,
            self.closed_to_arrival,
            self.closed_to_departure,
            self.min_stay_action,
            self.min_stay.trim(),
            self.max_stay_action,
            self.max_stay.trim()
        );
        hex::encode(&Sha256::digest(text.as_bytes())[..16])
    }

    fn has_weekday(&self, value: &str) -> bool {
        self.weekdays.iter().any(|w| w == value)
    }

    fn has_plan(&self, id: &str) -> bool {
        self.plans.iter().any(|p| p == id)
    }

    /// The edit the form asks for, or the messages of its fields. Amounts are read in the hotel's currency (the
    /// plans of a hotel share it unless set otherwise; each plan's own currency is named in the preview).
    fn edit(&self, currency: &str, errors: &mut FormErrors) -> Option<BulkEdit> {
        let from = errors.date("from", &self.from, true);
        let to = errors.date("to", &self.to, true);
        let weekdays: Vec<Weekday> =
            WEEKDAYS.iter().filter(|(_, value, _)| self.has_weekday(value)).map(|(day, _, _)| *day).collect();
        let price_text = self.price.trim();
        let needs = |errors: &mut FormErrors, field: &str, what: &str| {
            errors.add(field, format!("Enter {what}, or choose to leave it as it is."));
        };
        let price = match self.price_action.as_str() {
            "set" | "by" if price_text.is_empty() => {
                needs(&mut *errors, "price", "an amount");
                PriceChange::Keep
            }
            "percent" if price_text.is_empty() => {
                needs(&mut *errors, "price", "a percentage");
                PriceChange::Keep
            }
            "set" => signed_amount(price_text, currency).map(PriceChange::Set).unwrap_or_else(|m| {
                errors.add("price", m);
                PriceChange::Keep
            }),
            "by" => signed_amount(price_text, currency).map(PriceChange::By).unwrap_or_else(|m| {
                errors.add("price", m);
                PriceChange::Keep
            }),
            "percent" => percent_hundredths(price_text).map(PriceChange::Percent).unwrap_or_else(|m| {
                errors.add("price", m);
                PriceChange::Keep
            }),
            _ => PriceChange::Keep,
        };
        // A number out of range is the domain's to refuse (BulkEdit::check), beside its field.
        let count_change = |errors: &mut FormErrors, action: &str, field: &str, value: &str, what: &str| match action {
            "set" => match value.trim().parse::<i64>() {
                Ok(n) => Change::Set(n),
                Err(_) if value.trim().is_empty() => {
                    needs(errors, field, what);
                    Change::Keep
                }
                Err(_) => {
                    errors.add(field, "Enter a whole number.");
                    Change::Keep
                }
            },
            "clear" => Change::Clear,
            _ => Change::Keep,
        };
        let availability = count_change(
            &mut *errors,
            &self.availability_action,
            "availability",
            &self.availability,
            "the rooms to sell",
        );
        let min_stay =
            count_change(&mut *errors, &self.min_stay_action, "minStay", &self.min_stay, "a number of nights");
        let max_stay =
            count_change(&mut *errors, &self.max_stay_action, "maxStay", &self.max_stay, "a number of nights");
        let flag = |value: &str| match value {
            "set" => Some(true),
            "clear" => Some(false),
            _ => None,
        };
        Some(BulkEdit {
            rate_plan_ids: self.plans.clone(),
            from: from?,
            to: to?,
            weekdays,
            price,
            availability,
            stop_sell: flag(&self.stop_sell),
            closed_to_arrival: flag(&self.closed_to_arrival),
            closed_to_departure: flag(&self.closed_to_departure),
            min_stay,
            max_stay,
        })
    }
}

#[derive(Template)]
#[template(path = "rates_bulk.html")]
struct BulkTemplate {
    chrome: Chrome,
    action: String,
    calendar_href: String,
    currency: String,
    form: BulkForm,
    plans: Vec<PlanChoice>,
    weekdays: Vec<(&'static str, &'static str)>,
    errors: FormErrors,
    unplaced: Vec<String>,
    preview: Option<PreviewView>,
    price_label: String,
    price_actions: Vec<Choice>,
    availability_actions: Vec<Choice>,
    stop_sell: Vec<Choice>,
    closed_to_arrival: Vec<Choice>,
    closed_to_departure: Vec<Choice>,
    min_stay_actions: Vec<Choice>,
    max_stay_actions: Vec<Choice>,
}

/// An option of a select.
struct Choice {
    value: &'static str,
    label: &'static str,
    selected: bool,
}

/// The options `choices` as (value, label), with `chosen` selected (the first when nothing is).
fn choices(choices: &[(&'static str, &'static str)], chosen: &str) -> Vec<Choice> {
    let known = choices.iter().any(|(value, _)| *value == chosen);
    choices
        .iter()
        .enumerate()
        .map(|(i, &(value, label))| Choice { value, label, selected: if known { value == chosen } else { i == 0 } })
        .collect()
}

const PRICE_ACTIONS: [(&str, &str); 4] = [
    ("keep", "Leave as it is"),
    ("set", "Set the price to"),
    ("by", "Change by an amount"),
    ("percent", "Change by a percentage"),
];
const COUNT_ACTIONS: [(&str, &str); 3] = [("keep", "Leave as it is"), ("set", "Set to"), ("clear", "Clear (no limit)")];
const FLAG_ACTIONS: [(&str, &str); 3] = [("keep", "Leave as it is"), ("set", "Set"), ("clear", "Clear")];

struct PlanChoice {
    id: String,
    name: String,
    note: String,
}

struct PreviewView {
    summary: String,
    details: Vec<String>,
    fingerprint: String,
    button: String,
    changes: bool,
}

async fn bulk_template(
    state: &AppState,
    page: &HotelPage,
    form: BulkForm,
    errors: FormErrors,
    preview: Option<PreviewView>,
) -> Result<BulkTemplate, WebError> {
    let plans = crate::domain::rate_plans::list(&state.db, &page.session.actor, Some(&page.hotel.id), None).await?;
    let types = crate::domain::room_types::list(&state.db, &page.session.actor, Some(&page.hotel.id)).await?;
    let type_name =
        |id: &Option<String>| id.as_ref().and_then(|id| types.iter().find(|t| t.id == *id)).map(|t| t.name.as_str());
    let from = crate::domain::validate::calendar_date(&form.from).unwrap_or_else(|| page.hotel.today());
    Ok(BulkTemplate {
        chrome: page.chrome(state, Section::Rates, "Change many nights").await?,
        action: page.path("rates/bulk"),
        calendar_href: calendar_link(page, from, DEFAULT_DAYS),
        currency: page.hotel.currency.clone(),
        plans: plans
            .iter()
            .map(|p| PlanChoice {
                id: p.id.clone(),
                name: p.name.clone(),
                note: plan_note(p, type_name(&p.room_type_id)),
            })
            .collect(),
        weekdays: WEEKDAYS.iter().map(|(_, value, label)| (*value, *label)).collect(),
        unplaced: errors.unplaced(&BULK_FIELDS),
        price_label: format!("Amount ({}) or percentage", page.hotel.currency),
        price_actions: choices(&PRICE_ACTIONS, &form.price_action),
        availability_actions: choices(&COUNT_ACTIONS, &form.availability_action),
        stop_sell: choices(&FLAG_ACTIONS, &form.stop_sell),
        closed_to_arrival: choices(&FLAG_ACTIONS, &form.closed_to_arrival),
        closed_to_departure: choices(&FLAG_ACTIONS, &form.closed_to_departure),
        min_stay_actions: choices(&COUNT_ACTIONS, &form.min_stay_action),
        max_stay_actions: choices(&COUNT_ACTIONS, &form.max_stay_action),
        form,
        errors,
        preview,
    })
}

fn query_pairs(query: Option<String>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()).into_owned().collect()
}

/// `GET …/rates/bulk?from=&to=&ratePlanIds=…`: the form, every weekday ticked, the plans named preselected.
async fn bulk_form(State(state): State<AppState>, page: HotelPage, RawQuery(query): RawQuery) -> WebResult {
    let mut form = BulkForm::from_pairs(&query_pairs(query));
    let today = page.hotel.today();
    if crate::domain::validate::calendar_date(&form.from).is_none() {
        form.from = today.to_string();
    }
    if crate::domain::validate::calendar_date(&form.to).is_none() {
        form.to = (today + Days::new(u64::from(DEFAULT_DAYS) - 1)).to_string();
    }
    form.weekdays = WEEKDAYS.iter().map(|(_, value, _)| value.to_string()).collect();
    let t = bulk_template(&state, &page, form, FormErrors::default(), None).await?;
    Ok(render_page(&t, &page.session, &state))
}

/// `POST …/rates/bulk`: previews the edit, or applies it when the form is the one previewed.
async fn bulk_post(State(state): State<AppState>, page: HotelPage, posted: Posted<Vec<(String, String)>>) -> WebResult {
    let form = BulkForm::from_pairs(&posted.form);
    let mut errors = FormErrors::default();
    // Amounts are typed in the currency of the plans chosen; plans of different currencies take no amount at once.
    let plans = crate::domain::rate_plans::list(&state.db, &page.session.actor, Some(&page.hotel.id), None).await?;
    let mut currencies: Vec<&str> =
        plans.iter().filter(|p| form.has_plan(&p.id)).map(|p| p.currency.as_str()).collect();
    currencies.sort_unstable();
    currencies.dedup();
    if currencies.len() > 1 && matches!(form.price_action.as_str(), "set" | "by") {
        errors.add(
            "price",
            format!(
                "The plans chosen are priced in {}: set their amounts separately, or change them by a percentage.",
                currencies.join(" and ")
            ),
        );
    }
    let currency = currencies.first().copied().unwrap_or(page.hotel.currency.as_str()).to_string();
    let edit = form.edit(&currency, &mut errors);
    let (Some(edit), true) = (edit, errors.is_empty()) else {
        return bulk_refused(&state, &page, form, errors).await;
    };
    let actor = &page.session.actor;
    let fingerprint = form.fingerprint();
    if form.step == "apply" && form.previewed == fingerprint {
        return match rate_calendar::apply(&state.db, actor, &page.hotel.id, &edit).await {
            Ok(outcome) => {
                let flash = match outcome.changed {
                    0 => Flash::info("Nothing changed: the nights chosen were already as asked."),
                    _ => Flash::success(format!("Changed {}.", changes(&outcome))),
                };
                let to = calendar_link(&page, edit.from, DEFAULT_DAYS);
                Ok(session::redirect_with(&to, flash, &state))
            }
            Err(err) => {
                errors.absorb(err)?;
                bulk_refused(&state, &page, form, errors).await
            }
        };
    }
    match rate_calendar::preview(&state.db, actor, &page.hotel.id, &edit).await {
        Ok(outcome) => {
            let mut details = Vec::new();
            if form.step == "apply" {
                details.push("The form changed after its preview, so nothing was applied yet: this is the preview of the form as it is now.".to_string());
            }
            if outcome.unchanged > 0 {
                details.push(format!("{} already as asked: left alone.", nights(outcome.unchanged)));
            }
            if outcome.without_rate > 0 {
                details.push(format!(
                    "{} without a rate: left without one (set a price to create their rates).",
                    nights(outcome.without_rate)
                ));
            }
            let preview = PreviewView {
                summary: match outcome.changed {
                    0 => format!("Nothing to change in the {} chosen.", nights(outcome.selected)),
                    _ => format!("This changes {}.", changes(&outcome)),
                },
                details,
                fingerprint,
                button: format!("Apply to {}", nights(outcome.changed)),
                changes: outcome.changed > 0,
            };
            let t = bulk_template(&state, &page, form, errors, Some(preview)).await?;
            Ok(render_page(&t, &page.session, &state))
        }
        Err(err) => {
            errors.absorb(err)?;
            bulk_refused(&state, &page, form, errors).await
        }
    }
}

async fn bulk_refused(state: &AppState, page: &HotelPage, form: BulkForm, errors: FormErrors) -> WebResult {
    let t = bulk_template(state, page, form, errors, None).await?;
    Ok(unprocessable(render_page(&t, &page.session, state)))
}

fn nights(n: usize) -> String {
    match n {
        1 => "1 night".into(),
        n => format!("{} nights", group(n)),
    }
}

/// "1,095 nights: 365 days of 3 rate plans".
fn changes(outcome: &BulkOutcome) -> String {
    let days = match outcome.days {
        1 => "1 day".to_string(),
        n => format!("{} days", group(n)),
    };
    let plans = match outcome.plans {
        1 => "1 rate plan".to_string(),
        n => format!("{n} rate plans"),
    };
    format!("{}: {days} of {plans}", nights(outcome.changed))
}

fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_percentages_are_read_exactly() {
        assert_eq!(signed_amount("-5.50", "EUR"), Ok(-550));
        assert_eq!(signed_amount("+10", "EUR"), Ok(1000));
        assert_eq!(signed_amount("1,200", "JPY"), Ok(1200));
        assert!(signed_amount("1.5", "JPY").is_err());
        assert_eq!(percent_hundredths("10"), Ok(1000));
        assert_eq!(percent_hundredths("-12.5 %"), Ok(-1250));
        assert_eq!(percent_hundredths("0.25"), Ok(25));
        assert!(percent_hundredths("1.234").is_err());
        assert!(percent_hundredths("ten").is_err());
        assert!(percent_hundredths("-").is_err());
    }

    #[test]
    fn the_fingerprint_ignores_order_but_not_content() {
        let pairs = |plans: [&str; 2], price: &str| -> Vec<(String, String)> {
            vec![
                ("ratePlanIds".into(), plans[0].into()),
                ("ratePlanIds".into(), plans[1].into()),
                ("priceAction".into(), "set".into()),
                ("price".into(), price.into()),
            ]
        };
        let a = BulkForm::from_pairs(&pairs(["a", "b"], "100"));
        let b = BulkForm::from_pairs(&pairs(["b", "a"], "100"));
        let c = BulkForm::from_pairs(&pairs(["a", "b"], "101"));
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(group(1095), "1,095");
    }
}
