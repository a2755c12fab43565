//! Room types: what a guest books. A room type groups physical rooms and bounds occupancy.

use serde::Deserialize;
use utoipa::ToSchema;

use super::access::{Actor, Scope};
use super::validate::{clean, Checks};
use super::{hotels, new_id, not_null, now, nullable, Error, Result};
use crate::domain::change::{Change, Record, RecordKind};
pub use crate::model::room_types::RoomType;
use crate::store::{self, Db};

pub const MAX_OCCUPANCY: i64 = 100;

impl RoomType {
    /// Whether a party fits one room of this type. Infants do not count toward occupancy.
    pub fn fits(&self, adults: i64, children: i64) -> bool {
        adults <= self.max_adults && children <= self.max_children && adults + children <= self.max_occupancy
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomTypeIn {
    /// The hotel; a key pinned to a hotel may leave it out.
    #[schema(value_type = String, required = true)]
    pub hotel_id: Option<String>,
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: String,
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    #[schema(minimum = 1, maximum = 100)]
    pub max_occupancy: i64,
    /// Defaults to `maxOccupancy`; at most `maxOccupancy`.
    #[schema(minimum = 1, maximum = 100)]
    pub max_adults: Option<i64>,
    /// Defaults to `maxOccupancy - 1`; less than `maxOccupancy` (a room always holds an adult).
    #[schema(minimum = 0, maximum = 100)]
    pub max_children: Option<i64>,
}

/// Changes to a room type; fields left out keep their value. The hotel cannot change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoomTypePatch {
    #[schema(nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 2000)]
    pub description: Option<Option<String>>,
    #[schema(nullable = false, minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "not_null")]
    pub max_occupancy: Option<i64>,
    #[schema(nullable = false, minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "not_null")]
    pub max_adults: Option<i64>,
    #[schema(nullable = false, minimum = 0, maximum = 100)]
    #[serde(default, deserialize_with = "not_null")]
    pub max_children: Option<i64>,
}

/// Which of the occupancy limits a request set: a broken relation between them is blamed on one it set.
#[derive(Debug, Clone, Copy)]
struct LimitsGiven {
    occupancy: bool,
    adults: bool,
    children: bool,
}

impl LimitsGiven {
    fn any(self) -> bool {
        self.occupancy || self.adults || self.children
    }
}

fn validate(t: &RoomType, given: LimitsGiven) -> Result<()> {
    let mut c = Checks::new();
    c.line("name", &t.name, 200);
    c.opt_text("description", t.description.as_deref(), 2000);
    c.range("maxOccupancy", t.max_occupancy, 1, MAX_OCCUPANCY);
    c.range("maxAdults", t.max_adults, 1, MAX_OCCUPANCY);
    c.range("maxChildren", t.max_children, 0, MAX_OCCUPANCY);
    // A room never takes more adults than it holds, and always holds an adult, so children take at most every place
    // but one. Checked whenever a limit changes, against the stored values of the others.
    if given.any() {
        if t.max_adults > t.max_occupancy {
            if given.adults || !given.occupancy {
                c.fail("maxAdults", format!("must not exceed maxOccupancy ({})", t.max_occupancy));
            } else {
                c.fail("maxOccupancy", format!("must be at least maxAdults ({})", t.max_adults));
            }
        }
        if t.max_children >= t.max_occupancy {
            if given.children || !given.occupancy {
                c.fail(
                    "maxChildren",
                    format!("must be less than maxOccupancy ({}): a room always holds an adult", t.max_occupancy),
                );
            } else {
                c.fail("maxOccupancy", format!("must be more than maxChildren ({})", t.max_children));
            }
        }
    }
    c.finish()
}

/// A room type the actor may see, or 404.
pub async fn visible(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<RoomType> {
    store::room_types::get(conn, &actor.organization_id, id)
        .await?
        .filter(|t| actor.sees_hotel(Some(&t.hotel_id)))
        .ok_or(Error::NotFound("room type"))
}

pub async fn list(db: &Db, actor: &Actor, hotel_id: Option<&str>) -> Result<Vec<RoomType>> {
    actor.require_scope(Scope::RoomsRead)?;
    let mut conn = db.read().await?;
    let hotel_id = hotels::optional_filter(&mut conn, actor, hotel_id).await?;
    Ok(store::room_types::list(&mut conn, &actor.organization_id, hotel_id.as_deref()).await?)
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<RoomType> {
    actor.require_scope(Scope::RoomsRead)?;
    visible(&mut *db.read().await?, actor, id).await
}

pub async fn create(db: &Db, actor: &Actor, input: RoomTypeIn) -> Result<RoomType> {
    actor.require_scope(Scope::RoomsWrite)?;
    actor.require(crate::domain::access::Task::SetUpRooms)?;
    let at = now();
    let mut tx = Change::begin(db, actor).await?;
    let hotel = hotels::require_named(tx.conn(), actor, input.hotel_id.as_deref()).await?;
    let room_type = RoomType {
        id: new_id(),
        hotel_id: hotel.id,
        name: clean(&input.name),
        description: input.description,
        max_occupancy: input.max_occupancy,
        max_adults: input.max_adults.unwrap_or(input.max_occupancy),
        max_children: input.max_children.unwrap_or(input.max_occupancy.saturating_sub(1).max(0)),
        created_at: at,
        updated_at: at,
    };
    let given =
        LimitsGiven { occupancy: true, adults: input.max_adults.is_some(), children: input.max_children.is_some() };
    validate(&room_type, given)?;
    store::room_types::insert(tx.conn(), &actor.organization_id, &room_type).await?;
    tx.created(&actor.organization_id, &room_type).await?;
    tx.commit().await?;
    Ok(room_type)
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: RoomTypePatch) -> Result<RoomType> {
    actor.require_scope(Scope::RoomsWrite)?;
    actor.require(crate::domain::access::Task::SetUpRooms)?;
    let mut tx = Change::begin(db, actor).await?;
    let mut t = visible(tx.conn(), actor, id).await?;
    let before = t.clone();
    let given = LimitsGiven {
        occupancy: patch.max_occupancy.is_some(),
        adults: patch.max_adults.is_some(),
        children: patch.max_children.is_some(),
    };
    if let Some(name) = patch.name {
        t.name = clean(&name);
    }
    if let Some(description) = patch.description {
        t.description = description;
    }
    if let Some(v) = patch.max_occupancy {
        t.max_occupancy = v;
    }
    if let Some(v) = patch.max_adults {
        t.max_adults = v;
    }
    if let Some(v) = patch.max_children {
        t.max_children = v;
    }
    t.updated_at = now();
    validate(&t, given)?;
    store::room_types::update(tx.conn(), &actor.organization_id, &t).await?;
    tx.updated(&actor.organization_id, &before, &t).await?;
    tx.commit().await?;
    Ok(t)
}

/// Deletes a room type that nothing uses any more (rooms, rate plans and reservations keep it: 409).
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<RoomType> {
    actor.require_scope(Scope::RoomsWrite)?;
    actor.require(crate::domain::access::Task::SetUpRooms)?;
    let mut tx = Change::begin(db, actor).await?;
    let t = visible(tx.conn(), actor, id).await?;
    store::room_types::delete(tx.conn(), &actor.organization_id, id).await.map_err(|e| {
        super::in_use(e, "the room type still has rooms, rate plans or reservations; remove those first")
    })?;
    tx.deleted(&actor.organization_id, &t).await?;
    tx.commit().await?;
    Ok(t)
}

impl Record for RoomType {
    const KIND: RecordKind = RecordKind::RoomType;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
