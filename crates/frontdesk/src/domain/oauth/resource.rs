//! The protected resource: the assistant endpoint's bearer tokens checked.

use chrono::{TimeDelta, Utc};

use super::super::access::{Actor, Credential};
use super::super::secrets;
use super::{same_resource, Settings, ACCESS_TOKEN_PREFIX, SCOPE};
use crate::domain::change::{Change, Job, Writer};
use crate::store::{self, oauth as rows, Db};

/// Why a bearer token was refused at the assistant endpoint.
#[derive(Debug, PartialEq, Eq)]
pub enum BearerError {
    /// Unknown, revoked, expired, of another resource or without the scope.
    InvalidToken(&'static str),
    Internal,
}

/// The assistant (and the operator who signed it in) behind an access token for the assistant endpoint: the token must be an access token (not a refresh
/// token), unexpired, unrevoked, bound to `settings.resource` and carry `service:read`.
pub async fn authenticate(db: &Db, settings: &Settings, token: &str) -> Result<Actor, BearerError> {
    let invalid = BearerError::InvalidToken("the access token is invalid");
    if !token.starts_with(ACCESS_TOKEN_PREFIX) {
        return Err(invalid);
    }
    let digest = secrets::digest(token);
    let mut conn = db.read().await.map_err(|_| BearerError::Internal)?;
    let row = rows::token_by_hash(&mut conn, &digest).await.map_err(|_| BearerError::Internal)?.ok_or(invalid)?;
    if !secrets::digests_match(&row.token_hash, &digest) || row.kind != "access" || row.revoked {
        return Err(BearerError::InvalidToken("the access token is invalid"));
    }
    if row.expires_at <= Utc::now() {
        return Err(BearerError::InvalidToken("the access token has expired"));
    }
    if !same_resource(&row.resource, &settings.resource) {
        return Err(BearerError::InvalidToken("the access token was issued for another resource"));
    }
    if !row.scope.split_whitespace().any(|s| s == SCOPE) {
        return Err(BearerError::InvalidToken("the access token lacks the scope service:read"));
    }
    // It reads what its operator's hotels hold: their limit is read with every request, so a changed one holds at
    // once (docs/roles.md).
    let operator = store::identity::get_operator(&mut conn, &row.operator_id)
        .await
        .map_err(|_| BearerError::Internal)?
        .ok_or(BearerError::InvalidToken("the access token is invalid"))?;
    drop(conn);
    // The dashboard lists when each connected assistant was last used: recorded to the minute, off the request's path.
    let at = Utc::now();
    if row.last_used_at.is_none_or(|t| at - t >= TimeDelta::seconds(60)) {
        let db = db.clone();
        let id = row.id.clone();
        tokio::spawn(async move {
            let touched = async {
                let mut tx = Change::begin_as(&db, Writer::Job(Job::LastUse)).await?;
                rows::touch_token(tx.conn(), &id, at, at - TimeDelta::seconds(60)).await?;
                tx.commit().await?;
                Ok::<_, super::super::Error>(())
            };
            if let Err(err) = touched.await {
                tracing::warn!(error = %err, "could not record an assistant token's last use");
            }
        });
    }
    Ok(Actor {
        organization_id: row.organization_id,
        hotel_pin: None,
        credential: Credential::Assistant {
            operator_id: row.operator_id,
            client_id: row.client_id,
            hotels: operator.hotel_ids,
        },
    })
}
