//! The assistants connected to an organization through the assistant endpoint's OAuth sign-in ([`super::oauth`]): which
//! clients hold a live token, who allowed them, since when, and when they last asked something. Revoking one cuts
//! it off at once: every token of that client in the organization is revoked and its authorizations are deleted,
//! so its next call at `/mcp` answers 401 and its refresh token buys nothing. Any operator of the organization sees
//! and revokes every connection of it (one operator may need to cut off what a colleague connected).

use chrono::{DateTime, Utc};

use super::oauth::redirect_host;
use super::{now, Actor, Error, Result};
use crate::domain::change::{Change, Record, RecordKind};
use crate::store::{identity, oauth as rows, Db};

/// A client connected to the organization.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectedAssistant {
    pub client_id: String,
    /// The client's own name (its choice, so shown with the host below).
    pub name: String,
    /// Where the client's sign-ins return to: the host the operator saw on the consent page.
    pub redirect_hosts: Vec<String>,
    /// The names of the operators who allowed it.
    pub allowed_by: Vec<String>,
    /// When it was first allowed, of the connections still live.
    pub allowed_at: DateTime<Utc>,
    /// Its last call at the assistant endpoint, to the minute; `None`: not since it was allowed (or before this was kept).
    pub last_used_at: Option<DateTime<Utc>>,
}

pub async fn list(db: &Db, actor: &Actor) -> Result<Vec<ConnectedAssistant>> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut conn = db.read().await?;
    let rows = rows::connections(&mut conn, &actor.organization_id, now()).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut allowed_by = Vec::new();
        for operator_id in &row.operator_ids {
            if let Some(operator) = identity::get_operator(&mut conn, operator_id).await? {
                allowed_by.push(operator.name);
            }
        }
        let mut redirect_hosts: Vec<String> = row.redirect_uris.iter().map(|uri| redirect_host(uri)).collect();
        redirect_hosts.dedup();
        out.push(ConnectedAssistant {
            client_id: row.client_id,
            name: row.client_name,
            redirect_hosts,
            allowed_by,
            allowed_at: row.granted_at,
            last_used_at: row.last_used_at,
        });
    }
    Ok(out)
}

/// One connected client of the organization; a client not connected to it is not found.
pub async fn get(db: &Db, actor: &Actor, client_id: &str) -> Result<ConnectedAssistant> {
    list(db, actor).await?.into_iter().find(|c| c.client_id == client_id).ok_or(Error::NotFound("connected assistant"))
}

/// Cuts a client off from the actor's organization (see the module's description).
pub async fn revoke(db: &Db, actor: &Actor, client_id: &str) -> Result<ConnectedAssistant> {
    let assistant = get(db, actor, client_id).await?;
    let mut tx = Change::begin(db, actor).await?;
    rows::revoke_client_in_organization(tx.conn(), &actor.organization_id, client_id, now()).await?;
    tx.deleted(&actor.organization_id, &assistant).await?;
    tx.commit().await?;
    Ok(assistant)
}

/// An assistant reads what the operators who allowed it may see: the organization's, no one hotel's.
impl Record for ConnectedAssistant {
    const KIND: RecordKind = RecordKind::ConnectedAssistant;

    fn hotel_id(&self) -> Option<&str> {
        None
    }

    fn record_id(&self) -> String {
        self.client_id.clone()
    }
}
