//! Organizations, operators, sign-in and authentication of both credential kinds.
//!
//! Where things are: this file holds organizations and operators themselves (their creation, password hashing,
//! [`who`] an actor is); `sessions.rs` signs in and out and authenticates tokens and API keys ([`login`],
//! [`sign_in`], [`authenticate_token`], [`authenticate_api_key`]); `operators.rs` is an organization's management of
//! its operators ([`add_operator`], [`reset_password`], [`change_own_password`], [`remove_operator`]); and
//! `invitations.rs` the links by which an invited operator chooses a password ([`invite_operator`],
//! [`accept_invitation`]); `roles.rs` operators' roles and hotels ([`set_role`], the last owner's rule); `step_up.rs` the password asked
//! again before dangerous dashboard actions.

mod invitations;
mod operators;
mod roles;
mod sessions;
pub mod step_up;

use super::access::{Actor, Credential};
use super::validate::{clean, Checks};
use super::{new_id, now, secrets, Error, Result};
use crate::domain::change::{Change, Record, RecordKind, Writer};
pub use crate::model::identity::{Operator, Organization, Role};
use crate::store::{self, identity as rows, Db};
pub use invitations::{
    accept_invitation, invitation, invite_operator, renew_invitation, Invitation, InvitationView, INVITATION_PREFIX,
    INVITATION_TTL,
};
pub use operators::{
    add_operator, change_own_password, operator_of_organization, operators_with_invitations, remove_operator,
    reset_password, OperatorEntry,
};
pub use roles::{set_role, RoleIn};
pub use sessions::{
    authenticate_api_key, authenticate_token, end_replaced_session, issue_session, issue_token, login, logout, me,
    sign_in, LoginIn, MeOut, SessionLimits, SessionOut,
};
pub(crate) use sessions::{insert_token, NewToken};

/// Creates an organization, by the service's administrator.
pub async fn create_organization(db: &Db, name: &str) -> Result<Organization> {
    create_organization_as(db, Writer::CommandLine, name).await
}

pub async fn create_organization_as(db: &Db, writer: Writer, name: &str) -> Result<Organization> {
    let mut checks = Checks::new();
    checks.line("name", name, 200);
    checks.finish()?;
    let org = Organization { id: new_id(), name: clean(name), created_at: now() };
    let mut tx = Change::begin_as(db, writer).await?;
    rows::insert_organization(tx.conn(), &org).await?;
    tx.created(&org.id, &org).await?;
    tx.commit().await?;
    Ok(org)
}

pub async fn list_organizations(db: &Db) -> Result<Vec<Organization>> {
    Ok(rows::list_organizations(&mut *db.read().await?).await?)
}

/// The operators of the actor's organization (operators and the service itself only).
pub async fn list_operators(db: &Db, actor: &Actor) -> Result<Vec<Operator>> {
    actor.require(crate::domain::access::Task::Administer)?;
    Ok(rows::list_operators(&mut *db.read().await?, &actor.organization_id).await?)
}

pub struct OperatorIn<'a> {
    pub organization_id: &'a str,
    pub email: &'a str,
    pub name: &'a str,
    pub password: &'a str,
}

/// An operator's role, and the hotels they work in (`None`: every hotel of the organization).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staffing {
    pub role: Role,
    pub hotel_ids: Option<Vec<String>>,
}

impl Staffing {
    /// An owner of the whole organization: what the organization's first operator is.
    pub const OWNER: Staffing = Staffing { role: Role::Owner, hotel_ids: None };
}

/// Creates an operator with a password, by the service's administrator: an owner.
pub async fn create_operator(db: &Db, input: OperatorIn<'_>) -> Result<Operator> {
    create_operator_as(db, Writer::CommandLine, input, &Staffing::OWNER).await
}

pub async fn create_operator_as(
    db: &Db,
    writer: Writer,
    input: OperatorIn<'_>,
    staffing: &Staffing,
) -> Result<Operator> {
    let mut checks = Checks::new();
    checks.email("email", input.email);
    checks.line("name", input.name, 200);
    check_new_password(&mut checks, input.password);
    checks.finish()?;
    let password_hash = hash(input.password).await?;
    let mut tx = Change::begin_as(db, writer).await?;
    let op = insert_operator(&mut tx, &input, staffing, &password_hash, true).await?;
    tx.created(&op.organization_id, &op).await?;
    tx.commit().await?;
    Ok(op)
}

/// Inserts an operator; one who `claims_email` signs in with it at once (see `store::identity::insert_operator`).
async fn insert_operator(
    tx: &mut Change,
    input: &OperatorIn<'_>,
    staffing: &Staffing,
    password_hash: &str,
    claims_email: bool,
) -> Result<Operator> {
    let op = Operator {
        id: new_id(),
        organization_id: input.organization_id.to_string(),
        email: clean(input.email),
        name: clean(input.name),
        role: staffing.role,
        hotel_ids: staffing.hotel_ids.clone(),
        created_at: now(),
    };
    if rows::get_organization(tx.conn(), &op.organization_id).await?.is_none() {
        return Err(Error::NotFound("organization"));
    }
    roles::check_hotels(tx.conn(), &op.organization_id, staffing).await?;
    match rows::insert_operator(tx.conn(), &op, password_hash, claims_email).await {
        Err(e) if e.kind() == store::ErrorKind::Taken => Err(Error::Validation(vec![super::FieldError::field(
            "email",
            "an operator with this e-mail already exists",
        )])),
        other => {
            other?;
            Ok(op)
        }
    }
}

/// The operator signs in with their e-mail from now on (an invited one, choosing or given a password): 409 when
/// an operator of any organization has claimed it meanwhile. One address signs in to one organization.
async fn claim_email(tx: &mut Change, operator: &Operator) -> Result<()> {
    match rows::claim_operator_email(tx.conn(), operator).await {
        Err(e) if e.kind() == store::ErrorKind::Taken => Err(Error::Conflict(format!(
            "{} is the e-mail address of an operator already, and one address can sign in to one organization \
             only; ask for an invitation to another address",
            operator.email
        ))),
        other => Ok(other?),
    }
}

/// A password's argon2id hash, made in turn with every other ([`secrets::PasswordHashing`]).
async fn hash(password: &str) -> Result<String> {
    let password = password.to_string();
    secrets::PasswordHashing::global()
        .run(move || secrets::hash_password(&password))
        .await
        .map_err(busy)?
        .map_err(Error::from)
}

/// A password check or hash that waited for its turn in vain: 429, try again in a moment.
fn busy(err: anyhow::Error) -> Error {
    match err.downcast::<secrets::HashingBusy>() {
        Ok(_) => Error::TooManyAttempts {
            message: "the service is checking too many sign-ins at once; try again in a moment".into(),
            retry_after_secs: 1,
        },
        Err(err) => Error::Internal(err),
    }
}

pub async fn find_operator_by_email(db: &Db, email: &str) -> Result<Operator> {
    rows::find_operator_by_email(&mut *db.read().await?, email.trim())
        .await?
        .map(|(op, _)| op)
        .ok_or(Error::NotFound("operator"))
}

fn check_new_password(checks: &mut Checks, password: &str) {
    if password.chars().count() < 8 {
        checks.fail("password", "must be at least 8 characters");
    }
}

/// The organization of an operator's sign-in (the consent page names it).
pub async fn organization(db: &Db, id: &str) -> Result<Organization> {
    rows::get_organization(&mut *db.read().await?, id).await?.ok_or(Error::NotFound("organization"))
}

/// Who an actor is, as people read it in a record's history: the operator's name, `API key <name>`, or
/// `Frontdesk` for the service itself (the command line, the demo).
pub async fn who(conn: &mut store::Conn, actor: &Actor) -> Result<String> {
    Ok(match &actor.credential {
        Credential::Operator { name, .. } => name.clone(),
        Credential::Assistant { operator_id, .. } => match store::identity::get_operator(conn, operator_id).await? {
            Some(operator) => format!("an assistant of {}", operator.name),
            None => "an assistant".to_string(),
        },
        Credential::ApiKey { key_id, .. } => match store::api_keys::get(conn, &actor.organization_id, key_id).await? {
            Some(key) => format!("API key {}", key.name),
            None => "an API key".to_string(),
        },
        Credential::System(_) => "Frontdesk".to_string(),
    })
}

impl Record for Organization {
    const KIND: RecordKind = RecordKind::Organization;

    fn hotel_id(&self) -> Option<&str> {
        None
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}

impl Record for Operator {
    const KIND: RecordKind = RecordKind::Operator;

    fn hotel_id(&self) -> Option<&str> {
        None
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
