//! Channel sync benchmark (docs/channels.md): the two requests of a full sync of 500 nights for a hotel with 20 room
//! types (5 rooms each, some booked) and 50 rate plans, every night priced differently so that nothing collapses
//! into ranges (the worst case), read from the database and built into Channex's JSON bodies exactly as the
//! dispatcher sends them, on SQLite and on PostgreSQL. Issue #47 asks for under a second.
//!
//! Then, live, against a stand-in Channex on loopback with the dispatcher as `serve` runs it (its real timings:
//! 1 s rounds, 3 s coalescing, 10 requests of a kind a minute per property):
//! * **1,000 rate edits in a minute over 10 hotels** (`daily_rates::upsert`, the write the API and the rates
//!   calendar use): every hotel within its limit in every 60 s window, no 429, and no value lost (the last price of
//!   every edited night at the stand-in is ours);
//! * **the last room sold at the desk reaches Channex as availability 0**: from the booking's commit to the stand-in's
//!   receipt, `CHANNEL_LAST_ROOMS` times (default 5); issue #47 asks for within 15 s.
//!
//! `cargo bench --bench channels` (`CHANNEL_RUNS` builds, default 10; `CHANNEL_LIVE=0` skips the live part).

mod support;

#[path = "channels/live.rs"]
mod live;

use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use frontdesk::channels::channex::worker::{build, Request};
use frontdesk::channels::{self, ChannelChange, ConnectionIn, RatePlanMapping, RoomTypeMapping};
use frontdesk::domain::change::ChannelChangeKind;
use frontdesk::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use frontdesk::domain::service_keys::{KeyRing, KeySource};
use frontdesk::domain::{rate_plans, room_types, rooms};
use frontdesk::store::Engine;
use support::{ms, BenchServer, Stats};

const ROOM_TYPES: usize = 20;
const ROOMS_PER_TYPE: usize = 5;
const PLANS: usize = 50;
const NIGHTS: u64 = 500;

async fn run(engine: Engine, runs: usize) {
    let Some(server) = BenchServer::start(engine).await else { return };
    let actor = server.actor();
    let db = &server.db;
    let mut types = Vec::new();
    for t in 0..ROOM_TYPES {
        let room_type = room_types::create(
            db,
            &actor,
            room_types::RoomTypeIn {
                hotel_id: Some(server.hotel.clone()),
                name: format!("Type {t}"),
                description: None,
                max_occupancy: 2,
                max_adults: None,
                max_children: None,
            },
        )
        .await
        .expect("room type");
        for r in 0..ROOMS_PER_TYPE {
            rooms::create(
                db,
                &actor,
                rooms::RoomIn {
                    hotel_id: None,
                    room_type_id: room_type.id.clone(),
                    name: format!("{t}-{r}"),
                    floor: None,
                    housekeeping_status: None,
                },
            )
            .await
            .expect("room");
        }
        types.push(room_type.id);
    }
    let today = Utc::now().date_naive();
    let mut plans = Vec::new();
    for p in 0..PLANS {
        let room_type = types[p % ROOM_TYPES].clone();
        let plan = rate_plans::upsert(
            db,
            &actor,
            rate_plans::RatePlanIn {
                id: None,
                hotel_id: Some(server.hotel.clone()),
                room_type_id: Some(Some(room_type.clone())),
                name: format!("Plan {p}"),
                code: None,
                currency: None,
                active: None,
            },
        )
        .await
        .expect("rate plan");
        let values: Vec<DailyRateIn> = (0..NIGHTS)
            .map(|n| DailyRateIn {
                rate_plan_id: plan.id.clone(),
                date: (today + Days::new(n)).format("%Y-%m-%d").to_string(),
                price: 10000 + ((p as i64) * 131 + (n as i64) * 7) % 5000,
                availability: None,
                stop_sell: Some(n % 31 == 0),
                closed_to_arrival: Some(n % 7 == 5),
                closed_to_departure: None,
                min_stay: Some(Some(1 + (n % 3) as i64)),
                max_stay: None,
            })
            .collect();
        daily_rates::upsert(db, &actor, DailyRatesIn { values }).await.expect("daily rates");
        plans.push((plan.id, room_type));
    }
    let mapping_room_types =
        types.iter().map(|t| RoomTypeMapping { room_type_id: t.clone(), remote_id: uuid::Uuid::new_v4().to_string() });
    let mapping_plans = plans.iter().map(|(plan, room_type)| RatePlanMapping {
        rate_plan_id: plan.clone(),
        room_type_id: room_type.clone(),
        remote_id: uuid::Uuid::new_v4().to_string(),
    });
    let sealing = KeyRing::open(db, &KeySource::default()).await.expect("keys").sealing;
    let connection = channels::connect(
        db,
        &sealing,
        &actor,
        ConnectionIn {
            hotel_id: server.hotel.clone(),
            channel: "channex".into(),
            // Nothing is sent: no dispatcher runs.
            base_url: "http://127.0.0.1:9/api/v1".into(),
            property_id: uuid::Uuid::new_v4().to_string(),
            api_key: Some("bench".into()),
            webhook_secret: None,
            room_types: mapping_room_types.collect(),
            rate_plans: mapping_plans.collect(),
            nightly_sync_hour: None,
        },
    )
    .await
    .expect("connected");
    let full =
        |kind| ChannelChange { id: String::new(), kind, subject: None, from: today, to: today + Days::new(NIGHTS - 1) };
    let mut samples = Vec::with_capacity(runs);
    let (mut bytes, mut values) = (0, 0);
    for _ in 0..runs {
        let started = Instant::now();
        let mut conn = db.read().await.expect("connection");
        let availability = build(
            &mut conn,
            &connection,
            ChannelChangeKind::Availability,
            &[full(ChannelChangeKind::Availability)],
            today,
        )
        .await
        .expect("availability")
        .expect("values");
        let rates = build(&mut conn, &connection, ChannelChangeKind::Rates, &[full(ChannelChangeKind::Rates)], today)
            .await
            .expect("rates")
            .expect("values");
        let bodies = [availability.body().expect("json"), rates.body().expect("json")];
        samples.push(started.elapsed());
        bytes = bodies.iter().map(Vec::len).sum::<usize>();
        values = [&availability, &rates].iter().map(|r: &&Request| r.len()).sum::<usize>();
    }
    let stats = Stats::new(samples);
    let worst = stats.percentile(100.0);
    println!(
        "{engine:?}: full sync of {NIGHTS} nights, {ROOM_TYPES} room types, {PLANS} rate plans: 2 requests, {values} values, \
         {:.1} MB; built in {} (worst {:.1} ms, {})",
        bytes as f64 / 1e6,
        stats.summary(),
        ms(worst),
        if worst < Duration::from_secs(1) { "under 1 s" } else { "OVER 1 s" }
    );
}

fn main() {
    let runs = std::env::var("CHANNEL_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let live = std::env::var("CHANNEL_LIVE").as_deref() != Ok("0");
    let last_rooms = std::env::var("CHANNEL_LAST_ROOMS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine, runs).await;
            if live {
                live::run(engine, last_rooms).await;
            }
        }
    });
}
