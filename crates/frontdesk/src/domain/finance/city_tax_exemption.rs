//! A stay exempt from the city tax (business travel, where the city exempts it): the reason is kept on the folio,
//! and the stay's unposted city-tax lines go, or are made again when the exemption is lifted.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::folios;
use super::ledger::{self, EntryKind};
use crate::domain::access::Actor;
use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::reservations::ReservationStatus;
use crate::domain::validate::{clean, Checks};
use crate::domain::{hotels, Error, Result};
use crate::model::folios::FolioLedger;
use crate::store::{self, Db};

/// Why a stay is exempt from the city tax (business travel, where the city exempts it).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CityTaxExemptionIn {
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// Exempts a stay from the city tax with a reason (`Some`), or lifts the exemption (`None`): its unposted city-tax
/// lines go, or are made again. Posted ones stay as they are (an allowance corrects one). Only while the stay's
/// lines follow it (CONFIRMED or CHECKED_IN); 409 otherwise.
pub async fn exempt_from_city_tax(
    db: &Db,
    actor: &Actor,
    folio_id: &str,
    exemption: Option<CityTaxExemptionIn>,
) -> Result<FolioLedger> {
    // Exempting a stay changes what it is charged: whoever may charge may.
    EntryKind::Charge.require(actor)?;
    let reason = exemption.map(|e| clean(&e.reason));
    if let Some(reason) = &reason {
        let mut checks = Checks::new();
        checks.line("reason", reason, 500);
        checks.finish()?;
    }
    let mut tx = Change::begin(db, actor).await?;
    let found = ledger::owner(tx.conn(), actor, folio_id).await?;
    let r = store::reservations::get(tx.conn(), &actor.organization_id, &found.reservation_id)
        .await?
        .ok_or(Error::NotFound("folio"))?;
    if !matches!(r.status, ReservationStatus::Confirmed | ReservationStatus::CheckedIn) {
        return Err(Error::Conflict(format!(
            "the city tax of a {} stay no longer follows it; correct a posted city-tax line with an allowance",
            r.status.as_str()
        )));
    }
    store::folios::set_city_tax_exemption(tx.conn(), folio_id, reason.as_deref()).await?;
    let exemption = |reason: Option<&str>| Exemption {
        folio_id: found.head.id.clone(),
        hotel_id: found.hotel_id.clone(),
        city_tax_exempt_reason: reason.map(str::to_owned),
    };
    let (was, is) = (exemption(found.city_tax_exempt_reason.as_deref()), exemption(reason.as_deref()));
    tx.updated(&actor.organization_id, &was, &is).await?;
    let service = Actor::service(&actor.organization_id, tx.writer().clone());
    let hotel = hotels::require_named(tx.conn(), &service, Some(&found.hotel_id)).await?;
    let rooms = store::reservations::rooms(tx.conn(), &r.id).await?;
    folios::follow_the_stay(&mut tx, &actor.organization_id, &hotel, &r, &rooms).await?;
    // Read again: the exemption and the lines as they are now.
    let found_now = ledger::owner(tx.conn(), actor, folio_id).await?;
    let after = ledger::ledger(found_now, store::folios::lines(tx.conn(), folio_id).await?);
    tx.commit().await?;
    Ok(after)
}

/// A stay's exemption from the city tax, as a change reports it: the reason may change while the bill does not.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Exemption {
    #[serde(skip)]
    folio_id: String,
    #[serde(skip)]
    hotel_id: String,
    city_tax_exempt_reason: Option<String>,
}

impl Record for Exemption {
    const KIND: RecordKind = RecordKind::CityTaxExemption;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.folio_id.clone()
    }
}
