//! Demo data for `frontdesk serve --demo`: seeded once into an empty database, never duplicated.

use chrono::{Days, NaiveDate, TimeDelta};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::domain::api_keys::{self, ApiKeyIn};
use crate::domain::change::{Job, Writer};
use crate::domain::daily_rates::{self, DailyRateIn, DailyRatesIn};
use crate::domain::finance::folios::PaymentMethod;
use crate::domain::finance::ledger::{self, Entry, PaymentIn};
use crate::domain::guests::{self, GuestIn};
use crate::domain::hotels::{self, Hotel, HotelIn};
use crate::domain::rate_plans::{self, RatePlan, RatePlanIn};
use crate::domain::reservations::{
    self as reservations, write, ReservationIn, ReservationPatch, ReservationRoomIn, ReservationStatus, Source,
};
use crate::domain::room_types::{self, RoomTypeIn};
use crate::domain::rooms::{self, HousekeepingStatus, Room, RoomIn, RoomPatch};
use crate::domain::{as_of, identity, Actor, Scope};
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
    let org = identity::create_organization_as(db, Writer::Job(Job::Demo), DEMO_ORGANIZATION).await?;
    identity::create_operator_as(
        db,
        Writer::Job(Job::Demo),
        identity::OperatorIn {
            organization_id: &org.id,
            email: DEMO_EMAIL,
            name: "Demo Operator",
            password: DEMO_PASSWORD,
        },
        &identity::Staffing::OWNER,
    )
    .await?;
    let hotel = hotels::create_as(
        db,
        Writer::Job(Job::Demo),
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
            booking_embed_origins: None,
        },
    )
    .await?;
    let demo = Actor::service(&org.id, Writer::Job(Job::Demo));
    seed_catalogue(db, &demo, &hotel.id).await?;
    seed_stays(db, &demo, &hotel.id).await?;
    let key = api_keys::create_as(
        db,
        Writer::Job(Job::Demo),
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

/// What the booking page says of a room type.
fn describe(code: &str) -> &'static str {
    match code {
        "STD" => "A quiet room with a queen bed, a rain shower and a view over the old town. 18 m².",
        "DLX" => "A king bed, a reading chair by the window and a view of the river. 26 m².",
        _ => "Two rooms: a king bed and two single beds, a bath and a shower. 40 m².",
    }
}

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
                description: Some(describe(code).to_string()),
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

/// Guests of the demo hotel (first name, last name, country).
const GUESTS: [(&str, &str, &str); 40] = [
    ("Ana", "Silva", "PT"),
    ("João", "Pereira", "PT"),
    ("Marie", "Dubois", "FR"),
    ("Lukas", "Schneider", "DE"),
    ("Sofia", "Rossi", "IT"),
    ("Liam", "O'Brien", "IE"),
    ("Emma", "Johansson", "SE"),
    ("Noah", "Williams", "GB"),
    ("Olivia", "Brown", "US"),
    ("Mateo", "García", "ES"),
    ("Yuki", "Tanaka", "JP"),
    ("Chen", "Wei", "CN"),
    ("Aisha", "Khan", "GB"),
    ("Lucas", "Martin", "FR"),
    ("Mia", "Müller", "DE"),
    ("Hugo", "Bernard", "FR"),
    ("Inês", "Costa", "PT"),
    ("Tiago", "Santos", "BR"),
    ("Eva", "Novák", "CZ"),
    ("Jakub", "Kowalski", "PL"),
    ("Freya", "Larsen", "DK"),
    ("Oskar", "Nieminen", "FI"),
    ("Zoe", "Anderson", "CA"),
    ("Jack", "Taylor", "AU"),
    ("Lea", "Fischer", "AT"),
    ("Nina", "Peeters", "BE"),
    ("Daan", "de Vries", "NL"),
    ("Sara", "Haddad", "MA"),
    ("Omar", "Farouk", "EG"),
    ("Priya", "Sharma", "IN"),
    ("Diego", "López", "MX"),
    ("Camila", "Rojas", "CL"),
    ("Elif", "Yılmaz", "TR"),
    ("Nikos", "Papadopoulos", "GR"),
    ("Anna", "Horváth", "HU"),
    ("Ivan", "Petrov", "BG"),
    ("Maya", "Cohen", "IL"),
    ("Ethan", "Clark", "US"),
    ("Grace", "Murphy", "IE"),
    ("Hannah", "Weber", "CH"),
];

/// A lived-in front office around the day the demo is seeded: a month of history (checked out, the odd
/// cancellation and no-show), guests in house, arrivals and departures today, bookings for the month ahead and
/// a few booking requests waiting. Pseudo-random with a fixed seed, so every demo looks alike.
///
/// Every step draws from the one seeded generator, handed on in turn: the order of the draws (and so the demo) is
/// the order of the steps here and of the draws inside each, and changing either changes the demo.
async fn seed_stays(db: &Db, system: &Actor, hotel_id: &str) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(20261123);
    let hotel = hotels::get(db, system, hotel_id).await?;
    let today = hotel.today();
    let guest_ids = seed_guests(db, system, hotel_id, &mut rng).await?;
    let plans = rate_plans::list(db, system, Some(hotel_id), None).await?;
    let all_rooms = rooms::list(db, system, Some(hotel_id), None).await?;
    let desk = DemoDesk { db, system, hotel, today, guest_ids };
    for (index, room) in all_rooms.iter().enumerate() {
        let Some(plan) = plans.iter().find(|p| p.room_type_id.as_deref() == Some(room.room_type_id.as_str())) else {
            continue;
        };
        desk.seed_room(&mut rng, DemoRoom { index, room, plan }).await?;
    }
    desk.seed_requests(&plans).await
}

/// The demo hotel's guests ([`GUESTS`]), with e-mail addresses and drawn phone numbers; answers their ids.
async fn seed_guests(db: &Db, system: &Actor, hotel_id: &str, rng: &mut StdRng) -> anyhow::Result<Vec<String>> {
    let mut guest_ids = Vec::new();
    for (first, last, country) in GUESTS {
        let email = format!("{}.{}@example.com", first.to_lowercase(), last.to_lowercase().replace([' ', '\''], ""));
        let guest = guests::create(
            db,
            system,
            GuestIn {
                hotel_id: Some(hotel_id.to_string()),
                first_name: first.into(),
                last_name: last.into(),
                email: Some(email),
                phone: Some(format!("+351 91{:07}", rng.gen_range(0..10_000_000))),
                country: Some(country.into()),
                street: None,
                postal_code: None,
                city: None,
                language: None,
                notes: None,
            },
        )
        .await?;
        guest_ids.push(guest.id);
    }
    Ok(guest_ids)
}

/// What the steps that seed the demo's stays share: the hotel, the day the demo is seeded and its guests.
struct DemoDesk<'a> {
    db: &'a Db,
    system: &'a Actor,
    hotel: Hotel,
    today: NaiveDate,
    guest_ids: Vec<String>,
}

/// A room of the demo hotel, the rate plan its stays are booked on, and its place among the hotel's rooms.
struct DemoRoom<'a> {
    index: usize,
    room: &'a Room,
    plan: &'a RatePlan,
}

/// A stay's dates as days from the day the demo is seeded: in on `start`, out on `end`.
#[derive(Debug, Clone, Copy)]
struct StayDates {
    start: i64,
    end: i64,
}

impl DemoDesk<'_> {
    /// The day `offset` days from the day the demo is seeded (before it, when negative).
    fn day(&self, offset: i64) -> NaiveDate {
        if offset >= 0 {
            self.today + Days::new(offset as u64)
        } else {
            self.today - Days::new(offset.unsigned_abs())
        }
    }

    /// Walks the room's calendar from a month ago to a month ahead: a stay, a gap, a stay…
    async fn seed_room(&self, rng: &mut StdRng, room: DemoRoom<'_>) -> anyhow::Result<()> {
        let nightly = CATALOGUE.iter().find(|c| room.plan.name.ends_with(c.0)).map(|c| c.4).unwrap_or(12000);
        let mut start: i64 = -30 - rng.gen_range(0..4);
        // Whether a guest due to leave today is still in the room: today's arrival cannot be checked in to it yet.
        let mut departure_in_room = false;
        while start < 30 {
            let mut nights: i64 = rng.gen_range(1..=5);
            // Some stays that span today end today instead: the desk has departures to check out.
            if start < 0 && start + nights > 0 && rng.gen_bool(0.4) {
                nights = -start;
            }
            let stay = StayDates { start, end: start + nights };
            let input = self.booked_stay(rng, &room, stay, nightly);
            let r = write::create(self.db, self.system, input).await?;
            let moves = moves_by_today(rng, room.index, stay, &mut departure_in_room);
            self.make_moves(rng, &room.room.id, &r.id, stay, moves).await?;
            start = stay.end + rng.gen_range(0..3);
        }
        Ok(())
    }

    /// A confirmed stay in the room, for a drawn guest, booked through a drawn source.
    fn booked_stay(&self, rng: &mut StdRng, room: &DemoRoom<'_>, stay: StayDates, nightly: i64) -> ReservationIn {
        let guest = self.guest_ids[rng.gen_range(0..self.guest_ids.len())].clone();
        let adults = rng.gen_range(1..=2);
        ReservationIn {
            hotel_id: Some(self.hotel.id.clone()),
            guest_id: Some(guest),
            status: Some(ReservationStatus::Confirmed),
            check_in_date: self.day(stay.start).to_string(),
            check_out_date: self.day(stay.end).to_string(),
            start_time: None,
            end_time: None,
            adults: None,
            children: None,
            infants: None,
            total_price: None,
            currency: None,
            source: Some([Source::Dashboard, Source::Channel, Source::BookingPage, Source::Api][rng.gen_range(0..4)]),
            channel_reference: None,
            notes: None,
            rooms: vec![ReservationRoomIn {
                room_type_id: room.room.room_type_id.clone(),
                rate_plan_id: Some(room.plan.id.clone()),
                // Arrivals of today keep their room unassigned now and then, for the desk to assign.
                room_id: (stay.start != 0 || !room.index.is_multiple_of(3)).then(|| room.room.id.clone()),
                adults: Some(adults),
                children: Some(0),
                infants: Some(0),
                // The rate plan's prices start today; earlier nights are priced as the plan would have.
                price: (stay.start < 0).then_some(nightly * (stay.end - stay.start)),
                night_prices: None,
            }],
        }
    }

    /// Makes a stay's moves. The desk's rules read the clock (a stay is checked in on its dates): history is
    /// recorded as it happened, checked in on the day of arrival and out on the day of departure, and housekeeping
    /// cleaned the room a few hours after each departure of the past.
    /// Pays what a departing guest owes, by card at the desk, as a front desk does before the check-out.
    async fn settle(&self, reservation_id: &str, at: Option<chrono::DateTime<chrono::Utc>>) -> anyhow::Result<()> {
        let r = reservations::get(self.db, self.system, reservation_id).await?;
        let Some(folio) = r.folio.filter(|f| f.balance > 0) else { return Ok(()) };
        let payment = PaymentIn {
            method: PaymentMethod::Card,
            amount: folio.balance,
            currency: None,
            reference: Some(format!("Terminal receipt {}", &r.reference)),
            paid_at: at,
        };
        let entry = Entry::Payment(payment);
        match at {
            Some(at) => as_of(at, ledger::record(self.db, self.system, &folio.id, entry, None)).await?,
            None => ledger::record(self.db, self.system, &folio.id, entry, None).await?,
        };
        Ok(())
    }

    async fn make_moves(
        &self,
        rng: &mut StdRng,
        room_id: &str,
        reservation_id: &str,
        stay: StayDates,
        moves: Vec<ReservationStatus>,
    ) -> anyhow::Result<()> {
        let hotel = &self.hotel;
        for to in moves {
            let at = match to {
                ReservationStatus::CheckedIn if stay.start < 0 => {
                    Some(hotel.local_instant(self.day(stay.start), &hotel.check_in_time))
                }
                ReservationStatus::CheckedOut if stay.end < 0 => {
                    Some(hotel.local_instant(self.day(stay.end), &hotel.check_out_time))
                }
                _ => None,
            };
            if to == ReservationStatus::CheckedOut {
                self.settle(reservation_id, at).await?;
            }
            let patch = ReservationPatch { status: Some(to), ..ReservationPatch::default() };
            match at {
                Some(at) => as_of(at, write::update(self.db, self.system, reservation_id, patch)).await?,
                None => write::update(self.db, self.system, reservation_id, patch).await?,
            };
            if let (ReservationStatus::CheckedOut, Some(at)) = (to, at) {
                let cleaned = RoomPatch {
                    housekeeping_status: Some(if rng.gen_bool(0.5) {
                        HousekeepingStatus::Inspected
                    } else {
                        HousekeepingStatus::Clean
                    }),
                    ..RoomPatch::default()
                };
                as_of(at + TimeDelta::hours(3), rooms::update(self.db, self.system, room_id, cleaned)).await?;
            }
        }
        Ok(())
    }

    /// Booking requests waiting for approval, as the booking page leaves them.
    async fn seed_requests(&self, plans: &[RatePlan]) -> anyhow::Result<()> {
        for (n, (offset, nights)) in [(2, 3), (5, 2), (9, 4), (16, 2)].into_iter().enumerate() {
            let plan = &plans[n % plans.len()];
            let input = ReservationIn {
                hotel_id: Some(self.hotel.id.clone()),
                guest_id: Some(self.guest_ids[(n * 7 + 3) % self.guest_ids.len()].clone()),
                status: Some(ReservationStatus::Requested),
                check_in_date: self.day(offset).to_string(),
                check_out_date: self.day(offset + nights).to_string(),
                start_time: None,
                end_time: None,
                adults: None,
                children: None,
                infants: None,
                total_price: None,
                currency: None,
                source: Some(Source::BookingPage),
                channel_reference: None,
                notes: (n == 1).then(|| "Arriving late, around 23:00.".to_string()),
                rooms: vec![ReservationRoomIn {
                    room_type_id: plan.room_type_id.clone().unwrap_or_default(),
                    rate_plan_id: Some(plan.id.clone()),
                    room_id: None,
                    adults: Some(2),
                    children: Some(0),
                    infants: Some(0),
                    price: None,
                    night_prices: None,
                }],
            };
            write::create(self.db, self.system, input).await?;
        }
        Ok(())
    }
}

/// The moves a stay goes through after it is booked, as the desk would have made them by today: a stay of the past
/// checked in and out (now and then cancelled, or a no-show), one departing today checked in (and some out already),
/// one in house checked in. `departure_in_room` says whether a guest due to leave today is still in the room.
fn moves_by_today(
    rng: &mut StdRng,
    room_index: usize,
    stay: StayDates,
    departure_in_room: &mut bool,
) -> Vec<ReservationStatus> {
    let mut moves = Vec::new();
    if stay.end < 0 {
        match rng.gen_range(0..20) {
            0 => moves.push(ReservationStatus::Cancelled),
            1 => moves.push(ReservationStatus::NoShow),
            _ => moves.extend([ReservationStatus::CheckedIn, ReservationStatus::CheckedOut]),
        }
    } else if stay.end == 0 {
        // Departing today: most still to check out, some gone already.
        moves.push(ReservationStatus::CheckedIn);
        if rng.gen_bool(0.3) {
            moves.push(ReservationStatus::CheckedOut);
        } else {
            *departure_in_room = true;
        }
    } else if stay.start < 0
        || (stay.start == 0 && !*departure_in_room && rng.gen_bool(0.3) && !room_index.is_multiple_of(3))
    {
        // In house (arrived earlier, or already today).
        moves.push(ReservationStatus::CheckedIn);
    }
    moves
}

impl Seeded {
    /// What to print after seeding. `database_url` is the database served, for the command that issues a new key.
    pub fn instructions(&self, base: &str, database_url: &str) -> String {
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
            None => {
                let database = match database_url == crate::config::DatabaseSettings::DEFAULT_URL {
                    true => String::new(),
                    false => format!(" --database-url '{database_url}'"),
                };
                format!(
                    "API key: the demo key's secret was shown only when it was created. For a new key (every scope):\n    \
                     frontdesk admin create-api-key --org {org} --name 'demo key' --scope all{database}",
                    org = self.organization_id
                )
            }
        };
        let booking = match &self.hotel_id {
            Some(hotel) => format!("\n  public booking page: {base}/book/{hotel}"),
            None => String::new(),
        };
        format!(
            "== Frontdesk demo ==\n  organization: {DEMO_ORGANIZATION} ({org})\n  dashboard: {base}/ (sign in as {DEMO_EMAIL} / {DEMO_PASSWORD}){booking}\n  operator login: {DEMO_EMAIL} / {DEMO_PASSWORD}\n  sign in: {login}\n  {key}\n  API description: {base}/api/openapi.json\n  assistant endpoint (MCP): {base}/mcp (sign in as the operator above)",
            org = self.organization_id
        )
    }
}
