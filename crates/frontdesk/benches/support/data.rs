//! The data sets the benchmarks share, loaded the same way every time (deterministic generators), so that two
//! benchmarks measuring the same hotel measure the same rows.

use chrono::{Days, NaiveDate, Utc};
use frontdesk::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use frontdesk::domain::{hotels, rate_plans, room_types, rooms};
use frontdesk::store::Engine;

use super::BenchServer;

const ROOM_TYPES: usize = 20;
const PLANS_PER_TYPE: usize = 5;
const ROOMS_PER_TYPE: usize = 10;
const RESERVATIONS: usize = 10_000;
const DAYS: u64 = 365;

/// A small deterministic generator (xorshift), so every run loads the same data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What autovacuum does on a live PostgreSQL database after a bulk load: statistics, and the visibility map that
/// index-only counts need.
pub async fn vacuum(server: &BenchServer) {
    if server.engine == Engine::Postgres {
        frontdesk::store::query("VACUUM ANALYZE")
            .execute(&mut server.db.read().await.expect("conn"))
            .await
            .expect("vacuum");
    }
}

/// The availability benchmark's hotel (`benches/availability.rs`, the same data): 20 room types of 10 rooms, 5 rate
/// plans each priced for a year (one selling from an allotment), 10,000 confirmed stays of 1 to 7 nights.
pub async fn availability_hotel(server: &BenchServer, hotel_id: &str) {
    let actor = server.actor();
    let today = Utc::now().date_naive();
    let mut types = Vec::new();
    for t in 0..ROOM_TYPES {
        let room_type = room_types::create(
            &server.db,
            &actor,
            room_types::RoomTypeIn {
                hotel_id: Some(hotel_id.to_string()),
                name: format!("Type {t:02}"),
                description: Some("A room".into()),
                max_occupancy: 2 + (t % 3) as i64,
                max_adults: None,
                max_children: None,
            },
        )
        .await
        .expect("room type");
        for r in 0..ROOMS_PER_TYPE {
            let room = rooms::RoomIn {
                hotel_id: None,
                room_type_id: room_type.id.clone(),
                name: format!("{t:02}{r:02}"),
                floor: None,
                housekeeping_status: None,
            };
            rooms::create(&server.db, &actor, room).await.expect("room");
        }
        for p in 0..PLANS_PER_TYPE {
            let plan = rate_plans::RatePlanIn {
                id: None,
                hotel_id: Some(hotel_id.to_string()),
                room_type_id: Some(Some(room_type.id.clone())),
                name: format!("Plan {t}-{p}"),
                code: None,
                currency: None,
                active: None,
            };
            let plan = rate_plans::upsert(&server.db, &actor, plan).await.expect("plan");
            let nights = DAYS + 10;
            for first in (0..nights).step_by(500) {
                let values = (first..(first + 500).min(nights))
                    .map(|d| DailyRateIn {
                        rate_plan_id: plan.id.clone(),
                        date: (today + Days::new(d)).to_string(),
                        price: 10000 + (d as i64 % 7) * 500 + p as i64 * 1000,
                        availability: if p == 4 { Some(Some(5)) } else { None },
                        stop_sell: None,
                        closed_to_arrival: None,
                        closed_to_departure: None,
                        min_stay: None,
                        max_stay: None,
                    })
                    .collect();
                daily_rates::upsert(&server.db, &actor, DailyRatesIn { values }).await.expect("rates");
            }
        }
        types.push(room_type.id);
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut loaded = 0;
    while loaded < RESERVATIONS {
        let n = super::ROWS_PER_INSERT.min(RESERVATIONS - loaded);
        let stays: Vec<super::Stay> = (0..n)
            .map(|_| super::Stay {
                hotel_id: hotel_id.to_string(),
                room_type_id: types[rng.below(ROOM_TYPES as u64) as usize].clone(),
                check_in: today + Days::new(rng.below(DAYS)),
                nights: 1 + rng.below(7),
            })
            .collect();
        super::insert_stays(server, &stays).await;
        loaded += n;
    }
    vacuum(server).await;
}

/// Hotels of the reservations at scale.
pub const SCALE_HOTELS: usize = 20;
/// Days over which their stays check in, from [`scale_start`].
pub const SCALE_DAYS: u64 = 3 * 365;

/// The first check-in date of the reservations at scale.
pub fn scale_start() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 1, 1).expect("date")
}

/// A calendar date of the reservations at scale, `offset` days from [`scale_start`].
pub fn scale_date(offset: u64) -> String {
    (scale_start() + Days::new(offset)).format("%Y-%m-%d").to_string()
}

/// Reservations at scale: the hotels they are in and their ids.
pub struct AtScale {
    pub hotels: Vec<String>,
    pub ids: Vec<String>,
}

/// `count` confirmed one-room reservations of 1 to 7 nights over [`SCALE_HOTELS`] new hotels of the server's
/// organization (one room type each), checking in over [`SCALE_DAYS`] days; loaded straight into the tables in
/// multi-row INSERTs, then vacuumed.
pub async fn reservations_at_scale(server: &BenchServer, count: usize) -> AtScale {
    let actor = server.actor();
    let (mut hotel_ids, mut type_ids) = (Vec::new(), Vec::new());
    for i in 0..SCALE_HOTELS {
        let name = format!("Hotel {i}");
        let hotel = hotels::create_for_organization(&server.db, &server.org, hotels::HotelIn::new(name, "UTC", "EUR"))
            .await
            .expect("hotel");
        let room_type = room_types::RoomTypeIn {
            hotel_id: Some(hotel.id.clone()),
            name: "Double".into(),
            description: None,
            max_occupancy: 2,
            max_adults: None,
            max_children: None,
        };
        type_ids.push(room_types::create(&server.db, &actor, room_type).await.expect("room type").id);
        hotel_ids.push(hotel.id);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let started = std::time::Instant::now();
    let mut ids = Vec::with_capacity(count);
    while ids.len() < count {
        let n = super::ROWS_PER_INSERT.min(count - ids.len());
        let stays: Vec<super::Stay> = (0..n)
            .map(|_| {
                let h = rng.below(SCALE_HOTELS as u64) as usize;
                super::Stay {
                    hotel_id: hotel_ids[h].clone(),
                    room_type_id: type_ids[h].clone(),
                    check_in: scale_start() + Days::new(rng.below(SCALE_DAYS)),
                    nights: 1 + rng.below(7),
                }
            })
            .collect();
        ids.extend(super::insert_stays(server, &stays).await);
    }
    eprintln!("  loaded {count} reservations in {:.1} s", started.elapsed().as_secs_f64());
    vacuum(server).await;
    AtScale { hotels: hotel_ids, ids }
}
