//! The live part of the channel benchmark: the dispatcher with `serve`'s options against a stand-in Channex.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{Days, NaiveDate, Utc};
use frontdesk::channels::channex::worker::{Dispatcher, Options};
use frontdesk::channels::{self, ConnectionIn, RatePlanMapping, RoomTypeMapping};
use frontdesk::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use frontdesk::domain::reservations::{write, ReservationIn};
use frontdesk::domain::service_keys::{KeyRing, KeySource};
use frontdesk::domain::{hotels, rate_plans, room_types, rooms, Actor};
use frontdesk::store::{Db, Engine};
use serde_json::{json, Value};

use crate::support::{ms, BenchServer, Stats};

const HOTELS: usize = 10;
const EDITS: usize = 1_000;
const EDIT_MINUTE: Duration = Duration::from_secs(60);
/// Nights the edits fall on.
const EDITED_NIGHTS: u64 = 60;
const LIMIT: usize = 10;

/// What the stand-in saw: each request by property and endpoint with its arrival, the last rate of each (rate plan,
/// night), and when each (room type, night) was first told 0.
#[derive(Default)]
struct Seen {
    requests: Vec<(String, &'static str, Instant)>,
    too_many: usize,
    rates: HashMap<(String, NaiveDate), String>,
    sold_out: HashMap<(String, NaiveDate), Instant>,
}

type Shared = Arc<Mutex<Seen>>;

/// The nights a value names: `date`, or `date_from` to `date_to`.
fn nights(value: &Value) -> Vec<NaiveDate> {
    let day = |field: &str| value[field].as_str().and_then(|d| d.parse::<NaiveDate>().ok());
    match (day("date"), day("date_from"), day("date_to")) {
        (Some(d), _, _) => vec![d],
        (None, Some(from), Some(to)) => from.iter_days().take_while(|d| *d <= to).collect(),
        _ => Vec::new(),
    }
}

/// Channex's ARI endpoints as the stand-in answers them: 429 past 10 a minute per property and endpoint (which the
/// dispatcher must never meet), else 200 with a task id.
fn ari(seen: &Shared, endpoint: &'static str, body: &[u8]) -> (StatusCode, axum::Json<Value>) {
    let now = Instant::now();
    let mut seen = seen.lock().expect("stand-in");
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"errors": {"code": "bad_request", "title": "Bad Request"}})),
        );
    };
    let values = body["values"].as_array().cloned().unwrap_or_default();
    let property = values.first().and_then(|v| v["property_id"].as_str()).unwrap_or("").to_string();
    let recent = seen
        .requests
        .iter()
        .filter(|(p, e, at)| *p == property && *e == endpoint && now.duration_since(*at) < Duration::from_secs(60))
        .count();
    if recent >= LIMIT {
        seen.too_many += 1;
        let error = json!({"errors": {"code": "http_too_many_requests", "title": "Too Many Requests"}});
        return (StatusCode::TOO_MANY_REQUESTS, axum::Json(error));
    }
    seen.requests.push((property, endpoint, now));
    for value in &values {
        for night in nights(value) {
            if endpoint == "restrictions" {
                if let (Some(plan), Some(rate)) = (value["rate_plan_id"].as_str(), value["rate"].as_str()) {
                    seen.rates.insert((plan.to_string(), night), rate.to_string());
                }
            } else if value["availability"] == json!(0) {
                let room_type = value["room_type_id"].as_str().unwrap_or("").to_string();
                seen.sold_out.entry((room_type, night)).or_insert(now);
            }
        }
    }
    let task = json!({"data": [{"id": uuid::Uuid::new_v4().to_string(), "type": "task"}],
                      "meta": {"message": "Success", "warnings": []}});
    (StatusCode::OK, axum::Json(task))
}

async fn stand_in() -> (String, Shared) {
    let seen: Shared = Arc::default();
    let app = axum::Router::new()
        .route(
            "/api/v1/availability",
            axum::routing::post(|State(s): State<Shared>, body: Bytes| async move { ari(&s, "availability", &body) }),
        )
        .route(
            "/api/v1/restrictions",
            axum::routing::post(|State(s): State<Shared>, body: Bytes| async move { ari(&s, "restrictions", &body) }),
        )
        .route(
            "/api/v1/booking_revisions/feed",
            axum::routing::get(|| async {
                axum::Json(json!({"data": [], "meta": {"page": 1, "limit": 10, "total": 0}}))
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/api/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, seen)
}

/// A connected hotel: ours and Channex's ids of its one room type and one rate plan.
struct Hotel {
    id: String,
    room_type: String,
    plan: String,
    remote_room_type: String,
    remote_plan: String,
}

/// A hotel with one room type of `rooms` rooms and one rate plan priced for 500 nights, connected to `base`.
async fn connected_hotel(db: &Db, actor: &Actor, n: usize, rooms: usize, base: &str, today: NaiveDate) -> Hotel {
    let hotel =
        hotels::create(db, actor, hotels::HotelIn::new(format!("Hotel {n}"), "UTC", "EUR")).await.expect("hotel");
    let room_type = room_types::create(
        db,
        actor,
        room_types::RoomTypeIn {
            hotel_id: Some(hotel.id.clone()),
            name: "Double".into(),
            description: None,
            max_occupancy: 2,
            max_adults: None,
            max_children: None,
        },
    )
    .await
    .expect("room type");
    for r in 0..rooms {
        let room = rooms::RoomIn {
            hotel_id: None,
            room_type_id: room_type.id.clone(),
            name: format!("{r}"),
            floor: None,
            housekeeping_status: None,
        };
        rooms::create(db, actor, room).await.expect("room");
    }
    let plan = rate_plans::upsert(
        db,
        actor,
        rate_plans::RatePlanIn {
            id: None,
            hotel_id: Some(hotel.id.clone()),
            room_type_id: Some(Some(room_type.id.clone())),
            name: "BAR".into(),
            code: None,
            currency: None,
            active: None,
        },
    )
    .await
    .expect("rate plan");
    let values = (0..500).map(|d| price(&plan.id, today + Days::new(d), 10_000)).collect();
    daily_rates::upsert(db, actor, DailyRatesIn { values }).await.expect("prices");
    let (remote_room_type, remote_plan) = (uuid::Uuid::new_v4().to_string(), uuid::Uuid::new_v4().to_string());
    let sealing = KeyRing::open(db, &KeySource::default()).await.expect("keys").sealing;
    let input = ConnectionIn {
        hotel_id: hotel.id.clone(),
        channel: "channex".into(),
        base_url: base.into(),
        property_id: uuid::Uuid::new_v4().to_string(),
        api_key: Some("bench-key".into()),
        webhook_secret: None,
        room_types: vec![RoomTypeMapping { room_type_id: room_type.id.clone(), remote_id: remote_room_type.clone() }],
        rate_plans: vec![RatePlanMapping {
            rate_plan_id: plan.id.clone(),
            room_type_id: room_type.id.clone(),
            remote_id: remote_plan.clone(),
        }],
        nightly_sync_hour: None,
    };
    channels::connect(db, &sealing, actor, input).await.expect("connected");
    Hotel { id: hotel.id, room_type: room_type.id, plan: plan.id, remote_room_type, remote_plan }
}

fn price(plan: &str, date: NaiveDate, price: i64) -> DailyRateIn {
    DailyRateIn {
        rate_plan_id: plan.to_string(),
        date: date.format("%Y-%m-%d").to_string(),
        price,
        availability: None,
        stop_sell: None,
        closed_to_arrival: None,
        closed_to_departure: None,
        min_stay: None,
        max_stay: None,
    }
}

async fn drained(db: &Db, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        let mut conn = db.read().await.expect("connection");
        let waiting = frontdesk::store::query("SELECT COUNT(*) AS n FROM channel_changes")
            .fetch_one(&mut conn)
            .await
            .expect("count")
            .try_get::<i64, _>("n")
            .expect("n");
        if waiting == 0 {
            return Some(started.elapsed());
        }
        drop(conn);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// The most requests of `endpoint` any property had within 60 s.
fn busiest_minute(seen: &Seen, endpoint: &str) -> usize {
    let mut by_property: HashMap<&str, Vec<Instant>> = HashMap::new();
    for (property, e, at) in &seen.requests {
        if *e == endpoint {
            by_property.entry(property).or_default().push(*at);
        }
    }
    by_property
        .values()
        .map(|times| {
            times
                .iter()
                .map(|start| {
                    times.iter().filter(|t| **t >= *start && t.duration_since(*start) < Duration::from_secs(60)).count()
                })
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

pub async fn run(engine: Engine, last_rooms: usize) {
    let Some(server) = BenchServer::start(engine).await else { return };
    let actor = server.actor();
    let db = &server.db;
    let today = Utc::now().date_naive();
    let (base, seen) = stand_in().await;
    let mut hotels = Vec::new();
    for n in 0..HOTELS {
        // Hotel 0 has one room, so that every booking there sells its last room.
        hotels.push(connected_hotel(db, &actor, n, if n == 0 { 1 } else { 5 }, &base, today).await);
    }
    let sealing = KeyRing::open(db, &KeySource::default()).await.expect("keys").sealing;
    let dispatcher = Dispatcher::spawn(db.clone(), sealing, Options::default()).expect("dispatcher");
    drained(db, Duration::from_secs(120)).await.expect("the full syncs of connecting went");

    // 1,000 rate edits in a minute, spread evenly over the hotels and the nights.
    let mut expected: HashMap<(String, NaiveDate), String> = HashMap::new();
    let started = Instant::now();
    for i in 0..EDITS {
        let at = EDIT_MINUTE.mul_f64(i as f64 / EDITS as f64);
        if let Some(wait) = at.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
        let hotel = &hotels[i % HOTELS];
        let night = today + Days::new(((i / HOTELS) as u64 * 7) % EDITED_NIGHTS);
        let amount = 10_000 + (i as i64 * 37) % 9_000;
        let values = vec![price(&hotel.plan, night, amount)];
        daily_rates::upsert(db, &actor, DailyRatesIn { values }).await.expect("edit");
        expected.insert((hotel.remote_plan.clone(), night), format!("{}.{:02}", amount / 100, amount % 100));
    }
    let edited_in = started.elapsed();
    let drain = drained(db, Duration::from_secs(180)).await;
    let (lost, too_many, busiest, requests) = {
        let seen = seen.lock().expect("stand-in");
        let lost = expected.iter().filter(|(key, rate)| seen.rates.get(*key) != Some(*rate)).count();
        let requests = seen.requests.iter().filter(|(_, e, at)| *e == "restrictions" && *at >= started).count();
        (lost, seen.too_many, busiest_minute(&seen, "restrictions"), requests)
    };
    println!(
        "{engine:?}: {EDITS} rate edits over {HOTELS} hotels in {:.1} s: {requests} restrictions requests in all, at most \
         {busiest} for one hotel within a minute (limit {LIMIT}), {too_many} answered 429, everything sent {} after the \
         last edit, {lost} of {} edited nights with another price at the stand-in ({})",
        edited_in.as_secs_f64(),
        drain.map_or("NOT".to_string(), |d| format!("{:.1} s", d.as_secs_f64())),
        expected.len(),
        if lost == 0 && too_many == 0 && busiest <= LIMIT && drain.is_some() { "no value lost, within the limit" } else { "FAILED" }
    );

    // The last room sold at the desk: from the booking's commit until Channex is told 0.
    let hotel = &hotels[0];
    let mut samples = Vec::new();
    for k in 0..last_rooms {
        let night = today + Days::new(100 + k as u64);
        let booking: ReservationIn = serde_json::from_value(json!({
            "hotelId": hotel.id, "checkInDate": night.to_string(), "checkOutDate": (night + Days::new(1)).to_string(),
            "rooms": [{"roomTypeId": hotel.room_type, "price": 10000}]
        }))
        .expect("booking");
        write::create(db, &actor, booking).await.expect("booked");
        let booked = Instant::now();
        let key = (hotel.remote_room_type.clone(), night);
        loop {
            if let Some(at) = seen.lock().expect("stand-in").sold_out.get(&key) {
                samples.push(at.saturating_duration_since(booked));
                break;
            }
            assert!(booked.elapsed() < Duration::from_secs(120), "availability 0 never reached the stand-in");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    dispatcher.stop().await;
    let stats = Stats::new(samples);
    let worst = stats.percentile(100.0);
    println!(
        "{engine:?}: the last room sold at the desk reached Channex as availability 0 in {} (worst {:.1} s: {})",
        stats.summary(),
        ms(worst) / 1000.0,
        if worst <= Duration::from_secs(15) { "within 15 s" } else { "OVER 15 s" }
    );
}
