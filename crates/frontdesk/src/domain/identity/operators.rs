//! An organization's management of its operators: the list, adding one with a password, resetting another's
//! password, changing one's own, and removing an operator.

use chrono::{DateTime, Utc};

use super::{
    check_new_password, claim_email, create_operator_as, hash, issue_session, sign_in, Operator, OperatorIn,
    SessionLimits, SessionOut, Staffing,
};
use crate::domain::access::{Actor, Credential, Role, Task};
use crate::domain::change::Change;
use crate::domain::change::Writer;
use crate::domain::validate::Checks;
use crate::domain::{now, Error, FieldError, Result};
use crate::store::{self, identity as rows, Db};

/// The operators of the actor's organization, each with when their invitation link expires while they have not
/// chosen a password yet (`None`: they have one).
#[derive(Debug, Clone)]
pub struct OperatorEntry {
    pub operator: Operator,
    pub invited_until: Option<DateTime<Utc>>,
}

pub async fn operators_with_invitations(db: &Db, actor: &Actor) -> Result<Vec<OperatorEntry>> {
    actor.require(Task::Administer)?;
    let mut conn = db.read().await?;
    let operators = rows::list_operators(&mut conn, &actor.organization_id).await?;
    let invited = rows::invitation_expiries(&mut conn, &actor.organization_id).await?;
    Ok(operators
        .into_iter()
        .map(|operator| {
            let invited_until = invited.iter().find(|(id, _)| *id == operator.id).map(|(_, at)| *at);
            OperatorEntry { operator, invited_until }
        })
        .collect())
}

/// An operator of the actor's organization, or 404 (another organization's operators do not exist for it).
pub async fn operator_of_organization(db: &Db, actor: &Actor, id: &str) -> Result<Operator> {
    actor.require(Task::Administer)?;
    in_organization(&mut *db.read().await?, actor, id).await
}

pub(super) async fn in_organization(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<Operator> {
    rows::get_operator(conn, id)
        .await?
        .filter(|op| op.organization_id == actor.organization_id)
        .ok_or(Error::NotFound("operator"))
}

/// The operator the actor signs in as, if it is one (not an API key, not the command line).
fn acting_operator(actor: &Actor) -> Option<&str> {
    match &actor.credential {
        Credential::Operator { operator_id, .. } => Some(operator_id),
        _ => None,
    }
}

/// Adds an operator with a password chosen for them, to the actor's organization, in a role (owners only).
pub async fn add_operator(
    db: &Db,
    actor: &Actor,
    email: &str,
    name: &str,
    password: &str,
    staffing: &Staffing,
) -> Result<Operator> {
    actor.require(Task::Administer)?;
    let input = OperatorIn { organization_id: &actor.organization_id, email, name, password };
    create_operator_as(db, Writer::for_actor(actor), input, staffing).await
}

/// Gives another operator of the actor's organization a new password. Every session token, assistant token and
/// assistant sign-in in progress of that operator ends with the old password, and any invitation link of theirs
/// stops working. An operator changes their own password with [`change_own_password`], which asks for the current
/// one.
pub async fn reset_password(db: &Db, actor: &Actor, operator_id: &str, password: &str) -> Result<Operator> {
    actor.require(Task::Administer)?;
    if acting_operator(actor) == Some(operator_id) {
        return Err(Error::Conflict(
            "change your own password with your current one (Your password), not by resetting it".into(),
        ));
    }
    let mut checks = Checks::new();
    check_new_password(&mut checks, password);
    checks.finish()?;
    let password_hash = hash(password).await?;
    let mut tx = Change::begin(db, actor).await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    // An invited operator given a password signs in with their address from now on.
    claim_email(&mut tx, &operator).await?;
    replace_password(&mut tx, &operator, &password_hash).await?;
    tx.commit().await?;
    Ok(operator)
}

/// Stores a new password hash and ends everything the old password opened.
async fn replace_password(tx: &mut Change, operator: &Operator, password_hash: &str) -> Result<()> {
    let at = now();
    rows::set_password_hash(tx.conn(), &operator.id, password_hash, at).await?;
    rows::revoke_operator_tokens(tx.conn(), &operator.id, at).await?;
    rows::delete_operator_invitations(tx.conn(), &operator.id).await?;
    store::oauth::forget_operator(tx.conn(), &operator.id).await?;
    password_replaced(tx, operator).await
}

/// Says that `operator`'s password was replaced (the operator as it is now is the change's record; the hash is
/// never part of one).
pub(super) async fn password_replaced(tx: &mut Change, before: &Operator) -> Result<()> {
    let after = rows::get_operator(tx.conn(), &before.id).await?.ok_or(Error::NotFound("operator"))?;
    tx.updated(&before.organization_id, before, &after).await
}

/// The signed-in operator changes their own password, giving the current one (checked, and counted, as a sign-in
/// from `address` is: a session left open cannot be used to guess it). Every session and token of theirs ends, this
/// one too; the new session answered replaces it.
pub async fn change_own_password(
    db: &Db,
    actor: &Actor,
    current: String,
    new: &str,
    address: &str,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let Some(operator_id) = acting_operator(actor) else {
        return Err(Error::Forbidden("only a signed-in operator has a password to change".into()));
    };
    let me = rows::get_operator(&mut *db.read().await?, operator_id).await?.ok_or(Error::NotFound("operator"))?;
    let mut checks = Checks::new();
    check_new_password(&mut checks, new);
    checks.finish()?;
    match sign_in(db, &me.email, current, address).await {
        Ok(_) => {}
        Err(Error::Unauthorized(_)) => {
            return Err(Error::Validation(vec![FieldError::field("currentPassword", "is not your current password")]))
        }
        Err(err) => return Err(err),
    }
    let password_hash = hash(new).await?;
    let mut tx = Change::begin(db, actor).await?;
    replace_password(&mut tx, &me, &password_hash).await?;
    tx.commit().await?;
    issue_session(db, me, limits, user_agent).await
}

/// Removes an operator of the actor's organization, and with them (the database cascades) every session token,
/// assistant token, assistant sign-in and invitation of theirs. An operator cannot remove themselves, and an
/// organization keeps at least one operator, so that nobody locks the organization out of its dashboard by a click.
/// The command line (the service's administrator, who can create operators) may remove the last one.
pub async fn remove_operator(db: &Db, actor: &Actor, operator_id: &str) -> Result<Operator> {
    actor.require(Task::Administer)?;
    if acting_operator(actor) == Some(operator_id) {
        return Err(Error::Conflict("you cannot remove yourself; another operator of your organization can".into()));
    }
    let mut tx = Change::begin(db, actor).await?;
    rows::lock_organization(tx.conn(), &actor.organization_id).await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    let by_command_line = matches!(actor.credential, Credential::System(Writer::CommandLine));
    if !by_command_line {
        refuse_removing_last_owner(tx.conn(), &operator).await?;
    }
    if !by_command_line && rows::count_operators(tx.conn(), &actor.organization_id).await? <= 1 {
        return Err(Error::Conflict("the last operator of an organization cannot be removed".into()));
    }
    rows::delete_operator(tx.conn(), &operator.id).await?;
    tx.deleted(&operator.organization_id, &operator).await?;
    tx.commit().await?;
    Ok(operator)
}

/// 409 when `operator` is the last owner of the organization (removing them would leave it without one).
async fn refuse_removing_last_owner(conn: &mut store::Conn, operator: &Operator) -> Result<()> {
    if operator.role == Role::Owner
        && rows::owners_locked(conn, &operator.organization_id).await? == [operator.id.clone()]
    {
        return Err(Error::Conflict(
            "this is the organization's last owner: make another operator an owner first".into(),
        ));
    }
    Ok(())
}
