//! Step-up: the dashboard's dangerous actions (creating an API key or an access token, changing an operator's role,
//! removing an operator, changing billing settings) ask for the password again unless the operator gave it within a
//! few minutes (`--step-up-minutes`; signing in counts). A session left open on a front-desk computer must not be
//! enough to mint a key or hand someone the owner's role (docs/roles.md).
//!
//! Giving the password again is a sign-in attempt like any other: counted and refused while its counts ask to wait,
//! so that a stolen session cannot be used to guess the password.

use chrono::TimeDelta;

use super::sessions;
use crate::domain::access::{Actor, Credential};
use crate::domain::change::Change;
use crate::domain::{now, Error, Result};
use crate::store::{identity as rows, Db};

/// The operator's session and token id behind `actor`, which only an operator's session has.
fn session_of(actor: &Actor) -> Result<(&str, &str)> {
    match &actor.credential {
        Credential::Operator { operator_id, token_id, .. } => Ok((operator_id, token_id)),
        _ => Err(Error::Forbidden("only a signed-in operator can confirm their password".into())),
    }
}

/// Whether the operator behind `actor` gave their password within `window` (signing in or [`give_password`]).
/// A window of zero is never fresh: every dangerous action asks.
pub async fn password_fresh(db: &Db, actor: &Actor, window: TimeDelta) -> Result<bool> {
    let (_, token_id) = session_of(actor)?;
    if window <= TimeDelta::zero() {
        return Ok(false);
    }
    let given = rows::password_given_at(&mut *db.read().await?, token_id).await?;
    Ok(given.is_some_and(|at| now() - at < window))
}

/// Checks the password of the operator behind `actor`, from the client `address`, and records on the session that
/// it was given now. A wrong password is 401 and counts as a failed sign-in.
pub async fn give_password(db: &Db, actor: &Actor, password: String, address: &str) -> Result<()> {
    let (operator_id, token_id) = session_of(actor)?;
    let operator = rows::get_operator(&mut *db.read().await?, operator_id)
        .await?
        .ok_or_else(|| Error::Unauthorized("no such operator".into()))?;
    let confirmed = sessions::sign_in(db, &operator.email, password, address).await?;
    if confirmed.id != operator.id {
        return Err(Error::Unauthorized("invalid e-mail or password".into()));
    }
    let mut tx = Change::begin(db, actor).await?;
    rows::set_password_given_at(tx.conn(), token_id, now()).await?;
    tx.commit().await?;
    Ok(())
}
