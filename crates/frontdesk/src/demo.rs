//! Demo data for `frontdesk serve --demo`: seeded once into an empty database, never duplicated.

use crate::domain::api_keys::{self, ApiKeyIn};
use crate::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use crate::domain::hotels::{self, HotelIn};
use crate::domain::rate_plans::{self, RatePlanIn};
use crate::domain::room_types::{self, RoomTypeIn};
use crate::domain::rooms::{self, HousekeepingStatus, RoomIn};
use crate::domain::{identity, Actor, Scope};
use crate::store::Db;

pub const DEMO_ORGANIZATION: &str = "Demo Hotels";
pub const DEMO_EMAIL: &str = "demo@frontdesk.local";
pub const DEMO_PASSWORD: &str = "frontdesk-demo";

/// What `--demo` did.
pub struct Seeded {
    pub organization_id: String,
    pub hotel_id: Option<String>,
    /// The key secret, when this run created the key (it cannot be shown again later).
    pub api_key_secret: Option<String>,
}

/// Seeds the demo organization unless it exists; the database must otherwise be empty.
pub async fn seed(db: &Db) -> anyhow::Result<Seeded> {
    let orgs = identity::list_organizations(db).await?;
    if let Some(org) = orgs.iter().find(|o| o.name == DEMO_ORGANIZATION) {
        return Ok(Seeded { organization_id: org.id.clone(), hotel_id: None, api_key_secret: None });
    }
    anyhow::ensure!(orgs.is_empty(), "--demo seeds only an empty database, and this one already has organizations");
    let org = identity::create_organization(db, DEMO_ORGANIZATION).await?;
    identity::create_operator(
        db,
        identity::OperatorIn {
            organization_id: &org.id,
            email: DEMO_EMAIL,
            name: "Demo Operator",
            password: DEMO_PASSWORD,
        },
    )
    .await?;
    let hotel = hotels::create_for_organization(
        db,
        &org.id,
        HotelIn {
            name: "Harbour View Hotel".into(),
            timezone: "Europe/Lisbon".into(),
            currency: "EUR".into(),
            check_in_time: None,
            check_out_time: None,
            address_line1: Some("Rua do Porto 1".into()),
            address_line2: None,
            city: Some("Lisbon".into()),
            postal_code: Some("1100-001".into()),
            region: None,
            country: Some("PT".into()),
            public_booking: Some(true),
        },
    )
    .await?;
    seed_catalogue(db, &Actor::system(&org.id), &hotel.id).await?;
    let key = api_keys::create_for_organization(
        db,
        &org.id,
        ApiKeyIn {
            name: "Demo key (every scope)".into(),
            scopes: Scope::ALL.to_vec(),
            hotel_id: None,
            rate_limit_per_minute: None,
        },
    )
    .await?;
    Ok(Seeded { organization_id: org.id, hotel_id: Some(hotel.id), api_key_secret: Some(key.secret) })
}

/// Room types with their rooms and nightly prices (minor units), one rate plan each.
const CATALOGUE: [(&str, &str, i64, &[&str], i64); 3] = [
    ("Standard Double", "STD", 2, &["101", "102", "103", "104", "105", "106", "107", "108", "109", "110"], 12000),
    ("Deluxe King", "DLX", 2, &["201", "202", "203", "204", "205"], 16000),
    ("Family Suite", "FAM", 4, &["301", "302"], 22000),
];

/// How many nights ahead the demo prices reach.
const DEMO_NIGHTS: u64 = 90;

async fn seed_catalogue(db: &Db, system: &Actor, hotel_id: &str) -> anyhow::Result<()> {
    let today = chrono::Utc::now().date_naive();
    for (name, code, occupancy, room_names, price) in CATALOGUE {
        let room_type = room_types::create(
            db,
            system,
            RoomTypeIn {
                hotel_id: Some(hotel_id.to_string()),
                name: name.to_string(),
                description: Some(format!("{name}, sleeps {occupancy}")),
                max_occupancy: occupancy,
                max_adults: None,
                max_children: None,
            },
        )
        .await?;
        for (i, room) in room_names.iter().enumerate() {
            rooms::create(
                db,
                system,
                RoomIn {
                    hotel_id: None,
                    room_type_id: room_type.id.clone(),
                    name: room.to_string(),
                    floor: room[..1].parse().ok(),
                    housekeeping_status: Some(if i % 4 == 3 {
                        HousekeepingStatus::Dirty
                    } else {
                        HousekeepingStatus::Clean
                    }),
                },
            )
            .await?;
        }
        let plan = rate_plans::upsert(
            db,
            system,
            RatePlanIn {
                id: None,
                hotel_id: Some(hotel_id.to_string()),
                room_type_id: Some(Some(room_type.id.clone())),
                name: format!("Best Available Rate, {name}"),
                code: Some(Some(format!("BAR-{code}"))),
                currency: None,
                active: None,
            },
        )
        .await?;
        let values = (0..DEMO_NIGHTS)
            .filter_map(|n| today.checked_add_days(chrono::Days::new(n)))
            .map(|date| {
                use chrono::Datelike;
                let weekend = matches!(date.weekday(), chrono::Weekday::Fri | chrono::Weekday::Sat);
                DailyRateIn {
                    rate_plan_id: plan.id.clone(),
                    date: date.format("%Y-%m-%d").to_string(),
                    price: if weekend { price * 6 / 5 } else { price },
                    availability: None,
                    stop_sell: None,
                    closed_to_arrival: None,
                    closed_to_departure: None,
                    min_stay: None,
                    max_stay: None,
                }
            })
            .collect();
        daily_rates::upsert(db, system, DailyRatesIn { values }).await?;
    }
    Ok(())
}

impl Seeded {
    pub fn instructions(&self, base: &str) -> String {
        let login = format!(
            "curl -s -X POST {base}/api/auth/login -H 'Content-Type: application/json' \
             -d '{{\"email\":\"{DEMO_EMAIL}\",\"password\":\"{DEMO_PASSWORD}\"}}'"
        );
        let key = match &self.api_key_secret {
            Some(secret) => {
                use base64::Engine as _;
                let basic = base64::engine::general_purpose::STANDARD.encode(secret);
                format!(
                    "API key (every scope; shown only now): {secret}\n  try: curl -s {base}/api/hotels -H 'Authorization: Basic {basic}'"
                )
            }
            None => "API key: the demo key's secret was shown when it was created; sign in and create another \
                     with POST /api/apiKeys"
                .to_string(),
        };
        format!(
            "== Frontdesk demo ==\n  organization: {DEMO_ORGANIZATION} ({org})\n  operator login: {DEMO_EMAIL} / {DEMO_PASSWORD}\n  sign in: {login}\n  {key}\n  API description: {base}/api/openapi.json\n  assistant connector (MCP): {base}/mcp (sign in as the operator above)",
            org = self.organization_id
        )
    }
}
