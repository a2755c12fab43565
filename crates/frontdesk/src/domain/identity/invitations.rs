//! Invitations: an operator added without a password chooses one through a link, shown once to whoever invited
//! them. A link works once, for [`INVITATION_TTL`], and a renewed one replaces it.

use chrono::{DateTime, TimeDelta, Utc};

use super::operators::{in_organization, password_replaced};
use super::{
    check_new_password, claim_email, hash, insert_operator, issue_session, who, Operator, OperatorIn, Organization,
    SessionLimits, SessionOut,
};
use crate::domain::access::Actor;
use crate::domain::change::{Change, Record, RecordKind, Writer};
use crate::domain::validate::Checks;
use crate::domain::{attempts, new_id, now, secrets, Error, Result};
use crate::store::{self, identity as rows, Db};

/// How long an invitation link works.
pub const INVITATION_TTL: TimeDelta = TimeDelta::days(7);

/// The prefix of an invitation link's token.
pub const INVITATION_PREFIX: &str = "fdi_";

/// An invitation: the token of its link, shown once to the operator who invited, and never stored.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invitation {
    pub operator: Operator,
    #[serde(skip)]
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// Adds an operator to the actor's organization who chooses their own password through a link ([`accept_invitation`]).
/// Until then the operator has a random password nobody knows, so nobody can sign in as them. Owners only; the
/// operator gets `staffing`'s role and hotels.
pub async fn invite_operator(
    db: &Db,
    actor: &Actor,
    email: &str,
    name: &str,
    staffing: &super::Staffing,
) -> Result<Invitation> {
    actor.require(crate::domain::access::Task::Administer)?;
    let input = OperatorIn { organization_id: &actor.organization_id, email, name, password: "" };
    let mut checks = Checks::new();
    checks.email("email", input.email);
    checks.line("name", input.name, 200);
    checks.finish()?;
    let unknowable = hash(&secrets::generate("")).await?;
    let mut tx = Change::begin(db, actor).await?;
    // The organization's own operators are its to see; whether another organization has the address is not said:
    // the invitation is made alike, and its acceptance says so ([`accept_invitation`]).
    let wanted = input.email.trim().to_lowercase();
    if rows::list_operators(tx.conn(), &actor.organization_id).await?.iter().any(|o| o.email.to_lowercase() == wanted) {
        return Err(Error::Validation(vec![crate::domain::FieldError::field(
            "email",
            "an operator of your organization has this e-mail already",
        )]));
    }
    let operator = insert_operator(&mut tx, &input, staffing, &unknowable, false).await?;
    let invitation = new_invitation(&mut tx, actor, &operator).await?;
    tx.created(&operator.organization_id, &operator).await?;
    tx.commit().await?;
    Ok(invitation)
}

/// A new link for an operator who has not chosen a password yet (their earlier links stop working).
pub async fn renew_invitation(db: &Db, actor: &Actor, operator_id: &str) -> Result<Invitation> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut tx = Change::begin(db, actor).await?;
    let operator = in_organization(tx.conn(), actor, operator_id).await?;
    let pending = rows::invitation_expiries(tx.conn(), &actor.organization_id).await?;
    if !pending.iter().any(|(id, _)| *id == operator.id) {
        return Err(Error::Conflict(format!("{} has chosen a password already", operator.name)));
    }
    rows::delete_operator_invitations(tx.conn(), &operator.id).await?;
    let invitation = new_invitation(&mut tx, actor, &operator).await?;
    tx.commit().await?;
    Ok(invitation)
}

async fn new_invitation(tx: &mut Change, actor: &Actor, operator: &Operator) -> Result<Invitation> {
    let token = secrets::generate(INVITATION_PREFIX);
    let created_at = now();
    let expires_at = created_at + INVITATION_TTL;
    let invited_by = who(tx.conn(), actor).await?;
    rows::insert_invitation(
        tx.conn(),
        &rows::NewInvitation {
            id: &new_id(),
            operator_id: &operator.id,
            organization_id: &operator.organization_id,
            token_hash: &secrets::digest(&token),
            invited_by: &invited_by,
            created_at,
            expires_at,
        },
    )
    .await?;
    let invitation = Invitation { operator: operator.clone(), token, expires_at };
    tx.created(&operator.organization_id, &invitation).await?;
    Ok(invitation)
}

/// An invitation is to the organization, as its operator is.
impl Record for Invitation {
    const KIND: RecordKind = RecordKind::Invitation;

    fn hotel_id(&self) -> Option<&str> {
        None
    }

    fn record_id(&self) -> String {
        self.operator.id.clone()
    }
}

/// What an invitation link's page shows: who is invited, to which organization, by whom.
#[derive(Debug)]
pub struct InvitationView {
    pub operator: Operator,
    pub organization: Organization,
    pub invited_by: String,
}

/// The invitation a link's token opens: 404 for a token that is unknown, used, replaced or expired (one answer for
/// all, so a link says nothing about why it does not work).
pub async fn invitation(db: &Db, token: &str) -> Result<InvitationView> {
    let mut conn = db.read().await?;
    let stored = valid_invitation(&mut conn, token).await?;
    let operator = rows::get_operator(&mut conn, &stored.operator_id).await?.ok_or(Error::NotFound("invitation"))?;
    let organization =
        rows::get_organization(&mut conn, &operator.organization_id).await?.ok_or(Error::NotFound("invitation"))?;
    Ok(InvitationView { operator, organization, invited_by: stored.invited_by })
}

async fn valid_invitation(conn: &mut store::Conn, token: &str) -> Result<rows::StoredInvitation> {
    let gone = || Error::NotFound("invitation");
    if !token.starts_with(INVITATION_PREFIX) {
        return Err(gone());
    }
    let digest = secrets::digest(token);
    let stored = rows::find_invitation(conn, &digest).await?.ok_or_else(gone)?;
    if !secrets::digests_match(&stored.token_hash, &digest) || stored.expires_at <= now() {
        return Err(gone());
    }
    Ok(stored)
}

/// Sets the invited operator's password through their link, once, and signs them in. The link stops working.
/// `user_agent` is the browser's, recorded on the session it gets (the operator's list of signed-in browsers).
///
/// The token is checked before anything costly: a made-up link answers 404 after one read. A real one is counted
/// as a sign-in of the invited operator from `address` ([`crate::domain::attempts`]) before the password is hashed,
/// so that hashing cannot be asked for faster than signing in.
pub async fn accept_invitation(
    db: &Db,
    token: &str,
    password: &str,
    address: &str,
    limits: SessionLimits,
    user_agent: Option<&str>,
) -> Result<SessionOut> {
    let invited = {
        let mut conn = db.read().await?;
        let stored = valid_invitation(&mut conn, token).await?;
        rows::get_operator(&mut conn, &stored.operator_id).await?.ok_or(Error::NotFound("invitation"))?
    };
    let mut checks = Checks::new();
    check_new_password(&mut checks, password);
    checks.finish()?;
    let attempt = attempts::begin_sign_in(db, &invited.email, address).await?;
    let password_hash = hash(password).await?;
    let mut tx = Change::begin_as(db, Writer::Visitor { address: address.to_string() }).await?;
    let stored = valid_invitation(tx.conn(), token).await?;
    // Deleted first: of two uses of one link at once, only the one that deletes it goes on.
    if !rows::delete_invitation(tx.conn(), &stored.id).await? {
        return Err(Error::NotFound("invitation"));
    }
    let operator = rows::get_operator(tx.conn(), &stored.operator_id).await?.ok_or(Error::NotFound("invitation"))?;
    let at = now();
    claim_email(&mut tx, &operator).await?;
    rows::set_password_hash(tx.conn(), &operator.id, &password_hash, at).await?;
    rows::delete_operator_invitations(tx.conn(), &operator.id).await?;
    password_replaced(&mut tx, &operator).await?;
    tx.commit().await?;
    attempt.succeeded(db).await?;
    issue_session(db, operator, limits, user_agent).await
}
