//! Rate plans: how a hotel prices its room types. A plan without a room type prices every room type of the hotel.

use serde::Deserialize;
use utoipa::ToSchema;

use super::access::{Actor, Scope};
use super::codes::CurrencyCode;
use super::validate::{clean, Checks};
use super::{hotels, new_id, not_null, now, nullable, room_types, store_conflict, Error, FieldError, Result};
use crate::domain::change::{Change, ChannelChangeKind, Record, RecordKind};
pub use crate::model::rate_plans::RatePlan;
use crate::store::{self, Db};

/// A rate plan to create, or, with the `id` of an existing plan, to update (fields left out keep their value).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatePlanIn {
    /// An existing plan to update; left out to create one.
    pub id: Option<String>,
    /// The hotel (on update, the plan's own hotel); a key pinned to a hotel may leave it out.
    #[schema(value_type = String, required = true)]
    pub hotel_id: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub room_type_id: Option<Option<String>>,
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 50, pattern = r"^\S+$")]
    pub code: Option<Option<String>>,
    /// Defaults to the hotel's currency.
    #[schema(value_type = Option<CurrencyCode>)]
    pub currency: Option<String>,
    /// Defaults to true.
    pub active: Option<bool>,
}

/// Changes to a rate plan; fields left out keep their value. The hotel cannot change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatePlanPatch {
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub room_type_id: Option<Option<String>>,
    #[schema(nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 50, pattern = r"^\S+$")]
    pub code: Option<Option<String>>,
    #[schema(nullable = false, value_type = Option<CurrencyCode>)]
    #[serde(default, deserialize_with = "not_null")]
    pub currency: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "not_null")]
    pub active: Option<bool>,
}

fn validate(p: &RatePlan) -> Result<()> {
    let mut c = Checks::new();
    c.line("name", &p.name, 200);
    if let Some(code) = &p.code {
        if code.is_empty() || code.chars().any(super::validate::is_space) || code.chars().count() > 50 {
            c.fail("code", "must be 1 to 50 characters without spaces");
        }
    }
    c.currency("currency", &p.currency);
    c.finish()
}

/// A rate plan the actor may see, or 404.
pub async fn visible(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<RatePlan> {
    store::rate_plans::get(conn, &actor.organization_id, id)
        .await?
        .filter(|p| actor.sees_hotel(Some(&p.hotel_id)))
        .ok_or(Error::NotFound("rate plan"))
}

/// Checks that a plan's room type is visible and belongs to the plan's hotel (404 otherwise).
async fn check_room_type(conn: &mut store::Conn, actor: &Actor, plan: &RatePlan) -> Result<()> {
    if let Some(room_type_id) = &plan.room_type_id {
        let room_type = room_types::visible(conn, actor, room_type_id).await?;
        if room_type.hotel_id != plan.hotel_id {
            return Err(Error::NotFound("room type of this hotel"));
        }
    }
    Ok(())
}

pub async fn list(db: &Db, actor: &Actor, hotel_id: Option<&str>, room_type_id: Option<&str>) -> Result<Vec<RatePlan>> {
    actor.require_scope(Scope::RatesRead)?;
    let mut conn = db.read().await?;
    // A room type names its hotel, so a caller that gives one need not give the hotel too.
    let implied = match (hotel_id, room_type_id) {
        (None, Some(room_type_id)) if actor.hotel_pin.is_none() => {
            Some(room_types::visible(&mut conn, actor, room_type_id).await?.hotel_id)
        }
        _ => None,
    };
    let hotel = hotels::require_named(&mut conn, actor, hotel_id.or(implied.as_deref())).await?;
    Ok(store::rate_plans::list(&mut conn, &actor.organization_id, &hotel.id, room_type_id).await?)
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<RatePlan> {
    actor.require_scope(Scope::RatesRead)?;
    visible(&mut *db.read().await?, actor, id).await
}

const DUPLICATE_CODE: &str = "the hotel already has a rate plan with this code";

/// Creates a plan, or updates the one named by `id` ("creates or updates").
pub async fn upsert(db: &Db, actor: &Actor, input: RatePlanIn) -> Result<RatePlan> {
    actor.require_scope(Scope::RatesWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let hotel = hotels::require_named(tx.conn(), actor, input.hotel_id.as_deref()).await?;
    let plan = match input.id.clone() {
        Some(id) => {
            let existing = visible(tx.conn(), actor, &id).await?;
            if existing.hotel_id != hotel.id {
                return Err(Error::Validation(vec![FieldError::field("hotelId", "a rate plan's hotel cannot change")]));
            }
            let patch = RatePlanPatch {
                room_type_id: input.room_type_id,
                name: Some(input.name),
                code: input.code,
                currency: input.currency,
                active: input.active,
            };
            let plan = apply(existing.clone(), patch);
            check_room_type(tx.conn(), actor, &plan).await?;
            validate(&plan)?;
            store::rate_plans::update(tx.conn(), &actor.organization_id, &plan)
                .await
                .map_err(|e| store_conflict(e, DUPLICATE_CODE))?;
            tx.updated(&actor.organization_id, &existing, &plan).await?;
            tx.channel_dirty_ahead(&plan.hotel_id, Some(&plan.id), ChannelChangeKind::Rates).await?;
            plan
        }
        None => {
            let at = now();
            let plan = RatePlan {
                id: new_id(),
                hotel_id: hotel.id,
                room_type_id: input.room_type_id.flatten(),
                name: clean(&input.name),
                code: input.code.flatten(),
                currency: input.currency.unwrap_or(hotel.currency),
                active: input.active.unwrap_or(true),
                created_at: at,
                updated_at: at,
            };
            check_room_type(tx.conn(), actor, &plan).await?;
            validate(&plan)?;
            store::rate_plans::insert(tx.conn(), &actor.organization_id, &plan)
                .await
                .map_err(|e| store_conflict(e, DUPLICATE_CODE))?;
            tx.created(&actor.organization_id, &plan).await?;
            tx.channel_dirty_ahead(&plan.hotel_id, Some(&plan.id), ChannelChangeKind::Rates).await?;
            plan
        }
    };
    tx.commit().await?;
    Ok(plan)
}

fn apply(mut plan: RatePlan, patch: RatePlanPatch) -> RatePlan {
    if let Some(room_type_id) = patch.room_type_id {
        plan.room_type_id = room_type_id;
    }
    if let Some(name) = patch.name {
        plan.name = clean(&name);
    }
    if let Some(code) = patch.code {
        plan.code = code;
    }
    if let Some(currency) = patch.currency {
        plan.currency = currency;
    }
    if let Some(active) = patch.active {
        plan.active = active;
    }
    plan.updated_at = now();
    plan
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: RatePlanPatch) -> Result<RatePlan> {
    actor.require_scope(Scope::RatesWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let before = visible(tx.conn(), actor, id).await?;
    let plan = apply(before.clone(), patch);
    check_room_type(tx.conn(), actor, &plan).await?;
    validate(&plan)?;
    store::rate_plans::update(tx.conn(), &actor.organization_id, &plan)
        .await
        .map_err(|e| store_conflict(e, DUPLICATE_CODE))?;
    tx.updated(&actor.organization_id, &before, &plan).await?;
    tx.channel_dirty_ahead(&plan.hotel_id, Some(&plan.id), ChannelChangeKind::Rates).await?;
    tx.commit().await?;
    Ok(plan)
}

/// Deletes a plan and its daily rates, unless reservations were booked under it (409).
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<RatePlan> {
    actor.require_scope(Scope::RatesWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let plan = visible(tx.conn(), actor, id).await?;
    store::rate_plans::delete(tx.conn(), &actor.organization_id, id).await.map_err(|e| {
        super::in_use(e, "reservations were booked under this rate plan; it can be deactivated instead")
    })?;
    tx.deleted(&actor.organization_id, &plan).await?;
    tx.channel_dirty_ahead(&plan.hotel_id, Some(&plan.id), ChannelChangeKind::Rates).await?;
    tx.commit().await?;
    Ok(plan)
}

impl Record for RatePlan {
    const KIND: RecordKind = RecordKind::RatePlan;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
