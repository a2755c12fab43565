//! Operators' roles and hotels (docs/roles.md): who may give them ([`Task::Administer`]: owners), what a valid
//! role is (422 otherwise), and the rule that an organization always keeps an owner: demoting or removing the last
//! one is refused (409), also when two owners demote each other at once (the organization's row is locked first,
//! so the second change sees the first).

use serde::Deserialize;
use utoipa::ToSchema;

use super::operators::in_organization;
use super::{Operator, Staffing};
use crate::domain::access::{Actor, Role, Task};
use crate::domain::change::Change;
use crate::domain::{now, Error, FieldError, Result};
use crate::store::{self, identity as rows, Conn, Db};

/// An operator's role and hotels, as asked for (`PUT /api/operators/{operatorId}/role`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleIn {
    /// `OWNER`, `MANAGER`, `FRONT_DESK`, `HOUSEKEEPING`, `REVENUE` or `ACCOUNTANT` (another name answers 422).
    #[schema(value_type = Role)]
    pub role: String,
    /// The hotels the operator works in, at least one; absent or `null`: every hotel of the organization.
    #[schema(min_items = 1, max_items = 500)]
    pub hotel_ids: Option<Vec<String>>,
}

impl RoleIn {
    /// The staffing asked for: 422 for a role that does not exist.
    pub fn staffing(&self) -> Result<Staffing> {
        let role = Role::parse(self.role.trim()).ok_or_else(|| {
            Error::Unprocessable(vec![FieldError::field(
                "role",
                "is not a role: OWNER, MANAGER, FRONT_DESK, HOUSEKEEPING, REVENUE or ACCOUNTANT",
            )])
        })?;
        let mut hotel_ids = self.hotel_ids.clone();
        if let Some(ids) = hotel_ids.as_mut() {
            let mut seen = std::collections::HashSet::new();
            ids.retain(|id| seen.insert(id.clone()));
        }
        Ok(Staffing { role, hotel_ids })
    }
}

/// 422 for an empty list of hotels; 404 for a hotel that is not the organization's (another organization's hotels
/// do not exist for it). A hotel named twice counts once.
pub(super) async fn check_hotels(conn: &mut Conn, organization_id: &str, staffing: &Staffing) -> Result<()> {
    let Some(hotels) = &staffing.hotel_ids else { return Ok(()) };
    if hotels.is_empty() {
        return Err(Error::Unprocessable(vec![FieldError::field(
            "hotelIds",
            "name at least one hotel, or leave it out for every hotel",
        )]));
    }
    for hotel in hotels {
        if store::hotels::get(conn, organization_id, hotel).await?.is_none() {
            return Err(Error::NotFound("hotel"));
        }
    }
    Ok(())
}

/// Gives an operator of the actor's organization a role and hotels. Owners only. The last owner cannot stop being
/// one (409): the organization would have nobody to manage its operators.
pub async fn set_role(db: &Db, actor: &Actor, operator_id: &str, staffing: &Staffing) -> Result<Operator> {
    actor.require(Task::Administer)?;
    let mut tx = Change::begin(db, actor).await?;
    rows::lock_organization(tx.conn(), &actor.organization_id).await?;
    let before = in_organization(tx.conn(), actor, operator_id).await?;
    check_hotels(tx.conn(), &actor.organization_id, staffing).await?;
    let owners = rows::owners_locked(tx.conn(), &actor.organization_id).await?;
    if staffing.role != Role::Owner && owners == [before.id.clone()] {
        return Err(Error::Conflict(
            "this is the organization's last owner: make another operator an owner first".into(),
        ));
    }
    rows::set_role(tx.conn(), &actor.organization_id, &before.id, staffing.role, staffing.hotel_ids.as_deref(), now())
        .await?;
    let after = Operator { role: staffing.role, hotel_ids: staffing.hotel_ids.clone(), ..before.clone() };
    tx.updated(&actor.organization_id, &before, &after).await?;
    tx.commit().await?;
    Ok(after)
}
