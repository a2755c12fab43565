//! Channel connections (docs/channels.md): a hotel connected to Channex is kept in step through the dispatcher,
//! against a stand-in Channex on loopback written from Channex's documentation (docs/channex-api-notes.md §1-2):
//! it checks the key header and every field of every value, answers with task ids and with warnings inside a 200
//! for values it refuses, enforces 10 requests a minute per endpoint with a 429, and can be told to fail.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use chrono::{Days, NaiveDate, Timelike, Utc};
use serde_json::{json, Value};

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::process::spawn_with;
use crate::common::{day, Dashboard, Org, TestDatabase, TestServer, PASSWORD, WAIT};
use frontdesk::channels::channex::worker::{Dispatcher, Options};
use frontdesk::channels::{self, ConnectionIn, ConnectionState, RatePlanMapping, RequestOutcome, RoomTypeMapping};
use frontdesk::domain::reservations::attention::AttentionReason;
use frontdesk::domain::service_keys::{KeyRing, KeySource};
use frontdesk::domain::Actor;
use frontdesk::store;
use frontdesk::store::Engine;

on_both_engines!(
    a_full_sync_of_500_days_is_two_requests,
    a_full_sync_larger_than_one_message_goes_in_parts_and_loses_nothing,
    three_rates_on_three_dates_go_in_one_request_and_ranges_collapse,
    certification_ari_scenarios_through_the_rates_calendar,
    a_booking_lowers_availability,
    a_room_out_of_order_lowers_availability_and_a_plan_turned_off_stops_selling,
    too_many_requests_twice_then_success_loses_nothing,
    a_revoked_key_stops_the_connection_and_loses_nothing,
    the_connection_page_connects_and_shows_each_request_and_refused_value,
    bookings_arrive_once_each_and_are_acknowledged_once,
    a_modified_booking_takes_the_channels_prices_per_night_and_the_guests_new_details,
    a_party_larger_than_the_room_type_is_taken_and_flagged,
    malformed_and_hostile_revisions_are_refused_recorded_and_never_half_written,
    an_unreachable_host_keeps_the_changes_until_it_answers,
    a_booking_for_a_full_night_is_taken_flagged_and_the_channels_told_nothing_is_left,
    the_nightly_full_sync_runs_once_in_the_hour_the_hotel_chose,
    the_property_is_set_up_in_channex_from_the_page,
    fifty_edits_stay_within_the_limit_and_lose_nothing,
    what_was_written_while_nothing_sent_goes_later_and_a_dead_claim_is_taken_over,
);

const KEY: &str = "uU08XiMgk8a7CrY4xUjAReUIuTrn83R123adaVb8Tf/qMcVTEgriuJhXWs/1Q1P";
const ERROR_PAUSE: Duration = Duration::from_millis(1500);
const WEBHOOK_SECRET: &str = "whsec-channex-0123456789abcdef";

// ---------------------------------------------------------------------------------------------------------------
// The stand-in Channex.

#[derive(Clone, Debug)]
struct Call {
    /// `availability` or `restrictions`.
    endpoint: &'static str,
    status: u16,
    body: Value,
    task_id: Option<String>,
    warnings: Vec<Value>,
    at: Instant,
}

#[derive(Default)]
struct Books {
    property_id: String,
    room_types: HashSet<String>,
    rate_plans: HashSet<String>,
    calls: Vec<Call>,
    /// Statuses the next ARI calls are answered with, before any check.
    script: VecDeque<u16>,
    /// Booking revisions, and whether each was acknowledged (the feed lists those that were not).
    revisions: Vec<(Value, bool)>,
    /// Every acknowledgement received, by revision id.
    acks: Vec<String>,
    /// The ARI limit: `limit.0` calls per endpoint within `limit.1` (Channex: 10 a minute).
    limit: (usize, Duration),
    /// The property's room types (id, title, adults) and rate plans (id, title, room type id), as the options
    /// endpoints list them.
    room_type_rows: Vec<(String, String, i64)>,
    rate_plan_rows: Vec<(String, String, String)>,
    /// Room types, rate plans and webhooks created through the API: (endpoint, the body's object).
    created: Vec<(&'static str, Value)>,
    /// The webhooks there are now (made, updated, not deleted), by id.
    webhooks: BTreeMap<String, Value>,
}

#[derive(Clone)]
struct StandIn {
    base_url: String,
    books: Arc<Mutex<Books>>,
}

impl StandIn {
    /// A property with `room_types` and `rate_plans` (each: id, room type id), titled "Room type n" / "Rate plan n".
    async fn start(property_id: &str, room_types: &[&str], rate_plans: &[(&str, &str)]) -> StandIn {
        let books = Arc::new(Mutex::new(Books {
            property_id: property_id.into(),
            room_types: room_types.iter().map(|s| s.to_string()).collect(),
            rate_plans: rate_plans.iter().map(|(id, _)| id.to_string()).collect(),
            room_type_rows: room_types
                .iter()
                .enumerate()
                .map(|(i, id)| (id.to_string(), format!("Room type {i}"), 2))
                .collect(),
            rate_plan_rows: rate_plans
                .iter()
                .enumerate()
                .map(|(i, (id, room_type))| (id.to_string(), format!("Rate plan {i}"), room_type.to_string()))
                .collect(),
            limit: (10, Duration::from_secs(60)),
            ..Books::default()
        }));
        let app = axum::Router::new()
            .route(
                "/api/v1/availability",
                axum::routing::post(|State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, body: Bytes| async move {
                    ari(&b, "availability", &h, &body)
                }),
            )
            .route(
                "/api/v1/restrictions",
                axum::routing::post(|State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, body: Bytes| async move {
                    ari(&b, "restrictions", &h, &body)
                }),
            )
            .route(
                "/api/v1/booking_revisions/feed",
                axum::routing::get(
                    |State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, q: axum::extract::RawQuery| async move {
                        feed(&b, &h, q.0.as_deref().unwrap_or(""))
                    },
                ),
            )
            .route(
                "/api/v1/booking_revisions/{id}",
                axum::routing::get(
                    |State(b): State<Arc<Mutex<Books>>>,
                     h: HeaderMap,
                     axum::extract::Path(id): axum::extract::Path<String>| async move {
                        one_revision(&b, &h, &id)
                    },
                ),
            )
            .route(
                "/api/v1/booking_revisions/{id}/ack",
                axum::routing::post(
                    |State(b): State<Arc<Mutex<Books>>>,
                     h: HeaderMap,
                     axum::extract::Path(id): axum::extract::Path<String>| async move {
                        ack(&b, &h, &id)
                    },
                ),
            )
            .route(
                "/api/v1/room_types/options",
                axum::routing::get(
                    |State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, q: axum::extract::RawQuery| async move {
                        options(&b, "room_types", &h, q.0.as_deref().unwrap_or(""))
                    },
                ),
            )
            .route(
                "/api/v1/rate_plans/options",
                axum::routing::get(
                    |State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, q: axum::extract::RawQuery| async move {
                        options(&b, "rate_plans", &h, q.0.as_deref().unwrap_or(""))
                    },
                ),
            )
            .route(
                "/api/v1/room_types",
                axum::routing::post(|State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, body: Bytes| async move {
                    create(&b, "room_types", &h, &body)
                }),
            )
            .route(
                "/api/v1/rate_plans",
                axum::routing::post(|State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, body: Bytes| async move {
                    create(&b, "rate_plans", &h, &body)
                }),
            )
            .route(
                "/api/v1/webhooks",
                axum::routing::post(|State(b): State<Arc<Mutex<Books>>>, h: HeaderMap, body: Bytes| async move {
                    create(&b, "webhooks", &h, &body)
                }),
            )
            .route(
                "/api/v1/webhooks/{id}",
                axum::routing::put(
                    |State(b): State<Arc<Mutex<Books>>>,
                     h: HeaderMap,
                     axum::extract::Path(id): axum::extract::Path<String>,
                     body: Bytes| async move { change_webhook(&b, &h, &id, Some(&body)) },
                )
                .delete(
                    |State(b): State<Arc<Mutex<Books>>>,
                     h: HeaderMap,
                     axum::extract::Path(id): axum::extract::Path<String>| async move {
                        change_webhook(&b, &h, &id, None)
                    },
                ),
            )
            .with_state(books.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        StandIn { base_url: format!("http://{addr}/api/v1"), books }
    }

    fn calls(&self) -> Vec<Call> {
        self.books.lock().unwrap().calls.clone()
    }

    fn script(&self, statuses: &[u16]) {
        self.books.lock().unwrap().script.extend(statuses);
    }

    /// A booking revision as Channex documents it (§4.1): one room of `room_type` under `rate_plan`, nights
    /// `[from, to)` at 150.00 each.
    fn revision(
        &self,
        status: &str,
        booking: &str,
        room_type: Option<&str>,
        rate_plan: &str,
        from: u64,
        to: u64,
    ) -> String {
        let nights: Vec<(u64, String)> = (from..to).map(|d| (d, "150.00".to_string())).collect();
        let amount = format!("{}.00", 150 * (to - from));
        self.revision_priced(status, booking, (room_type, rate_plan), &nights, &amount, Self::customer())
    }

    /// The customer of [`StandIn::revision`].
    fn customer() -> Value {
        json!({"name": "Ana", "surname": "Silva", "mail": "ana@example.com", "phone": null, "language": "pt",
               "country": "PT", "city": null, "address": null, "zip": null})
    }

    /// A booking revision of one room sold night by night at `nights`' prices (`days`), for `amount` in all.
    fn revision_priced(
        &self,
        status: &str,
        booking: &str,
        (room_type, rate_plan): (Option<&str>, &str),
        nights: &[(u64, String)],
        amount: &str,
        customer: Value,
    ) -> String {
        let mut b = self.books.lock().unwrap();
        let id = uuid();
        let days: serde_json::Map<String, Value> = nights.iter().map(|(d, price)| (day(*d), json!(price))).collect();
        let (from, to) = (nights[0].0, nights[nights.len() - 1].0 + 1);
        let revision = json!({"type": "booking_revision", "id": id, "attributes": {
            "id": id, "property_id": b.property_id, "booking_id": booking, "unique_id": "BDC-9996013801",
            "system_id": "12331233123", "ota_reservation_code": "9996013801", "ota_name": "Booking.com", "status": status,
            "rooms": [{"amount": amount, "checkin_date": day(from), "checkout_date": day(to), "rate_plan_id": rate_plan,
                       "room_type_id": room_type, "ota_unique_id": "49", "days": days,
                       "occupancy": {"adults": 2, "children": 0, "infants": 0}}],
            "services": [], "guarantee": null,
            "customer": customer,
            "occupancy": {"adults": 2, "children": 0, "infants": 0},
            "arrival_date": day(from), "departure_date": day(to), "arrival_hour": null,
            "amount": amount, "ota_commission": "10.00", "currency": "EUR", "notes": "Late arrival",
            "payment_collect": null, "payment_type": null, "inserted_at": "2026-11-23T10:03:29.335485"}});
        b.revisions.push((revision, false));
        id
    }

    fn acks(&self) -> Vec<String> {
        self.books.lock().unwrap().acks.clone()
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    headers.get("user-api-key").and_then(|v| v.to_str().ok()) == Some(KEY)
}

fn feed(books: &Mutex<Books>, headers: &HeaderMap, query: &str) -> (StatusCode, axum::Json<Value>) {
    let b = books.lock().unwrap();
    if !authorized(headers) {
        let (status, body) = error(401, "unauthorized", "Unauthorized");
        return (status, axum::Json(body));
    }
    let wanted = format!("filter[property_id]={}", b.property_id);
    let query = percent_decode(query);
    if !query.contains(&wanted) {
        let (status, body) = error(400, "bad_request", "Bad Request");
        return (status, axum::Json(body));
    }
    let waiting: Vec<Value> = b.revisions.iter().filter(|(_, acked)| !acked).map(|(r, _)| r.clone()).collect();
    let total = waiting.len();
    (StatusCode::OK, axum::Json(json!({"data": waiting, "meta": {"page": 1, "limit": 10, "total": total}})))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn one_revision(books: &Mutex<Books>, headers: &HeaderMap, id: &str) -> (StatusCode, axum::Json<Value>) {
    let b = books.lock().unwrap();
    let (status, body) = if !authorized(headers) {
        error(401, "unauthorized", "Unauthorized")
    } else {
        match b.revisions.iter().find(|(r, _)| r["id"] == json!(id)) {
            Some((r, _)) => (StatusCode::OK, json!({"data": r})),
            None => error(404, "resource_not_found", "Resource Not Found"),
        }
    };
    (status, axum::Json(body))
}

fn ack(books: &Mutex<Books>, headers: &HeaderMap, id: &str) -> (StatusCode, axum::Json<Value>) {
    let mut b = books.lock().unwrap();
    if !authorized(headers) {
        let (status, body) = error(401, "unauthorized", "Unauthorized");
        return (status, axum::Json(body));
    }
    b.acks.push(id.to_string());
    match b.revisions.iter_mut().find(|(r, _)| r["id"] == json!(id)) {
        Some((_, acked)) => {
            *acked = true;
            (StatusCode::OK, axum::Json(json!({"meta": {"message": "Success"}})))
        }
        None => {
            let (status, body) = error(404, "resource_not_found", "Resource Not Found");
            (status, axum::Json(body))
        }
    }
}

/// `GET /room_types/options` and `/rate_plans/options` for the property (§3.2-3.3): every row, no paging.
fn options(books: &Mutex<Books>, what: &str, headers: &HeaderMap, query: &str) -> (StatusCode, axum::Json<Value>) {
    let b = books.lock().unwrap();
    if !authorized(headers) {
        let (status, body) = error(401, "unauthorized", "Unauthorized");
        return (status, axum::Json(body));
    }
    if !percent_decode(query).contains(&format!("filter[property_id]={}", b.property_id)) {
        let (status, body) = error(400, "bad_request", "Bad Request");
        return (status, axum::Json(body));
    }
    let data: Vec<Value> = if what == "room_types" {
        b.room_type_rows
            .iter()
            .map(|(id, title, adults)| {
                json!({"type": "room_type", "id": id, "attributes": {
                "id": id, "title": title, "property_id": b.property_id, "default_occupancy": adults}})
            })
            .collect()
    } else {
        b.rate_plan_rows
            .iter()
            .map(|(id, title, room_type)| {
                json!({"type": "rate_plan", "id": id, "attributes": {
                "id": id, "title": title, "room_type_id": room_type, "occupancy": 2, "sell_mode": "per_room",
                "parent_rate_plan_id": null}})
            })
            .collect()
    };
    (StatusCode::OK, axum::Json(json!({"data": data})))
}

/// `POST /room_types`, `/rate_plans`, `/webhooks`, each checked field by field as documented (§3.2, §3.3, §5):
/// 422 with the fields' messages, else 201 with the new record.
fn create(
    books: &Mutex<Books>,
    what: &'static str,
    headers: &HeaderMap,
    body: &[u8],
) -> (StatusCode, axum::Json<Value>) {
    let mut b = books.lock().unwrap();
    if !authorized(headers) {
        let (status, body) = error(401, "unauthorized", "Unauthorized");
        return (status, axum::Json(body));
    }
    let wrapper = match what {
        "room_types" => "room_type",
        "rate_plans" => "rate_plan",
        _ => "webhook",
    };
    let Some(v) = serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get(wrapper).cloned()) else {
        let (status, body) = error(400, "bad_request", "Bad Request");
        return (status, axum::Json(body));
    };
    let mut problems: BTreeMap<String, String> = BTreeMap::new();
    let mut problem = |field: &str, message: &str| {
        problems.insert(field.to_string(), message.to_string());
    };
    let int = |field: &str| v.get(field).and_then(Value::as_i64);
    let title = v["title"].as_str().unwrap_or("");
    if what != "webhooks" && (title.is_empty() || title.chars().count() > 255) {
        problem("title", "can't be blank and at most 255 characters");
    }
    if v["property_id"] != json!(b.property_id) {
        problem("property_id", "is not this account's property");
    }
    match what {
        "room_types" => {
            if int("count_of_rooms").is_none_or(|n| n < 1) {
                problem("count_of_rooms", "must be a positive integer");
            }
            for field in ["occ_adults", "occ_children", "occ_infants"] {
                if int(field).is_none_or(|n| n < 0) {
                    problem(field, "must be an integer");
                }
            }
            if int("default_occupancy").is_none_or(|n| n < 1 || n > int("occ_adults").unwrap_or(0)) {
                problem("default_occupancy", "must be at most occ_adults");
            }
            if !["room", "dorm"].contains(&v["room_kind"].as_str().unwrap_or("room")) {
                problem("room_kind", "is invalid");
            }
        }
        "rate_plans" => {
            // "Should be unique per Property" (§3.3).
            if b.rate_plan_rows.iter().any(|(_, t, _)| t.eq_ignore_ascii_case(title)) {
                problem("title", "has already been taken");
            }
            let room_type = v["room_type_id"].as_str().unwrap_or("");
            let adults = b.room_type_rows.iter().find(|(id, _, _)| id == room_type).map(|(_, _, adults)| *adults);
            if adults.is_none() {
                problem("room_type_id", "is not a room type of the property");
            }
            let options = v["options"].as_array().cloned().unwrap_or_default();
            let primary = options.iter().filter(|o| o["is_primary"] == json!(true)).count();
            if v["sell_mode"] != json!("per_room") || options.len() != 1 || primary != 1 {
                problem("options", "per_room wants one option, the primary one");
            }
            if options.iter().any(|o| o["occupancy"].as_i64().is_none_or(|n| n < 1 || n > adults.unwrap_or(0))) {
                problem("options", "occupancy must be within the room type's");
            }
            if v["rate_mode"] != json!("manual") || v["currency"].as_str().is_none_or(|c| c.len() != 3) {
                problem("rate_mode", "manual, with a currency");
            }
        }
        _ => {
            if v["callback_url"].as_str().is_none_or(|u| !u.starts_with("http")) {
                problem("callback_url", "must be a URL");
            }
            if v["event_mask"].as_str().is_none_or(str::is_empty) {
                problem("event_mask", "can't be blank");
            }
            if v["is_active"] != json!(true) || v["send_data"] != json!(true) {
                problem("is_active", "a webhook that is not active, or sends no data, is of no use here");
            }
        }
    }
    if !problems.is_empty() {
        let details: serde_json::Map<String, Value> = problems.into_iter().map(|(k, m)| (k, json!([m]))).collect();
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            axum::Json(
                json!({"errors": {"code": "validation_error", "title": "Validation Error", "details": details}}),
            ),
        );
    }
    let id = uuid();
    match what {
        "room_types" => {
            b.room_types.insert(id.clone());
            b.room_type_rows.push((id.clone(), title.to_string(), int("occ_adults").unwrap_or(0)));
        }
        "rate_plans" => {
            b.rate_plans.insert(id.clone());
            b.rate_plan_rows.push((id.clone(), title.to_string(), v["room_type_id"].as_str().unwrap_or("").into()));
        }
        _ => {
            b.webhooks.insert(id.clone(), v.clone());
        }
    }
    b.created.push((what, v.clone()));
    (StatusCode::CREATED, axum::Json(json!({"data": {"type": wrapper, "id": id, "attributes": v}})))
}

/// `PUT /webhooks/:id` (with `body`: checked as when made, then replaces it) and `DELETE /webhooks/:id` (without):
/// 404 for a webhook there is not.
fn change_webhook(
    books: &Mutex<Books>,
    headers: &HeaderMap,
    id: &str,
    body: Option<&[u8]>,
) -> (StatusCode, axum::Json<Value>) {
    let known = books.lock().unwrap().webhooks.contains_key(id);
    if !authorized(headers) || !known {
        let (status, body) =
            if known { error(401, "unauthorized", "Unauthorized") } else { error(404, "not_found", "Not Found") };
        return (status, axum::Json(body));
    }
    let Some(body) = body else {
        books.lock().unwrap().webhooks.remove(id);
        return (StatusCode::OK, axum::Json(json!({"meta": {"message": "Success"}})));
    };
    // Checked as a new one is; the check's new record is taken back, and this one changed instead.
    let (status, answer) = create(books, "webhooks", headers, body);
    if status != StatusCode::CREATED {
        return (status, answer);
    }
    let mut b = books.lock().unwrap();
    let made = answer.0["data"]["id"].as_str().unwrap_or_default().to_string();
    let v = b.webhooks.remove(&made).unwrap_or_default();
    b.created.pop();
    b.webhooks.insert(id.to_string(), v.clone());
    (StatusCode::OK, axum::Json(json!({"data": {"type": "webhook", "id": id, "attributes": v}})))
}

fn error(status: u16, code: &str, title: &str) -> (StatusCode, Value) {
    (StatusCode::from_u16(status).unwrap(), json!({"errors": {"code": code, "title": title}}))
}

/// One ARI call, answered as Channex documents it.
fn ari(books: &Mutex<Books>, endpoint: &'static str, headers: &HeaderMap, body: &[u8]) -> impl IntoResponse {
    let mut b = books.lock().unwrap();
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let mut call =
        Call { endpoint, status: 200, body: body.clone(), task_id: None, warnings: vec![], at: Instant::now() };
    let answer = (|| {
        if headers.get("user-api-key").and_then(|v| v.to_str().ok()) != Some(KEY) {
            return error(401, "unauthorized", "Unauthorized");
        }
        if let Some(status) = b.script.pop_front() {
            return match status {
                429 => error(429, "http_too_many_requests", "Too Many Requests"),
                _ => error(status, "internal_server_error", "Internal Server Error"),
            };
        }
        let window_start = Instant::now() - b.limit.1;
        let recent = b.calls.iter().filter(|c| c.endpoint == endpoint && c.at > window_start).count();
        if recent >= b.limit.0 {
            return error(429, "http_too_many_requests", "Too Many Requests");
        }
        if headers.get("content-type").and_then(|v| v.to_str().ok()) != Some("application/json") {
            return error(400, "bad_request", "Bad Request");
        }
        let Some(values) = body.get("values").and_then(Value::as_array).filter(|v| !v.is_empty()) else {
            return error(400, "bad_request", "Bad Request");
        };
        if body.as_object().map(|o| o.len()) != Some(1) {
            return error(400, "bad_request", "Bad Request");
        }
        let mut warnings = Vec::new();
        for value in values {
            let problems = check_value(&b, endpoint, value);
            if !problems.is_empty() {
                let mut echoed = value.clone();
                echoed["warning"] = Value::Object(problems.into_iter().map(|(k, v)| (k, json!([v]))).collect());
                warnings.push(echoed);
            }
        }
        let task = uuid::Uuid::new_v4().to_string();
        let data = if warnings.len() == values.len() { json!([]) } else { json!([{"id": task, "type": "task"}]) };
        call.task_id = (warnings.len() < values.len()).then_some(task);
        call.warnings = warnings.clone();
        (StatusCode::OK, json!({"data": data, "meta": {"message": "Success", "warnings": warnings}}))
    })();
    call.status = answer.0.as_u16();
    b.calls.push(call);
    (answer.0, axum::Json(answer.1))
}

/// What Channex would warn about in one value (docs/channex-api-notes.md §2.1-2.4): field → message.
fn check_value(b: &Books, endpoint: &str, value: &Value) -> BTreeMap<String, String> {
    let mut problems = BTreeMap::new();
    let Some(fields) = value.as_object() else {
        problems.insert("value".into(), "is invalid".into());
        return problems;
    };
    let (id_field, allowed): (&str, &[&str]) = match endpoint {
        "availability" => {
            ("room_type_id", &["property_id", "room_type_id", "date", "date_from", "date_to", "availability"])
        }
        _ => (
            "rate_plan_id",
            &[
                "property_id",
                "rate_plan_id",
                "date",
                "date_from",
                "date_to",
                "days",
                "rate",
                "min_stay_arrival",
                "min_stay_through",
                "max_stay",
                "closed_to_arrival",
                "closed_to_departure",
                "stop_sell",
            ],
        ),
    };
    for (name, v) in fields {
        if !allowed.contains(&name.as_str()) {
            problems.insert(name.clone(), "is not a known field".into());
        }
        if v.is_null() {
            problems.insert(name.clone(), "Should be a non null value or not existed field".into());
        }
    }
    if fields.get("property_id").and_then(Value::as_str) != Some(b.property_id.as_str()) {
        problems.insert("property_id".into(), "is invalid".into());
    }
    let known = if endpoint == "availability" { &b.room_types } else { &b.rate_plans };
    if !fields.get(id_field).and_then(Value::as_str).is_some_and(|id| known.contains(id)) {
        problems.insert(id_field.into(), "is invalid".into());
    }
    let date = |name: &str| {
        fields.get(name).and_then(Value::as_str).and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let yesterday = Utc::now().date_naive() - Days::new(1);
    match (fields.contains_key("date"), date("date"), date("date_from"), date("date_to")) {
        (true, Some(d), None, None) if !fields.contains_key("date_from") && !fields.contains_key("date_to") => {
            if d < yesterday {
                problems.insert("date".into(), "Past dates are not allowed".into());
            }
        }
        (false, None, Some(from), Some(to)) if from <= to => {
            if from < yesterday {
                problems.insert("date_from".into(), "Past dates are not allowed".into());
            }
        }
        _ => {
            problems.insert("date".into(), "is invalid".into());
        }
    }
    let int = |name: &str| fields.get(name).and_then(Value::as_i64);
    let flag = |name: &str| fields.get(name).is_none_or(Value::is_boolean);
    if endpoint == "availability" {
        if int("availability").is_none_or(|n| n < 0) {
            problems.insert("availability".into(), "must be greater than or equal to 0".into());
        }
        return problems;
    }
    let restrictions = [
        "rate",
        "min_stay_arrival",
        "min_stay_through",
        "max_stay",
        "closed_to_arrival",
        "closed_to_departure",
        "stop_sell",
    ];
    if !restrictions.iter().any(|r| fields.contains_key(*r)) {
        problems.insert("values".into(), "At least one restriction should be present".into());
    }
    if let Some(rate) = fields.get("rate") {
        let positive = match rate {
            Value::String(s) => {
                let (whole, cents) = s.split_once('.').unwrap_or((s, ""));
                !whole.is_empty()
                    && whole.chars().chain(cents.chars()).all(|c| c.is_ascii_digit())
                    && s.parse::<f64>().is_ok_and(|r| r > 0.0)
            }
            Value::Number(n) => n.as_i64().is_some_and(|n| n > 0),
            _ => false,
        };
        if !positive {
            problems.insert("rate".into(), "must be greater than 0".into());
        }
    }
    if fields.contains_key("min_stay_arrival") && int("min_stay_arrival").is_none_or(|n| n < 1) {
        problems.insert("min_stay_arrival".into(), "must be greater than or equal to 1".into());
    }
    if fields.contains_key("max_stay") && int("max_stay").is_none_or(|n| n < 0) {
        problems.insert("max_stay".into(), "must be greater than or equal to 0".into());
    }
    for name in ["closed_to_arrival", "closed_to_departure", "stop_sell"] {
        if !flag(name) {
            problems.insert(name.into(), "is invalid".into());
        }
    }
    problems
}

/// The values of calls expanded night by night: (Channex id, night) → the value without its dates.
fn per_night(calls: &[&Call], id_field: &str) -> HashMap<(String, NaiveDate), Value> {
    let mut out = HashMap::new();
    for call in calls {
        for value in call.body["values"].as_array().expect("values") {
            let parse =
                |name: &str| value[name].as_str().map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").expect("a date"));
            let (from, to) = match parse("date") {
                Some(d) => (d, d),
                None => (parse("date_from").expect("date_from"), parse("date_to").expect("date_to")),
            };
            let mut bare = value.clone();
            for name in ["date", "date_from", "date_to", "property_id", id_field] {
                bare.as_object_mut().unwrap().remove(name);
            }
            let mut night = from;
            while night <= to {
                out.insert((value[id_field].as_str().unwrap().to_string(), night), bare.clone());
                night = night + Days::new(1);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------------------
// A hotel connected to the stand-in.

struct Connected {
    org: Org,
    hotel: String,
    twin: String,
    double: String,
    bar: String,
    bnb: String,
    channex: StandIn,
    dispatcher: Option<Dispatcher>,
    /// Channex's ids.
    twin_r: String,
    double_r: String,
    bar_twin_r: String,
    bar_double_r: String,
    bnb_double_r: String,
    /// What it was connected with.
    input: ConnectionIn,
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn date(offset: u64) -> NaiveDate {
    Utc::now().date_naive() + Days::new(offset)
}

/// BAR's price on night `d`: it changes every week, so a full sync is one value per week per plan.
fn bar_price(d: u64) -> i64 {
    10000 + (d / 7) as i64 * 100
}

impl Connected {
    async fn stop(self) {
        if let Some(dispatcher) = self.dispatcher {
            dispatcher.stop().await;
        }
    }
}

/// The dispatcher's options in these tests: quick rounds, a short coalescing window and pause.
fn test_options() -> Options {
    Options {
        tick: Duration::from_millis(100),
        coalesce: Duration::from_millis(700),
        error_pause: ERROR_PAUSE,
        lease: Duration::from_secs(30),
        timeout: Duration::from_secs(5),
        feed_every: Duration::from_millis(300),
        ..Options::default()
    }
}

/// [`connected_with`] the test options.
async fn connected(s: &TestServer, key: &str) -> Connected {
    connected_with(s, key, Some(test_options())).await
}

/// A hotel with 8 twin and 2 double rooms, "BAR" for every room type priced for 500 nights, "B&B" for the double
/// priced for 120 nights with a minimum stay of 2 on nights 60-62, connected to a stand-in Channex with `key`,
/// and the dispatcher running with `options` (none: not running). The stand-in limits calls as `options` does.
async fn connected_with(s: &TestServer, key: &str, options: Option<Options>) -> Connected {
    let org = s.org("Channels").await;
    let auth = org.auth();
    let hotel = s.hotel(&org, "Harbour").await;
    let twin = s.create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Twin", "maxOccupancy": 2})).await;
    let double =
        s.create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    for n in 0..8 {
        s.post("/api/rooms", &auth, json!({"roomTypeId": twin, "name": format!("T{n}")})).await.expect(200);
    }
    for n in 0..2 {
        s.post("/api/rooms", &auth, json!({"roomTypeId": double, "name": format!("D{n}")})).await.expect(200);
    }
    let bar = s.create("/api/ratePlans", &auth, json!({"hotelId": hotel, "name": "BAR", "code": "BAR"})).await;
    let bnb = s
        .create("/api/ratePlans", &auth, json!({"hotelId": hotel, "roomTypeId": double, "name": "B&B", "code": "BB"}))
        .await;
    let values: Vec<Value> =
        (0..500).map(|d| json!({"ratePlanId": bar, "date": day(d), "price": bar_price(d)})).collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    let values: Vec<Value> = (0..120)
        .map(|d| {
            let min_stay = if (60..=62).contains(&d) { json!(2) } else { Value::Null };
            json!({"ratePlanId": bnb, "date": day(d), "price": 12000, "minStay": min_stay})
        })
        .collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);

    let property = uuid();
    let (twin_r, double_r) = (uuid(), uuid());
    let (bar_twin_r, bar_double_r, bnb_double_r) = (uuid(), uuid(), uuid());
    let channex = StandIn::start(
        &property,
        &[&twin_r, &double_r],
        &[(&bar_twin_r, &twin_r), (&bar_double_r, &double_r), (&bnb_double_r, &double_r)],
    )
    .await;
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.expect("keys").sealing;
    let input = ConnectionIn {
        hotel_id: hotel.clone(),
        channel: "channex".into(),
        base_url: channex.base_url.clone(),
        property_id: property,
        api_key: Some(key.into()),
        webhook_secret: Some(WEBHOOK_SECRET.into()),
        room_types: vec![
            RoomTypeMapping { room_type_id: twin.clone(), remote_id: twin_r.clone() },
            RoomTypeMapping { room_type_id: double.clone(), remote_id: double_r.clone() },
        ],
        rate_plans: vec![
            RatePlanMapping { rate_plan_id: bar.clone(), room_type_id: twin.clone(), remote_id: bar_twin_r.clone() },
            RatePlanMapping {
                rate_plan_id: bar.clone(),
                room_type_id: double.clone(),
                remote_id: bar_double_r.clone(),
            },
            RatePlanMapping {
                rate_plan_id: bnb.clone(),
                room_type_id: double.clone(),
                remote_id: bnb_double_r.clone(),
            },
        ],
        nightly_sync_hour: None,
    };
    let connection =
        channels::connect(&s.db, &sealing, &Actor::command_line(&org.id), input.clone()).await.expect("connected");
    let stored = store::channels::get(&mut s.db.read().await.unwrap(), &connection.id).await.unwrap().unwrap();
    assert!(!stored.api_key_sealed.contains(key), "the key is stored sealed");
    assert_eq!(sealing.open(&stored.api_key_sealed).unwrap(), key);
    let dispatcher = options.map(|options| {
        channex.books.lock().unwrap().limit = (options.per_minute as usize, options.limit_window);
        Dispatcher::spawn(s.db.clone(), sealing, options).expect("dispatcher")
    });
    Connected {
        org,
        hotel,
        twin,
        double,
        bar,
        bnb,
        channex,
        dispatcher,
        twin_r,
        double_r,
        bar_twin_r,
        bar_double_r,
        bnb_double_r,
        input,
    }
}

/// Waits until the stand-in has had `n` calls and no change waits, then a while longer (for any call that should
/// not come), and answers the calls.
async fn settled(s: &TestServer, c: &Connected, n: usize) -> Vec<Call> {
    let started = Instant::now();
    loop {
        if c.channex.calls().len() >= n && s.count("channel_changes").await == 0 {
            break;
        }
        assert!(
            started.elapsed() < WAIT,
            "{} calls of {n}, {} changes waiting",
            c.channex.calls().len(),
            s.count("channel_changes").await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let calls = c.channex.calls();
    assert_eq!(
        calls.len(),
        n,
        "exactly {n} calls: {:#?}",
        calls.iter().map(|c| (c.endpoint, c.status)).collect::<Vec<_>>()
    );
    for call in &calls {
        assert!(call.warnings.is_empty(), "Channex would refuse values: {:#}", json!(call.warnings));
    }
    calls
}

async fn requests(s: &TestServer, c: &Connected) -> Vec<channels::ChannelRequest> {
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    let mut requests = store::channels::recent_requests(&mut conn, &connection.id, 100).await.unwrap();
    requests.reverse();
    requests
}

// ---------------------------------------------------------------------------------------------------------------

async fn a_full_sync_of_500_days_is_two_requests(s: TestServer) {
    let c = connected(&s, KEY).await;
    let calls = settled(&s, &c, 2).await;
    let availability: Vec<&Call> = calls.iter().filter(|c| c.endpoint == "availability").collect();
    let restrictions: Vec<&Call> = calls.iter().filter(|c| c.endpoint == "restrictions").collect();
    assert_eq!((availability.len(), restrictions.len()), (1, 1), "one request of each kind");

    // Availability: every room type, 500 nights, all free, one range each.
    let property = c.channex.books.lock().unwrap().property_id.clone();
    assert_eq!(
        availability[0].body,
        json!({"values": [
            {"property_id": property, "room_type_id": c.twin_r,
             "date_from": day(0), "date_to": day(499), "availability": 8},
            {"property_id": property, "room_type_id": c.double_r,
             "date_from": day(0), "date_to": day(499), "availability": 2},
        ]}),
    );

    // Rates: BAR once per room type, B&B on the double; every night of 500 as the hotel has it.
    let nights = per_night(&restrictions, "rate_plan_id");
    assert_eq!(nights.len(), 3 * 500, "three Channex plans, 500 nights each");
    let open = |rate: &str, min_stay: i64| {
        json!({"rate": rate, "min_stay_arrival": min_stay, "max_stay": 0, "closed_to_arrival": false,
               "closed_to_departure": false, "stop_sell": false})
    };
    for d in [0u64, 6, 7, 250, 499] {
        let price = format!("{}.00", bar_price(d) / 100);
        assert_eq!(nights[&(c.bar_twin_r.clone(), date(d))], open(&price, 1), "BAR twin night {d}");
        assert_eq!(nights[&(c.bar_double_r.clone(), date(d))], open(&price, 1), "BAR double night {d}");
    }
    assert_eq!(nights[&(c.bnb_double_r.clone(), date(59))], open("120.00", 1));
    assert_eq!(nights[&(c.bnb_double_r.clone(), date(61))], open("120.00", 2));
    // Not priced after night 119: not for sale.
    assert_eq!(
        nights[&(c.bnb_double_r.clone(), date(120))],
        json!({"min_stay_arrival": 1, "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false, "stop_sell": true})
    );
    // Equal nights went as ranges: BAR changes weekly (72 weeks in 500 nights), B&B has 4 runs.
    let values = restrictions[0].body["values"].as_array().unwrap().len();
    assert_eq!(values, 72 + 72 + 4, "runs of equal nights are one value each");

    // Each request is logged with the task id Channex gave it.
    let log = requests(&s, &c).await;
    assert_eq!(log.len(), 2);
    for (logged, call) in log.iter().zip(&calls) {
        assert_eq!(logged.outcome, RequestOutcome::Accepted);
        assert_eq!(logged.status, Some(200));
        assert_eq!(logged.task_id, call.task_id);
        assert!(logged.task_id.is_some());
    }
    c.stop().await;
}

async fn three_rates_on_three_dates_go_in_one_request_and_ranges_collapse(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let auth = c.org.auth();
    // Three edits, as three people would make them.
    for (plan, d, price) in [(&c.bar, 21, 33300), (&c.bar, 25, 44400), (&c.bnb, 29, 45623)] {
        s.post("/api/dailyRates", &auth, json!({"values": [{"ratePlanId": plan, "date": day(d), "price": price}]}))
            .await
            .expect(200);
    }
    let calls = settled(&s, &c, 3).await;
    let call = &calls[2];
    assert_eq!(call.endpoint, "restrictions", "rates only: availability did not change");
    let property = c.channex.books.lock().unwrap().property_id.clone();
    let value = |plan: &str, d: u64, rate: &str| {
        json!({"property_id": property, "rate_plan_id": plan, "date": day(d), "rate": rate, "min_stay_arrival": 1,
               "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false, "stop_sell": false})
    };
    let mut sent: Vec<Value> = call.body["values"].as_array().unwrap().clone();
    let mut expected = vec![
        value(&c.bar_twin_r, 21, "333.00"),
        value(&c.bar_twin_r, 25, "444.00"),
        value(&c.bar_double_r, 21, "333.00"),
        value(&c.bar_double_r, 25, "444.00"),
        value(&c.bnb_double_r, 29, "456.23"),
    ];
    let key = |v: &Value| format!("{}{}", v["rate_plan_id"], v["date"]);
    sent.sort_by_key(key);
    expected.sort_by_key(key);
    assert_eq!(sent, expected);

    // Ten nights at one price, in one edit: one range per Channex plan.
    let values: Vec<Value> = (30..40).map(|d| json!({"ratePlanId": c.bar, "date": day(d), "price": 24100})).collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    // A minimum stay and a stop-sell, in one edit: their own ranges.
    let values: Vec<Value> = (40..43)
        .map(|d| json!({"ratePlanId": c.bnb, "date": day(d), "price": 12000, "minStay": 3}))
        .chain((43..45).map(|d| json!({"ratePlanId": c.bnb, "date": day(d), "price": 12000, "stopSell": true})))
        .collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    let calls = settled(&s, &c, 4).await;
    let sent = calls[3].body["values"].as_array().unwrap();
    let ranged = |plan: &str, from: u64, to: u64, rate: &str, min_stay: i64, stop_sell: bool| {
        json!({"property_id": property, "rate_plan_id": plan, "date_from": day(from), "date_to": day(to), "rate": rate,
               "min_stay_arrival": min_stay, "max_stay": 0, "closed_to_arrival": false, "closed_to_departure": false,
               "stop_sell": stop_sell})
    };
    let mut sent = sent.clone();
    sent.sort_by_key(key);
    let mut expected = vec![
        ranged(&c.bar_twin_r, 30, 39, "241.00", 1, false),
        ranged(&c.bar_double_r, 30, 39, "241.00", 1, false),
        ranged(&c.bnb_double_r, 40, 42, "120.00", 3, false),
        ranged(&c.bnb_double_r, 43, 44, "120.00", 1, true),
    ];
    expected.sort_by_key(key);
    assert_eq!(sent, expected, "the two edits, coalesced into one request of ranges");
    c.stop().await;
}

async fn a_booking_lowers_availability(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let booking = json!({"hotelId": c.hotel, "checkInDate": day(5), "checkOutDate": day(7),
                         "rooms": [{"roomTypeId": c.twin, "price": 10000}]});
    let reservation = s.post("/api/reservations", &c.org.auth(), booking).await.expect(200).body;
    let calls = settled(&s, &c, 3).await;
    assert_eq!(calls[2].endpoint, "availability", "availability only: rates did not change");
    let property = c.channex.books.lock().unwrap().property_id.clone();
    assert_eq!(
        calls[2].body,
        json!({"values": [
            {"property_id": property, "room_type_id": c.twin_r, "date_from": day(5), "date_to": day(6), "availability": 7},
        ]}),
        "the twin's nights of the stay only"
    );
    // Cancelling gives the room back.
    let id = reservation["id"].as_str().unwrap();
    s.delete(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200);
    let calls = settled(&s, &c, 4).await;
    assert_eq!(calls[3].body["values"][0]["availability"], json!(8));
    c.stop().await;
}

async fn too_many_requests_twice_then_success_loses_nothing(s: TestServer) {
    let c = connected(&s, KEY).await;
    // The first calls are refused before the dispatcher's first send lands (the coalescing window is 700 ms).
    c.channex.script(&[429, 429]);
    let calls = settled(&s, &c, 4).await;
    let summary: Vec<(&str, u16)> = calls.iter().map(|c| (c.endpoint, c.status)).collect();
    assert_eq!(
        summary,
        [("availability", 429), ("availability", 429), ("availability", 200), ("restrictions", 200)],
        "retried after each 429, the connection paused in between"
    );
    for pair in calls.windows(2).take(2) {
        assert!(pair[1].at - pair[0].at >= ERROR_PAUSE - Duration::from_millis(100), "paused after an error answer");
    }
    assert_eq!(calls[2].body, calls[0].body, "what was refused was sent again, whole");
    let log = requests(&s, &c).await;
    let outcomes: Vec<(RequestOutcome, Option<i64>)> = log.iter().map(|r| (r.outcome, r.status)).collect();
    assert_eq!(
        outcomes,
        [
            (RequestOutcome::Retry, Some(429)),
            (RequestOutcome::Retry, Some(429)),
            (RequestOutcome::Accepted, Some(200)),
            (RequestOutcome::Accepted, Some(200)),
        ]
    );
    assert!(log[0].detail.contains("http_too_many_requests"), "{}", log[0].detail);
    c.stop().await;
}

async fn a_revoked_key_stops_the_connection_and_loses_nothing(s: TestServer) {
    let c = connected(&s, "a revoked key").await;
    let started = Instant::now();
    let stopped = loop {
        let mut conn = s.db.read().await.unwrap();
        let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
        if connection.state == ConnectionState::Stopped {
            break connection;
        }
        assert!(started.elapsed() < WAIT, "the connection did not stop");
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(stopped.state_reason.as_deref().unwrap_or_default().contains("401"), "{:?}", stopped.state_reason);
    // Nothing more is sent, and every change waits.
    let auth = c.org.auth();
    s.post("/api/dailyRates", &auth, json!({"values": [{"ratePlanId": c.bar, "date": day(3), "price": 9900}]}))
        .await
        .expect(200);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let calls = c.channex.calls();
    assert_eq!(calls.iter().map(|c| c.status).collect::<Vec<_>>(), [401], "one refused call, then silence");
    assert_eq!(s.count("channel_changes").await, 3, "the full sync's two changes and the edit wait");
    let log = requests(&s, &c).await;
    assert_eq!((log.len(), log[0].outcome), (1, RequestOutcome::Unauthorized));
    assert!(!log[0].detail.contains("revoked key"), "the key is never logged");

    // Connected again with a valid key: everything waiting goes, in one request of each kind.
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.unwrap().sealing;
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    let room_types = store::channels::room_type_mappings(&mut conn, &connection.id).await.unwrap();
    let rate_plans = store::channels::rate_plan_mappings(&mut conn, &connection.id).await.unwrap();
    drop(conn);
    let input = ConnectionIn {
        hotel_id: c.hotel.clone(),
        channel: "channex".into(),
        base_url: connection.base_url.clone(),
        property_id: connection.property_id.clone(),
        api_key: Some(KEY.into()),
        webhook_secret: None,
        room_types,
        rate_plans,
        nightly_sync_hour: None,
    };
    channels::connect(&s.db, &sealing, &Actor::command_line(&c.org.id), input).await.expect("connected again");
    let calls = settled(&s, &c, 3).await;
    let property = connection.property_id.clone();
    let restrictions: Vec<&Call> = calls[1..].iter().filter(|c| c.endpoint == "restrictions").collect();
    assert_eq!(restrictions.len(), 1);
    let nights = per_night(&restrictions, "rate_plan_id");
    assert_eq!(nights[&(c.bar_twin_r.clone(), date(3))]["rate"], json!("99.00"), "the edit made while stopped");
    assert!(calls[1..]
        .iter()
        .all(|call| call.status == 200 && call.body["values"][0]["property_id"] == json!(property)));
    c.stop().await;
}

async fn the_connection_page_connects_and_shows_each_request_and_refused_value(s: TestServer) {
    let org = s.org("Channels").await;
    let auth = org.auth();
    let hotel = s.hotel(&org, "Harbour").await;
    let twin = s.create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Twin", "maxOccupancy": 2})).await;
    s.post("/api/rooms", &auth, json!({"roomTypeId": twin, "name": "T1"})).await.expect(200);
    let bar = s.create("/api/ratePlans", &auth, json!({"hotelId": hotel, "name": "BAR"})).await;
    let promo = s.create("/api/ratePlans", &auth, json!({"hotelId": hotel, "roomTypeId": twin, "name": "Promo"})).await;
    let values: Vec<Value> = (0..30).map(|d| json!({"ratePlanId": bar, "date": day(d), "price": 15000})).collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    let (property, twin_r, bar_r) = (uuid(), uuid(), uuid());
    let channex = StandIn::start(&property, &[&twin_r], &[(&bar_r, &twin_r)]).await;
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.unwrap().sealing;
    let options =
        Options { tick: Duration::from_millis(100), coalesce: Duration::from_millis(300), ..Options::default() };
    let dispatcher = Dispatcher::spawn(s.db.clone(), sealing, options).unwrap();

    let desk = Dashboard::new(&s, &org.token);
    let path = format!("/hotels/{hotel}/integrations/channels");
    let (status, html) = desk.get(&path).await;
    assert_eq!(status, 200);
    assert!(html.contains("Connect to Channex") && html.contains("not connected"), "{html}");
    assert!(html.contains("BAR · Twin") && html.contains("Promo · Twin"), "one field per plan and room type");

    // A base URL that is not one is refused, with nothing stored.
    let (status, _, html) =
        desk.post(&path, &[("baseUrl", "not a url"), ("propertyId", &property), ("apiKey", KEY)]).await;
    assert_eq!(status, 422);
    assert!(html.contains("must be an http or https URL"));
    assert_eq!(s.count("channel_connections").await, 0);

    // Promo is mapped to an id Channex does not know: Channex warns about its values inside a 200.
    let unknown = uuid();
    let fields = [
        ("baseUrl", channex.base_url.as_str()),
        ("propertyId", property.as_str()),
        ("apiKey", KEY),
        (&*format!("rt-{twin}"), twin_r.as_str()),
        (&*format!("rp-{bar}-{twin}"), bar_r.as_str()),
        (&*format!("rp-{promo}-{twin}"), unknown.as_str()),
    ];
    let (status, headers, _) = desk.post(&path, &fields).await;
    assert_eq!(status, 303);
    assert_eq!(headers["location"], path.as_str());
    let started = Instant::now();
    while channex.calls().len() < 2 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the full sync did not go");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = channex.calls();
    let restrictions = calls.iter().find(|c| c.endpoint == "restrictions").unwrap();
    assert_eq!(restrictions.warnings.len(), 1, "Promo's one run of nights (never priced: stop-sell)");
    assert_eq!(restrictions.warnings[0]["rate_plan_id"], json!(unknown));

    let (status, html) = desk.get(&path).await;
    assert_eq!(status, 200);
    assert!(html.contains("Change the connection") && html.contains("Resync"));
    for call in &calls {
        assert!(html.contains(call.task_id.as_deref().unwrap()), "the task id of each request is shown");
    }
    assert!(html.contains("1 value(s) refused") && html.contains(&unknown), "the refused value is shown with its id");
    assert!(!html.contains(KEY), "the key is never shown again");
    assert!(html.contains(&format!("value=\"{bar_r}\"")), "the mapping is shown");

    // Resync: two more requests, every night again.
    let (status, _, _) = desk.post(&format!("{path}/resync"), &[]).await;
    assert_eq!(status, 303);
    let started = Instant::now();
    while channex.calls().len() < 4 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the resync did not go");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = channex.calls();
    let availability = |calls: &[Call]| calls.iter().find(|c| c.endpoint == "availability").map(|c| c.body.clone());
    assert_eq!(availability(&again[2..4]), availability(&calls[..2]), "the same full availability again");

    // A nightly full sync at an hour the hotel chooses: kept; an hour that is none is refused.
    let mut with_hour = fields.to_vec();
    with_hour.retain(|(name, _)| *name != "apiKey");
    with_hour.push(("nightlySyncHour", "25"));
    let (status, _, html) = desk.post(&path, &with_hour).await;
    assert_eq!(status, 422);
    assert!(html.contains("must be an hour from 0 to 23"), "{html}");
    with_hour.pop();
    with_hour.push(("nightlySyncHour", "3"));
    let (status, _, _) = desk.post(&path, &with_hour).await;
    assert_eq!(status, 303);
    let (_, html) = desk.get(&path).await;
    assert!(html.contains("<option value=\"3\" selected>03:00</option>"), "{html}");
    // (Saving resyncs: let that go first.)
    let started = Instant::now();
    while channex.calls().len() < 6 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the full sync of the change did not go");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Disconnecting forgets the connection; the page offers to connect again and nothing more is sent.
    let (status, _, _) = desk.post(&format!("{path}/disconnect"), &[]).await;
    assert_eq!(status, 303);
    assert_eq!((s.count("channel_connections").await, s.count("channel_changes").await), (0, 0));
    let (_, html) = desk.get(&path).await;
    assert!(html.contains("Connect to Channex") && html.contains("not connected"), "{html}");
    let sent = channex.calls().len();
    s.post("/api/rooms", &auth, json!({"roomTypeId": twin, "name": "T2"})).await.expect(200);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!((channex.calls().len(), s.count("channel_changes").await), (sent, 0), "nothing recorded or sent");
    dispatcher.stop().await;
}

/// Waits until `check` holds.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < WAIT, "{what} did not happen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn channel_reservations(s: &TestServer, c: &Connected) -> Vec<Value> {
    let list = s.get(&format!("/api/reservations?hotelId={}", c.hotel), &c.org.auth()).await.expect(200).body;
    let items = list.as_array().cloned().or_else(|| list["data"].as_array().cloned()).unwrap_or_default();
    items.into_iter().filter(|r| r["source"] == json!("CHANNEL")).collect()
}

async fn bookings_arrive_once_each_and_are_acknowledged_once(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let webhook = |body: Value, secret: Option<&'static str>| {
        let url = format!("{}/channels/channex/{}", s.base, c.hotel);
        let client = s.client.clone();
        async move {
            let mut request = client.post(url).json(&body);
            if let Some(secret) = secret {
                request = request.header("X-Channex-Webhook-Secret", secret);
            }
            request.send().await.expect("webhook").status().as_u16()
        }
    };

    // A new booking, from the feed: a confirmed reservation, acknowledged once, and the twin's availability sent.
    let booking = uuid();
    let new = c.channex.revision("new", &booking, Some(&c.twin_r), &c.bar_twin_r, 10, 12);
    until("the new booking's acknowledgement", || async { c.channex.acks().len() == 1 }).await;
    assert_eq!(c.channex.acks(), std::slice::from_ref(&new));
    let taken = channel_reservations(&s, &c).await;
    assert_eq!(taken.len(), 1, "{taken:#?}");
    let r = &taken[0];
    assert_eq!(
        (&r["status"], &r["checkInDate"], &r["checkOutDate"], &r["totalPrice"], &r["currency"], &r["channelReference"]),
        (&json!("CONFIRMED"), &json!(day(10)), &json!(day(12)), &json!(30000), &json!("EUR"), &json!("9996013801"))
    );
    assert!(r["notes"].as_str().unwrap().contains("Ana Silva"), "{}", r["notes"]);
    let id = r["id"].as_str().unwrap().to_string();
    let full = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(full["rooms"][0]["roomTypeId"], json!(c.twin));
    assert_eq!(full["rooms"][0]["ratePlanId"], json!(c.bar));
    // The customer became a guest of the hotel; the channel writes to them itself, so no e-mail of ours is planned.
    let guest_id = full["guestId"].as_str().expect("a guest record").to_string();
    let guest = s.get(&format!("/api/guests/{guest_id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(
        (
            &guest["firstName"],
            &guest["lastName"],
            &guest["email"],
            &guest["country"],
            &guest["language"],
            &guest["hotelId"]
        ),
        (&json!("Ana"), &json!("Silva"), &json!("ana@example.com"), &json!("PT"), &json!("pt"), &json!(c.hotel))
    );
    assert_eq!(s.count("guest_messages").await, 0, "guest e-mails are off for channel bookings by default");
    let calls = settled(&s, &c, 3).await;
    assert_eq!(
        calls[2].body["values"],
        json!([{"property_id": calls[0].body["values"][0]["property_id"], "room_type_id": c.twin_r,
                "date_from": day(10), "date_to": day(11), "availability": 7}])
    );

    // The same revision by webhook: nothing applied again, no second acknowledgement.
    let trigger = json!({"event": "booking", "payload": {"booking_id": booking, "property_id": "p", "revision_id": new},
                         "property_id": "p", "user_id": null, "timestamp": "2026-11-23T10:03:29.335485Z"});
    assert_eq!(webhook(trigger.clone(), None).await, 401, "no secret header");
    assert_eq!(webhook(trigger.clone(), Some("not the secret at all")).await, 401, "a wrong secret");
    assert_eq!(webhook(trigger.clone(), Some(WEBHOOK_SECRET)).await, 200);
    assert_eq!(channel_reservations(&s, &c).await.len(), 1);
    let elsewhere = s
        .client
        .post(format!("{}/channels/channex/not-a-hotel", s.base))
        .header("X-Channex-Webhook-Secret", WEBHOOK_SECRET)
        .json(&trigger)
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status().as_u16(), 401, "not a hotel id: refused like a wrong secret");
    assert_eq!(c.channex.acks(), std::slice::from_ref(&new));

    // Modified, by webhook: the revision is read back from Channex, applied, acknowledged once.
    let modified = c.channex.revision("modified", &booking, Some(&c.twin_r), &c.bar_twin_r, 10, 13);
    let mut trigger = trigger.clone();
    trigger["payload"]["revision_id"] = json!(modified);
    assert_eq!(webhook(trigger.clone(), Some(WEBHOOK_SECRET)).await, 200);
    let r = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!((&r["checkOutDate"], &r["totalPrice"]), (&json!(day(13)), &json!(45000)));
    until("the modification's acknowledgement", || async { c.channex.acks().len() == 2 }).await;
    let flag = |id: String| {
        let db = s.db.clone();
        async move { store::reservations::attention::of_reservation(&mut db.read().await.unwrap(), &id).await.unwrap() }
    };
    assert_eq!(flag(id.clone()).await, None, "same rooms: nothing for the desk");

    // The guest changes the room type on the channel: PUT cannot change a reservation's rooms, so the dates and
    // total are applied and the desk is told what the channel now books.
    let rooms_changed = c.channex.revision("modified", &booking, Some(&c.double_r), &c.bar_double_r, 10, 13);
    until("the room change's acknowledgement", || async { c.channex.acks().len() == 3 }).await;
    let changed = flag(id.clone()).await.expect("flagged");
    assert_eq!(changed.reasons, [AttentionReason::Changed]);
    assert_eq!(
        changed.detail,
        "the channel changed the rooms to 1 x Double; the reservation still has 1 x Twin: change them by hand"
    );

    // A webhook naming a revision Channex does not know: nothing applied, Channex asked to retry.
    trigger["payload"]["revision_id"] = json!(uuid());
    assert_eq!(webhook(trigger.clone(), Some(WEBHOOK_SECRET)).await, 502);

    // A booking of a room type that is not mapped: sold already, so taken (on the hotel's first room type by name,
    // Double, without a rate plan), flagged unmapped, acknowledged.
    let unmapped = c.channex.revision("new", &uuid(), None, &c.bar_twin_r, 20, 21);
    until("the unmapped booking's acknowledgement", || async { c.channex.acks().len() == 4 }).await;
    let taken = channel_reservations(&s, &c).await;
    let stand_in = taken.iter().find(|r| r["checkInDate"] == json!(day(20))).expect("the unmapped booking was taken");
    let stand_in = stand_in["id"].as_str().unwrap().to_string();
    let full = s.get(&format!("/api/reservations/{stand_in}"), &c.org.auth()).await.expect(200).body;
    assert_eq!((&full["status"], &full["rooms"][0]["ratePlanId"]), (&json!("CONFIRMED"), &Value::Null));
    let flag = store::reservations::attention::of_reservation(&mut s.db.read().await.unwrap(), &stand_in)
        .await
        .unwrap()
        .expect("flagged");
    assert_eq!(flag.reasons, [AttentionReason::Unmapped]);
    assert!(
        flag.detail.contains("room type \"null\" is not mapped: the room was put on Double")
            && flag.detail.contains("rate plan"),
        "{}",
        flag.detail
    );

    // Cancelled, from the feed: the nights are freed.
    let cancelled = c.channex.revision("cancelled", &booking, Some(&c.twin_r), &c.bar_twin_r, 10, 13);
    until("the cancellation's acknowledgement", || async { c.channex.acks().len() == 5 }).await;
    let r = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(r["status"], json!("CANCELLED"));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        c.channex.acks(),
        [new, modified, rooms_changed, unmapped.clone(), cancelled],
        "one acknowledgement each"
    );
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    let applied = store::channels::revision(&mut conn, &connection.id, &unmapped).await.unwrap().unwrap();
    assert_eq!((applied.outcome.as_str(), applied.reservation_id.as_deref()), ("applied", Some(stand_in.as_str())));
    drop(conn);
    // The connection page links the bookings taken.
    let dashboard = Dashboard::new(&s, &c.org.token);
    let (status, html) = dashboard.get(&format!("/hotels/{}/integrations/channels", c.hotel)).await;
    assert_eq!(status, 200);
    assert!(html.contains(&format!("/hotels/{}/reservations/{id}", c.hotel)), "a link to the reservation");
    // The flagged stay is on the Today page and on its own page until the desk marks it handled.
    handled_from_the_dashboard(&s, &dashboard, &c.hotel, &stand_in, "Unmapped").await;
    c.stop().await;
}

/// The room nights of a reservation's folio: (night, gross).
async fn nights_charged(s: &TestServer, c: &Connected, reservation: &str) -> Vec<(String, i64)> {
    let r = s.get(&format!("/api/reservations/{reservation}"), &c.org.auth()).await.expect(200).body;
    let folio = r["folio"]["id"].as_str().expect("a confirmed stay has a folio");
    let folio = s.get(&format!("/api/folios/{folio}"), &c.org.auth()).await.expect(200).body;
    let mut nights: Vec<(String, i64)> = folio["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["source"] == json!("ROOM_NIGHT") && l["kind"] == json!("CHARGE"))
        .map(|l| (l["serviceDate"].as_str().unwrap().to_string(), l["gross"].as_i64().unwrap()))
        .collect();
    nights.sort();
    nights
}

async fn a_modified_booking_takes_the_channels_prices_per_night_and_the_guests_new_details(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let priced = |prices: &[(u64, &str)]| prices.iter().map(|(d, p)| (*d, p.to_string())).collect::<Vec<_>>();
    let twin = (Some(c.twin_r.as_str()), c.bar_twin_r.as_str());

    // Sold night by night (a weekend costs more): the folio charges each night what the channel sold it for.
    let booking = uuid();
    let nights = priced(&[(10, "100.00"), (11, "120.00"), (12, "150.50")]);
    c.channex.revision_priced("new", &booking, twin, &nights, "370.50", StandIn::customer());
    until("the new booking's acknowledgement", || async { c.channex.acks().len() == 1 }).await;
    let id = channel_reservations(&s, &c).await[0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        nights_charged(&s, &c, &id).await,
        [(day(10), 10_000), (day(11), 12_000), (day(12), 15_050)],
        "each night at its own price"
    );

    // Modified: a night more and a new price for the first; the guest gave the channel a new e-mail and a phone.
    let nights = priced(&[(10, "90.00"), (11, "120.00"), (12, "150.50"), (13, "99.99")]);
    let mut customer = StandIn::customer();
    customer["mail"] = json!("ana.silva@example.org");
    customer["phone"] = json!("+351 912 345 678");
    c.channex.revision_priced("modified", &booking, twin, &nights, "460.49", customer);
    until("the modification's acknowledgement", || async { c.channex.acks().len() == 2 }).await;
    let r = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(
        (&r["checkOutDate"], &r["totalPrice"], &r["rooms"][0]["price"]),
        (&json!(day(14)), &json!(46_049), &json!(46_049))
    );
    assert_eq!(
        nights_charged(&s, &c, &id).await,
        [(day(10), 9_000), (day(11), 12_000), (day(12), 15_050), (day(13), 9_999)]
    );
    let guest_id = r["guestId"].as_str().unwrap();
    let guest = s.get(&format!("/api/guests/{guest_id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(
        (&guest["firstName"], &guest["email"], &guest["phone"]),
        (&json!("Ana"), &json!("ana.silva@example.org"), &json!("+351 912 345 678"))
    );
    let flag = store::reservations::attention::of_reservation(&mut s.db.read().await.unwrap(), &id).await.unwrap();
    assert_eq!(flag, None, "same room: nothing for the desk");

    // The same details again change nothing of the guest (no entry in its history); prices per night that do not add up
    // to the room's amount are not used: the amount is spread over the nights.
    let history = || async {
        let log = s.get(&format!("/api/auditLog?recordId={guest_id}"), &c.org.auth()).await.expect(200).body;
        log.as_array().expect("audit entries").len()
    };
    let guest_changes = history().await;
    assert_eq!(guest_changes, 2, "made, then changed once");
    let mut customer = StandIn::customer();
    customer["mail"] = json!("ana.silva@example.org");
    customer["phone"] = json!("+351 912 345 678");
    c.channex.revision_priced("modified", &booking, twin, &nights, "400.00", customer);
    until("the second modification's acknowledgement", || async { c.channex.acks().len() == 3 }).await;
    assert_eq!(nights_charged(&s, &c, &id).await.iter().map(|(_, p)| *p).collect::<Vec<_>>(), [10_000; 4]);
    assert_eq!(history().await, guest_changes, "nothing of the guest changed");

    // A guest erased at their request stays erased when the channel sends the booking again.
    s.post(&format!("/api/guests/{guest_id}/anonymise"), &c.org.auth(), json!({})).await;
    c.channex.revision_priced("modified", &booking, twin, &nights, "460.49", StandIn::customer());
    until("the third modification's acknowledgement", || async { c.channex.acks().len() == 4 }).await;
    let guest = s.get(&format!("/api/guests/{guest_id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!((&guest["firstName"], &guest["email"]), (&json!("Anonymised"), &Value::Null));

    // Disconnected and connected again: a booking taken before is still found when the channel cancels it.
    let admin = Actor::command_line(&c.org.id);
    channels::disconnect(&s.db, &admin, &c.hotel, "channex").await.expect("disconnected");
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.expect("keys").sealing;
    channels::connect(&s.db, &sealing, &admin, c.input.clone()).await.expect("connected again");
    c.channex.revision_priced("cancelled", &booking, twin, &nights, "460.49", StandIn::customer());
    until("the cancellation's acknowledgement", || async { c.channex.acks().len() == 5 }).await;
    let r = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!(r["status"], json!("CANCELLED"));
    c.stop().await;
}

/// A Channex room type set up by hand for more guests than ours holds: the booking is sold already, so it is taken
/// (the room with its type's usual party) and the desk is told what was booked.
async fn a_party_larger_than_the_room_type_is_taken_and_flagged(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let nights: Vec<(u64, String)> = (30..32).map(|d| (d, "150.00".to_string())).collect();
    let twin = (Some(c.twin_r.as_str()), c.bar_twin_r.as_str());
    c.channex.revision_priced("new", &uuid(), twin, &nights, "300.00", StandIn::customer());
    {
        let mut b = c.channex.books.lock().unwrap();
        let (revision, _) = b.revisions.last_mut().unwrap();
        revision["attributes"]["rooms"][0]["occupancy"] = json!({"adults": 3, "children": 1, "infants": 0});
    }
    until("the booking's acknowledgement", || async { c.channex.acks().len() == 1 }).await;
    let taken = channel_reservations(&s, &c).await;
    assert_eq!(taken.len(), 1, "taken, not refused");
    let id = taken[0]["id"].as_str().unwrap().to_string();
    let r = s.get(&format!("/api/reservations/{id}"), &c.org.auth()).await.expect(200).body;
    assert_eq!((&r["status"], &r["rooms"][0]["roomTypeId"]), (&json!("CONFIRMED"), &json!(c.twin)));
    assert_eq!((&r["rooms"][0]["adults"], &r["rooms"][0]["children"]), (&json!(2), &json!(0)), "Twin's usual party");
    let flag = store::reservations::attention::of_reservation(&mut s.db.read().await.unwrap(), &id)
        .await
        .unwrap()
        .expect("flagged");
    assert_eq!(flag.reasons, [AttentionReason::Party]);
    assert!(flag.detail.contains("a room of Twin was booked for 3 adult(s), 1 child(ren)"), "{}", flag.detail);
    let dashboard = Dashboard::new(&s, &c.org.token);
    handled_from_the_dashboard(&s, &dashboard, &c.hotel, &id, "Party larger than the room").await;
    c.stop().await;
}

/// The stay `id` is listed under "Needs attention" on the Today page (`why`) and says so on its own page; marking
/// it handled there takes it off both.
async fn handled_from_the_dashboard(s: &TestServer, dashboard: &Dashboard<'_>, hotel: &str, id: &str, why: &str) {
    let stay = format!("/hotels/{hotel}/reservations/{id}");
    let (status, html) = dashboard.get(&format!("/hotels/{hotel}/today")).await;
    assert_eq!(status, 200);
    let listed = html.split("id=\"attention-title\"").nth(1).expect("a Needs attention section");
    assert!(listed.contains(why) && listed.contains(&stay), "{listed}");
    let (status, html) = dashboard.get(&stay).await;
    assert_eq!(status, 200);
    assert!(html.contains(&format!("Needs attention: {why}.")) && html.contains("Mark handled"), "{html}");
    let before = s.count("audit_entries").await;
    let (status, _, _) = dashboard.post(&format!("{stay}/attention"), &[("back", &stay)]).await;
    assert_eq!(status, 303);
    assert_eq!(s.count("audit_entries").await, before + 1, "who marked it handled is in the audit log");
    let (_, html) = dashboard.get(&stay).await;
    assert!(!html.contains("Needs attention:"), "{html}");
    let (_, html) = dashboard.get(&format!("/hotels/{hotel}/today")).await;
    assert!(!html.contains("id=\"attention-title\""), "nothing needs attention any more");
    let (status, _, _) = dashboard.post(&format!("{stay}/attention"), &[("back", &stay)]).await;
    assert_eq!(status, 303, "a second press says there is nothing left (a flash), no error page");
}

/// A channel's booking for nights with no room free is sold already: taken, flagged overbooked, acknowledged, and
/// the channels are told nothing is left; every other writer is still refused those nights. With the hotel's
/// setting on, its guest gets our confirmation too.
async fn a_booking_for_a_full_night_is_taken_flagged_and_the_channels_told_nothing_is_left(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let auth = c.org.auth();
    let double = json!({"hotelId": c.hotel, "checkInDate": day(30), "checkOutDate": day(32),
                        "rooms": [{"roomTypeId": c.double, "price": 10000}, {"roomTypeId": c.double, "price": 10000}]});
    s.post("/api/reservations", &auth, double).await.expect(200);
    let calls = settled(&s, &c, 3).await;
    assert_eq!(calls[2].body["values"][0]["availability"], json!(0), "both doubles sold at the desk");
    let settings = frontdesk::domain::guest_messages::MessageSettings { channel_bookings: true, ..Default::default() };
    frontdesk::domain::guest_messages::save_settings(&s.db, &Actor::command_line(&c.org.id), &c.hotel, settings)
        .await
        .expect("settings");

    let revision = c.channex.revision("new", &uuid(), Some(&c.double_r), &c.bar_double_r, 30, 32);
    until("the overbooked booking's acknowledgement", || async { c.channex.acks().len() == 1 }).await;
    assert_eq!(c.channex.acks(), [revision]);
    let taken = channel_reservations(&s, &c).await;
    assert_eq!(taken.len(), 1, "taken although no double was free");
    let id = taken[0]["id"].as_str().unwrap().to_string();
    let flag = store::reservations::attention::of_reservation(&mut s.db.read().await.unwrap(), &id)
        .await
        .unwrap()
        .expect("flagged");
    assert_eq!(flag.reasons, [AttentionReason::Overbooked]);
    assert!(flag.detail.contains("not enough Double rooms are free on the night of"), "{}", flag.detail);
    // The channels hear at once that nothing is left (never a negative count).
    let calls = settled(&s, &c, 4).await;
    let property = c.channex.books.lock().unwrap().property_id.clone();
    assert_eq!(
        calls[3].body,
        json!({"values": [{"property_id": property, "room_type_id": c.double_r, "date_from": day(30), "date_to": day(31),
                           "availability": 0}]})
    );
    // Anyone else is still refused those nights.
    let another = json!({"hotelId": c.hotel, "checkInDate": day(31), "checkOutDate": day(32),
                         "rooms": [{"roomTypeId": c.double, "price": 10000}]});
    s.post("/api/reservations", &auth, another).await.expect(409);
    // The hotel turned guest e-mails on for channel bookings: the channel's guest is sent our confirmation.
    assert_eq!(s.count("guest_messages").await, 2, "the confirmation and the reminder");
    // As the desk sees it on a phone: the Today page lists it first, the stay says what happened.
    if let Some(b) = Browser::start_sized(&s.base, PHONE).await {
        b.goto("/sign-in").await;
        b.sign_in(&c.org.operator_email, PASSWORD).await;
        b.goto(&format!("/hotels/{}/today", c.hotel)).await;
        b.wait_for_text("Needs attention").await;
        b.assert_page_ok("Today with a stay that needs attention").await;
        if s.engine == Engine::Sqlite {
            b.screenshot("today-needs-attention-phone").await;
        }
        b.goto(&format!("/hotels/{}/reservations/{id}", c.hotel)).await;
        b.wait_for_text("Needs attention: Overbooked.").await;
        b.assert_page_ok("a stay that needs attention").await;
    }
    handled_from_the_dashboard(&s, &Dashboard::new(&s, &c.org.token), &c.hotel, &id, "Overbooked").await;
    c.stop().await;
}

async fn fifty_edits_stay_within_the_limit_and_lose_nothing(s: TestServer) {
    // Channex's 10 a minute, scaled down: 3 requests of a kind within 2 s (the stand-in answers 429 beyond).
    let options = Options { per_minute: 3, limit_window: Duration::from_secs(2), ..test_options() };
    let c = connected_with(&s, KEY, Some(options)).await;
    settled(&s, &c, 2).await;
    let auth = c.org.auth();
    let mut last: BTreeMap<u64, i64> = BTreeMap::new();
    for i in 0..50i64 {
        let night = 1 + (i as u64 * 7) % 20;
        let price = 20000 + i * 100;
        s.post(
            "/api/dailyRates",
            &auth,
            json!({"values": [{"ratePlanId": c.bar, "date": day(night), "price": price}]}),
        )
        .await
        .expect(200);
        last.insert(night, price);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    until("every edit sent", || async { s.count("channel_changes").await == 0 }).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let calls = c.channex.calls();
    assert!(
        calls.iter().all(|call| call.status == 200),
        "never over the limit: {:?}",
        calls.iter().map(|c| c.status).collect::<Vec<_>>()
    );
    let sent: Vec<&Call> = calls.iter().filter(|call| call.endpoint == "restrictions").collect();
    assert!(sent.len() > 2 && sent.len() < 20, "the edits were coalesced: {} requests", sent.len());
    for pair in sent.windows(4) {
        assert!(pair[3].at - pair[0].at >= Duration::from_secs(2), "at most 3 requests within 2 s");
    }
    // What Channex holds at the end (each request applied in order, last wins) is every night's last edit.
    let nights = per_night(&sent, "rate_plan_id");
    for (night, price) in &last {
        let rate = format!("{}.00", price / 100);
        assert_eq!(nights[&(c.bar_twin_r.clone(), date(*night))]["rate"], json!(rate), "night {night}");
        assert_eq!(nights[&(c.bar_double_r.clone(), date(*night))]["rate"], json!(rate), "night {night}");
    }
    c.stop().await;
}

async fn what_was_written_while_nothing_sent_goes_later_and_a_dead_claim_is_taken_over(s: TestServer) {
    use frontdesk::domain::change::{Change, Job, Writer};
    // Connected while no dispatcher runs (a process killed after the write, before the send): the rows wait.
    let c = connected_with(&s, KEY, None).await;
    s.post(
        "/api/dailyRates",
        &c.org.auth(),
        json!({"values": [{"ratePlanId": c.bar, "date": day(4), "price": 12345}]}),
    )
    .await
    .expect(200);
    assert_eq!(s.count("channel_changes").await, 3);
    // A dispatcher that died holding the connection's claim, for 2 more seconds.
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    drop(conn);
    let mut tx = Change::begin_as(&s.db, Writer::Job(Job::ChannelDispatcher)).await.unwrap();
    let now = Utc::now();
    assert!(store::channels::claim(tx.conn(), &connection.id, now, now + chrono::TimeDelta::seconds(2)).await.unwrap());
    tx.commit().await.unwrap();

    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.unwrap().sealing;
    let dispatcher = Dispatcher::spawn(s.db.clone(), sealing, test_options()).unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(c.channex.calls().is_empty(), "nothing is sent while another process holds the claim");
    let c = Connected { dispatcher: Some(dispatcher), ..c };
    let calls = settled(&s, &c, 2).await;
    let restrictions: Vec<&Call> = calls.iter().filter(|call| call.endpoint == "restrictions").collect();
    let nights = per_night(&restrictions, "rate_plan_id");
    assert_eq!(nights[&(c.bar_twin_r.clone(), date(4))]["rate"], json!("123.45"), "the edit written before");
    c.stop().await;
}

async fn a_room_out_of_order_lowers_availability_and_a_plan_turned_off_stops_selling(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let auth = c.org.auth();
    let rooms = s.get(&format!("/api/rooms?hotelId={}", c.hotel), &auth).await.expect(200).body;
    let rooms = rooms.as_array().cloned().or_else(|| rooms["data"].as_array().cloned()).unwrap();
    let room = rooms.iter().find(|r| r["roomTypeId"] == json!(c.twin)).unwrap()["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/rooms/{room}"), &auth, json!({"housekeepingStatus": "OUT_OF_ORDER"})).await.expect(200);
    let calls = settled(&s, &c, 3).await;
    let property = c.channex.books.lock().unwrap().property_id.clone();
    assert_eq!(
        calls[2].body,
        json!({"values": [{"property_id": property, "room_type_id": c.twin_r, "date_from": day(0), "date_to": day(499),
                           "availability": 7}]}),
        "the twin only, every night"
    );
    // Back in order: sent; then dirty after a stay, still sellable: nothing is sent.
    s.put(&format!("/api/rooms/{room}"), &auth, json!({"housekeepingStatus": "CLEAN"})).await.expect(200);
    let calls = settled(&s, &c, 4).await;
    assert_eq!(calls[3].body["values"][0]["availability"], json!(8), "back in order");
    s.put(&format!("/api/rooms/{room}"), &auth, json!({"housekeepingStatus": "DIRTY"})).await.expect(200);
    settled(&s, &c, 4).await;

    // B&B turned off: every night of its one Channex plan is stop-sell, in one request.
    s.put(&format!("/api/ratePlans/{}", c.bnb), &auth, json!({"active": false})).await.expect(200);
    let calls = settled(&s, &c, 5).await;
    let values = calls[4].body["values"].as_array().unwrap();
    assert!(values.iter().all(|v| v["rate_plan_id"] == json!(c.bnb_double_r) && v["stop_sell"] == json!(true)));
    let nights = per_night(&[&calls[4]], "rate_plan_id");
    assert_eq!(nights.len(), 500);
    c.stop().await;
}

/// A hotel that chose an hour for its nightly full sync gets one, in that hour of its day, once: two requests, then
/// nothing more that day (connecting, or a resync, counts as the day's).
async fn the_nightly_full_sync_runs_once_in_the_hour_the_hotel_chose(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let mut conn = s.db.read().await.unwrap();
    let hotel = store::hotels::get(&mut conn, &c.org.id, &c.hotel).await.unwrap().unwrap();
    let mut connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    drop(conn);
    assert_eq!(connection.nightly_synced_on, Some(hotel.today()), "connecting was today's full sync");
    // Not within seconds of the hour's end, so that the hour set is still the hotel's when the dispatcher looks.
    if Utc::now().with_timezone(&hotel.time_zone()).minute() == 59 {
        tokio::time::sleep(Duration::from_secs(61)).await;
    }
    let local = Utc::now().with_timezone(&hotel.time_zone());
    connection.nightly_sync_hour = Some(i64::from(local.hour()));
    let yesterday = hotel.today().pred_opt().unwrap();
    let mut tx = s.db.begin_write().await.unwrap();
    store::channels::update(tx.conn(), &connection).await.unwrap();
    assert!(store::channels::take_nightly_sync(tx.conn(), &connection.id, yesterday).await.unwrap());
    tx.commit().await.unwrap();

    let calls = settled(&s, &c, 4).await;
    let endpoints: HashSet<&str> = calls[2..].iter().map(|call| call.endpoint).collect();
    assert_eq!(endpoints, HashSet::from(["availability", "restrictions"]), "a full sync: one request of each kind");
    assert_eq!(per_night(&[&calls[2]], "room_type_id").len(), 2 * 500, "every night of every room type");
    let again = channels::queue_nightly_syncs(&s.db, "channex", Utc::now()).await.expect("queued");
    assert_eq!(again, 0, "once a day");
    settled(&s, &c, 4).await;
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::get(&mut conn, &connection.id).await.unwrap().unwrap();
    assert_eq!(connection.nightly_synced_on, Some(hotel.today()));
    c.stop().await;
}

/// Connecting needs no ids copied by hand: the page reads Channex's room types and rate plans as choices, creates
/// what ours lack there (titles unique within the property), and registers the booking webhook with a secret the
/// service then accepts.
async fn the_property_is_set_up_in_channex_from_the_page(s: TestServer) {
    // Without a public URL there is nothing Channex could call: registering the webhook is refused, saying why.
    let org = s.org("Channels").await;
    let hotel = s.hotel(&org, "Harbour").await;
    let path = format!("/hotels/{hotel}/integrations/channels");
    let (status, headers, _) = Dashboard::new(&s, &org.token).post(&format!("{path}/webhook"), &[]).await;
    assert_eq!(status, 303);
    let flash: String = headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| url::form_urlencoded::parse(v.as_bytes()).map(|(k, v)| format!("{k}{v}")).collect::<String>())
        .collect();
    assert!(flash.contains("e:Set the service's public URL"), "an error flash that says why: {flash}");
    // The page as a person sees it, connected, on a desktop and on a phone (a browser signs in only where the
    // service's public URL is its own address, as here).
    let twin =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Twin", "maxOccupancy": 2})).await;
    s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": twin, "name": "BAR"})).await;
    let (property, twin_r) = (uuid(), uuid());
    let channex = StandIn::start(&property, &[&twin_r], &[]).await;
    let connect = [("baseUrl", channex.base_url.as_str()), ("propertyId", property.as_str()), ("apiKey", KEY)];
    let (status, _, _) = Dashboard::new(&s, &org.token).post(&path, &connect).await;
    assert_eq!(status, 303);
    for (size, suffix) in [(DESKTOP, ""), (PHONE, "-phone")] {
        let Some(b) = Browser::start_sized(&s.base, size).await else { break };
        b.goto("/sign-in").await;
        b.sign_in(&org.operator_email, PASSWORD).await;
        b.goto(&path).await;
        b.wait_for_text("Set up in Channex").await;
        b.assert_page_ok("the channels page").await;
        if s.engine == Engine::Sqlite {
            b.screenshot(&format!("integrations-channels{suffix}")).await;
        }
    }
    let engine = s.engine;
    drop(s);
    let Some(s) = TestServer::configured(engine, |c| c.public_url = Some("http://frontdesk.example".into())).await
    else {
        return;
    };
    let org = s.org("Channels").await;
    let auth = org.auth();
    let hotel = s.hotel(&org, "Harbour").await;
    let twin = s.create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Twin", "maxOccupancy": 2})).await;
    let double =
        s.create("/api/roomTypes", &auth, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 3})).await;
    for (n, room_type) in [(1, &twin), (2, &twin), (3, &double)] {
        s.post("/api/rooms", &auth, json!({"roomTypeId": room_type, "name": format!("R{n}")})).await.expect(200);
    }
    let bar = s.create("/api/ratePlans", &auth, json!({"hotelId": hotel, "name": "BAR"})).await;
    let promo = s.create("/api/ratePlans", &auth, json!({"hotelId": hotel, "roomTypeId": twin, "name": "Promo"})).await;
    let values: Vec<Value> = [&bar, &promo]
        .iter()
        .flat_map(|plan| (0..30).map(move |d| json!({"ratePlanId": plan, "date": day(d), "price": 15000})))
        .collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    // Channex has a Suite with a "Promo" of its own already: ours must be titled apart.
    let (property, suite_r, suite_promo_r) = (uuid(), uuid(), uuid());
    let channex = StandIn::start(&property, &[&suite_r], &[(&suite_promo_r, &suite_r)]).await;
    channex.books.lock().unwrap().rate_plan_rows[0].1 = "Promo".into();
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.unwrap().sealing;
    let options =
        Options { tick: Duration::from_millis(100), coalesce: Duration::from_millis(300), ..Options::default() };
    let dispatcher = Dispatcher::spawn(s.db.clone(), sealing, options).unwrap();

    let desk = Dashboard::new(&s, &org.token);
    let path = format!("/hotels/{hotel}/integrations/channels");
    let connect = [("baseUrl", channex.base_url.as_str()), ("propertyId", property.as_str()), ("apiKey", KEY)];
    let (status, _, _) = desk.post(&path, &connect).await;
    assert_eq!(status, 303);
    let (_, html) = desk.get(&path).await;
    assert!(
        html.contains(&format!("<option value=\"{suite_r}\">Room type 0</option>")),
        "Channex's as choices: {html}"
    );
    assert!(html.contains("5 of ours have no Channex counterpart"), "2 room types, BAR on each, Promo: {html}");

    let (status, _, _) = desk.post(&format!("{path}/create-missing"), &[]).await;
    assert_eq!(status, 303);
    let created = channex.books.lock().unwrap().created.clone();
    let titles = |endpoint: &str| -> HashSet<String> {
        created.iter().filter(|(e, _)| *e == endpoint).map(|(_, v)| v["title"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(titles("room_types"), HashSet::from(["Twin".to_string(), "Double".to_string()]));
    assert_eq!(
        titles("rate_plans"),
        HashSet::from(["BAR · Twin".to_string(), "BAR · Double".to_string(), "Promo (2)".to_string()]),
        "one per room type, titled apart from each other and from Channex's own Promo"
    );
    let double_body = created.iter().find(|(e, v)| *e == "room_types" && v["title"] == json!("Double")).unwrap();
    assert_eq!(
        (&double_body.1["count_of_rooms"], &double_body.1["occ_adults"], &double_body.1["default_occupancy"]),
        (&json!(1), &json!(3), &json!(3))
    );
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &org.id, &hotel, "channex").await.unwrap().unwrap();
    assert_eq!(store::channels::room_type_mappings(&mut conn, &connection.id).await.unwrap().len(), 2);
    assert_eq!(store::channels::rate_plan_mappings(&mut conn, &connection.id).await.unwrap().len(), 3);
    drop(conn);
    let (_, html) = desk.get(&path).await;
    assert!(html.contains("Everything is mapped"), "{html}");
    assert!(html.contains("selected>BAR · Double</option>"), "the mapping chosen: {html}");
    // The full sync that follows goes with the new ids, and Channex takes every value (no warnings).
    let started = Instant::now();
    // (Before anything was mapped, connecting had nothing to send.)
    while channex.calls().len() < 2 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the full sync after creating did not go: {:?}", channex.calls().len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = channex.calls();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    for call in &calls {
        assert!(call.status == 200 && call.warnings.is_empty(), "refused: {:#}", json!(call.warnings));
    }
    let subjects = |endpoint: &str, field: &str| -> HashSet<String> {
        let call = calls.iter().find(|c| c.endpoint == endpoint).unwrap();
        call.body["values"].as_array().unwrap().iter().map(|v| v[field].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(subjects("availability", "room_type_id").len(), 2, "both new room types");
    assert_eq!(subjects("restrictions", "rate_plan_id").len(), 3, "the three new rate plans");
    // Pressing it again creates nothing.
    let (status, _, _) = desk.post(&format!("{path}/create-missing"), &[]).await;
    assert_eq!(status, 303);
    assert_eq!(channex.books.lock().unwrap().created.len(), 5);

    // The booking webhook: registered with a secret made here, which the service then accepts.
    let (status, _, _) = desk.post(&format!("{path}/webhook"), &[]).await;
    assert_eq!(status, 303);
    let webhook = channex.books.lock().unwrap().created.last().cloned().unwrap();
    assert_eq!(webhook.0, "webhooks");
    let url = webhook.1["callback_url"].as_str().unwrap().to_string();
    assert_eq!(url, format!("http://frontdesk.example/channels/channex/{hotel}"), "the service's public URL");
    assert_eq!(webhook.1["event_mask"], json!("booking_new;booking_modification;booking_cancellation"));
    let secret = webhook.1["headers"]["X-Channex-Webhook-Secret"].as_str().unwrap().to_string();
    assert!(secret.len() >= 32, "a secret made here");
    let trigger = json!({"event": "booking", "payload": {"property_id": property}, "property_id": property});
    let call = |secret: String| {
        let request = s.client.post(format!("{}/channels/channex/{hotel}", s.base)).json(&trigger);
        async move { request.header("X-Channex-Webhook-Secret", secret).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(call(secret.clone()).await, 200, "the registered secret is accepted");
    assert_eq!(call(format!("{secret}x")).await, 401);
    let (_, html) = desk.get(&path).await;
    assert!(html.contains("Register the booking webhook again") && !html.contains(&secret), "{html}");

    // Registered again: the same webhook is updated with a new secret (Channex would otherwise call twice); the old
    // secret is no longer accepted.
    let (status, _, _) = desk.post(&format!("{path}/webhook"), &[]).await;
    assert_eq!(status, 303);
    let hooks = || channex.books.lock().unwrap().webhooks.clone();
    assert_eq!(hooks().len(), 1, "one webhook: {:#?}", hooks());
    let (id, now) = hooks().into_iter().next().unwrap();
    let renewed = now["headers"]["X-Channex-Webhook-Secret"].as_str().unwrap().to_string();
    assert_ne!(renewed, secret);
    assert_eq!((call(renewed.clone()).await, call(secret.clone()).await), (200, 401));
    // Deleted in Channex meanwhile: registering makes one anew.
    channex.books.lock().unwrap().webhooks.clear();
    let (status, _, _) = desk.post(&format!("{path}/webhook"), &[]).await;
    assert_eq!(status, 303);
    assert_eq!(hooks().len(), 1);
    assert_ne!(hooks().into_keys().next().unwrap(), id);
    // Disconnecting deletes it in Channex: nothing calls a URL that refuses it.
    let (status, _, _) = desk.post(&format!("{path}/disconnect"), &[]).await;
    assert_eq!(status, 303);
    assert!(hooks().is_empty(), "{:#?}", hooks());
    assert_eq!(s.count("channel_connections").await, 0);
    dispatcher.stop().await;
}

/// A `frontdesk serve` process killed with SIGKILL between a write and its send loses nothing: the change row was
/// written with the booking, and the next process sends it (after the dead one's claim on the connection runs out,
/// should it have died holding it).
async fn a_process_killed_between_the_write_and_the_send_loses_nothing(engine: Engine) {
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let url = database.url.clone();
    // The in-process server sets up and runs no dispatcher; the processes send.
    let s = TestServer::serve_database(database).await.unwrap();
    let c = connected_with(&s, KEY, None).await;
    let mut first = spawn_with(&url, &[]).await;
    // The connection's full sync, sent by the first process: it works.
    let started = Instant::now();
    while c.channex.calls().len() < 2 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the first process did not send the full sync");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let booking = json!({"hotelId": c.hotel, "checkInDate": day(5), "checkOutDate": day(7),
                         "rooms": [{"roomTypeId": c.twin, "price": 10000}]});
    let answer = s
        .client
        .post(format!("{}/api/reservations", first.base))
        .header("authorization", format!("Token {}", c.org.token))
        .json(&booking)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    // Within the dispatcher's 3 s coalescing window: written, not sent.
    first.child.kill().expect("SIGKILL");
    first.child.wait().expect("reaped");
    assert_eq!(c.channex.calls().len(), 2, "nothing was sent before the kill");
    assert!(s.count("channel_changes").await > 0, "the change row was written with the booking");

    let _second = spawn_with(&url, &[]).await;
    // A claim the first process died holding runs out after its lease (120 s).
    let deadline = Instant::now() + Duration::from_secs(150);
    while c.channex.calls().len() < 3 || s.count("channel_changes").await > 0 {
        assert!(Instant::now() < deadline, "the second process never sent the booking's availability");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let property = c.channex.books.lock().unwrap().property_id.clone();
    assert_eq!(
        c.channex.calls()[2].body,
        json!({"values": [{"property_id": property, "room_type_id": c.twin_r, "date_from": day(5), "date_to": day(6),
                           "availability": 7}]})
    );
}

mod killed {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        a_process_killed_between_the_write_and_the_send_loses_nothing(Engine::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        a_process_killed_between_the_write_and_the_send_loses_nothing(Engine::Postgres).await;
    }
}

/// Channex takes messages of up to 10 MB: a request larger than the largest body goes in parts, each within it,
/// values in order, and the changes are settled by the last part.
async fn a_full_sync_larger_than_one_message_goes_in_parts_and_loses_nothing(s: TestServer) {
    const MAX_BODY: usize = 12_000;
    let c = connected_with(&s, KEY, Some(Options { max_body: MAX_BODY, ..test_options() })).await;
    let started = Instant::now();
    while c.channex.calls().len() < 2 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the full sync did not go");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = c.channex.calls();
    let restrictions: Vec<&Call> = calls.iter().filter(|c| c.endpoint == "restrictions").collect();
    assert!(restrictions.len() >= 3, "about 30 kB of rates in parts of 12 kB: {}", restrictions.len());
    for call in &calls {
        assert!(serde_json::to_vec(&call.body).unwrap().len() <= MAX_BODY, "a part over the largest body");
        assert_eq!((call.status, call.warnings.len()), (200, 0));
    }
    let values: usize = restrictions.iter().map(|c| c.body["values"].as_array().unwrap().len()).sum();
    assert_eq!(values, 72 + 72 + 4, "every value once, none repeated");
    assert_eq!(per_night(&restrictions, "rate_plan_id").len(), 3 * 500, "every night of every plan");
    let log = requests(&s, &c).await;
    assert_eq!(log.len(), calls.len(), "each part logged");
    assert!(log.iter().all(|r| r.outcome == RequestOutcome::Accepted));
    c.stop().await;
}

/// Channex's certification scenarios 2-7 as an operator performs them, through the dashboard's rates calendar (a
/// night's form and "change many nights"), each checked as the one request it must be.
async fn certification_ari_scenarios_through_the_rates_calendar(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let desk = Dashboard::new(&s, &c.org.token);
    let hotel = &c.hotel;
    async fn night_form(desk: &Dashboard<'_>, hotel: &str, plan: &str, d: u64, price: &str) {
        let path = format!("/hotels/{hotel}/rates/{plan}/{}", day(d));
        let form = [("price", price), ("minStay", ""), ("maxStay", ""), ("availability", "")];
        let (status, _, html) = desk.post(&path, &form).await;
        assert_eq!(status, 303, "the night's form was refused: {html}");
    }
    let night = |plan: &str, d: u64, fields: &[(&str, &str)]| {
        let price = fields.iter().find(|(n, _)| *n == "price").map_or("150.00", |(_, v)| *v).to_string();
        let (plan, desk) = (plan.to_string(), &desk);
        async move { night_form(desk, hotel, &plan, d, &price).await }
    };
    let bulk = |plans: Vec<String>, from: u64, to: u64, fields: Vec<(&'static str, &'static str)>| {
        let (from, to) = (day(from), day(to));
        let desk = &desk;
        async move {
            let mut form: Vec<(&str, &str)> = vec![("from", &from), ("to", &to), ("step", "apply")];
            // (The first post of the form, without a preview's fingerprint, only previews.)
            for weekday in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] {
                form.push(("weekdays", weekday));
            }
            for plan in &plans {
                form.push(("ratePlanIds", plan));
            }
            form.extend(fields.iter().copied());
            // As a person does: preview, then apply what was previewed.
            let path = format!("/hotels/{hotel}/rates/bulk");
            let (_, _, preview) = desk.post(&path, &form).await;
            let previewed = preview
                .split("name=\"previewed\" value=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .expect("a preview")
                .to_string();
            form.push(("previewed", &previewed));
            let (status, _, html) = desk.post(&path, &form).await;
            assert_eq!(status, 303, "the bulk edit was refused: {html}");
        }
    };
    let last_values = |n: usize| -> Vec<Value> {
        let calls = c.channex.calls();
        assert_eq!(calls[n - 1].endpoint, "restrictions");
        calls[n - 1].body["values"].as_array().unwrap().clone()
    };

    // 2. A single date, a single rate: one value in one request.
    night(&c.bnb, 3, &[("price", "333.00")]).await;
    settled(&s, &c, 3).await;
    let values = last_values(3);
    assert_eq!(values.len(), 1, "{values:#?}");
    assert_eq!((&values[0]["rate_plan_id"], &values[0]["rate"]), (&json!(c.bnb_double_r), &json!("333.00")));

    // 3. Three rates on three dates, typed one after another: one request.
    night(&c.bnb, 4, &[("price", "101.00")]).await;
    night(&c.bnb, 9, &[("price", "102.00")]).await;
    night(&c.bnb, 14, &[("price", "103.00")]).await;
    settled(&s, &c, 4).await;
    let rates: HashSet<String> = last_values(4).iter().map(|v| v["rate"].as_str().unwrap().to_string()).collect();
    assert_eq!(rates, HashSet::from(["101.00".to_string(), "102.00".into(), "103.00".into()]));

    // 4. Multiple dates, multiple rates: a run of nights in "change many nights" goes as one range.
    bulk(vec![c.bnb.clone()], 20, 30, vec![("priceAction", "set"), ("price", "210.00")]).await;
    settled(&s, &c, 5).await;
    let values = last_values(5);
    assert_eq!(values.len(), 1, "{values:#?}");
    assert_eq!((&values[0]["date_from"], &values[0]["date_to"]), (&json!(day(20)), &json!(day(30))));

    // 5. Minimum stay, 6. stop-sell, 7. several restrictions at once: one request each.
    bulk(vec![c.bnb.clone()], 40, 45, vec![("minStayAction", "set"), ("minStay", "3")]).await;
    settled(&s, &c, 6).await;
    assert!(last_values(6).iter().all(|v| v["min_stay_arrival"] == json!(3)));
    bulk(vec![c.bnb.clone()], 46, 47, vec![("stopSell", "set")]).await;
    settled(&s, &c, 7).await;
    assert!(last_values(7).iter().all(|v| v["stop_sell"] == json!(true)));
    bulk(
        vec![c.bnb.clone()],
        50,
        52,
        vec![("closedToArrival", "set"), ("closedToDeparture", "set"), ("maxStayAction", "set"), ("maxStay", "5")],
    )
    .await;
    settled(&s, &c, 8).await;
    for v in last_values(8) {
        assert_eq!(
            (&v["closed_to_arrival"], &v["closed_to_departure"], &v["max_stay"]),
            (&json!(true), &json!(true), &json!(5)),
            "{v}"
        );
    }
    c.stop().await;
}

/// Revisions Channex should never send, and one written to hurt: each malformed one is recorded as needing attention
/// (when it has an id to record it by), never acknowledged, and writes nothing (no reservation, no guest); the hostile
/// one is taken with its texts made safe; nothing answers 500.
async fn malformed_and_hostile_revisions_are_refused_recorded_and_never_half_written(s: TestServer) {
    let c = connected(&s, KEY).await;
    settled(&s, &c, 2).await;
    let property = c.channex.books.lock().unwrap().property_id.clone();
    let good = |id: &str, attributes: Value| {
        let mut base = json!({"property_id": property, "booking_id": uuid(), "status": "new", "unique_id": "BDC-1",
            "ota_reservation_code": "1", "ota_name": "Booking.com", "arrival_date": day(20), "departure_date": day(22),
            "amount": "300.00", "currency": "EUR",
            "rooms": [{"room_type_id": c.twin_r, "rate_plan_id": c.bar_twin_r, "amount": "300.00",
                       "occupancy": {"adults": 2, "children": 0, "infants": 0}}],
            "customer": {"name": "Ana", "surname": "Silva", "mail": "ana@example.com"}});
        for (k, v) in attributes.as_object().unwrap() {
            base[k] = v.clone();
        }
        json!({"type": "booking_revision", "id": id, "attributes": base})
    };
    let malformed: Vec<(String, Value)> = [
        ("another property", json!({"property_id": uuid()})),
        ("impossible dates", json!({"arrival_date": "2026-13-45"})),
        ("departure before arrival", json!({"arrival_date": day(22), "departure_date": day(20)})),
        ("an amount that is not money", json!({"amount": "12,50 EUR"})),
        ("no rooms", json!({"rooms": []})),
        ("an unknown status", json!({"status": "exploded"})),
        ("rooms of the wrong shape", json!({"rooms": {"room_type_id": c.twin_r}})),
    ]
    .into_iter()
    .map(|(what, attributes)| (what.to_string(), good(&uuid(), attributes)))
    .collect();
    let hostile_id = uuid();
    let hostile = good(
        &hostile_id,
        json!({"customer": {"name": format!("Ana\u{0}\u{7}<script>{}", "x".repeat(10_000)), "surname": "Silva\r\nBcc: x",
                            "mail": "not an address", "country": "Portugal", "language": "<b>"},
               "notes": "n".repeat(100_000)}),
    );
    {
        let mut books = c.channex.books.lock().unwrap();
        books.revisions.push((json!({"type": "booking_revision", "attributes": {"status": "new"}}), false));
        for (_, revision) in &malformed {
            books.revisions.push((revision.clone(), false));
        }
        books.revisions.push((hostile.clone(), false));
    }
    until("the hostile but well-formed booking's acknowledgement", || async { c.channex.acks().len() == 1 }).await;
    let mut conn = s.db.read().await.unwrap();
    let connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    for (what, revision) in &malformed {
        let id = revision["id"].as_str().unwrap();
        let recorded = store::channels::revision(&mut conn, &connection.id, id).await.unwrap();
        let recorded = recorded.unwrap_or_else(|| panic!("{what}: not recorded"));
        assert_eq!(recorded.outcome, "needs_attention", "{what}");
        assert!(recorded.reservation_id.is_none() && recorded.acked_at.is_none(), "{what}");
        assert!(!recorded.detail.is_empty(), "{what}: a reason");
    }
    drop(conn);
    assert_eq!(c.channex.acks(), [hostile_id], "only the well-formed one is acknowledged");
    let taken = channel_reservations(&s, &c).await;
    assert_eq!(taken.len(), 1, "nothing of the malformed ones was written: {taken:#?}");
    assert_eq!(s.count("guests").await, 1, "no guest of a revision that was not taken");
    let r = s.get(&format!("/api/reservations/{}", taken[0]["id"].as_str().unwrap()), &c.org.auth()).await.expect(200);
    assert_eq!(r.body["notes"].as_str().unwrap().chars().count(), 5000, "notes cut to what a reservation holds");
    let guest = s.get(&format!("/api/guests/{}", r.body["guestId"].as_str().unwrap()), &c.org.auth()).await.expect(200);
    let first = guest.body["firstName"].as_str().unwrap();
    assert!(first.starts_with("Ana<script>") && first.chars().count() == 100, "control characters gone, cut: {first}");
    assert_eq!(guest.body["lastName"], json!("SilvaBcc: x"), "no line break survives");
    assert_eq!(
        (&guest.body["email"], &guest.body["country"], &guest.body["language"]),
        (&Value::Null, &Value::Null, &Value::Null),
        "details we would refuse are left out, not the booking"
    );
    // The webhook with a body that is not JSON: never a 500.
    let answer = s
        .client
        .post(format!("{}/channels/channex/{}", s.base, c.hotel))
        .header("X-Channex-Webhook-Secret", WEBHOOK_SECRET)
        .body("{\"payload\": [1, 2")
        .send()
        .await
        .unwrap();
    assert!(answer.status().as_u16() < 500, "{}", answer.status());
    c.stop().await;
}

/// A Channex that cannot be reached: the request is logged as not answered, the connection pauses, the changes stay;
/// once the host answers (the connection pointed at it), everything goes.
async fn an_unreachable_host_keeps_the_changes_until_it_answers(s: TestServer) {
    let c = connected_with(&s, KEY, None).await;
    let sealing = KeyRing::open(&s.db, &KeySource::default()).await.unwrap().sealing;
    let mut conn = s.db.read().await.unwrap();
    let mut connection = store::channels::for_hotel(&mut conn, &c.org.id, &c.hotel, "channex").await.unwrap().unwrap();
    drop(conn);
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    connection.base_url = format!("http://{closed}/api/v1");
    let mut tx = s.db.begin_write().await.unwrap();
    store::channels::update(tx.conn(), &connection).await.unwrap();
    tx.commit().await.unwrap();
    let options = test_options();
    let dispatcher = Dispatcher::spawn(s.db.clone(), sealing.clone(), options.clone()).unwrap();
    let started = Instant::now();
    let refused = loop {
        let log = requests(&s, &c).await;
        if let Some(r) = log.first() {
            break r.clone();
        }
        assert!(started.elapsed() < WAIT, "nothing was tried");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((refused.outcome, refused.status), (RequestOutcome::Retry, None));
    assert!(refused.detail.contains("could not be reached"), "{}", refused.detail);
    assert!(s.count("channel_changes").await > 0, "the changes stay");
    assert!(c.channex.calls().is_empty());
    // Pointed at a host that answers: the full sync goes after the pause.
    connection.base_url = c.channex.base_url.clone();
    let mut tx = s.db.begin_write().await.unwrap();
    store::channels::update(tx.conn(), &connection).await.unwrap();
    tx.commit().await.unwrap();
    let started = Instant::now();
    while c.channex.calls().len() < 2 || s.count("channel_changes").await > 0 {
        assert!(started.elapsed() < WAIT, "the changes never went once the host answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    dispatcher.stop().await;
}
