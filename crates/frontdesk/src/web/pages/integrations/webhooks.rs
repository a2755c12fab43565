//! Webhook subscriptions: list (a subscription turned off after 20 failed deliveries in a row is flagged, and
//! turned on again with one click), create (hotel, URL, events; none ticked means every event; the signing secret
//! shown once), edit URL, events and active, delete, and the log of delivery attempts. Through
//! `domain::webhooks`, as `/api/webhooksubscriptions` is: turning a subscription on clears its failure count there.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use super::{checkboxes, field, secret_response, ticked, ticked_values, when, Checkbox, Frame, Nav, SecretPage, Tab};
use crate::app::AppState;
use crate::domain::events::EventKind;
use crate::domain::hotels::{self, Hotel};
use crate::domain::webhooks::{
    self, failures_turn_off, DeliveriesQuery, WebhookSubscription, WebhookSubscriptionIn, WebhookSubscriptionPatch,
    MAX_CONSECUTIVE_FAILURES,
};
use crate::web::form::{self, FormErrors};
use crate::web::page::{render_page, Chrome, ConfirmPage, Section, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations/webhooks", get(list).post(create))
        .route("/hotels/{hotel_id}/integrations/webhooks/{subscription_id}", get(edit).post(save))
        .route("/hotels/{hotel_id}/integrations/webhooks/{subscription_id}/enable", post(enable))
        .route("/hotels/{hotel_id}/integrations/webhooks/{subscription_id}/delete", post(delete))
}

fn event_boxes(chosen: &[EventKind]) -> Vec<Checkbox> {
    checkboxes(EventKind::ALL, "event", EventKind::as_str, chosen)
}

fn events_ticked(form: &HashMap<String, String>) -> Vec<EventKind> {
    ticked_values(EventKind::ALL, "event", EventKind::as_str, form)
}

/// A subscription as the list shows it.
pub struct SubscriptionRow {
    pub url: String,
    pub href: String,
    pub hotel: String,
    pub events: String,
    pub active: bool,
    /// Turned off by failures (rather than by an operator).
    pub failing: bool,
    pub failures: i64,
    pub created: String,
}

fn subscription_row(frame: &Frame, hotels: &[Hotel], s: &WebhookSubscription) -> SubscriptionRow {
    SubscriptionRow {
        url: s.url.clone(),
        href: frame.path(&format!("webhooks/{}", s.id)),
        hotel: hotels.iter().find(|h| h.id == s.hotel_id).map_or_else(|| s.hotel_id.clone(), |h| h.name.clone()),
        events: if s.events.is_empty() {
            "every event".to_string()
        } else {
            s.events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
        },
        active: s.active,
        failing: !s.active && failures_turn_off(s.consecutive_failures),
        failures: s.consecutive_failures,
        created: when(&frame.chrome.hotel, s.created_at),
    }
}

#[derive(Template)]
#[template(path = "integrations/webhooks.html")]
struct ListPage {
    chrome: Chrome,
    nav: Nav,
    subscriptions: Vec<SubscriptionRow>,
    hotels: Vec<(String, String)>,
    errors: FormErrors,
    hotel_id: String,
    url: String,
    events: Vec<Checkbox>,
    max_failures: i64,
}

async fn list_page(
    state: &AppState,
    page: &HotelPage,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::Webhooks, "Webhooks").await?;
    let actor = &page.session.actor;
    let hotels = hotels::list(&state.db, actor).await?;
    let subscriptions = webhooks::list(&state.db, actor).await?;
    let t = ListPage {
        subscriptions: subscriptions.iter().map(|s| subscription_row(&frame, &hotels, s)).collect(),
        hotels: hotels.iter().map(|h| (h.id.clone(), h.name.clone())).collect(),
        errors,
        hotel_id: form.map_or_else(|| page.hotel.id.clone(), |f| field(f, "hotelId").to_string()),
        url: form.map(|f| field(f, "url").to_string()).unwrap_or_default(),
        events: event_boxes(&form.map(events_ticked).unwrap_or_default()),
        max_failures: MAX_CONSECUTIVE_FAILURES,
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn list(State(state): State<AppState>, page: HotelPage) -> WebResult {
    list_page(&state, &page, None, FormErrors::default()).await
}

async fn create(State(state): State<AppState>, page: HotelPage, posted: Posted<HashMap<String, String>>) -> WebResult {
    let f = posted.form;
    let input = WebhookSubscriptionIn {
        hotel_id: field(&f, "hotelId").trim().to_string(),
        url: field(&f, "url").trim().to_string(),
        events: events_ticked(&f),
    };
    match webhooks::create(&state.db, &state.webhooks, &page.session.actor, input).await {
        Ok(created) => {
            let frame = Frame::load(&state, &page, Tab::Webhooks, "Webhook subscription created").await?;
            let t = SecretPage {
                heading: "Webhook subscription created".into(),
                label: "Signing secret".into(),
                usage: vec![format!("POST {}", created.subscription.url), "X-Service-Signature: t=…,v1=…".into()],
                note: "Each delivery is signed with this secret: v1 is the hex HMAC-SHA256 of “<t>.<raw body>”. Copy \
                       it into the receiver now: it is shown only on this page, never again."
                    .into(),
                secret: created.secret,
                back_href: frame.path(&format!("webhooks/{}", created.subscription.id)),
                back_label: "Go to the subscription".into(),
                chrome: frame.chrome,
                nav: frame.nav,
            };
            secret_response(&t, &page.session, &state)
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            match err {
                // The hotel is chosen from a list of the organization's: not there means it is gone (or forged).
                crate::domain::Error::NotFound(_) => errors.add("hotelId", "Choose one of your hotels."),
                err => errors.absorb(err)?,
            }
            let mut response = list_page(&state, &page, Some(&f), errors).await?;
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

/// One delivery attempt in the log.
pub struct DeliveryRow {
    pub event: &'static str,
    pub at: String,
    pub success: bool,
    pub outcome: String,
    pub duration: String,
}

#[derive(Template)]
#[template(path = "integrations/webhook.html")]
struct EditPage {
    chrome: Chrome,
    nav: Nav,
    row: SubscriptionRow,
    errors: FormErrors,
    url: String,
    active: bool,
    events: Vec<Checkbox>,
    deliveries: Vec<DeliveryRow>,
    max_failures: i64,
}

async fn edit_page(
    state: &AppState,
    page: &HotelPage,
    subscription: &WebhookSubscription,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::Webhooks, "Webhook subscription").await?;
    let actor = &page.session.actor;
    let hotels = hotels::list(&state.db, actor).await?;
    let log = webhooks::deliveries(&state.db, actor, &subscription.id, DeliveriesQuery { limit: None }).await?;
    let deliveries = log
        .iter()
        .map(|d| DeliveryRow {
            event: d.event.as_str(),
            at: when(&frame.chrome.hotel, d.attempted_at),
            success: d.success,
            outcome: match (d.status_code, &d.error) {
                (Some(code), _) => format!("HTTP {code}"),
                (None, Some(error)) => error.clone(),
                (None, None) => "no answer".to_string(),
            },
            duration: format!("{} ms", d.duration_ms),
        })
        .collect();
    let t = EditPage {
        row: subscription_row(&frame, &hotels, subscription),
        errors,
        url: form.map_or_else(|| subscription.url.clone(), |f| field(f, "url").to_string()),
        active: form.map_or(subscription.active, |f| ticked(f, "active")),
        events: event_boxes(&form.map_or_else(|| subscription.events.clone(), events_ticked)),
        deliveries,
        max_failures: MAX_CONSECUTIVE_FAILURES,
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn edit(State(state): State<AppState>, page: HotelPage, Path((_, id)): Path<(String, String)>) -> WebResult {
    let subscription = webhooks::get(&state.db, &page.session.actor, &id).await?;
    edit_page(&state, &page, &subscription, None, FormErrors::default()).await
}

async fn save(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let subscription = webhooks::get(&state.db, &page.session.actor, &id).await?;
    let f = posted.form;
    let active = ticked(&f, "active");
    let patch = WebhookSubscriptionPatch {
        url: Some(field(&f, "url").trim().to_string()),
        events: Some(events_ticked(&f)),
        // Only a change is sent: saving the URL of a subscription that stays off must not count as turning it on.
        active: (active != subscription.active).then_some(active),
    };
    match webhooks::update(&state.db, &state.webhooks, &page.session.actor, &id, patch).await {
        Ok(_) => {
            let flash = Flash::success("Saved the webhook subscription.");
            Ok(session::redirect_with(&page.path(&format!("integrations/webhooks/{id}")), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            let mut response = edit_page(&state, &page, &subscription, Some(&f), errors).await?;
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

/// Turns a subscription on again (one click), which also clears its failure count.
async fn enable(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let patch = WebhookSubscriptionPatch { url: None, events: None, active: Some(true) };
    let subscription = webhooks::update(&state.db, &state.webhooks, &page.session.actor, &id, patch).await?;
    let flash = Flash::success(format!("Turned deliveries to {} back on.", subscription.url));
    Ok(session::redirect_with(&page.path("integrations/webhooks"), flash, &state))
}

async fn delete(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let subscription = webhooks::get(&state.db, &page.session.actor, &id).await?;
    let href = page.path(&format!("integrations/webhooks/{id}"));
    if !form::confirmed(posted.form.get("confirmed").map(String::as_str)) {
        let frame = Frame::load(&state, &page, Tab::Webhooks, "Please confirm").await?;
        let t = ConfirmPage {
            frame: frame.chrome.into(),
            question: format!("Delete the webhook subscription to {}?", subscription.url),
            detail: "Nothing more is sent to this URL, and its delivery log goes with it.".into(),
            action: format!("{href}/delete"),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, delete the subscription to {}", subscription.url),
            cancel_href: href,
        };
        return Ok(render_page(&t, &page.session, &state));
    }
    webhooks::delete(&state.db, &page.session.actor, &id).await?;
    let flash = Flash::success(format!("Deleted the webhook subscription to {}.", subscription.url));
    Ok(session::redirect_with(&page.path("integrations/webhooks"), flash, &state))
}
