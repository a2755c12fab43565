//! The form that makes a reservation at the desk, with its live price quote.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::NaiveDate;
use serde::Deserialize;

use super::super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office::{self, DeskBooking, DeskGuest, DeskGuestChoice};
use crate::domain::guests::{Guest, GuestIn};
use crate::domain::reservations::{ReservationIn, ReservationRoomIn, ReservationStatus, Source};
use crate::domain::{money, rate_plans, room_types, Error};
use crate::web::form::{optional, FormErrors};
use crate::web::page::{self, render_page, Chrome, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view::{self};

#[derive(Debug, Default, Deserialize, Clone)]
pub(super) struct NewForm {
    #[serde(rename = "guestMode", default)]
    guest_mode: String,
    #[serde(rename = "guestId", default)]
    guest_id: String,
    #[serde(rename = "guestQuery", default)]
    guest_query: String,
    #[serde(rename = "firstName", default)]
    first_name: String,
    #[serde(rename = "lastName", default)]
    last_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
    #[serde(rename = "roomTypeId", default)]
    room_type_id: String,
    #[serde(rename = "ratePlanId", default)]
    rate_plan_id: String,
    #[serde(rename = "checkInDate", default)]
    check_in: String,
    #[serde(rename = "checkOutDate", default)]
    check_out: String,
    #[serde(default)]
    adults: String,
    #[serde(default)]
    children: String,
    #[serde(default)]
    infants: String,
    #[serde(default)]
    price: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    intent: String,
    /// Given to the form when it is shown and sent back with it: the idempotency key of the reservation it makes.
    #[serde(rename = "formToken", default)]
    form_token: String,
}

pub(super) struct SelectOption {
    value: String,
    label: String,
    selected: bool,
}

#[derive(Template)]
#[template(path = "reservations/new.html")]
pub(super) struct NewTemplate {
    chrome: Chrome,
    form: NewForm,
    errors: FormErrors,
    unplaced: Vec<String>,
    existing: bool,
    guest_matches: Vec<SelectOption>,
    chosen_guest: Option<String>,
    room_types: Vec<SelectOption>,
    rate_plans: Vec<SelectOption>,
    quote: QuoteView,
    currency: String,
    /// Guests that already have the e-mail typed for a new guest: offered instead.
    same_email: Vec<SelectOption>,
}

/// The price shown before saving.
#[derive(Default)]
pub(super) struct QuoteView {
    shown: bool,
    nights: Vec<(String, String)>,
    total: String,
    missing: String,
    free_rooms: i64,
    problem: String,
}

#[derive(Template)]
#[template(path = "reservations/quote.html")]
pub(super) struct QuoteTemplate {
    quote: QuoteView,
}

/// The fields of the reservation form that a message can sit beside.
pub(super) const NEW_FIELDS: [&str; 14] = [
    "guestQuery",
    "guestId",
    "firstName",
    "lastName",
    "email",
    "phone",
    "roomTypeId",
    "ratePlanId",
    "checkInDate",
    "checkOutDate",
    "adults",
    "children",
    "price",
    "notes",
];

#[derive(Deserialize)]
pub(super) struct NewQuery {
    guest: Option<String>,
    #[serde(rename = "checkInDate")]
    check_in: Option<String>,
    #[serde(rename = "roomTypeId")]
    room_type_id: Option<String>,
}

/// A new form's token: random, so that two forms never share one.
pub(super) fn form_token() -> String {
    crate::domain::secrets::generate("ft_")
}

pub(super) async fn new_form(State(state): State<AppState>, page: HotelPage, Query(q): Query<NewQuery>) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::ReservationsWrite)?;
    let today = page.hotel.today();
    let mut form = NewForm {
        form_token: form_token(),
        guest_mode: if q.guest.is_some() { "existing".into() } else { "new".into() },
        guest_id: q.guest.unwrap_or_default(),
        check_in: q.check_in.unwrap_or_else(|| today.to_string()),
        check_out: today.succ_opt().map(|d| d.to_string()).unwrap_or_default(),
        adults: "2".into(),
        children: "0".into(),
        infants: "0".into(),
        status: "CONFIRMED".into(),
        room_type_id: q.room_type_id.unwrap_or_default(),
        ..NewForm::default()
    };
    if form.check_out <= form.check_in {
        form.check_out = calendar(&form.check_in).and_then(|d| d.succ_opt()).map(|d| d.to_string()).unwrap_or_default();
    }
    let template = new_template(&state, &page, form, FormErrors::default(), Vec::new(), QuoteView::default()).await?;
    Ok(render_page(&template, &page.session, &state))
}

pub(super) fn calendar(value: &str) -> Option<NaiveDate> {
    crate::domain::validate::calendar_date(value)
}

pub(super) async fn new_template(
    state: &AppState,
    page: &HotelPage,
    form: NewForm,
    errors: FormErrors,
    matches: Vec<Guest>,
    quote: QuoteView,
) -> Result<NewTemplate, WebError> {
    let actor = &page.session.actor;
    let types = room_types::list(&state.db, actor, Some(&page.hotel.id)).await?;
    let plans = rate_plans::list(&state.db, actor, Some(&page.hotel.id), None).await?;
    let type_names: HashMap<&str, &str> = types.iter().map(|t| (t.id.as_str(), t.name.as_str())).collect();
    let chosen_guest = match optional(&form.guest_id) {
        Some(id) => crate::domain::guests::get(&state.db, actor, &id).await.ok().map(|g| {
            let email = g.email.clone().map(|e| format!(" <{e}>")).unwrap_or_default();
            format!("{}{email}", front_office::guest_name(&g))
        }),
        None => None,
    };
    Ok(NewTemplate {
        chrome: page.chrome(state, Section::Reservations, "New reservation").await?,
        existing: form.guest_mode == "existing",
        guest_matches: matches
            .iter()
            .map(|g| SelectOption {
                value: g.id.clone(),
                label: format!("{} {}", front_office::guest_name(g), g.email.clone().unwrap_or_default()),
                selected: g.id == form.guest_id,
            })
            .collect(),
        chosen_guest,
        room_types: types
            .iter()
            .map(|t| SelectOption {
                value: t.id.clone(),
                label: format!("{} (up to {})", t.name, t.max_occupancy),
                selected: t.id == form.room_type_id,
            })
            .collect(),
        rate_plans: plans
            .iter()
            .filter(|p| p.active)
            .map(|p| SelectOption {
                value: p.id.clone(),
                label: match p.room_type_id.as_deref().and_then(|t| type_names.get(t)) {
                    Some(type_name) => format!("{} · {type_name}", p.name),
                    None => format!("{} · every room type", p.name),
                },
                selected: p.id == form.rate_plan_id,
            })
            .collect(),
        unplaced: errors.unplaced(&NEW_FIELDS),
        currency: page.hotel.currency.clone(),
        form,
        errors,
        quote,
        same_email: Vec::new(),
    })
}

/// The stay's price from the rate plan's daily rates, or why it cannot be shown.
pub(super) async fn price_quote(state: &AppState, page: &HotelPage, form: &NewForm) -> QuoteView {
    let (Some(check_in), Some(check_out)) = (calendar(&form.check_in), calendar(&form.check_out)) else {
        return QuoteView {
            shown: true,
            problem: "Choose the check-in and check-out dates.".into(),
            ..Default::default()
        };
    };
    if form.room_type_id.is_empty() || form.rate_plan_id.is_empty() {
        return QuoteView { shown: true, problem: "Choose a room type and a rate plan.".into(), ..Default::default() };
    }
    match front_office::quote(
        &state.db,
        &page.session.actor,
        &form.room_type_id,
        &form.rate_plan_id,
        check_in,
        check_out,
    )
    .await
    {
        Ok(q) => QuoteView {
            shown: true,
            nights: q.nights.iter().map(|(d, p)| (view::date_short(*d), money::format(*p, &q.currency))).collect(),
            total: q.total.map(|t| money::format(t, &q.currency)).unwrap_or_default(),
            missing: q.missing.iter().map(|d| view::date_short(*d)).collect::<Vec<_>>().join(", "),
            free_rooms: q.free_rooms,
            problem: String::new(),
        },
        Err(Error::Validation(errors)) => QuoteView {
            shown: true,
            problem: errors.into_iter().map(|e| e.message).collect::<Vec<_>>().join("; "),
            ..Default::default()
        },
        Err(Error::NotFound(what)) => {
            QuoteView { shown: true, problem: format!("No such {what} at this hotel."), ..Default::default() }
        }
        Err(err) => {
            tracing::warn!(error = %err, "a price preview failed");
            QuoteView { shown: true, problem: "The price could not be computed.".into(), ..Default::default() }
        }
    }
}

/// `GET …/reservations/quote`: the price preview alone, for htmx to swap in as the form changes.
pub(super) async fn quote_fragment(
    State(state): State<AppState>,
    page: HotelPage,
    Query(form): Query<NewForm>,
) -> Response {
    let quote = price_quote(&state, &page, &form).await;
    page::render(&QuoteTemplate { quote }, StatusCode::OK)
}

/// `POST …/reservations`: "Show price" re-renders the form with the price; "Create" makes the reservation (and,
/// for a new guest, the guest) in one transaction and opens it.
pub(super) async fn create(State(state): State<AppState>, page: HotelPage, posted: Posted<NewForm>) -> WebResult {
    let mut form = posted.form;
    let mut errors = FormErrors::default();
    let mut matches = Vec::new();
    // "Book for <guest>" on the offer of a guest with the same e-mail: that guest, and create.
    if let Some(id) = form.intent.strip_prefix("create-for:").map(str::to_string) {
        form.guest_mode = "existing".into();
        form.guest_id = id;
    }
    let creating =
        form.intent == "create" || form.intent == "create-new-guest" || form.intent.starts_with("create-for:");
    let existing = form.guest_mode == "existing";
    // Who the stay is for.
    let guest = if existing {
        let found = existing_guest(&state, &page, &mut form, &mut errors).await?;
        matches = found.1;
        found.0
    } else {
        Some(new_guest(&page, &form))
    };
    let adults = errors.count("adults", &form.adults, 2, 1, 100);
    let children = errors.count("children", &form.children, 0, 0, 100);
    let infants = errors.count("infants", &form.infants, 0, 0, 100);
    let price = errors.money("price", &form.price, &page.hotel.currency);
    let check_in = errors.date("checkInDate", &form.check_in, true);
    let check_out = errors.date("checkOutDate", &form.check_out, true);
    if form.room_type_id.is_empty() {
        errors.add("roomTypeId", "Choose a room type.");
    }
    if form.rate_plan_id.is_empty() && price.is_none() {
        errors.add("ratePlanId", "Choose a rate plan, or enter a price for the stay.");
    }
    let quote = price_quote(&state, &page, &form).await;
    // A new guest whose e-mail the organization already knows is most likely that guest: the domain offers them
    // instead of making a second record, unless the desk says it is someone else.
    let mut same_email = Vec::new();
    if creating && errors.is_empty() {
        if let (Some(guest), Some(check_in), Some(check_out)) = (guest, check_in, check_out) {
            let party = (adults, children, infants);
            let input = reservation_in(&page, &form, (check_in, check_out), party, price);
            let token = optional(&form.form_token);
            let choice = DeskGuestChoice { guest, new_despite_email: form.intent == "create-new-guest" };
            match front_office::book_at_desk(&state.db, &page.session.actor, choice, input, token.as_deref()).await {
                Ok(DeskBooking::Created(r)) => {
                    let flash = Flash::success(format!(
                        "Reservation created: {} to {}, {}.",
                        view::date_long(r.check_in_date),
                        view::date_long(r.check_out_date),
                        money::format(r.total_price, &r.currency)
                    ));
                    return Ok(session::redirect_with(&page.path(&format!("reservations/{}", r.id)), flash, &state));
                }
                Ok(DeskBooking::Replayed(r)) => {
                    let flash = Flash::info(
                        "This form was sent before: here is the reservation it made. Nothing was booked twice.",
                    );
                    return Ok(session::redirect_with(&page.path(&format!("reservations/{}", r.id)), flash, &state));
                }
                Ok(DeskBooking::KnownEmail(known)) => same_email = known,
                Ok(DeskBooking::FormUsed) => {
                    // A new stay needs a new form: this one gets a new token, to send once the desk has checked it.
                    errors.general = Some(
                        "This form has made a reservation already. It is ready for another stay: check the details \
                         and create again."
                            .into(),
                    );
                    form.form_token = form_token();
                }
                Err(err) => errors.absorb(err)?,
            }
        }
    }
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    let mut template = new_template(&state, &page, form, errors, matches, quote).await?;
    template.same_email = same_email
        .iter()
        .map(|g| SelectOption {
            value: g.id.clone(),
            label: match &g.phone {
                Some(phone) => format!("{} ({phone})", front_office::guest_name(g)),
                None => front_office::guest_name(g),
            },
            selected: false,
        })
        .collect();
    let mut response = render_page(&template, &page.session, &state);
    *response.status_mut() = status;
    Ok(response)
}

/// The guest the desk chose (`guestId`), else the one guest its search text finds; `None` with a message beside the
/// field when it finds none or several. Answers the guests found, for the form to offer.
async fn existing_guest(
    state: &AppState,
    page: &HotelPage,
    form: &mut NewForm,
    errors: &mut FormErrors,
) -> Result<(Option<DeskGuest>, Vec<Guest>), WebError> {
    if let Some(id) = optional(&form.guest_id) {
        return Ok((Some(DeskGuest::Existing(id)), Vec::new()));
    }
    let Some(text) = optional(&form.guest_query) else {
        errors.add("guestQuery", "Type the guest's e-mail or name.");
        return Ok((None, Vec::new()));
    };
    let matches = front_office::find_guests(&state.db, &page.session.actor, &text, 20).await?;
    let guest = match matches.as_slice() {
        [] => {
            errors.add("guestQuery", "No guest matches. Check the spelling, or choose New guest.");
            None
        }
        [one] => {
            form.guest_id = one.id.clone();
            Some(DeskGuest::Existing(one.id.clone()))
        }
        _ => {
            errors.add("guestId", "Several guests match: choose one.");
            None
        }
    };
    Ok((guest, matches))
}

/// A new guest as the form names them.
fn new_guest(page: &HotelPage, form: &NewForm) -> DeskGuest {
    DeskGuest::New(Box::new(GuestIn {
        hotel_id: Some(page.hotel.id.clone()),
        first_name: form.first_name.clone(),
        last_name: form.last_name.clone(),
        email: optional(&form.email),
        phone: optional(&form.phone),
        street: None,
        postal_code: None,
        city: None,
        country: None,
        language: None,
        notes: None,
    }))
}

/// The reservation the form asks for: one room, made at the desk.
fn reservation_in(
    page: &HotelPage,
    form: &NewForm,
    (check_in, check_out): (NaiveDate, NaiveDate),
    (adults, children, infants): (i64, i64, i64),
    price: Option<i64>,
) -> ReservationIn {
    ReservationIn {
        hotel_id: Some(page.hotel.id.clone()),
        guest_id: None,
        status: Some(if form.status == "REQUESTED" {
            ReservationStatus::Requested
        } else {
            ReservationStatus::Confirmed
        }),
        check_in_date: check_in.to_string(),
        check_out_date: check_out.to_string(),
        start_time: None,
        end_time: None,
        adults: None,
        children: None,
        infants: None,
        total_price: None,
        currency: None,
        source: Some(Source::Dashboard),
        channel_reference: None,
        notes: optional(&form.notes),
        rooms: vec![ReservationRoomIn {
            room_type_id: form.room_type_id.clone(),
            rate_plan_id: optional(&form.rate_plan_id),
            room_id: None,
            adults: Some(adults),
            children: Some(children),
            infants: Some(infants),
            price,
            night_prices: None,
        }],
    }
}
