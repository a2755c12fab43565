//! `frontdesk export`: everything an organization has, as JSON lines, for moving to another system or keeping
//! outside Frontdesk. Each line is `{"type": …, "data": …}` where `data` is the record exactly as the REST API
//! answers it, so whatever reads the API reads the export. The first line describes the export.
//!
//! The organization's setup is in it too (operators, API keys, webhook subscriptions), without any secret: API key
//! and access token digests, password hashes and webhook signing secrets never leave the database, as the API never
//! answers them after creation.

use std::io::Write;

use anyhow::Context;
use chrono::NaiveDate;
use futures::StreamExt;
use serde::Serialize;
use serde_json::json;

use crate::domain::access::Actor;
use crate::domain::listing::ListParams;
use crate::domain::{api_keys, audit, guests, hotels, identity, rate_plans, reservations, room_types, rooms, webhooks};
use crate::store::{self, Db};

/// Bounds wide enough for every night that can be stored (writes accept 2000-01-01 onwards), in the form both
/// engines compare as dates.
const FIRST_NIGHT: NaiveDate = NaiveDate::from_ymd_opt(1970, 1, 1).expect("a valid date");
const LAST_NIGHT: NaiveDate = NaiveDate::from_ymd_opt(9999, 12, 31).expect("a valid date");

/// How many records of each kind were written.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportCounts {
    pub operators: u64,
    pub hotels: u64,
    pub room_types: u64,
    pub rooms: u64,
    pub rate_plans: u64,
    pub daily_rates: u64,
    pub api_keys: u64,
    pub webhook_subscriptions: u64,
    pub guests: u64,
    pub reservations: u64,
    pub audit_entries: u64,
}

/// Writes organization `organization_id` to `out`: the organization, its operators, hotels (each with its room
/// types, rooms, rate plans and daily rates), API keys, webhook subscriptions, guests, reservations, and last the
/// audit log, oldest entry first (`auditEntry`, as `GET /api/auditLog` answers it). Reads go
/// through the domain with the service's own rights in that organization; reservations carry their rooms and folio,
/// as `GET /api/reservations/{id}` answers them.
pub async fn export(db: &Db, organization_id: &str, out: &mut impl Write) -> anyhow::Result<ExportCounts> {
    let organizations = identity::list_organizations(db).await?;
    let organization = organizations
        .iter()
        .find(|o| o.id == organization_id)
        .with_context(|| format!("there is no organization {organization_id} (see `frontdesk admin list-orgs`)"))?;
    let actor = Actor::command_line(organization_id);
    let mut counts = ExportCounts::default();
    line(out, "export", &json!({"format": 1, "organization": organization, "exportedAt": crate::domain::now()}))?;

    for operator in identity::list_operators(db, &actor).await? {
        line(out, "operator", &operator)?;
        counts.operators += 1;
    }

    for hotel in hotels::list(db, &actor).await? {
        line(out, "hotel", &hotel)?;
        counts.hotels += 1;
        for room_type in room_types::list(db, &actor, Some(&hotel.id)).await? {
            line(out, "roomType", &room_type)?;
            counts.room_types += 1;
        }
        for room in rooms::list(db, &actor, Some(&hotel.id), None).await? {
            line(out, "room", &room)?;
            counts.rooms += 1;
        }
        for plan in rate_plans::list(db, &actor, Some(&hotel.id), None).await? {
            line(out, "ratePlan", &plan)?;
            counts.rate_plans += 1;
            // Every night ever priced: the API's reads are limited to a window, the export is not.
            let mut conn = db.read().await?;
            let rates = store::daily_rates::range(&mut conn, &plan.id, &plan.currency, FIRST_NIGHT, LAST_NIGHT).await?;
            drop(conn);
            for rate in rates {
                line(out, "dailyRate", &rate)?;
                counts.daily_rates += 1;
            }
        }
    }

    // After the hotels they may be pinned to (keys) or deliver the events of (subscriptions).
    for key in api_keys::list(db, &actor).await? {
        line(out, "apiKey", &key)?;
        counts.api_keys += 1;
    }
    for subscription in webhooks::list(db, &actor).await? {
        line(out, "webhookSubscription", &subscription)?;
        counts.webhook_subscriptions += 1;
    }

    let mut all_guests =
        guests::list(db, &actor, guests::GuestFilter::default(), ListParams::default()).await?.items.into_stream();
    while let Some(guest) = all_guests.next().await {
        line(out, "guest", &guest?)?;
        counts.guests += 1;
    }

    let mut all_reservations =
        reservations::list(db, &actor, reservations::ReservationFilter::default(), ListParams::default())
            .await?
            .items
            .into_stream();
    while let Some(reservation) = all_reservations.next().await {
        let mut conn = db.read().await?;
        let reservation = reservations::full(&mut conn, reservation?).await?;
        drop(conn);
        line(out, "reservation", &reservation)?;
        counts.reservations += 1;
    }

    let mut log = audit::read::list(db, &actor, audit::read::AuditFilter::default(), ListParams::default())
        .await?
        .items
        .into_stream();
    while let Some(entry) = log.next().await {
        line(out, "auditEntry", &entry?)?;
        counts.audit_entries += 1;
    }
    out.flush()?;
    Ok(counts)
}

fn line(out: &mut impl Write, kind: &str, data: &impl Serialize) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, &json!({"type": kind, "data": data}))?;
    out.write_all(b"\n")?;
    Ok(())
}
