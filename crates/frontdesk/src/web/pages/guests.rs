//! Guests: search by name or e-mail, one guest with their stays, create, edit and delete (refused while they have
//! stays). Guests belong to the organization; one made here is associated with the hotel being worked on.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use futures::TryStreamExt;
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office;
use crate::domain::guest_messages::{self, GuestMessage, MessageStatus};
use crate::domain::guests::{self, Guest, GuestFilter, GuestIn, GuestPatch};
use crate::domain::listing::ListParams;
use crate::web::form::{self, optional, FormErrors};
use crate::web::page::{render_page, Chrome, ConfirmPage, Section, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view::{Catalog, StayRow};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/guests", get(list).post(create))
        .route("/hotels/{hotel_id}/guests/new", get(new_form))
        .route("/hotels/{hotel_id}/guests/{id}", get(detail).post(update))
        .route("/hotels/{hotel_id}/guests/{id}/edit", get(edit_form))
        .route("/hotels/{hotel_id}/guests/{id}/delete", post(delete))
        .route("/hotels/{hotel_id}/guests/{id}/messages/{message_id}/resend", post(resend))
}

/// Most guests a list shows.
const LIST_LIMIT: i64 = 100;

struct GuestRow {
    href: String,
    name: String,
    email: String,
    phone: String,
    country: String,
}

impl GuestRow {
    fn new(g: &Guest, hotel_path: &str) -> GuestRow {
        GuestRow {
            href: format!("{hotel_path}guests/{}", g.id),
            name: front_office::guest_name(g),
            email: g.email.clone().unwrap_or_default(),
            phone: g.phone.clone().unwrap_or_default(),
            country: g.country.clone().unwrap_or_default(),
        }
    }
}

#[derive(Template)]
#[template(path = "guests/list.html")]
struct ListTemplate {
    chrome: Chrome,
    q: String,
    rows: Vec<GuestRow>,
    searched: bool,
}

#[derive(Deserialize)]
struct Search {
    #[serde(default)]
    q: String,
}

async fn list(State(state): State<AppState>, page: HotelPage, Query(search): Query<Search>) -> WebResult {
    let actor = &page.session.actor;
    let q = search.q.trim().to_string();
    let found: Vec<Guest> = if q.is_empty() {
        let filter = GuestFilter { sort_field: Some("createdAt".into()), ..GuestFilter::default() };
        let params =
            ListParams { limit: Some(LIST_LIMIT), sort_direction: Some("DESC".into()), ..ListParams::default() };
        guests::list(&state.db, actor, filter, params).await?.items.into_stream().try_collect().await?
    } else {
        front_office::find_guests(&state.db, actor, &q, LIST_LIMIT).await?
    };
    let hotel_path = page.path("");
    let template = ListTemplate {
        chrome: page.chrome(&state, Section::Guests, "Guests").await?,
        rows: found.iter().map(|g| GuestRow::new(g, &hotel_path)).collect(),
        searched: !q.is_empty(),
        q,
    };
    Ok(render_page(&template, &page.session, &state))
}

#[derive(Template)]
#[template(path = "guests/detail.html")]
struct DetailTemplate {
    chrome: Chrome,
    guest: Guest,
    stays: Vec<StayRow>,
    invoices: Vec<crate::web::pages::invoices::InvoiceLink>,
    messages: Vec<MessageRow>,
    mail_configured: bool,
    href: String,
    new_reservation: String,
    /// The guest's changes, from the audit log.
    history: Option<Vec<crate::web::pages::audit::HistoryLine>>,
}

/// A line of the guest's message log.
struct MessageRow {
    id: String,
    kind: &'static str,
    status: &'static str,
    status_class: &'static str,
    /// When it was sent, or is (or was) due.
    when: String,
    recipient: String,
    problem: Option<String>,
    can_resend: bool,
}

impl MessageRow {
    fn new(m: &GuestMessage, hotel: &crate::domain::hotels::Hotel) -> MessageRow {
        let local = |at: chrono::DateTime<chrono::Utc>| {
            at.with_timezone(&hotel.time_zone()).format("%a %-d %b %Y, %H:%M").to_string()
        };
        let (status, status_class) = match m.status {
            MessageStatus::Pending if m.attempts > 0 => ("Retrying", "requested"),
            MessageStatus::Pending => ("Scheduled", "requested"),
            MessageStatus::Sent => ("Sent", "confirmed"),
            MessageStatus::Failed => ("Failed", "cancelled"),
            MessageStatus::Cancelled => ("Not needed", "checked-out"),
            MessageStatus::NotSent => ("Not sent", "no-show"),
        };
        MessageRow {
            id: m.id.clone(),
            kind: m.kind.label(),
            status,
            status_class,
            when: local(m.sent_at.unwrap_or(m.due_at)),
            recipient: m.recipient.clone(),
            problem: m.last_error.clone().filter(|_| m.status != MessageStatus::Sent),
            can_resend: matches!(m.status, MessageStatus::Sent | MessageStatus::Failed | MessageStatus::NotSent),
        }
    }
}

async fn detail(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
) -> WebResult {
    let record = front_office::guest_record(&state.db, &page.session.actor, &id).await?;
    let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    let messages = guest_messages::of_guest(&state.db, &page.session.actor, &record.guest.id).await?;
    let stay_ids: Vec<String> = record.stays.iter().map(|s| s.reservation.id.clone()).collect();
    let invoices = crate::domain::finance::invoices::of_reservations(&state.db, &page.session.actor, &stay_ids).await?;
    let history = crate::web::pages::audit::history(&state, &page, std::slice::from_ref(&record.guest.id)).await?;
    let template = DetailTemplate {
        history,
        invoices: crate::web::pages::invoices::InvoiceLink::all(&invoices),
        chrome: page.chrome(&state, Section::Guests, &front_office::guest_name(&record.guest)).await?,
        stays: StayRow::rows(&record.stays, &catalog),
        messages: messages.iter().map(|m| MessageRow::new(m, &page.hotel)).collect(),
        mail_configured: state.config.mail.smtp_url.is_some(),
        href: page.path(&format!("guests/{}", record.guest.id)),
        new_reservation: format!("{}?guest={}", page.path("reservations/new"), record.guest.id),
        guest: record.guest,
    };
    Ok(render_page(&template, &page.session, &state))
}

/// The guest form's fields, as typed.
#[derive(Debug, Default, Deserialize)]
struct GuestForm {
    #[serde(rename = "firstName", default)]
    first_name: String,
    #[serde(rename = "lastName", default)]
    last_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    street: String,
    #[serde(rename = "postalCode", default)]
    postal_code: String,
    #[serde(default)]
    city: String,
    #[serde(default)]
    country: String,
    #[serde(default)]
    language: String,
    #[serde(default)]
    notes: String,
}

impl GuestForm {
    fn of(g: &Guest) -> GuestForm {
        GuestForm {
            first_name: g.first_name.clone(),
            last_name: g.last_name.clone(),
            email: g.email.clone().unwrap_or_default(),
            phone: g.phone.clone().unwrap_or_default(),
            street: g.street.clone().unwrap_or_default(),
            postal_code: g.postal_code.clone().unwrap_or_default(),
            city: g.city.clone().unwrap_or_default(),
            country: g.country.clone().unwrap_or_default(),
            language: g.language.clone().unwrap_or_default(),
            notes: g.notes.clone().unwrap_or_default(),
        }
    }
}

const GUEST_FIELDS: [&str; 7] = ["firstName", "lastName", "email", "phone", "country", "language", "notes"];

#[derive(Template)]
#[template(path = "guests/form.html")]
struct FormTemplate {
    chrome: Chrome,
    heading: String,
    action: String,
    cancel: String,
    form: GuestForm,
    errors: FormErrors,
    unplaced: Vec<String>,
    button: &'static str,
}

async fn form_page(
    state: &AppState,
    page: &HotelPage,
    editing: Option<&str>,
    form: GuestForm,
    errors: FormErrors,
) -> WebResult {
    let (heading, action, cancel, button) = match editing {
        Some(id) => (
            format!("Edit {} {}", form.first_name, form.last_name),
            page.path(&format!("guests/{id}")),
            page.path(&format!("guests/{id}")),
            "Save changes",
        ),
        None => ("New guest".to_string(), page.path("guests"), page.path("guests"), "Create guest"),
    };
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    let template = FormTemplate {
        chrome: page.chrome(state, Section::Guests, &heading).await?,
        unplaced: errors.unplaced(&GUEST_FIELDS),
        heading,
        action,
        cancel,
        form,
        errors,
        button,
    };
    let mut response = render_page(&template, &page.session, state);
    *response.status_mut() = status;
    Ok(response)
}

async fn new_form(State(state): State<AppState>, page: HotelPage) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::GuestsWrite)?;
    form_page(&state, &page, None, GuestForm::default(), FormErrors::default()).await
}

async fn edit_form(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
) -> WebResult {
    page.session.actor.require_scope(crate::domain::access::Scope::GuestsWrite)?;
    let guest = guests::get(&state.db, &page.session.actor, &id).await?;
    form_page(&state, &page, Some(&guest.id), GuestForm::of(&guest), FormErrors::default()).await
}

async fn create(State(state): State<AppState>, page: HotelPage, posted: Posted<GuestForm>) -> WebResult {
    let f = posted.form;
    let input = GuestIn {
        hotel_id: Some(page.hotel.id.clone()),
        first_name: f.first_name.clone(),
        last_name: f.last_name.clone(),
        email: optional(&f.email),
        phone: optional(&f.phone),
        street: optional(&f.street),
        postal_code: optional(&f.postal_code),
        city: optional(&f.city),
        country: optional(&f.country).map(|c| c.to_uppercase()),
        language: optional(&f.language),
        notes: optional(&f.notes),
    };
    match guests::create(&state.db, &page.session.actor, input).await {
        Ok(g) => {
            let flash = Flash::success(format!("Guest {} created.", front_office::guest_name(&g)));
            Ok(session::redirect_with(&page.path(&format!("guests/{}", g.id)), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            form_page(&state, &page, None, f, errors).await
        }
    }
}

async fn update(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<GuestForm>,
) -> WebResult {
    let f = posted.form;
    // Every field of the form is sent: an emptied optional field clears it.
    let patch = GuestPatch {
        hotel_id: None,
        first_name: Some(f.first_name.clone()),
        last_name: Some(f.last_name.clone()),
        email: Some(optional(&f.email)),
        phone: Some(optional(&f.phone)),
        street: Some(optional(&f.street)),
        postal_code: Some(optional(&f.postal_code)),
        city: Some(optional(&f.city)),
        country: Some(optional(&f.country).map(|c| c.to_uppercase())),
        language: Some(optional(&f.language)),
        notes: Some(optional(&f.notes)),
    };
    match guests::update(&state.db, &page.session.actor, &id, patch).await {
        Ok(g) => {
            let flash = Flash::success(format!("Saved {}.", front_office::guest_name(&g)));
            Ok(session::redirect_with(&page.path(&format!("guests/{}", g.id)), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            form_page(&state, &page, Some(&id), f, errors).await
        }
    }
}

#[derive(Deserialize)]
struct DeleteForm {
    confirmed: Option<String>,
}

/// Deletes a guest after confirmation; a guest with stays is kept (409, shown as a message).
async fn delete(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
    posted: Posted<DeleteForm>,
) -> WebResult {
    let guest = guests::get(&state.db, &page.session.actor, &id).await?;
    let name = front_office::guest_name(&guest);
    let href = page.path(&format!("guests/{id}"));
    if !form::confirmed(posted.form.confirmed.as_deref()) {
        let template = ConfirmPage {
            frame: page.chrome(&state, Section::Guests, "Please confirm").await?.into(),
            question: format!("Delete the guest {name}?"),
            detail: "Their details are removed for good. A guest with reservations cannot be deleted.".into(),
            action: format!("{href}/delete"),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, delete {name}"),
            cancel_href: href,
        };
        return Ok(render_page(&template, &page.session, &state));
    }
    match guests::delete(&state.db, &page.session.actor, &id).await {
        Ok(_) => Ok(session::redirect_with(&page.path("guests"), Flash::success(format!("Deleted {name}.")), &state)),
        Err(crate::domain::Error::Conflict(_)) => Ok(session::redirect_with(
            &href,
            Flash::error(format!("{name} has reservations, so the guest cannot be deleted.")),
            &state,
        )),
        Err(err) => Err(err.into()),
    }
}

/// Sends a message of the guest's log again (a new message, due at once).
async fn resend(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id, message_id)): axum::extract::Path<(String, String, String)>,
    _posted: Posted<EmptyForm>,
) -> WebResult {
    let href = page.path(&format!("guests/{id}"));
    let guest = guests::get(&state.db, &page.session.actor, &id).await?;
    let message = guest_messages::of_guest(&state.db, &page.session.actor, &guest.id)
        .await?
        .into_iter()
        .find(|m| m.id == message_id)
        .ok_or(crate::domain::Error::NotFound("message"))?;
    match guest_messages::resend(&state.db, &page.session.actor, &message.id).await {
        Ok(again) => Ok(session::redirect_with(
            &href,
            Flash::success(format!(
                "\u{201c}{}\u{201d} will be sent again to {}.",
                again.kind.label(),
                again.recipient
            )),
            &state,
        )),
        Err(crate::domain::Error::Conflict(why)) => Ok(session::redirect_with(&href, Flash::error(why), &state)),
        Err(err) => Err(err.into()),
    }
}

#[derive(Debug, Default, Deserialize)]
struct EmptyForm {}
