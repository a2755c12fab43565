//! Reservations: the list with its filters, one reservation with its rooms, folio and guest, every move the state
//! machine allows (approve, decline, cancel, check in with room assignment, check out, no-show), date changes,
//! room assignments and the form that makes a reservation at the desk.
//!
//! Every write calls the same domain function as the REST route (`reservations::write::…`), so the same rules
//! apply and the same webhook events are recorded.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Query, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use chrono::NaiveDate;
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office::{self, DeskBooking, DeskGuest, DeskGuestChoice, StaySearch, StaySort};
use crate::domain::guests::{Guest, GuestIn};
use crate::domain::housekeeping::{self, RoomNow};
use crate::domain::reservations::{
    stay, write, ReservationIn, ReservationPatch, ReservationRoomIn, ReservationStatus, RoomAssignmentIn, RoomStatus,
    Source,
};
use crate::domain::rooms::HousekeepingStatus;
use crate::domain::{money, rate_plans, room_types, Error};
use crate::web::form::{self, optional, FormErrors};
use crate::web::page::{self, render_page, Chrome, ConfirmPage, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view::{self, Catalog, StayRow};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/reservations", get(list).post(create))
        .route("/hotels/{hotel_id}/reservations/new", get(new_form))
        .route("/hotels/{hotel_id}/reservations/quote", get(quote_fragment))
        .route("/hotels/{hotel_id}/reservations/{id}", get(detail))
        .route("/hotels/{hotel_id}/reservations/{id}/check-out", get(check_out_page))
        .route("/hotels/{hotel_id}/reservations/{id}/status", post(move_status))
        .route("/hotels/{hotel_id}/reservations/{id}/approve", post(approve))
        .route("/hotels/{hotel_id}/reservations/{id}/dates", post(change_dates))
        .route("/hotels/{hotel_id}/reservations/{id}/rooms", post(assign_room))
}

// ---------------------------------------------------------------------------------------------------------------
// The list

#[derive(Debug, Default, Deserialize)]
struct ListQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    guest: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    dir: String,
    page: Option<i64>,
}

struct Choice {
    value: &'static str,
    label: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "reservations.html")]
struct ListTemplate {
    chrome: Chrome,
    rows: Vec<StayRow>,
    errors: FormErrors,
    query: ListQuery,
    statuses: Vec<Choice>,
    sources: Vec<Choice>,
    sorts: Vec<Choice>,
    descending: bool,
    page: i64,
    previous: Option<String>,
    next: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    page: HotelPage,
    RawQuery(raw): RawQuery,
    Query(mut query): Query<ListQuery>,
) -> WebResult {
    // Opened without filters: the stays from today on, which is what the desk works with.
    if raw.as_deref().unwrap_or("").is_empty() {
        query.from = page.hotel.today().to_string();
    }
    let mut errors = FormErrors::default();
    let status = ReservationStatus::parse(&query.status);
    if !query.status.is_empty() && status.is_none() {
        errors.add("status", "Choose a status from the list.");
    }
    let source = Source::parse(&query.source);
    let search = StaySearch {
        statuses: status.into_iter().collect(),
        stay_from: errors.date("from", &query.from, false),
        stay_to: errors.date("to", &query.to, false),
        guest: optional(&query.guest),
        source,
        sort: StaySort::parse(&query.sort).unwrap_or_default(),
        descending: query.dir == "desc",
        page: query.page.unwrap_or(1).clamp(1, 100_000),
    };
    let found = match errors.is_empty() {
        true => front_office::search(&state.db, &page.session.actor, &page.hotel.id, &search).await?,
        false => front_office::StayPage { lines: Vec::new(), has_more: false },
    };
    let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    let link = |to_page: i64| {
        let mut params: Vec<(&str, String)> = vec![
            ("status", query.status.clone()),
            ("from", query.from.clone()),
            ("to", query.to.clone()),
            ("guest", query.guest.clone()),
            ("source", query.source.clone()),
            ("sort", query.sort.clone()),
            ("dir", query.dir.clone()),
        ];
        params.retain(|(_, v)| !v.is_empty());
        params.push(("page", to_page.to_string()));
        let query: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
        format!("{}?{query}", page.path("reservations"))
    };
    let statuses = ReservationStatus::ALL
        .into_iter()
        .map(|s| Choice { value: s.as_str(), label: view::status_label(s), selected: status == Some(s) })
        .collect();
    let sources = [Source::Api, Source::Dashboard, Source::BookingPage, Source::Channel]
        .into_iter()
        .map(|s| Choice { value: s.as_str(), label: view::source_label(s), selected: source == Some(s) })
        .collect();
    let sorts = StaySort::ALL
        .into_iter()
        .map(|s| Choice {
            value: s.as_str(),
            label: match s {
                StaySort::CheckIn => "Check-in date",
                StaySort::CheckOut => "Check-out date",
                StaySort::Created => "Booked on",
            },
            selected: s == search.sort,
        })
        .collect();
    let template = ListTemplate {
        chrome: page.chrome(&state, Section::Reservations, "Reservations").await?,
        rows: StayRow::rows(&found.lines, &catalog),
        previous: (search.page > 1).then(|| link(search.page - 1)),
        next: found.has_more.then(|| link(search.page + 1)),
        page: search.page,
        descending: search.descending,
        errors,
        query,
        statuses,
        sources,
        sorts,
    };
    Ok(render_page(&template, &page.session, &state))
}

// ---------------------------------------------------------------------------------------------------------------
// One reservation

struct RoomLine {
    id: String,
    room_type: String,
    rate_plan: String,
    room: Option<String>,
    status: &'static str,
    party: String,
    price: String,
    /// Rooms of its type it can be given (for the assignment controls).
    choices: Vec<RoomChoice>,
}

struct RoomChoice {
    id: String,
    label: String,
    selected: bool,
}

struct ChargeLine {
    date: String,
    description: String,
    amount: String,
}

#[derive(Template)]
#[template(path = "reservation.html")]
struct DetailTemplate {
    chrome: Chrome,
    row: StayRow,
    guest: Option<Guest>,
    /// Other guests of the hotel with the guest's e-mail: a booking request brings its guest as typed, and staff
    /// decide whether it is someone they know.
    same_email: Vec<Guest>,
    check_in_value: String,
    check_out_value: String,
    rooms: Vec<RoomLine>,
    charges: Vec<ChargeLine>,
    folio_total: Option<String>,
    notes: String,
    created: String,
    can: Moves,
    back: String,
    errors: FormErrors,
}

/// Which actions a reservation offers in its state.
struct Moves {
    approve: bool,
    decline: bool,
    cancel: bool,
    check_in: bool,
    check_out: bool,
    undo_check_out: bool,
    no_show: bool,
    change_dates: bool,
    assign: bool,
}

impl Moves {
    /// `checked_out_today`: a check-out made today, which can still be undone.
    fn of(status: ReservationStatus, checked_out_today: bool) -> Moves {
        use ReservationStatus::*;
        Moves {
            approve: status.can_move_to(Confirmed) && status == Requested,
            decline: status == Requested,
            cancel: status == Confirmed,
            check_in: status == Confirmed,
            check_out: status.can_move_to(CheckedOut),
            undo_check_out: status == CheckedOut && checked_out_today,
            no_show: status.can_move_to(NoShow),
            change_dates: matches!(status, Requested | Confirmed),
            assign: matches!(status, Confirmed | CheckedIn),
        }
    }
}

async fn detail(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
) -> WebResult {
    render_detail(&state, &page, &id, FormErrors::default(), StatusCode::OK).await
}

async fn render_detail(
    state: &AppState,
    page: &HotelPage,
    id: &str,
    errors: FormErrors,
    status: StatusCode,
) -> WebResult {
    let actor = &page.session.actor;
    let line = front_office::stay(&state.db, actor, id).await?;
    if line.reservation.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("reservation")));
    }
    let catalog = Catalog::load(&state.db, actor, &page.hotel.id).await?;
    let board = housekeeping::board(&state.db, actor, &page.hotel.id).await?;
    let r = &line.reservation;
    let rooms = line
        .rooms
        .iter()
        .filter(|room| room.status != RoomStatus::Cancelled || r.status == ReservationStatus::Cancelled)
        .map(|room| RoomLine {
            id: room.id.clone(),
            room_type: catalog.room_type(&room.room_type_id),
            rate_plan: catalog.rate_plan(room.rate_plan_id.as_deref()),
            room: room.room_id.as_ref().map(|id| catalog.room(id)),
            status: match room.status {
                RoomStatus::Pending => "Pending",
                RoomStatus::Confirmed => "Confirmed",
                RoomStatus::Cancelled => "Cancelled",
            },
            party: view::party(room.adults, room.children, room.infants),
            price: money::format(room.price, &r.currency),
            choices: board
                .rooms
                .iter()
                .filter(|candidate| candidate.room.room_type_id == room.room_type_id)
                .map(|candidate| RoomChoice {
                    id: candidate.room.id.clone(),
                    label: room_choice_label(candidate, &r.id, board.today),
                    selected: room.room_id.as_deref() == Some(candidate.room.id.as_str()),
                })
                .collect(),
        })
        .collect();
    let folio = r.folio.as_ref();
    let same_email = match &line.guest {
        Some(guest) => crate::domain::guests::same_email_in_hotel(&state.db, actor, guest).await?,
        None => Vec::new(),
    };
    let template = DetailTemplate {
        same_email,
        chrome: page
            .chrome(state, Section::Reservations, &format!("Reservation of {}", guest_title(&line.guest)))
            .await?,
        row: StayRow::new(&line, &catalog),
        check_in_value: r.check_in_date.to_string(),
        check_out_value: r.check_out_date.to_string(),
        charges: folio
            .map(|f| {
                f.charges
                    .iter()
                    .map(|c| ChargeLine {
                        date: view::date_short(c.date),
                        description: c.description.clone(),
                        amount: money::format(c.amount, &c.currency),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        folio_total: folio.map(|f| money::format(f.total, &f.currency)),
        notes: r.notes.clone().unwrap_or_default(),
        created: r.created_at.format("%-d %b %Y %H:%M UTC").to_string(),
        can: Moves::of(r.status, stay::checked_out_today(&state.db, &page.hotel, r).await?),
        back: format!("/hotels/{}/reservations/{}", page.hotel.id, r.id),
        guest: line.guest.clone(),
        rooms,
        errors,
    };
    let mut response = render_page(&template, &page.session, state);
    *response.status_mut() = status;
    Ok(response)
}

/// A room in a picker, with what the desk needs to choose: its housekeeping status and whether it is free now
/// ("101 · clean · free", "102 · dirty · in house until 26 Nov").
fn room_choice_label(room: &RoomNow, reservation_id: &str, today: NaiveDate) -> String {
    let status = room.room.housekeeping_status;
    if !status.sellable() {
        return format!("{} · out of order", room.room.name);
    }
    let status = view::housekeeping_label(status).to_lowercase();
    let now = match &room.occupant {
        Some(o) if o.reservation.id == reservation_id => "this stay".to_string(),
        Some(o) if o.reservation.check_out_date <= today => "guest due out, not yet checked out".to_string(),
        Some(o) => format!("in house until {}", view::date_short(o.reservation.check_out_date)),
        None => "free".to_string(),
    };
    format!("{} · {status} · {now}", room.room.name)
}

fn guest_title(guest: &Option<Guest>) -> String {
    guest.as_ref().map(front_office::guest_name).unwrap_or_else(|| "no guest".into())
}

/// The page to return to after an action: the `back` the form names (a path of this site), else the reservation.
fn back_to(back: Option<&str>, page: &HotelPage, id: &str) -> String {
    back.filter(|b| session::is_local_path(b))
        .map(str::to_string)
        .unwrap_or_else(|| format!("/hotels/{}/reservations/{id}", page.hotel.id))
}

/// The reservation of this hotel, or the 404 page (an id of another hotel or organization shows nothing).
async fn of_hotel(state: &AppState, page: &HotelPage, id: &str) -> Result<front_office::StayLine, WebError> {
    let line = front_office::stay(&state.db, &page.session.actor, id).await?;
    if line.reservation.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("reservation")));
    }
    Ok(line)
}

/// What a move is called in messages, and whether it needs confirming first.
fn move_words(to: ReservationStatus, requested: bool) -> (&'static str, &'static str, bool) {
    match to {
        ReservationStatus::CheckedIn => ("Check in", "Checked in", false),
        ReservationStatus::CheckedOut => ("Check out", "Checked out", false),
        ReservationStatus::Confirmed => ("Approve", "Approved", false),
        ReservationStatus::Cancelled if requested => ("Decline the request of", "Declined the request of", true),
        ReservationStatus::Cancelled => ("Cancel the reservation of", "Cancelled the reservation of", true),
        ReservationStatus::NoShow => ("Mark as no-show", "Marked as no-show:", true),
        ReservationStatus::Requested => ("Request", "Requested", false),
    }
}

/// The question and the button of a move's confirmation page, each naming the whole action and whom it is about
/// (the page is all there is to go by without JavaScript).
fn confirm_words(to: ReservationStatus, verb: &str, guest: &str) -> (String, String) {
    match to {
        ReservationStatus::NoShow => (format!("Mark {guest} as a no-show?"), format!("Yes, mark {guest} as a no-show")),
        _ => (format!("{verb} {guest}?"), format!("Yes, {} {guest}", verb.to_lowercase())),
    }
}

/// `POST …/status`: one move of the state machine. A check-in may carry room assignments (`room:<reservation room
/// id>` = physical room id), applied in the same write. Cancelling, declining and no-shows ask for confirmation.
async fn move_status(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let form = posted.form;
    let line = of_hotel(&state, &page, &id).await?;
    let back = back_to(form.get("back").map(String::as_str), &page, &id);
    let Some(to) = form.get("to").and_then(|t| ReservationStatus::parse(t)) else {
        return Ok(page::bad_request("The form did not say which move to make."));
    };
    let guest = guest_title(&line.guest);
    let requested = line.reservation.status == ReservationStatus::Requested;
    let (verb, done, destructive) = move_words(to, requested);
    if destructive && !form::confirmed(form.get("confirmed").map(String::as_str)) {
        let mut fields: Vec<(String, String)> =
            form.iter().filter(|(k, _)| *k != session::CSRF_FIELD).map(|(k, v)| (k.clone(), v.clone())).collect();
        fields.push(("confirmed".into(), "yes".into()));
        fields.sort();
        let (question, button) = confirm_words(to, verb, &guest);
        let template = ConfirmPage {
            chrome: page.chrome(&state, Section::Reservations, "Please confirm").await?,
            question,
            detail: format!(
                "{} to {}, {}. This cannot be undone.",
                view::date_long(line.reservation.check_in_date),
                view::date_long(line.reservation.check_out_date),
                view::nights(line.reservation.nights())
            ),
            action: format!("{}/reservations/{id}/status", page.path("").trim_end_matches('/')),
            fields,
            button,
            cancel_href: back,
        };
        return Ok(render_page(&template, &page.session, &state));
    }
    let confirmed = form::confirmed(form.get("confirmed").map(String::as_str));
    if to == ReservationStatus::CheckedOut && !confirmed {
        // A check-out is never one click: the page that says what it will do comes first.
        let query = serde_urlencoded::to_string([("back", back.as_str())]).unwrap_or_default();
        return Ok(
            axum::response::Redirect::to(&page.path(&format!("reservations/{id}/check-out?{query}"))).into_response()
        );
    }
    let assignments: Vec<RoomAssignmentIn> = form
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("room:").map(|rr| (rr, v)))
        .filter(|(_, v)| !v.is_empty())
        .map(|(rr, v)| RoomAssignmentIn { id: rr.to_string(), room_id: Some(Some(v.clone())) })
        .collect();
    if to == ReservationStatus::CheckedIn && line.reservation.status == ReservationStatus::Confirmed && !confirmed {
        // Checking in to a room not cleaned since its last guest is allowed, once the desk says so.
        let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
        let chosen: Vec<String> = line
            .rooms
            .iter()
            .filter(|room| room.status != RoomStatus::Cancelled)
            .filter_map(|room| {
                assignments
                    .iter()
                    .find(|a| a.id == room.id)
                    .and_then(|a| a.room_id.clone().flatten())
                    .or_else(|| room.room_id.clone())
            })
            .collect();
        let dirty: Vec<String> = chosen
            .iter()
            .filter(|id| catalog.room_status.get(*id) == Some(&HousekeepingStatus::Dirty))
            .map(|id| format!("room {}", catalog.room(id)))
            .collect();
        if !dirty.is_empty() {
            let mut fields: Vec<(String, String)> =
                form.iter().filter(|(k, _)| *k != session::CSRF_FIELD).map(|(k, v)| (k.clone(), v.clone())).collect();
            fields.push(("confirmed".into(), "yes".into()));
            fields.sort();
            let (rooms, are) = if dirty.len() == 1 { (dirty.join(""), "is") } else { (dirty.join(", "), "are") };
            let template = ConfirmPage {
                chrome: page.chrome(&state, Section::Reservations, "Please confirm").await?,
                question: format!("Check {guest} in to a dirty room?"),
                detail: format!(
                    "Housekeeping has not cleaned {rooms} since the last guest left: it {are} marked dirty. Check in \
                     anyway, or go back and choose a clean room."
                ),
                action: format!("{}/reservations/{id}/status", page.path("").trim_end_matches('/')),
                fields,
                button: "Yes, check in".into(),
                cancel_href: back,
            };
            return Ok(render_page(&template, &page.session, &state));
        }
    }
    let patch = ReservationPatch {
        status: Some(to),
        rooms: (!assignments.is_empty()).then_some(assignments),
        ..ReservationPatch::default()
    };
    let flash = match write::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(_) => Flash::success(format!("{done} {guest}.")),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}

#[derive(Template)]
#[template(path = "check_out.html")]
struct CheckOutTemplate {
    chrome: Chrome,
    row: StayRow,
    back: String,
    stayed: String,
    leaves: String,
    folio_total: String,
    early: bool,
    booked_departure: String,
    released: String,
    removed: String,
}

#[derive(Deserialize)]
struct BackQuery {
    back: Option<String>,
}

/// `GET …/check-out`: what checking the stay out now will do (nights, folio total, and for an early departure the
/// nights given back and the charges removed), with the button that does it.
async fn check_out_page(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    Query(query): Query<BackQuery>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let back = back_to(query.back.as_deref(), &page, &id);
    let r = &line.reservation;
    if r.status != ReservationStatus::CheckedIn {
        let flash =
            Flash::error(format!("{} is not checked in, so there is nothing to check out.", guest_title(&line.guest)));
        return Ok(session::redirect_with(&back, flash, &state));
    }
    let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    let preview = stay::check_out_preview(r, page.hotel.today());
    let span = |from: NaiveDate, to: NaiveDate| format!("{} to {}", view::date_short(from), view::date_short(to));
    let template = CheckOutTemplate {
        chrome: page.chrome(&state, Section::Reservations, &format!("Check out {}", guest_title(&line.guest))).await?,
        row: StayRow::new(&line, &catalog),
        back,
        stayed: format!("{} ({})", view::nights(preview.nights), span(r.check_in_date, preview.leaves)),
        leaves: view::date_long(preview.leaves),
        folio_total: money::format(preview.folio_total, &preview.currency),
        early: !preview.released.is_empty(),
        booked_departure: view::date_long(r.check_out_date),
        released: match (preview.released.first(), preview.released.last()) {
            (Some(first), Some(last)) if first == last => format!("the night of {}", view::date_short(*first)),
            (Some(first), Some(last)) => {
                format!(
                    "{} ({} to {})",
                    view::nights(preview.released.len() as i64),
                    view::date_short(*first),
                    view::date_short(*last)
                )
            }
            _ => String::new(),
        },
        removed: money::format(preview.removed, &preview.currency),
    };
    Ok(render_page(&template, &page.session, &state))
}

/// A refused action as a message for the next page; errors that are not about the request stay errors.
fn refusal(err: Error) -> Result<Flash, WebError> {
    let mut errors = FormErrors::default();
    match errors.absorb(err) {
        Ok(()) => {
            let text = errors.general.clone().unwrap_or_else(|| errors.unplaced(&[]).join("; "));
            Ok(Flash::error(text))
        }
        Err(other) => Err(WebError(other)),
    }
}

/// `POST …/approve`: the same recheck under lock as `POST /api/reservations/{id}/approve`.
async fn approve(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let back = back_to(posted.form.get("back").map(String::as_str), &page, &id);
    let guest = guest_title(&line.guest);
    let flash = match write::approve(&state.db, &page.session.actor, &id).await {
        Ok(_) => Flash::success(format!("Approved the request of {guest}: the stay is confirmed.")),
        Err(Error::Conflict(message)) => {
            Flash::error(format!("Inventory changed, so the request of {guest} stays waiting: {message}."))
        }
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}

#[derive(Deserialize)]
struct DatesForm {
    #[serde(rename = "checkInDate", default)]
    check_in: String,
    #[serde(rename = "checkOutDate", default)]
    check_out: String,
}

/// `POST …/dates`: new stay dates (a confirmed stay is rechecked for inventory and its folio rebuilt).
async fn change_dates(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<DatesForm>,
) -> WebResult {
    of_hotel(&state, &page, &id).await?;
    let mut errors = FormErrors::default();
    let check_in = errors.date("checkInDate", &posted.form.check_in, true);
    let check_out = errors.date("checkOutDate", &posted.form.check_out, true);
    if let (Some(check_in), Some(check_out)) = (check_in, check_out) {
        let patch = ReservationPatch {
            check_in_date: Some(check_in.to_string()),
            check_out_date: Some(check_out.to_string()),
            ..ReservationPatch::default()
        };
        match write::update(&state.db, &page.session.actor, &id, patch).await {
            Ok(r) => {
                let flash = Flash::success(format!(
                    "The stay is now {} to {}.",
                    view::date_long(r.check_in_date),
                    view::date_long(r.check_out_date)
                ));
                return Ok(session::redirect_with(&page.path(&format!("reservations/{id}")), flash, &state));
            }
            Err(err) => errors.absorb(err)?,
        }
    }
    render_detail(&state, &page, &id, errors, StatusCode::UNPROCESSABLE_ENTITY).await
}

#[derive(Deserialize)]
struct AssignForm {
    #[serde(rename = "reservationRoomId")]
    reservation_room_id: String,
    #[serde(rename = "roomId", default)]
    room_id: String,
    back: Option<String>,
}

/// `POST …/rooms`: gives one room of the reservation a physical room (or, with none chosen, takes it away). The
/// domain's overlap rule decides; a room taken on an overlapping night comes back as a message.
async fn assign_room(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<AssignForm>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let form = posted.form;
    let back = back_to(form.back.as_deref(), &page, &id);
    let room_id = optional(&form.room_id);
    let patch = ReservationPatch {
        rooms: Some(vec![RoomAssignmentIn { id: form.reservation_room_id, room_id: Some(room_id.clone()) }]),
        ..ReservationPatch::default()
    };
    let guest = guest_title(&line.guest);
    let flash = match write::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(_) if room_id.is_some() => Flash::success(format!("Room assigned to {guest}.")),
        Ok(_) => Flash::success(format!("Room unassigned from {guest}.")),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}

// ---------------------------------------------------------------------------------------------------------------
// A new reservation

#[derive(Debug, Default, Deserialize, Clone)]
struct NewForm {
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

struct SelectOption {
    value: String,
    label: String,
    selected: bool,
}

#[derive(Template)]
#[template(path = "reservation_new.html")]
struct NewTemplate {
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
struct QuoteView {
    shown: bool,
    nights: Vec<(String, String)>,
    total: String,
    missing: String,
    free_rooms: i64,
    problem: String,
}

#[derive(Template)]
#[template(path = "quote.html")]
struct QuoteTemplate {
    quote: QuoteView,
}

/// The fields of the reservation form that a message can sit beside.
const NEW_FIELDS: [&str; 14] = [
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
struct NewQuery {
    guest: Option<String>,
    #[serde(rename = "checkInDate")]
    check_in: Option<String>,
    #[serde(rename = "roomTypeId")]
    room_type_id: Option<String>,
}

/// A new form's token: random, so that two forms never share one.
fn form_token() -> String {
    crate::domain::secrets::generate("ft_")
}

async fn new_form(State(state): State<AppState>, page: HotelPage, Query(q): Query<NewQuery>) -> WebResult {
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

fn calendar(value: &str) -> Option<NaiveDate> {
    crate::domain::validate::calendar_date(value)
}

async fn new_template(
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
async fn price_quote(state: &AppState, page: &HotelPage, form: &NewForm) -> QuoteView {
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
async fn quote_fragment(State(state): State<AppState>, page: HotelPage, Query(form): Query<NewForm>) -> Response {
    let quote = price_quote(&state, &page, &form).await;
    page::render(&QuoteTemplate { quote }, StatusCode::OK)
}

/// `POST …/reservations`: "Show price" re-renders the form with the price; "Create" makes the reservation (and,
/// for a new guest, the guest) in one transaction and opens it.
async fn create(State(state): State<AppState>, page: HotelPage, posted: Posted<NewForm>) -> WebResult {
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
        match optional(&form.guest_id) {
            Some(id) => Some(DeskGuest::Existing(id)),
            None => match optional(&form.guest_query) {
                None => {
                    errors.add("guestQuery", "Type the guest's e-mail or name.");
                    None
                }
                Some(text) => {
                    matches = front_office::find_guests(&state.db, &page.session.actor, &text, 20).await?;
                    match matches.as_slice() {
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
                    }
                }
            },
        }
    } else {
        Some(DeskGuest::New(GuestIn {
            hotel_id: Some(page.hotel.id.clone()),
            first_name: form.first_name.clone(),
            last_name: form.last_name.clone(),
            email: optional(&form.email),
            phone: optional(&form.phone),
            country: None,
            language: None,
            notes: None,
        }))
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
            let input = ReservationIn {
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
                }],
            };
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
