//! The moves of the state machine: approve, decline, cancel, check in (with room assignments), check out (with its
//! page), no-show; those that cannot be undone ask first.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use chrono::NaiveDate;
use serde::Deserialize;

use super::super::HotelPage;
use super::{back_to, guest_title, of_hotel, refusal};
use crate::app::AppState;
use crate::domain::finance::folios::PaymentMethod;
use crate::domain::finance::ledger::{self, Entry, PaymentIn, RefundIn};
use crate::domain::front_office::StayLine;
use crate::domain::reservations::{
    attention, stay, write, ReservationPatch, ReservationStatus, RoomAssignmentIn, RoomStatus,
};
use crate::domain::rooms::HousekeepingStatus;
use crate::domain::{money, Error};
use crate::web::form::{self};
use crate::web::page::{self, render_page, Chrome, ConfirmPage, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view::{self, Catalog, StayRow};

/// What a move is called in messages, and whether it needs confirming first.
pub(super) fn move_words(to: ReservationStatus, requested: bool) -> (&'static str, &'static str, bool) {
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
pub(super) fn confirm_words(to: ReservationStatus, verb: &str, guest: &str) -> (String, String) {
    match to {
        ReservationStatus::NoShow => (format!("Mark {guest} as a no-show?"), format!("Yes, mark {guest} as a no-show")),
        _ => (format!("{verb} {guest}?"), format!("Yes, {} {guest}", verb.to_lowercase())),
    }
}

/// `POST …/status`: one move of the state machine. A check-in may carry room assignments (`room:<reservation room
/// id>` = physical room id), applied in the same write. Cancelling, declining and no-shows ask for confirmation.
pub(super) async fn move_status(
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
    let confirmed = form::confirmed(form.get("confirmed").map(String::as_str));
    let asking = Asking { state: &state, page: &page, id: &id, form: &form };
    if destructive && !confirmed {
        let (question, button) = confirm_words(to, verb, &guest);
        let r = &line.reservation;
        let detail = format!(
            "{} to {}, {}. This cannot be undone.",
            view::date_long(r.check_in_date),
            view::date_long(r.check_out_date),
            view::nights(r.nights())
        );
        return asking.confirm(Question { question, detail, button }, back).await;
    }
    if to == ReservationStatus::CheckedOut && !confirmed {
        // A check-out is never one click: the page that says what it will do comes first.
        let query = serde_urlencoded::to_string([("back", back.as_str())]).unwrap_or_default();
        return Ok(
            axum::response::Redirect::to(&page.path(&format!("reservations/{id}/check-out?{query}"))).into_response()
        );
    }
    let assignments = assignments(&form);
    if to == ReservationStatus::CheckedIn && line.reservation.status == ReservationStatus::Confirmed && !confirmed {
        // Checking in to a room not cleaned since its last guest is allowed, once the desk says so.
        let dirty = dirty_rooms(&state, &page, &line, &assignments).await?;
        if !dirty.is_empty() {
            return asking.confirm(dirty_check_in(&guest, &dirty), back).await;
        }
    }
    let settle = form.get("settle").map(String::as_str);
    if to == ReservationStatus::CheckedOut && matches!(settle, Some("payment" | "refund")) {
        if let Err(flash) = settle_at_check_out(&state, &page, &line, &form).await? {
            let query = serde_urlencoded::to_string([("back", back.as_str())]).unwrap_or_default();
            return Ok(session::redirect_with(
                &page.path(&format!("reservations/{id}/check-out?{query}")),
                flash,
                &state,
            ));
        }
    }
    let on_account = form.get("onAccountReason").filter(|_| settle == Some("account"));
    let patch = ReservationPatch {
        status: Some(to),
        rooms: (!assignments.is_empty()).then_some(assignments),
        on_account_reason: on_account.and_then(|r| form::optional(r)),
        ..ReservationPatch::default()
    };
    let flash = match write::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(_) => Flash::success(format!("{done} {guest}.")),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}

/// The payment (`settle=payment`) or, when the hotel owes the guest, the refund against a payment the desk chose
/// (`settle=refund`) a check-out form settles the folio with: the same ledger function as the REST routes, recorded
/// before the check-out, which then finds the balance at 0. `Err` with the message when it is refused.
async fn settle_at_check_out(
    state: &AppState,
    page: &HotelPage,
    line: &StayLine,
    form: &HashMap<String, String>,
) -> Result<Result<(), Flash>, WebError> {
    let Some(folio) = &line.reservation.folio else { return Ok(Ok(())) };
    let refund = form.get("settle").map(String::as_str) == Some("refund");
    let (field, missing) = if refund { ("refundAmount", "refunded") } else { ("amount", "paid") };
    let mut errors = form::FormErrors::default();
    let text = form.get(field).map(String::as_str).unwrap_or_default();
    let Some(amount) = errors.money(field, text, &folio.currency) else {
        let message = errors.unplaced(&[]).join("; ");
        let message = if message.is_empty() { format!("Enter the amount {missing}.") } else { message };
        return Ok(Err(Flash::error(message)));
    };
    let entry = if refund {
        let Some(payment_id) = form.get("payment").and_then(|p| form::optional(p)) else {
            return Ok(Err(Flash::error("Choose the payment the refund goes back to.")));
        };
        Entry::Refund { payment_id, refund: RefundIn { amount, reason: Some("Settled at check-out".into()) } }
    } else {
        let method = form.get("method").and_then(|m| m.parse::<PaymentMethod>().ok()).unwrap_or(PaymentMethod::Other);
        let reference = form.get("reference").and_then(|r| form::optional(r));
        Entry::Payment(PaymentIn { method, amount, currency: None, reference, paid_at: None })
    };
    match ledger::record(&state.db, &page.session.actor, &folio.id, entry, None).await {
        Ok(_) => Ok(Ok(())),
        Err(err) => refusal(err).map(Err),
    }
}

/// A move's form, to be posted again once the desk confirms it.
struct Asking<'a> {
    state: &'a AppState,
    page: &'a HotelPage,
    id: &'a str,
    form: &'a HashMap<String, String>,
}

/// What a confirmation page asks, says and offers.
struct Question {
    question: String,
    detail: String,
    button: String,
}

impl Asking<'_> {
    /// The confirmation page of the move: its button sends the same form again, confirmed; `back` leaves it undone.
    async fn confirm(&self, q: Question, back: String) -> WebResult {
        let mut fields: Vec<(String, String)> =
            self.form.iter().filter(|(k, _)| *k != session::CSRF_FIELD).map(|(k, v)| (k.clone(), v.clone())).collect();
        fields.push(("confirmed".into(), "yes".into()));
        fields.sort();
        let template = ConfirmPage {
            frame: self.page.chrome(self.state, Section::Reservations, "Please confirm").await?.into(),
            question: q.question,
            detail: q.detail,
            action: format!("{}/reservations/{}/status", self.page.path("").trim_end_matches('/'), self.id),
            fields,
            button: q.button,
            cancel_href: back,
        };
        Ok(render_page(&template, &self.page.session, self.state))
    }
}

/// The room assignments a check-in form carries (`room:<reservation room id>` = physical room id).
fn assignments(form: &HashMap<String, String>) -> Vec<RoomAssignmentIn> {
    form.iter()
        .filter_map(|(k, v)| k.strip_prefix("room:").map(|rr| (rr, v)))
        .filter(|(_, v)| !v.is_empty())
        .map(|(rr, v)| RoomAssignmentIn { id: rr.to_string(), room_id: Some(Some(v.clone())) })
        .collect()
}

/// The rooms ("room 104") a check-in would put the guest in that housekeeping marks dirty: those the form assigns,
/// else those the stay's rooms have already.
async fn dirty_rooms(
    state: &AppState,
    page: &HotelPage,
    line: &StayLine,
    assignments: &[RoomAssignmentIn],
) -> Result<Vec<String>, WebError> {
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
    Ok(chosen
        .iter()
        .filter(|id| catalog.room_status.get(*id) == Some(&HousekeepingStatus::Dirty))
        .map(|id| format!("room {}", catalog.room(id)))
        .collect())
}

/// The question before checking a guest in to rooms marked dirty.
fn dirty_check_in(guest: &str, dirty: &[String]) -> Question {
    let (rooms, are) = if dirty.len() == 1 { (dirty.join(""), "is") } else { (dirty.join(", "), "are") };
    Question {
        question: format!("Check {guest} in to a dirty room?"),
        detail: format!(
            "Housekeeping has not cleaned {rooms} since the last guest left: it {are} marked dirty. Check in \
             anyway, or go back and choose a clean room."
        ),
        button: "Yes, check in".into(),
    }
}

#[derive(Template)]
#[template(path = "reservations/check_out.html")]
pub(super) struct CheckOutTemplate {
    chrome: Chrome,
    row: StayRow,
    back: String,
    stayed: String,
    leaves: String,
    folio_total: String,
    /// What is still owed after the check-out, when it is not 0.
    open_balance: Option<String>,
    /// The payment's amount field as it starts: what is owed (empty when the hotel owes).
    due: String,
    /// When the hotel owes the guest (paid more than was charged): how much, shown and as the refund's amount
    /// starts.
    owed: Option<(String, String)>,
    /// The payments a refund can go against (id, "Card, 12 Nov: EUR 300.00 left"), newest first.
    refundable: Vec<(String, String)>,
    currency: String,
    methods: Vec<(&'static str, &'static str)>,
    folio_href: String,
    early: bool,
    booked_departure: String,
    released: String,
    removed: String,
}

#[derive(Deserialize)]
pub(super) struct BackQuery {
    back: Option<String>,
}

/// `GET …/check-out`: what checking the stay out now will do (nights, folio total, and for an early departure the
/// nights given back and the charges removed), with the button that does it.
pub(super) async fn check_out_page(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    Query(query): Query<BackQuery>,
) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::ReservationsWrite)?;
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
    // When the hotel owes money back, the refund goes against a payment the guest made.
    let refundable = match (&r.folio, preview.balance < 0) {
        (Some(folio), true) => {
            let folio = ledger::get(&state.db, &page.session.actor, &folio.id).await?;
            ledger::refundable(&folio)
                .into_iter()
                .map(|(payment, left)| {
                    let label = format!(
                        "{}, {}: {} left",
                        payment.method.map_or("Payment", PaymentMethod::label),
                        view::date_short(payment.service_date),
                        money::format(left, &folio.currency)
                    );
                    (payment.id.clone(), label)
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let template = CheckOutTemplate {
        chrome: page.chrome(&state, Section::Reservations, &format!("Check out {}", guest_title(&line.guest))).await?,
        row: StayRow::new(&line, &catalog),
        back,
        stayed: format!("{} ({})", view::nights(preview.nights), span(r.check_in_date, preview.leaves)),
        leaves: view::date_long(preview.leaves),
        folio_total: money::format(preview.folio_total, &preview.currency),
        open_balance: (preview.balance != 0).then(|| money::format(preview.balance, &preview.currency)),
        due: if preview.balance > 0 { money::input_value(preview.balance, &preview.currency) } else { String::new() },
        owed: (preview.balance < 0).then(|| {
            (
                money::format(-preview.balance, &preview.currency),
                money::input_value(-preview.balance, &preview.currency),
            )
        }),
        refundable,
        currency: preview.currency.clone(),
        methods: PaymentMethod::CHOICES.to_vec(),
        folio_href: page.path(&format!("reservations/{id}#folio-title")),
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

/// `POST …/approve`: the same recheck under lock as `POST /api/reservations/{id}/approve`.
pub(super) async fn approve(
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

/// Marks a stay's flag handled (the desk moved a guest, or called the channel).
pub(super) async fn attention_handled(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let line = of_hotel(&state, &page, &id).await?;
    let back = back_to(posted.form.get("back").map(String::as_str), &page, &id);
    let guest = guest_title(&line.guest);
    let flash = match attention::mark_handled(&state.db, &page.session.actor, &id).await {
        Ok(()) => Flash::success(format!("Marked the stay of {guest} handled.")),
        Err(Error::Conflict(message)) => Flash::error(format!("{message}.")),
        Err(err) => refusal(err)?,
    };
    Ok(session::redirect_with(&back, flash, &state))
}
