//! A hotel's room types, rooms and rate plans: create, edit and delete, through the functions the REST routes call
//! (`room_types::create`, `rooms::update`, `rate_plans::upsert`, … ). The domain's refusals are the page's: a
//! validation error beside its field, a 409 (a room type that still has rooms, a room with stays, a rate plan with
//! reservations) as a message on the hotel's page, with nothing deleted.

use askama::Template;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;

use super::hotels::hotel_path;
use super::{render_form, Area, SetupChrome};
use crate::app::AppState;
use crate::domain::hotels::Hotel;
use crate::domain::rate_plans::{self, RatePlan, RatePlanIn, RatePlanPatch};
use crate::domain::room_types::{self, RoomType, RoomTypeIn, RoomTypePatch};
use crate::domain::rooms::{self, HousekeepingStatus, Room, RoomIn, RoomPatch};
use crate::domain::Error;
use crate::web::form::{self, optional, FormErrors};
use crate::web::page::{render_page, ConfirmPage, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/setup/hotels/{hotel_id}/room-types", post(create_room_type))
        .route("/setup/hotels/{hotel_id}/room-types/new", get(new_room_type))
        .route("/setup/hotels/{hotel_id}/room-types/{id}", get(edit_room_type).post(update_room_type))
        .route("/setup/hotels/{hotel_id}/room-types/{id}/delete", post(delete_room_type))
        .route("/setup/hotels/{hotel_id}/rooms", post(create_room))
        .route("/setup/hotels/{hotel_id}/rooms/new", get(new_room))
        .route("/setup/hotels/{hotel_id}/rooms/{id}", get(edit_room).post(update_room))
        .route("/setup/hotels/{hotel_id}/rooms/{id}/delete", post(delete_room))
}

/// Rate plans: set up by the roles that change rates (revenue too), beside the rest of a hotel's catalogue.
pub fn rate_plan_router() -> Router<AppState> {
    Router::new()
        .route("/setup/hotels/{hotel_id}/rate-plans", post(create_rate_plan))
        .route("/setup/hotels/{hotel_id}/rate-plans/new", get(new_rate_plan))
        .route("/setup/hotels/{hotel_id}/rate-plans/{id}", get(edit_rate_plan).post(update_rate_plan))
        .route("/setup/hotels/{hotel_id}/rate-plans/{id}/delete", post(delete_rate_plan))
}

/// How the housekeeping statuses read on the page (by reference: templates hold their values so).
pub fn status_label(status: &HousekeepingStatus) -> &'static str {
    match status {
        HousekeepingStatus::Clean => "Clean",
        HousekeepingStatus::Dirty => "Dirty",
        HousekeepingStatus::Inspected => "Inspected",
        HousekeepingStatus::OutOfOrder => "Out of order",
    }
}

/// The CSS class of a status pill (shared with the housekeeping page's colours).
pub fn status_class(status: &HousekeepingStatus) -> &'static str {
    match status {
        HousekeepingStatus::Clean => "clean",
        HousekeepingStatus::Dirty => "dirty",
        HousekeepingStatus::Inspected => "inspected",
        HousekeepingStatus::OutOfOrder => "out-of-order",
    }
}

/// A record of the hotel in the path, or the 404 page: a record of another hotel (or organization) is not found
/// under this one.
fn of_hotel<T>(found: T, record_hotel: &str, hotel: &Hotel) -> Result<T, Error> {
    if record_hotel == hotel.id {
        Ok(found)
    } else {
        Err(Error::NotFound("record"))
    }
}

/// A whole number typed in a field; blank is `None` (the domain's default, or a required field's message).
fn number(errors: &mut FormErrors, field: &str, value: &str, required: bool) -> Option<i64> {
    let value = value.trim();
    if value.is_empty() {
        if required {
            errors.add(field, "Enter a whole number.");
        }
        return None;
    }
    match value.parse::<i64>() {
        Ok(n) => Some(n),
        Err(_) => {
            errors.add(field, "Enter a whole number.");
            None
        }
    }
}

/// The answer to a refused form: the form again with the messages (422), or the error page for what no form
/// shows.
fn refused(err: Error) -> Result<FormErrors, Error> {
    let mut errors = FormErrors::default();
    errors.absorb(err)?;
    Ok(errors)
}

/// The answer to a delete: back to the hotel's page, saying what happened; the domain's 409 as the message.
fn deleted(state: &AppState, hotel: &Hotel, what: &str, result: Result<(), Error>) -> WebResult {
    deleted_to(state, &hotel_path(&hotel.id), what, result)
}

/// Where a rate plan's pages lead back to: the hotel's setup for those who configure it, else the rates calendar
/// (revenue changes plans, not the hotel).
fn plans_home(page: &HotelPage) -> String {
    match page.session.actor.require(crate::domain::access::Task::ConfigureHotel) {
        Ok(()) => hotel_path(&page.hotel.id),
        Err(_) => format!("/hotels/{}/rates", page.hotel.id),
    }
}

fn deleted_to(state: &AppState, to: &str, what: &str, result: Result<(), Error>) -> WebResult {
    match result {
        Ok(()) => Ok(session::redirect_with(to, Flash::success(format!("Deleted {what}.")), state)),
        Err(Error::Conflict(message)) => Ok(session::redirect_with(
            to,
            Flash::error(format!("{} was not deleted: {message}.", capital(what))),
            state,
        )),
        Err(err) => Err(err.into()),
    }
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[derive(Deserialize)]
struct DeleteForm {
    confirmed: Option<String>,
}

/// The confirmation a delete shows when the browser did not ask (JavaScript off).
async fn confirm_delete(state: &AppState, page: &HotelPage, what: &str, detail: &str, action: String) -> WebResult {
    confirm_delete_back(state, page, what, detail, action, hotel_path(&page.hotel.id)).await
}

async fn confirm_delete_back(
    state: &AppState,
    page: &HotelPage,
    what: &str,
    detail: &str,
    action: String,
    cancel_href: String,
) -> WebResult {
    let session = page.session.clone();
    let template = ConfirmPage {
        frame: SetupChrome::load(state, &session, Area::Hotels, "Please confirm").await?.into(),
        question: format!("Delete {what}?"),
        detail: detail.to_string(),
        action,
        fields: vec![("confirmed".into(), "yes".into())],
        button: format!("Yes, delete {what}"),
        cancel_href,
    };
    Ok(render_page(&template, &session, state))
}

// ----- Room types -----

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RoomTypeForm {
    name: String,
    description: String,
    max_occupancy: String,
    max_adults: String,
    max_children: String,
}

impl RoomTypeForm {
    fn of(t: &RoomType) -> RoomTypeForm {
        RoomTypeForm {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            max_occupancy: t.max_occupancy.to_string(),
            max_adults: t.max_adults.to_string(),
            max_children: t.max_children.to_string(),
        }
    }
}

const ROOM_TYPE_FIELDS: [&str; 5] = ["name", "description", "maxOccupancy", "maxAdults", "maxChildren"];

#[derive(Template)]
#[template(path = "setup/room_type.html")]
struct RoomTypeTemplate {
    chrome: SetupChrome,
    hotel: Hotel,
    editing: bool,
    action: String,
    form: RoomTypeForm,
    errors: FormErrors,
    unplaced: Vec<String>,
}

async fn room_type_page(
    state: &AppState,
    page: &HotelPage,
    editing: Option<&str>,
    form: RoomTypeForm,
    errors: FormErrors,
) -> WebResult {
    let base = hotel_path(&page.hotel.id);
    let (title, action) = match editing {
        Some(id) => (format!("Room type {}", form.name), format!("{base}/room-types/{id}")),
        None => ("New room type".to_string(), format!("{base}/room-types")),
    };
    let refused = !errors.is_empty();
    let template = RoomTypeTemplate {
        chrome: SetupChrome::load(state, &page.session, Area::Hotels, title).await?,
        hotel: page.hotel.clone(),
        editing: editing.is_some(),
        action,
        unplaced: errors.unplaced(&ROOM_TYPE_FIELDS),
        form,
        errors,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn new_room_type(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let form = RoomTypeForm { max_occupancy: "2".into(), ..RoomTypeForm::default() };
    room_type_page(&state, &page, None, form, FormErrors::default()).await
}

async fn edit_room_type(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
) -> WebResult {
    let t = room_types::get(&state.db, &page.session.actor, &id).await?;
    let t = of_hotel(t.clone(), &t.hotel_id, &page.hotel)?;
    room_type_page(&state, &page, Some(&t.id), RoomTypeForm::of(&t), FormErrors::default()).await
}

async fn create_room_type(State(state): State<AppState>, page: HotelPage, posted: Posted<RoomTypeForm>) -> WebResult {
    let f = posted.form;
    let mut errors = FormErrors::default();
    let max_occupancy = number(&mut errors, "maxOccupancy", &f.max_occupancy, true);
    let max_adults = number(&mut errors, "maxAdults", &f.max_adults, false);
    let max_children = number(&mut errors, "maxChildren", &f.max_children, false);
    let Some(max_occupancy) = max_occupancy.filter(|_| errors.is_empty()) else {
        return room_type_page(&state, &page, None, f, errors).await;
    };
    let input = RoomTypeIn {
        hotel_id: Some(page.hotel.id.clone()),
        name: f.name.clone(),
        description: optional(&f.description),
        max_occupancy,
        max_adults,
        max_children,
    };
    match room_types::create(&state.db, &page.session.actor, input).await {
        Ok(t) => {
            let flash = Flash::success(format!("Added the room type {}.", t.name));
            Ok(session::redirect_with(&hotel_path(&page.hotel.id), flash, &state))
        }
        Err(err) => room_type_page(&state, &page, None, f, refused(err)?).await,
    }
}

async fn update_room_type(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<RoomTypeForm>,
) -> WebResult {
    let t = room_types::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &t.hotel_id, &page.hotel)?;
    let f = posted.form;
    let mut errors = FormErrors::default();
    let max_occupancy = number(&mut errors, "maxOccupancy", &f.max_occupancy, true);
    let max_adults = number(&mut errors, "maxAdults", &f.max_adults, true);
    let max_children = number(&mut errors, "maxChildren", &f.max_children, true);
    if !errors.is_empty() {
        return room_type_page(&state, &page, Some(&id), f, errors).await;
    }
    let patch = RoomTypePatch {
        name: Some(f.name.clone()),
        description: Some(optional(&f.description)),
        max_occupancy,
        max_adults,
        max_children,
    };
    match room_types::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(t) => {
            let flash = Flash::success(format!("Saved the room type {}.", t.name));
            Ok(session::redirect_with(&hotel_path(&page.hotel.id), flash, &state))
        }
        Err(err) => room_type_page(&state, &page, Some(&id), f, refused(err)?).await,
    }
}

async fn delete_room_type(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<DeleteForm>,
) -> WebResult {
    let t = room_types::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &t.hotel_id, &page.hotel)?;
    let what = format!("the room type {}", t.name);
    if !form::confirmed(posted.form.confirmed.as_deref()) {
        let detail = "A room type that still has rooms, rate plans or reservations is kept.";
        let action = format!("{}/room-types/{id}/delete", hotel_path(&page.hotel.id));
        return confirm_delete(&state, &page, &what, detail, action).await;
    }
    let result = room_types::delete(&state.db, &page.session.actor, &id).await.map(|_| ());
    deleted(&state, &page.hotel, &what, result)
}

// ----- Rooms -----

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RoomForm {
    room_type_id: String,
    name: String,
    floor: String,
    housekeeping_status: String,
}

impl RoomForm {
    fn of(r: &Room) -> RoomForm {
        RoomForm {
            room_type_id: r.room_type_id.clone(),
            name: r.name.clone(),
            floor: r.floor.map(|f| f.to_string()).unwrap_or_default(),
            housekeeping_status: r.housekeeping_status.as_str().to_string(),
        }
    }
}

const ROOM_FIELDS: [&str; 4] = ["roomTypeId", "name", "floor", "housekeepingStatus"];

#[derive(Template)]
#[template(path = "setup/room.html")]
struct RoomTemplate {
    chrome: SetupChrome,
    hotel: Hotel,
    editing: bool,
    action: String,
    form: RoomForm,
    errors: FormErrors,
    unplaced: Vec<String>,
    room_types: Vec<(String, String)>,
    statuses: Vec<(String, String)>,
    /// The room's changes, from the audit log (none for a new room).
    history: Option<Vec<crate::web::pages::audit::HistoryLine>>,
}

async fn room_page(
    state: &AppState,
    page: &HotelPage,
    editing: Option<&str>,
    form: RoomForm,
    errors: FormErrors,
) -> WebResult {
    let base = hotel_path(&page.hotel.id);
    let (title, action) = match editing {
        Some(id) => (format!("Room {}", form.name), format!("{base}/rooms/{id}")),
        None => ("New room".to_string(), format!("{base}/rooms")),
    };
    let types = room_types::list(&state.db, &page.session.actor, Some(&page.hotel.id)).await?;
    let refused = !errors.is_empty();
    let history = match editing {
        Some(id) => crate::web::pages::audit::history(state, page, &[id.to_string()]).await?,
        None => None,
    };
    let template = RoomTemplate {
        history,
        chrome: SetupChrome::load(state, &page.session, Area::Hotels, title).await?,
        hotel: page.hotel.clone(),
        editing: editing.is_some(),
        action,
        unplaced: errors.unplaced(&ROOM_FIELDS),
        form,
        errors,
        room_types: types.into_iter().map(|t| (t.id, t.name)).collect(),
        statuses: HousekeepingStatus::ALL
            .into_iter()
            .map(|s| (s.as_str().to_string(), status_label(&s).to_string()))
            .collect(),
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn new_room(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let form = RoomForm { housekeeping_status: "CLEAN".into(), ..RoomForm::default() };
    room_page(&state, &page, None, form, FormErrors::default()).await
}

async fn edit_room(State(state): State<AppState>, page: HotelPage, Path((_, id)): Path<(String, String)>) -> WebResult {
    let r = rooms::get(&state.db, &page.session.actor, &id).await?;
    let r = of_hotel(r.clone(), &r.hotel_id, &page.hotel)?;
    room_page(&state, &page, Some(&r.id), RoomForm::of(&r), FormErrors::default()).await
}

/// The status chosen, or a message beside the field.
fn status(errors: &mut FormErrors, value: &str) -> Option<HousekeepingStatus> {
    let status = HousekeepingStatus::parse(value);
    if status.is_none() {
        errors.add("housekeepingStatus", "Choose a status.");
    }
    status
}

async fn create_room(State(state): State<AppState>, page: HotelPage, posted: Posted<RoomForm>) -> WebResult {
    let f = posted.form;
    let mut errors = FormErrors::default();
    let floor = number(&mut errors, "floor", &f.floor, false);
    let status = status(&mut errors, &f.housekeeping_status);
    if f.room_type_id.is_empty() {
        errors.add("roomTypeId", "Choose a room type.");
    }
    if !errors.is_empty() {
        return room_page(&state, &page, None, f, errors).await;
    }
    let input = RoomIn {
        hotel_id: Some(page.hotel.id.clone()),
        room_type_id: f.room_type_id.clone(),
        name: f.name.clone(),
        floor,
        housekeeping_status: status,
    };
    match rooms::create(&state.db, &page.session.actor, input).await {
        Ok(r) => {
            let flash = Flash::success(format!("Added room {}.", r.name));
            Ok(session::redirect_with(&hotel_path(&page.hotel.id), flash, &state))
        }
        Err(err) => room_page(&state, &page, None, f, refused(err)?).await,
    }
}

async fn update_room(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<RoomForm>,
) -> WebResult {
    let r = rooms::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &r.hotel_id, &page.hotel)?;
    let f = posted.form;
    let mut errors = FormErrors::default();
    let floor = number(&mut errors, "floor", &f.floor, false);
    let status = status(&mut errors, &f.housekeeping_status);
    if !errors.is_empty() {
        return room_page(&state, &page, Some(&id), f, errors).await;
    }
    let patch = RoomPatch {
        room_type_id: Some(f.room_type_id.clone()),
        name: Some(f.name.clone()),
        floor: Some(floor),
        housekeeping_status: status,
    };
    match rooms::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(r) => {
            let flash = Flash::success(format!("Saved room {}.", r.name));
            Ok(session::redirect_with(&hotel_path(&page.hotel.id), flash, &state))
        }
        Err(err) => room_page(&state, &page, Some(&id), f, refused(err)?).await,
    }
}

async fn delete_room(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<DeleteForm>,
) -> WebResult {
    let r = rooms::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &r.hotel_id, &page.hotel)?;
    let what = format!("room {}", r.name);
    if !form::confirmed(posted.form.confirmed.as_deref()) {
        let detail = "A room that stays are assigned to, or that its type's confirmed stays need, is kept.";
        let action = format!("{}/rooms/{id}/delete", hotel_path(&page.hotel.id));
        return confirm_delete(&state, &page, &what, detail, action).await;
    }
    let result = rooms::delete(&state.db, &page.session.actor, &id).await.map(|_| ());
    deleted(&state, &page.hotel, &what, result)
}

// ----- Rate plans -----

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RatePlanForm {
    name: String,
    code: String,
    /// Empty: every room type of the hotel.
    room_type_id: String,
    currency: String,
    active: Option<String>,
}

impl RatePlanForm {
    fn of(p: &RatePlan) -> RatePlanForm {
        RatePlanForm {
            name: p.name.clone(),
            code: p.code.clone().unwrap_or_default(),
            room_type_id: p.room_type_id.clone().unwrap_or_default(),
            currency: p.currency.clone(),
            active: p.active.then(|| "on".to_string()),
        }
    }

    fn active(&self) -> bool {
        self.active.is_some()
    }
}

const RATE_PLAN_FIELDS: [&str; 5] = ["name", "code", "roomTypeId", "currency", "active"];

#[derive(Template)]
#[template(path = "setup/rate_plan.html")]
struct RatePlanTemplate {
    chrome: SetupChrome,
    /// The page it was reached from and leads back to ([`plans_home`]), and what it is called.
    back: (String, String),
    editing: bool,
    action: String,
    form: RatePlanForm,
    errors: FormErrors,
    unplaced: Vec<String>,
    room_types: Vec<(String, String)>,
}

async fn rate_plan_page(
    state: &AppState,
    page: &HotelPage,
    editing: Option<&str>,
    form: RatePlanForm,
    errors: FormErrors,
) -> WebResult {
    let base = hotel_path(&page.hotel.id);
    let (title, action) = match editing {
        Some(id) => (format!("Rate plan {}", form.name), format!("{base}/rate-plans/{id}")),
        None => ("New rate plan".to_string(), format!("{base}/rate-plans")),
    };
    let types = room_types::list(&state.db, &page.session.actor, Some(&page.hotel.id)).await?;
    let mut choices = vec![(String::new(), "Every room type".to_string())];
    choices.extend(types.into_iter().map(|t| (t.id, t.name)));
    let refused = !errors.is_empty();
    let template = RatePlanTemplate {
        chrome: SetupChrome::load(state, &page.session, Area::Hotels, title).await?,
        back: match page.session.actor.require(crate::domain::access::Task::ConfigureHotel) {
            Ok(()) => (plans_home(page), page.hotel.name.clone()),
            Err(_) => (plans_home(page), format!("Rates of {}", page.hotel.name)),
        },
        editing: editing.is_some(),
        action,
        unplaced: errors.unplaced(&RATE_PLAN_FIELDS),
        form,
        errors,
        room_types: choices,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn new_rate_plan(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let form = RatePlanForm { currency: page.hotel.currency.clone(), active: Some("on".into()), ..Default::default() };
    rate_plan_page(&state, &page, None, form, FormErrors::default()).await
}

async fn edit_rate_plan(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
) -> WebResult {
    let p = rate_plans::get(&state.db, &page.session.actor, &id).await?;
    let p = of_hotel(p.clone(), &p.hotel_id, &page.hotel)?;
    rate_plan_page(&state, &page, Some(&p.id), RatePlanForm::of(&p), FormErrors::default()).await
}

async fn create_rate_plan(State(state): State<AppState>, page: HotelPage, posted: Posted<RatePlanForm>) -> WebResult {
    let f = posted.form;
    let input = RatePlanIn {
        id: None,
        hotel_id: Some(page.hotel.id.clone()),
        room_type_id: Some(optional(&f.room_type_id)),
        name: f.name.clone(),
        code: Some(optional(&f.code)),
        currency: Some(f.currency.trim().to_uppercase()),
        active: Some(f.active()),
    };
    match rate_plans::upsert(&state.db, &page.session.actor, input).await {
        Ok(p) => {
            let flash = Flash::success(format!("Added the rate plan {}.", p.name));
            Ok(session::redirect_with(&plans_home(&page), flash, &state))
        }
        Err(err) => rate_plan_page(&state, &page, None, f, refused(err)?).await,
    }
}

async fn update_rate_plan(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<RatePlanForm>,
) -> WebResult {
    let p = rate_plans::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &p.hotel_id, &page.hotel)?;
    let f = posted.form;
    let patch = RatePlanPatch {
        room_type_id: Some(optional(&f.room_type_id)),
        name: Some(f.name.clone()),
        code: Some(optional(&f.code)),
        currency: Some(f.currency.trim().to_uppercase()),
        active: Some(f.active()),
    };
    match rate_plans::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(p) => {
            let flash = Flash::success(format!("Saved the rate plan {}.", p.name));
            Ok(session::redirect_with(&plans_home(&page), flash, &state))
        }
        Err(err) => rate_plan_page(&state, &page, Some(&id), f, refused(err)?).await,
    }
}

async fn delete_rate_plan(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<DeleteForm>,
) -> WebResult {
    let p = rate_plans::get(&state.db, &page.session.actor, &id).await?;
    of_hotel((), &p.hotel_id, &page.hotel)?;
    let what = format!("the rate plan {}", p.name);
    if !form::confirmed(posted.form.confirmed.as_deref()) {
        let detail = "Its prices go with it. A rate plan that reservations were booked under is kept (it can be made \
                      inactive instead).";
        let action = format!("{}/rate-plans/{id}/delete", hotel_path(&page.hotel.id));
        return confirm_delete_back(&state, &page, &what, detail, action, plans_home(&page)).await;
    }
    let result = rate_plans::delete(&state.db, &page.session.actor, &id).await.map(|_| ());
    deleted_to(&state, &plans_home(&page), &what, result)
}
