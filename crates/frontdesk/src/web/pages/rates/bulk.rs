//! The bulk edit: a range of dates, some weekdays, one or many plans, one change; previewed, then applied.

use askama::Template;
use axum::extract::{RawQuery, State};
use chrono::{Days, Weekday};
use sha2::{Digest, Sha256};

use super::amounts::{percent_hundredths, signed_amount};
use super::{calendar_link, plan_note, unprocessable, DEFAULT_DAYS};
use crate::app::AppState;
use crate::domain::rate_calendar::{self, BulkEdit, BulkOutcome, Change, PriceChange};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

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
#[template(path = "rates/bulk.html")]
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
pub(super) async fn form(State(state): State<AppState>, page: HotelPage, RawQuery(query): RawQuery) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::RatesWrite)?;
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
pub(super) async fn post(
    State(state): State<AppState>,
    page: HotelPage,
    posted: Posted<Vec<(String, String)>>,
) -> WebResult {
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
