//! The channel connection page (docs/channels.md): the hotel's connection to Channex, its state, its mapping, the
//! changes waiting, the last requests with their task ids, answers in words and the values Channex refused, and
//! "resync". Connecting asks for the base URL, the property id and the API key (kept sealed, never shown again:
//! left empty, the stored key is kept) and maps our room types, and our rate plans per room type, to Channex's ids.
//! Through `crate::channels`, which the dispatcher reads.

use std::collections::HashMap;

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use super::{field, when, Frame, Nav, Tab};
use crate::app::AppState;
use crate::channels::channex::client::Client;
use crate::channels::channex::{setup, CHANNEL};
use crate::channels::{self as adapter, ConnectionIn, ConnectionState, RatePlanMapping, RoomTypeMapping};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations/channels", get(show).post(connect))
        .route("/hotels/{hotel_id}/integrations/channels/resync", post(resync))
        .route("/hotels/{hotel_id}/integrations/channels/disconnect", post(disconnect))
        .route("/hotels/{hotel_id}/integrations/channels/create-missing", post(create_missing))
        .route("/hotels/{hotel_id}/integrations/channels/webhook", post(register_webhook))
}

/// A mapping field: our record, and the Channex id typed or chosen for it.
pub struct MapRow {
    pub label: String,
    pub name: String,
    pub value: String,
    /// Channex's records it may map to (id, title), when Channex could be read: the field is then a choice.
    pub choices: Vec<(String, String)>,
    /// The value is an id Channex does not list (any more).
    pub unknown: bool,
}

impl MapRow {
    fn new(label: String, name: String, value: String, choices: Vec<(String, String)>) -> MapRow {
        let unknown = !value.is_empty() && !choices.is_empty() && !choices.iter().any(|(id, _)| *id == value);
        MapRow { label, name, value, choices, unknown }
    }
}

/// A request in the log.
pub struct RequestRow {
    pub at: String,
    pub kind: &'static str,
    pub outcome: &'static str,
    pub ok: bool,
    pub task_id: String,
    pub detail: String,
    pub values: i64,
    /// Each refused value with Channex's reasons, as JSON.
    pub warnings: Vec<String>,
}

#[derive(Template)]
#[template(path = "integrations/channels.html")]
struct Page {
    chrome: Chrome,
    nav: Nav,
    errors: FormErrors,
    connected: bool,
    state: &'static str,
    active: bool,
    reason: String,
    paused_until: String,
    base_url: String,
    property_id: String,
    /// The hour of the nightly full sync as the form holds it ("" for none).
    nightly_sync_hour: String,
    hours: Vec<(i64, String)>,
    room_types: Vec<MapRow>,
    rate_plans: Vec<MapRow>,
    waiting: i64,
    /// Why Channex's room types and rate plans could not be read ("": read, or not connected).
    remote_problem: String,
    /// What "Create what is missing" would make: our room types and (plan, room type) pairs with no mapping.
    missing: usize,
    /// The URL the booking webhook calls, and whether a secret for it is set.
    webhook_url: String,
    webhook_set: bool,
    requests: Vec<RequestRow>,
    revisions: Vec<RevisionRow>,
    needing_attention: usize,
}

/// A booking revision taken from Channex.
pub struct RevisionRow {
    pub at: String,
    pub status: String,
    pub booking_id: String,
    pub applied: bool,
    pub detail: String,
    pub acked: bool,
    pub reservation_href: String,
}

fn room_type_field(room_type_id: &str) -> String {
    format!("rt-{room_type_id}")
}

fn rate_plan_field(rate_plan_id: &str, room_type_id: &str) -> String {
    format!("rp-{rate_plan_id}-{room_type_id}")
}

async fn page(
    state: &AppState,
    page: &HotelPage,
    form: Option<&HashMap<String, String>>,
    errors: FormErrors,
) -> WebResult {
    let frame = Frame::load(state, page, Tab::Channels, "Channels").await?;
    let o = adapter::overview(&state.db, &page.session.actor, &page.hotel.id, CHANNEL, 30).await?;
    let hotel = &frame.chrome.hotel;
    // Channex's own lists make each mapping a choice by title; without them, ids are typed.
    let remote = match &o.connection {
        Some(c) => read_remote(state, c).await,
        None => Ok(setup::Remote::default()),
    };
    let (remote, remote_problem) = match remote {
        Ok(remote) => (remote, String::new()),
        Err(why) => (setup::Remote::default(), why),
    };
    let typed = |name: &str, stored: Option<&str>| match form {
        Some(f) => field(f, name).to_string(),
        None => stored.unwrap_or_default().to_string(),
    };
    let room_types = o
        .room_types
        .iter()
        .map(|t| {
            let name = room_type_field(&t.id);
            let stored = o.room_type_mappings.iter().find(|m| m.room_type_id == t.id).map(|m| m.remote_id.as_str());
            let choices = remote.room_types.iter().map(|r| (r.id.clone(), r.title.clone())).collect();
            let value = typed(&name, stored);
            MapRow::new(t.name.clone(), name, value, choices)
        })
        .collect();
    let mut rate_plans = Vec::new();
    for plan in &o.rate_plans {
        for room_type_id in adapter::plan_room_types(plan, &o.room_types) {
            let room_type = o.room_types.iter().find(|t| t.id == room_type_id).map_or("", |t| t.name.as_str());
            let name = rate_plan_field(&plan.id, room_type_id);
            let stored = o
                .rate_plan_mappings
                .iter()
                .find(|m| m.rate_plan_id == plan.id && m.room_type_id == room_type_id)
                .map(|m| m.remote_id.as_str());
            let off = if plan.active { "" } else { " (off: sent as stop-sell)" };
            // Channex's plans of the room type ours is mapped to (all of them while it is not mapped).
            let remote_room_type =
                o.room_type_mappings.iter().find(|m| m.room_type_id == room_type_id).map(|m| m.remote_id.as_str());
            let choices = remote
                .rate_plans
                .iter()
                .filter(|r| remote_room_type.is_none_or(|id| r.room_type_id == id))
                .map(|r| (r.id.clone(), r.title.clone()))
                .collect();
            let value = typed(&name, stored);
            rate_plans.push(MapRow::new(format!("{} · {room_type}{off}", plan.name), name, value, choices));
        }
    }
    let c = o.connection.as_ref();
    let t = Page {
        errors,
        connected: c.is_some(),
        state: c.map_or("not connected", |c| c.state.as_str()),
        active: c.is_some_and(|c| c.state == ConnectionState::Active),
        reason: c.and_then(|c| c.state_reason.clone()).unwrap_or_default(),
        paused_until: c
            .and_then(|c| c.paused_until)
            .filter(|at| *at > chrono::Utc::now())
            .map(|at| when(hotel, at))
            .unwrap_or_default(),
        base_url: typed("baseUrl", Some(c.map_or("https://staging.channex.io/api/v1", |c| c.base_url.as_str()))),
        property_id: typed("propertyId", c.map(|c| c.property_id.as_str())),
        nightly_sync_hour: typed(
            "nightlySyncHour",
            c.and_then(|c| c.nightly_sync_hour).map(|h| h.to_string()).as_deref(),
        ),
        hours: (0..24).map(|h| (h, format!("{h:02}:00"))).collect(),
        room_types,
        rate_plans,
        waiting: o.waiting,
        missing: o.room_types.iter().filter(|t| !o.room_type_mappings.iter().any(|m| m.room_type_id == t.id)).count()
            + o.rate_plans
                .iter()
                .flat_map(|plan| {
                    adapter::plan_room_types(plan, &o.room_types).into_iter().map(move |t| (plan.id.as_str(), t))
                })
                .filter(|(plan, t)| {
                    !o.rate_plan_mappings.iter().any(|m| m.rate_plan_id == *plan && m.room_type_id == *t)
                })
                .count(),
        remote_problem,
        webhook_url: setup::webhook_url(&state.config.public_base(), &page.hotel.id),
        webhook_set: c.is_some_and(|c| c.webhook_secret_digest.is_some()),
        requests: o
            .requests
            .iter()
            .map(|r| RequestRow {
                at: when(hotel, r.sent_at),
                kind: r.kind.as_str(),
                outcome: r.outcome.as_str(),
                ok: r.outcome == adapter::RequestOutcome::Accepted && r.warnings == "[]",
                task_id: r.task_id.clone().unwrap_or_default(),
                detail: r.detail.clone(),
                values: r.value_count,
                warnings: serde_json::from_str::<Vec<serde_json::Value>>(&r.warnings)
                    .unwrap_or_default()
                    .iter()
                    .map(|w| w.to_string())
                    .collect(),
            })
            .collect(),
        needing_attention: o.revisions.iter().filter(|r| r.outcome != "applied").count(),
        revisions: o
            .revisions
            .iter()
            .map(|r| RevisionRow {
                at: when(hotel, r.recorded_at),
                status: r.status.clone(),
                booking_id: r.booking_id.clone(),
                applied: r.outcome == "applied",
                detail: r.detail.clone(),
                acked: r.acked_at.is_some(),
                reservation_href: r
                    .reservation_id
                    .as_ref()
                    .map(|id| frame.chrome.hotel_path(&format!("reservations/{id}")))
                    .unwrap_or_default(),
            })
            .collect(),
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, state))
}

async fn show(State(state): State<AppState>, hotel_page: HotelPage) -> WebResult {
    page(&state, &hotel_page, None, FormErrors::default()).await
}

async fn connect(
    State(state): State<AppState>,
    hotel_page: HotelPage,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let f = posted.form;
    let actor = &hotel_page.session.actor;
    let o = adapter::overview(&state.db, actor, &hotel_page.hotel.id, CHANNEL, 0).await?;
    let typed = |name: &str| Some(field(&f, name).trim()).filter(|v| !v.is_empty()).map(str::to_string);
    let room_types = o
        .room_types
        .iter()
        .filter_map(|t| {
            Some(RoomTypeMapping { room_type_id: t.id.clone(), remote_id: typed(&room_type_field(&t.id))? })
        })
        .collect();
    let mut rate_plans = Vec::new();
    for plan in &o.rate_plans {
        for room_type_id in adapter::plan_room_types(plan, &o.room_types) {
            if let Some(remote_id) = typed(&rate_plan_field(&plan.id, room_type_id)) {
                rate_plans.push(RatePlanMapping {
                    rate_plan_id: plan.id.clone(),
                    room_type_id: room_type_id.to_string(),
                    remote_id,
                });
            }
        }
    }
    let input = ConnectionIn {
        hotel_id: hotel_page.hotel.id.clone(),
        channel: CHANNEL.into(),
        base_url: field(&f, "baseUrl").trim().to_string(),
        property_id: field(&f, "propertyId").trim().to_string(),
        api_key: typed("apiKey"),
        webhook_secret: typed("webhookSecret"),
        room_types,
        rate_plans,
        // Not a number (a tampered form) is refused as an hour out of range, with the form shown again.
        nightly_sync_hour: typed("nightlySyncHour").map(|hour| hour.parse::<i64>().unwrap_or(-1)),
    };
    match adapter::connect(&state.db, &state.webhooks.secret_box, actor, input).await {
        Ok(_) => {
            let flash = Flash::success("Connected to Channex: a full sync (two requests) goes out in a few seconds.");
            Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            let mut response = page(&state, &hotel_page, Some(&f), errors).await?;
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            Ok(response)
        }
    }
}

async fn resync(
    State(state): State<AppState>,
    hotel_page: HotelPage,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    adapter::resync(&state.db, &hotel_page.session.actor, &hotel_page.hotel.id, CHANNEL).await?;
    let flash = Flash::success("Resync asked: every night of the next 500 goes out again, in two requests.");
    Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state))
}

async fn disconnect(
    State(state): State<AppState>,
    hotel_page: HotelPage,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let actor = &hotel_page.session.actor;
    setup::unregister_webhook(&state.db, &state.webhooks.secret_box, actor, &hotel_page.hotel.id).await?;
    adapter::disconnect(&state.db, actor, &hotel_page.hotel.id, CHANNEL).await?;
    let flash = Flash::success("Disconnected from Channex: nothing is sent to it or taken from it any more.");
    Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state))
}

/// Channex's room types and rate plans for the connection's property, read with a short timeout (the page waits
/// for it); why not, in words.
async fn read_remote(state: &AppState, c: &adapter::ChannelConnection) -> Result<setup::Remote, String> {
    let key =
        state.webhooks.secret_box.open(&c.api_key_sealed).map_err(|_| "the stored key cannot be opened".to_string())?;
    let http = Client::http(std::time::Duration::from_secs(5)).map_err(|e| e.to_string())?;
    setup::read(&Client::new(http, &c.base_url, &key), &c.property_id).await
}

async fn create_missing(
    State(state): State<AppState>,
    hotel_page: HotelPage,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let actor = &hotel_page.session.actor;
    let flash = match setup::create_missing(&state.db, &state.webhooks.secret_box, actor, &hotel_page.hotel.id).await {
        Ok(made) => Flash::success(format!(
            "Created in Channex and mapped: {} room type(s), {} rate plan(s). A full sync goes out in a few seconds.",
            made.room_types, made.rate_plans
        )),
        Err(crate::domain::Error::Conflict(why)) => Flash::error(why),
        Err(err) => return Err(err.into()),
    };
    Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state))
}

async fn register_webhook(
    State(state): State<AppState>,
    hotel_page: HotelPage,
    _posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let actor = &hotel_page.session.actor;
    if state.config.public_url.is_none() {
        // Channex would be told this process's listening address, which it cannot reach.
        let flash = Flash::error(
            "Set the service's public URL (--public-url, FRONTDESK_PUBLIC_URL) first: Channex calls it with the \
             bookings.",
        );
        return Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state));
    }
    let base = state.config.public_base();
    let registered =
        setup::register_webhook(&state.db, &state.webhooks.secret_box, actor, &hotel_page.hotel.id, &base).await;
    let flash = match registered {
        Ok(url) => Flash::success(format!("Registered the booking webhook in Channex: it calls {url}.")),
        Err(crate::domain::Error::Conflict(why)) => Flash::error(why),
        Err(err) => return Err(err.into()),
    };
    Ok(session::redirect_with(&hotel_page.path("integrations/channels"), flash, &state))
}
