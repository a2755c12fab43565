//! Setting a property up in Channex from Frontdesk (docs/channels.md, "Mapping"), so that nobody copies ids by hand:
//!
//! * [`read`]: the property's room types and rate plans as Channex has them, for the page to offer as choices;
//! * [`create_missing`]: each of our room types, and each (rate plan, room type) pair, that has no mapping yet is
//!   created in Channex (rate plan titles unique within the property, as Channex requires) and mapped; a full sync
//!   follows, since Channex starts a new room type at availability 0 and a new rate plan at a rate of 0;
//! * [`register_webhook`]: the booking webhook registered in Channex with a secret made here, whose digest the
//!   connection keeps (the secret itself is never stored).
//!
//! Calls to Channex are made outside any transaction; what they created is written afterwards, through the door.
//! A failure part-way keeps the mappings of what was created, so that trying again creates only the rest.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::client::{is_plain_id, Client, Sent};
use super::mapping::rate_plan_titles;
use crate::channels::{plan_room_types, ChannelConnection, RatePlanMapping, RoomTypeMapping};
use crate::domain::access::{Actor, Task};
use crate::domain::change::{Change, ChannelChangeKind};
use crate::domain::secrets::{self, SecretBox};
use crate::domain::{now, Error, Result};
use crate::model::room_types::RoomType;
use crate::store::{self, Db};

/// A room type as Channex has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRoomType {
    pub id: String,
    pub title: String,
}

/// A rate plan as Channex has it: each belongs to one room type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRatePlan {
    pub id: String,
    pub title: String,
    pub room_type_id: String,
}

/// The property's room types and rate plans in Channex.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    pub room_types: Vec<RemoteRoomType>,
    pub rate_plans: Vec<RemoteRatePlan>,
}

/// What [`create_missing`] made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Created {
    pub room_types: usize,
    pub rate_plans: usize,
}

/// A resource of a `data` list (`{"id", "type", "attributes": {…}, "relationships": …}`) or an option row
/// (`{"id", "title", …}`): its id and an attribute.
fn id_of(item: &Value) -> Option<String> {
    item.get("id").or_else(|| item.pointer("/attributes/id")).and_then(Value::as_str).map(str::to_string)
}

fn attribute<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item.get("attributes").and_then(|a| a.get(name)).or_else(|| item.get(name)).and_then(Value::as_str)
}

fn listed(sent: Sent, what: &str) -> std::result::Result<Vec<Value>, String> {
    match sent {
        Sent::Answered(answer) if (200..300).contains(&answer.status) => match answer.data {
            Some(Value::Array(items)) => Ok(items),
            _ => Err(format!("Channex's list of {what} could not be read")),
        },
        Sent::Answered(answer) => Err(format!("Channex refused to list the {what}: {}", answer.words())),
        Sent::NoAnswer(why) => Err(format!("Channex did not answer ({why})")),
    }
}

/// The property's room types and rate plans in Channex; why not, in words.
pub async fn read(client: &Client, property_id: &str) -> std::result::Result<Remote, String> {
    let room_types = listed(client.room_type_options(property_id).await, "room types")?
        .iter()
        .filter_map(|item| Some(RemoteRoomType { id: id_of(item)?, title: attribute(item, "title")?.to_string() }))
        .collect();
    let rate_plans = listed(client.rate_plan_options(property_id).await, "rate plans")?
        .iter()
        .filter_map(|item| {
            let room_type_id = attribute(item, "room_type_id")
                .or_else(|| item.pointer("/relationships/room_type/data/id").and_then(Value::as_str))?;
            Some(RemoteRatePlan {
                id: id_of(item)?,
                title: attribute(item, "title")?.to_string(),
                room_type_id: room_type_id.to_string(),
            })
        })
        .collect();
    Ok(Remote { room_types, rate_plans })
}

/// The connection of the hotel to Channex and a client for it.
async fn connection(
    db: &Db,
    sealing: &SecretBox,
    actor: &Actor,
    hotel_id: &str,
) -> Result<(ChannelConnection, Client)> {
    let mut conn = db.read().await?;
    let c = store::channels::for_hotel(&mut conn, &actor.organization_id, hotel_id, super::CHANNEL)
        .await?
        .ok_or(Error::NotFound("channel connection"))?;
    let key = sealing.open(&c.api_key_sealed).map_err(Error::Internal)?;
    let http = Client::http(std::time::Duration::from_secs(20)).map_err(Error::Internal)?;
    let client = Client::new(http, &c.base_url, &key);
    Ok((c, client))
}

/// The adults a Channex room type made from ours sells for: our adult limit within the room's occupancy, at least 1.
fn occupancy_of(t: &RoomType) -> i64 {
    t.max_adults.min(t.max_occupancy).max(1)
}

/// The id of what a `POST` created (`201` with `data.id`), or why not.
fn created_id(sent: Sent, what: &str) -> std::result::Result<String, String> {
    match sent {
        Sent::Answered(answer) if (200..300).contains(&answer.status) => {
            answer.data.as_ref().and_then(id_of).ok_or_else(|| format!("Channex created {what} but sent no id"))
        }
        Sent::Answered(answer) => Err(format!("Channex refused {what}: {}", answer.words())),
        Sent::NoAnswer(why) => Err(format!("Channex did not answer when creating {what} ({why})")),
    }
}

/// Creates in Channex each room type and (rate plan, room type) pair of the hotel that has no mapping yet, maps
/// them, and queues a full sync. 409 with what went wrong (after keeping what was made) when Channex refuses one.
pub async fn create_missing(db: &Db, sealing: &SecretBox, actor: &Actor, hotel_id: &str) -> Result<Created> {
    actor.require(Task::Administer)?;
    let (c, client) = connection(db, sealing, actor, hotel_id).await?;
    let remote = read(&client, &c.property_id).await.map_err(Error::Conflict)?;
    let (hotel, types, plans, mut room_maps, mut plan_maps) = {
        let mut conn = db.read().await?;
        let hotel =
            store::hotels::get(&mut conn, &c.organization_id, hotel_id).await?.ok_or(Error::NotFound("hotel"))?;
        let types = store::room_types::list(&mut conn, &c.organization_id, Some(hotel_id)).await?;
        let plans = store::rate_plans::list(&mut conn, &c.organization_id, hotel_id, None).await?;
        let room_maps = store::channels::room_type_mappings(&mut conn, &c.id).await?;
        let plan_maps = store::channels::rate_plan_mappings(&mut conn, &c.id).await?;
        (hotel, types, plans, room_maps, plan_maps)
    };
    let rooms = store::rooms::list(&mut *db.read().await?, &c.organization_id, Some(hotel_id), None).await?;
    let mut made = Created::default();
    let mut failed = None;

    let mut room_titles: HashSet<String> = remote.room_types.iter().map(|t| t.title.to_lowercase()).collect();
    let unmapped: Vec<&RoomType> = types.iter().filter(|t| !room_maps.iter().any(|m| m.room_type_id == t.id)).collect();
    for t in unmapped {
        let mut title = t.name.clone();
        let mut n = 2;
        while !room_titles.insert(title.to_lowercase()) {
            title = format!("{} ({n})", t.name);
            n += 1;
        }
        // What the channel may sell is what we take (`RoomType::fits`): at most our adults and children.
        let adults = occupancy_of(t);
        let body = json!({
            "property_id": c.property_id, "title": title,
            // Channex wants a positive count; a type without rooms yet sells none (availability 0 is sent).
            "count_of_rooms": rooms.iter().filter(|r| r.room_type_id == t.id).count().max(1),
            "occ_adults": adults, "occ_children": t.max_children.clamp(0, t.max_occupancy.max(1) - 1),
            "occ_infants": 0, "default_occupancy": adults, "room_kind": "room",
        });
        match created_id(client.create_room_type(&body).await, &format!("the room type {}", t.name)) {
            Ok(id) => {
                room_maps.push(RoomTypeMapping { room_type_id: t.id.clone(), remote_id: id });
                made.room_types += 1;
            }
            Err(why) => {
                failed = Some(why);
                break;
            }
        }
    }

    if failed.is_none() {
        let types = &types;
        let pairs: Vec<(&str, &str, &str, &str, bool)> = plans
            .iter()
            .flat_map(|plan| {
                plan_room_types(plan, types).into_iter().filter_map(move |room_type_id| {
                    let room_type = types.iter().find(|t| t.id == room_type_id)?;
                    Some((
                        plan.id.as_str(),
                        plan.name.as_str(),
                        room_type_id,
                        room_type.name.as_str(),
                        plan.room_type_id.is_none(),
                    ))
                })
            })
            .filter(|(plan, _, room_type, _, _)| {
                !plan_maps.iter().any(|m| m.rate_plan_id == *plan && m.room_type_id == *room_type)
            })
            .collect();
        let taken: Vec<&str> = remote.rate_plans.iter().map(|p| p.title.as_str()).collect();
        let titles = rate_plan_titles(&pairs, &taken);
        for ((plan_id, plan_name, room_type_id, _, _), title) in pairs.iter().zip(titles) {
            let Some(remote_room_type) = room_maps.iter().find(|m| m.room_type_id == *room_type_id) else { continue };
            let occupancy = types.iter().find(|t| t.id == *room_type_id).map_or(1, occupancy_of);
            let currency =
                plans.iter().find(|p| p.id == *plan_id).map_or(hotel.currency.as_str(), |p| p.currency.as_str());
            let body = json!({
                "title": title, "property_id": c.property_id, "room_type_id": remote_room_type.remote_id,
                // Prices are per room: one option at the room's occupancy (docs/channex-api-notes.md §3.3).
                "options": [{"occupancy": occupancy, "is_primary": true, "rate": 0}],
                "currency": currency, "sell_mode": "per_room", "rate_mode": "manual",
            });
            match created_id(client.create_rate_plan(&body).await, &format!("the rate plan {plan_name}")) {
                Ok(id) => {
                    plan_maps.push(RatePlanMapping {
                        rate_plan_id: plan_id.to_string(),
                        room_type_id: room_type_id.to_string(),
                        remote_id: id,
                    });
                    made.rate_plans += 1;
                }
                Err(why) => {
                    failed = Some(why);
                    break;
                }
            }
        }
    }

    if made != Created::default() {
        let mut tx = Change::begin(db, actor).await?;
        // Read again under the write: an operator may have saved mappings while Channex answered. Theirs stay; what
        // was made here is added where nothing is mapped yet.
        let now = store::channels::get(tx.conn(), &c.id).await?.ok_or(Error::NotFound("channel connection"))?;
        if now.property_id != c.property_id {
            return Err(Error::Conflict(format!(
                "the connection was changed to another property while Channex answered; what was made in {} is not \
                 mapped",
                c.property_id
            )));
        }
        let mut rooms_now = store::channels::room_type_mappings(tx.conn(), &c.id).await?;
        let mut plans_now = store::channels::rate_plan_mappings(tx.conn(), &c.id).await?;
        for m in room_maps {
            if !rooms_now.iter().any(|n| n.room_type_id == m.room_type_id) {
                rooms_now.push(m);
            }
        }
        for m in plan_maps {
            if !plans_now.iter().any(|n| n.rate_plan_id == m.rate_plan_id && n.room_type_id == m.room_type_id) {
                plans_now.push(m);
            }
        }
        store::channels::set_mappings(tx.conn(), &c.id, &rooms_now, &plans_now).await?;
        for kind in ChannelChangeKind::ALL {
            tx.channel_dirty_ahead(hotel_id, None, kind).await?;
        }
        tx.commit().await?;
    }
    match failed {
        Some(why) if made == Created::default() => Err(Error::Conflict(why)),
        Some(why) => Err(Error::Conflict(format!(
            "{why} (made and mapped before that: {} room type(s), {} rate plan(s))",
            made.room_types, made.rate_plans
        ))),
        None => Ok(made),
    }
}

/// The URL Channex calls with the hotel's bookings.
pub fn webhook_url(public_base: &str, hotel_id: &str) -> String {
    format!("{}/channels/channex/{hotel_id}", public_base.trim_end_matches('/'))
}

/// Registers the booking webhook in Channex for the hotel's property, calling `public_base` (the service's public
/// URL) with a secret header made here; the connection keeps the secret's digest, so the webhook is accepted.
pub async fn register_webhook(
    db: &Db,
    sealing: &SecretBox,
    actor: &Actor,
    hotel_id: &str,
    public_base: &str,
) -> Result<String> {
    actor.require(Task::Administer)?;
    let (c, client) = connection(db, sealing, actor, hotel_id).await?;
    let secret = secrets::generate("chx_");
    let url = webhook_url(public_base, hotel_id);
    let body = json!({
        "property_id": c.property_id, "callback_url": url,
        "event_mask": "booking_new;booking_modification;booking_cancellation",
        "request_params": {}, "headers": {"X-Channex-Webhook-Secret": secret},
        // Both default to false in Channex.
        "is_active": true, "send_data": true,
    });
    // Registered again (a new secret, a new URL): the webhook made before is updated, so that Channex does not
    // call twice; one deleted in Channex meanwhile is made anew.
    let made_before = c.webhook_id.as_deref().filter(|id| is_plain_id(id));
    let webhook_id = match made_before {
        Some(id) => match client.update_webhook(id, &body).await {
            Sent::Answered(answer) if (200..300).contains(&answer.status) => id.to_string(),
            Sent::Answered(answer) if answer.status == 404 => {
                created_id(client.create_webhook(&body).await, "the webhook").map_err(Error::Conflict)?
            }
            Sent::Answered(answer) => {
                return Err(Error::Conflict(format!("Channex refused the webhook: {}", answer.words())))
            }
            Sent::NoAnswer(why) => {
                return Err(Error::Conflict(format!("Channex did not answer when updating the webhook ({why})")))
            }
        },
        None => created_id(client.create_webhook(&body).await, "the webhook").map_err(Error::Conflict)?,
    };
    let mut tx = Change::begin(db, actor).await?;
    // Read again under the write: the connection may have changed while Channex answered.
    let mut c = store::channels::get(tx.conn(), &c.id).await?.ok_or(Error::NotFound("channel connection"))?;
    c.webhook_secret_digest = Some(secrets::digest(&secret));
    c.webhook_id = Some(webhook_id);
    c.updated_at = now();
    store::channels::update(tx.conn(), &c).await?;
    tx.commit().await?;
    Ok(url)
}

/// Deletes the booking webhook registered from here in Channex, before the connection goes: else Channex keeps
/// calling a URL that refuses it. Best effort: a webhook Channex no longer has, or a Channex that does not answer,
/// does not keep a hotel from disconnecting (its calls are refused, 401, once the connection is gone).
pub async fn unregister_webhook(db: &Db, sealing: &SecretBox, actor: &Actor, hotel_id: &str) -> Result<()> {
    actor.require(Task::Administer)?;
    let (c, client) = connection(db, sealing, actor, hotel_id).await?;
    if let Some(id) = c.webhook_id.as_deref().filter(|id| is_plain_id(id)) {
        if let Sent::Answered(answer) = client.delete_webhook(id).await {
            tracing::info!(connection = %c.id, status = answer.status, "deleted the Channex booking webhook");
        }
    }
    Ok(())
}
