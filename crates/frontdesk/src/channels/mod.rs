//! Channel connections: a hotel kept in step with a channel manager, which carries its availability, rates and
//! restrictions to the online travel agents (Booking.com, Expedia, Airbnb…) and their bookings back
//! (docs/channels.md).
//!
//! This folder is an adapter beside the domain: it reads through [`crate::domain`] and [`crate::store`] and writes
//! through the one door ([`Change`]); the domain never names it. What a connection is, is generic and lives here:
//!
//! * a [`ChannelConnection`] per hotel and channel: where the channel manager's API is, the hotel's id there
//!   (its *property*), the API key (sealed with the service's [`SecretBox`], as webhook signing secrets are; never
//!   shown again), its state (active or stopped) and a pause after an error answer;
//! * the mapping of our room types and of our rate plans per room type to the channel's (a plan for every room
//!   type maps once per room type: [`plan_room_types`]);
//! * the change rows: every write that changes what a channel sees records, in its own transaction, which of
//!   the hotel's nights changed and whether in availability or in rates ([`Change::channel_dirty`]); a dispatcher
//!   sends them and deletes them only once the channel took them;
//! * what a channel is told, read from the same places the rest of the service reads: the rooms free to sell
//!   per room type and night ([`availability`], the count public availability uses), and each rate plan's nights
//!   ([`rates`]).
//!
//! Each standard is a folder of its own beside this file, with its client, its mapping (our data into its
//! requests, pure functions) and its worker: [`channex`] now; AlpineBits could sit beside it.

pub mod channex;

use std::collections::{BTreeSet, HashMap};

use chrono::{Days, NaiveDate};

use crate::domain::access::Actor;
use crate::domain::change::{Change, ChannelChangeKind, Job, Writer, CHANNEL_HORIZON_DAYS};
use crate::domain::daily_rates::DailyRate;
use crate::domain::reservations::inventory;
use crate::domain::secrets::{self, SecretBox};
use crate::domain::validate::Checks;
use crate::domain::{now, Error, Result};
pub use crate::model::channels::{
    ChannelChange, ChannelConnection, ChannelRequest, ChannelRevision, ConnectionState, RatePlanMapping,
    RequestOutcome, RoomTypeMapping,
};
use crate::model::rate_plans::RatePlan;
use crate::model::room_types::RoomType;
use crate::store::{self, Db};

/// What an operator gives to connect a hotel to a channel manager.
#[derive(Debug, Clone)]
pub struct ConnectionIn {
    pub hotel_id: String,
    /// Which channel manager (`channex`).
    pub channel: String,
    pub base_url: String,
    pub property_id: String,
    /// The API key; `None` keeps the one stored (a connection's key is never shown again).
    pub api_key: Option<String>,
    /// The secret the channel's webhook is to send in the `X-Channex-Webhook-Secret` header, as set when the
    /// webhook was registered with the channel (kept as a digest only); `None` keeps the one stored (or none).
    pub webhook_secret: Option<String>,
    pub room_types: Vec<RoomTypeMapping>,
    pub rate_plans: Vec<RatePlanMapping>,
    /// The hotel's local hour (0 to 23) of a nightly full sync, at an hour the hotel sells little; `None`: none.
    pub nightly_sync_hour: Option<i64>,
}

/// The room types a rate plan sells: its own, or every room type of the hotel when it has none.
pub fn plan_room_types<'a>(plan: &'a RatePlan, room_types: &'a [RoomType]) -> Vec<&'a str> {
    match &plan.room_type_id {
        Some(id) => vec![id.as_str()],
        None => room_types.iter().map(|t| t.id.as_str()).collect(),
    }
}

/// Connects `input.hotel_id` to a channel manager (or changes its connection), and asks for a full sync: every
/// night of the horizon, availability and rates, which the dispatcher sends in two requests.
pub async fn connect(db: &Db, sealing: &SecretBox, actor: &Actor, input: ConnectionIn) -> Result<ChannelConnection> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut checks = Checks::new();
    let base_url = input.base_url.trim().trim_end_matches('/').to_string();
    match url::Url::parse(&base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => {}
        _ => checks.fail("baseUrl", "must be an http or https URL"),
    }
    checks.line("propertyId", &input.property_id, 100);
    if let Some(key) = &input.api_key {
        checks.line("apiKey", key, 500);
    }
    if let Some(secret) = &input.webhook_secret {
        checks.line("webhookSecret", secret, 500);
        if secret.len() < 16 {
            checks.fail("webhookSecret", "must be at least 16 characters");
        }
    }
    if input.nightly_sync_hour.is_some_and(|h| !(0..=23).contains(&h)) {
        checks.fail("nightlySyncHour", "must be an hour from 0 to 23");
    }
    if input.channel != channex::CHANNEL {
        checks.fail("channel", "the channel managers known are: channex");
    }
    checks.finish()?;
    let mut tx = Change::begin(db, actor).await?;
    let organization_id = actor.organization_id.clone();
    let hotel =
        store::hotels::get(tx.conn(), &organization_id, &input.hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
    // The full sync connecting makes is the day's: the nightly one next runs tomorrow.
    let synced_on = Some(hotel.today());
    let room_types = store::room_types::list(tx.conn(), &organization_id, Some(&input.hotel_id)).await?;
    let plans = store::rate_plans::list(tx.conn(), &organization_id, &input.hotel_id, None).await?;
    let mut checks = Checks::new();
    for m in &input.room_types {
        if !room_types.iter().any(|t| t.id == m.room_type_id) {
            checks.fail("roomTypes", format!("{} is not a room type of the hotel", m.room_type_id));
        }
        checks.line("roomTypes", &m.remote_id, 100);
    }
    for m in &input.rate_plans {
        match plans.iter().find(|p| p.id == m.rate_plan_id) {
            Some(plan) if plan_room_types(plan, &room_types).contains(&m.room_type_id.as_str()) => {}
            Some(_) => {
                checks.fail("ratePlans", format!("{} does not sell the room type {}", m.rate_plan_id, m.room_type_id))
            }
            None => checks.fail("ratePlans", format!("{} is not a rate plan of the hotel", m.rate_plan_id)),
        }
        checks.line("ratePlans", &m.remote_id, 100);
    }
    checks.finish()?;
    let at = now();
    let existing = store::channels::for_hotel(tx.conn(), &organization_id, &input.hotel_id, &input.channel).await?;
    let connection = match existing {
        Some(mut c) => {
            if let Some(key) = &input.api_key {
                c.api_key_sealed = sealing.seal(key)?;
            }
            if let Some(secret) = &input.webhook_secret {
                c.webhook_secret_digest = Some(secrets::digest(secret));
            }
            c.base_url = base_url;
            c.property_id = input.property_id.trim().to_string();
            c.state = ConnectionState::Active;
            c.state_reason = None;
            c.paused_until = None;
            c.nightly_sync_hour = input.nightly_sync_hour;
            c.nightly_synced_on = synced_on;
            c.updated_at = at;
            store::channels::update(tx.conn(), &c).await?;
            c
        }
        None => {
            let Some(key) = &input.api_key else {
                return Err(Error::Validation(vec![crate::domain::FieldError::field("apiKey", "is required")]));
            };
            let c = ChannelConnection {
                id: store::new_id(),
                organization_id: organization_id.clone(),
                hotel_id: input.hotel_id.clone(),
                channel: input.channel.clone(),
                base_url,
                property_id: input.property_id.trim().to_string(),
                api_key_sealed: sealing.seal(key)?,
                webhook_secret_digest: input.webhook_secret.as_deref().map(secrets::digest),
                webhook_id: None,
                state: ConnectionState::Active,
                state_reason: None,
                paused_until: None,
                nightly_sync_hour: input.nightly_sync_hour,
                nightly_synced_on: synced_on,
                created_at: at,
                updated_at: at,
            };
            store::channels::insert(tx.conn(), &c).await?;
            c
        }
    };
    store::channels::set_mappings(tx.conn(), &connection.id, &input.room_types, &input.rate_plans).await?;
    for kind in ChannelChangeKind::ALL {
        tx.channel_dirty_ahead(&connection.hotel_id, None, kind).await?;
    }
    tx.commit().await?;
    Ok(connection)
}

/// An operator's "resync": every night of the horizon is sent again (two requests), and a stopped connection
/// starts again.
pub async fn resync(db: &Db, actor: &Actor, hotel_id: &str, channel: &str) -> Result<()> {
    actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let mut tx = Change::begin(db, actor).await?;
    let mut c = store::channels::for_hotel(tx.conn(), &actor.organization_id, hotel_id, channel)
        .await?
        .ok_or(Error::NotFound("channel connection"))?;
    c.state = ConnectionState::Active;
    c.state_reason = None;
    c.paused_until = None;
    c.updated_at = now();
    store::channels::update(tx.conn(), &c).await?;
    // The day's full sync: the nightly one next runs tomorrow.
    if let Some(hotel) = store::hotels::get(tx.conn(), &actor.organization_id, hotel_id).await? {
        store::channels::take_nightly_sync(tx.conn(), &c.id, hotel.today()).await?;
    }
    for kind in ChannelChangeKind::ALL {
        tx.channel_dirty_ahead(hotel_id, None, kind).await?;
    }
    tx.commit().await
}

/// Disconnects a hotel from a channel manager: nothing more is sent or taken, and the connection is forgotten with
/// its key, mappings, request log and the record of the booking revisions taken (the reservations stay). Its
/// bookings no longer arrive, so the hotel closes its channels there first.
pub async fn disconnect(db: &Db, actor: &Actor, hotel_id: &str, channel: &str) -> Result<()> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut tx = Change::begin(db, actor).await?;
    let c = store::channels::for_hotel(tx.conn(), &actor.organization_id, hotel_id, channel)
        .await?
        .ok_or(Error::NotFound("channel connection"))?;
    store::channels::delete(tx.conn(), &c.id).await?;
    // Changes are recorded for a hotel while it has any connection: with none left, none waits.
    if !store::channels::hotel_connected(tx.conn(), hotel_id).await? {
        store::channels::delete_hotel_changes(tx.conn(), hotel_id).await?;
    }
    tx.commit().await
}

/// Whether a connection whose nightly full sync is at `hour` (hotel time) and last ran on `synced_on` runs it
/// now, at the hotel's local `now`: in that hour, once a day. (Never on any other timer: a full sync is the two
/// largest requests a property makes.)
pub fn nightly_sync_due(hour: Option<i64>, synced_on: Option<NaiveDate>, now: chrono::NaiveDateTime) -> bool {
    use chrono::Timelike;
    hour.is_some_and(|h| i64::from(now.hour()) == h) && synced_on != Some(now.date())
}

/// Queues the nightly full sync of every active connection whose hour it is (hotel time) and that has not had it
/// today; answers how many were queued. Processes racing for one take turns on its row: one queues it.
pub async fn queue_nightly_syncs(db: &Db, channel: &str, at: chrono::DateTime<chrono::Utc>) -> Result<usize> {
    let connections = store::channels::active(&mut *db.read().await?, channel).await?;
    let mut queued = 0;
    for c in connections {
        let Some(hotel) = store::hotels::get(&mut *db.read().await?, &c.organization_id, &c.hotel_id).await? else {
            continue;
        };
        let local = at.with_timezone(&hotel.time_zone()).naive_local();
        if !nightly_sync_due(c.nightly_sync_hour, c.nightly_synced_on, local) {
            continue;
        }
        let mut tx = Change::begin_as(db, Writer::Job(Job::ChannelDispatcher)).await?;
        if store::channels::take_nightly_sync(tx.conn(), &c.id, local.date()).await? {
            for kind in ChannelChangeKind::ALL {
                tx.channel_dirty_ahead(&c.hotel_id, None, kind).await?;
            }
            queued += 1;
        }
        tx.commit().await?;
    }
    Ok(queued)
}

/// The nights a channel is told of at `today`: from today to the end of the horizon.
pub fn horizon(today: NaiveDate) -> (NaiveDate, NaiveDate) {
    (today, today + Days::new(CHANNEL_HORIZON_DAYS - 1))
}

/// The nights `changes` name within the horizon of `today`, in order, each once.
pub fn nights_of(changes: &[ChannelChange], today: NaiveDate) -> BTreeSet<NaiveDate> {
    nights_of_subject(changes, None, today)
}

/// The nights `changes` name within the horizon of `today` for `subject` (a room type or rate plan: the changes of
/// that subject or of all), or for any subject (`None`).
pub fn nights_of_subject(changes: &[ChannelChange], subject: Option<&str>, today: NaiveDate) -> BTreeSet<NaiveDate> {
    let (first, last) = horizon(today);
    let mut nights = BTreeSet::new();
    let concerned = |change: &&ChannelChange| match (subject, change.subject.as_deref()) {
        (Some(wanted), Some(changed)) => wanted == changed,
        _ => true,
    };
    for change in changes.iter().filter(concerned) {
        let mut night = change.from.max(first);
        let to = change.to.min(last);
        while night <= to {
            nights.insert(night);
            night = night + Days::new(1);
        }
    }
    nights
}

/// The rooms free to sell per room type and night among `nights`: the type's sellable rooms less those held
/// that night (the count public availability uses), never below 0.
pub async fn availability(
    conn: &mut store::Conn,
    room_type_ids: &[String],
    nights: &BTreeSet<NaiveDate>,
) -> Result<HashMap<String, Vec<(NaiveDate, i64)>>> {
    let (Some(first), Some(last)) = (nights.first().copied(), nights.last().copied()) else {
        return Ok(HashMap::new());
    };
    let free = inventory::free_rooms(conn, room_type_ids, first, last + Days::new(1), None).await?;
    Ok(free
        .into_iter()
        .map(|(room_type, counts)| {
            let per_night = nights
                .iter()
                .filter_map(|night| {
                    let index = (*night - first).num_days() as usize;
                    counts.get(index).map(|count| (*night, (*count).max(0)))
                })
                .collect();
            (room_type, per_night)
        })
        .collect())
}

/// A rate plan's nights among `nights`: its daily rate record of each night, if it has one.
pub struct PlanNights {
    pub plan: RatePlan,
    pub nights: Vec<(NaiveDate, Option<DailyRate>)>,
}

/// The nights among `nights` of the plans `plan_ids` of the hotel.
pub async fn rates(
    conn: &mut store::Conn,
    organization_id: &str,
    hotel_id: &str,
    plan_ids: &[String],
    nights: &BTreeSet<NaiveDate>,
) -> Result<Vec<PlanNights>> {
    let (Some(first), Some(last)) = (nights.first().copied(), nights.last().copied()) else {
        return Ok(Vec::new());
    };
    let plans: Vec<RatePlan> = store::rate_plans::list(conn, organization_id, hotel_id, None)
        .await?
        .into_iter()
        .filter(|p| plan_ids.contains(&p.id))
        .collect();
    let ids: Vec<&str> = plans.iter().map(|p| p.id.as_str()).collect();
    let mut records: HashMap<(String, NaiveDate), DailyRate> = HashMap::new();
    for record in store::daily_rates::for_plans(conn, &ids, first, last).await? {
        records.insert((record.rate_plan_id.clone(), record.date), record);
    }
    Ok(plans
        .into_iter()
        .map(|plan| {
            let nights = nights
                .iter()
                .map(|night| {
                    let record = records.remove(&(plan.id.clone(), *night)).map(|mut r| {
                        r.currency = plan.currency.clone();
                        r
                    });
                    (*night, record)
                })
                .collect();
            PlanNights { plan, nights }
        })
        .collect())
}

/// What the connection page shows of a hotel's connection to `channel`.
pub struct Overview {
    pub connection: Option<ChannelConnection>,
    pub room_types: Vec<RoomType>,
    pub rate_plans: Vec<RatePlan>,
    pub room_type_mappings: Vec<RoomTypeMapping>,
    pub rate_plan_mappings: Vec<RatePlanMapping>,
    /// Changes recorded and not yet taken by the channel.
    pub waiting: i64,
    /// The last requests, newest first.
    pub requests: Vec<ChannelRequest>,
    /// The last booking revisions taken (or needing attention), newest first.
    pub revisions: Vec<ChannelRevision>,
}

/// The hotel's connection to `channel`, its mapping, what waits and the last `limit` requests.
pub async fn overview(db: &Db, actor: &Actor, hotel_id: &str, channel: &str, limit: u64) -> Result<Overview> {
    actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let mut conn = db.read().await?;
    let organization_id = actor.organization_id.as_str();
    store::hotels::get(&mut conn, organization_id, hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
    let room_types = store::room_types::list(&mut conn, organization_id, Some(hotel_id)).await?;
    let rate_plans = store::rate_plans::list(&mut conn, organization_id, hotel_id, None).await?;
    let connection = store::channels::for_hotel(&mut conn, organization_id, hotel_id, channel).await?;
    let (room_type_mappings, rate_plan_mappings, requests, revisions) = match &connection {
        Some(c) => (
            store::channels::room_type_mappings(&mut conn, &c.id).await?,
            store::channels::rate_plan_mappings(&mut conn, &c.id).await?,
            store::channels::recent_requests(&mut conn, &c.id, limit).await?,
            store::channels::recent_revisions(&mut conn, &c.id, limit).await?,
        ),
        None => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
    };
    let waiting = store::channels::count_waiting(&mut conn, hotel_id).await?;
    Ok(Overview {
        connection,
        room_types,
        rate_plans,
        room_type_mappings,
        rate_plan_mappings,
        waiting,
        requests,
        revisions,
    })
}

#[cfg(test)]
mod tests {
    use super::nightly_sync_due;
    use chrono::NaiveDate;

    #[test]
    fn the_nightly_sync_runs_in_its_hour_once_a_day() {
        let day = NaiveDate::from_ymd_opt(2026, 11, 29).unwrap();
        let at = |h, m| day.and_hms_opt(h, m, 0).unwrap();
        assert!(nightly_sync_due(Some(3), None, at(3, 0)));
        assert!(nightly_sync_due(Some(3), day.pred_opt(), at(3, 59)), "yesterday's does not count");
        assert!(!nightly_sync_due(Some(3), Some(day), at(3, 10)), "once a day");
        assert!(!nightly_sync_due(Some(3), None, at(2, 59)), "not before its hour");
        assert!(!nightly_sync_due(Some(3), None, at(4, 0)), "nor after: a missed hour waits for the next night");
        assert!(!nightly_sync_due(None, None, at(3, 0)), "none chosen: never");
    }
}
