//! One night of one rate plan: its form (a page of its own, or the calendar's panel with JavaScript) and its save.

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use chrono::NaiveDate;
use serde::Deserialize;

use super::amounts::signed_amount;
use super::{calendar_link, plan_note, unprocessable, DEFAULT_DAYS};
use crate::app::AppState;
use crate::domain::daily_rates::{DailyRateIn, MAX_STAY_NIGHTS};
use crate::domain::rate_calendar::{self, MAX_DAYS, MIN_DAYS};
use crate::domain::rate_plans::RatePlan;
use crate::domain::{money, Error};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};
use crate::web::view;

#[derive(Template)]
#[template(path = "rates/night.html")]
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
pub(super) struct NightForm {
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

pub(super) async fn form(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, plan_id, date)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::RatesWrite)?;
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

pub(super) async fn post(
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
