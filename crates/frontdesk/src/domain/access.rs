//! Who is asking, and what they may do: scopes, roles, organization tenancy, and the hotels a key is pinned to or an
//! operator works in. Every domain operation asks here, so the dashboard and the API obey one set of rules.
//!
//! An API key may do what its scopes say. An operator may do what their [`Role`] holds: the scopes of the role
//! ([`Role::holds`]), and the tasks no scope names ([`Task`], [`Role::may`]): administering the organization,
//! configuring hotels, charging, correcting, refunding, cancelling invoices.

use super::{Error, Result};
pub use crate::model::access::Scope;
use crate::model::changes::Writer;
pub use crate::model::identity::Role;

impl Scope {
    /// What a new key gets when it is created without scopes: read-only access to everything.
    pub const DEFAULT: [Scope; 4] = [Scope::ReservationsRead, Scope::GuestsRead, Scope::RatesRead, Scope::RoomsRead];
}

/// How the caller authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An operator's dashboard session token, with the operator's name (as the audit log names who wrote), role
    /// and hotels (`None`: every hotel).
    Operator { operator_id: String, name: String, token_id: String, role: Role, hotels: Option<Vec<String>> },
    /// An API key with its name and scopes.
    ApiKey { key_id: String, name: String, scopes: Vec<Scope>, rate_limit_per_minute: Option<u32> },
    /// An AI assistant at the assistant endpoint, signed in by an operator (OAuth client `client_id`): it reads
    /// what that operator's hotels hold (`None`: every hotel), and writes nothing.
    Assistant { operator_id: String, client_id: String, hotels: Option<Vec<String>> },
    /// The service itself, acting for an organization as `writer`: the command line, the demo's seeding, a job,
    /// the booking page's requests.
    System(Writer),
}

/// An authenticated caller. Every domain operation takes one and confines itself to `organization_id` (and to
/// `hotel_pin` when set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub organization_id: String,
    pub hotel_pin: Option<String>,
    pub credential: Credential,
}

impl Actor {
    /// The service's administrator acting for an organization (the `frontdesk` command, benchmarks).
    pub fn command_line(organization_id: &str) -> Actor {
        Actor::service(organization_id, Writer::CommandLine)
    }

    /// The service acting for an organization as `writer`, with an operator's rights.
    pub fn service(organization_id: &str, writer: Writer) -> Actor {
        Actor { organization_id: organization_id.to_string(), hotel_pin: None, credential: Credential::System(writer) }
    }

    /// Operators, and the service itself, may do everything within the organization.
    pub fn is_operator(&self) -> bool {
        matches!(self.credential, Credential::Operator { .. } | Credential::System(_))
    }

    /// 403 unless the caller holds `scope` (an operator: unless their role holds it).
    pub fn require_scope(&self, scope: Scope) -> Result<()> {
        match &self.credential {
            Credential::System(_) => Ok(()),
            Credential::Operator { role, .. } if role.holds(scope) => Ok(()),
            Credential::Operator { role, .. } => Err(Error::Forbidden(format!(
                "the role {} does not allow this ({}); it takes the role {}",
                role.label(),
                scope.as_str(),
                Role::roles_holding(scope)
            ))),
            Credential::ApiKey { scopes, .. } if scopes.contains(&scope) => Ok(()),
            Credential::ApiKey { .. } => {
                Err(Error::Forbidden(format!("this API key lacks the scope {}", scope.as_str())))
            }
            Credential::Assistant { .. } if Scope::DEFAULT.contains(&scope) => Ok(()),
            Credential::Assistant { .. } => Err(Error::Forbidden("an assistant reads only".into())),
        }
    }

    /// 403 unless the caller is an operator (signed in with an access token).
    pub fn require_operator(&self) -> Result<()> {
        if self.is_operator() {
            Ok(())
        } else {
            Err(Error::Forbidden(
                "this endpoint requires an operator access token (Authorization: Token …); API keys are not accepted"
                    .into(),
            ))
        }
    }

    /// 403 unless the caller may do `task`: an operator whose role may, the service itself, or (for the tasks scopes
    /// govern) an API key, whose scopes are checked on their own.
    pub fn require(&self, task: Task) -> Result<()> {
        match &self.credential {
            Credential::System(_) => Ok(()),
            Credential::Operator { role, .. } if role.may(task) => Ok(()),
            Credential::Operator { role, .. } => Err(Error::Forbidden(format!(
                "the role {} may not {}; it takes the role {}",
                role.label(),
                task.describe(),
                Role::roles_for(task)
            ))),
            Credential::ApiKey { .. } if !task.operators_only() => Ok(()),
            Credential::ApiKey { .. } | Credential::Assistant { .. } => self.require_operator(),
        }
    }

    /// The role of an operator caller.
    pub fn role(&self) -> Option<Role> {
        match &self.credential {
            Credential::Operator { role, .. } => Some(*role),
            _ => None,
        }
    }

    /// The hotels an operator caller (or an assistant an operator signed in) is limited to (`None`: every hotel, or
    /// not an operator).
    fn operator_hotels(&self) -> Option<&[String]> {
        match &self.credential {
            Credential::Operator { hotels: Some(hotels), .. } | Credential::Assistant { hotels: Some(hotels), .. } => {
                Some(hotels)
            }
            _ => None,
        }
    }

    /// The hotel a request is about. A pinned key may leave it out (its pin is used) and may not name another
    /// hotel (403). An unpinned caller gets what it asked for.
    pub fn resolve_hotel(&self, requested: Option<&str>) -> Result<Option<String>> {
        // An operator limited to some hotels: another hotel is not theirs to see (404), and a list must name one of
        // theirs unless they have only one.
        if let Some(hotels) = self.operator_hotels() {
            return match requested {
                Some(asked) if hotels.iter().any(|h| h == asked) => Ok(Some(asked.to_string())),
                Some(_) => Err(Error::NotFound("hotel")),
                None => match hotels {
                    [only] => Ok(Some(only.clone())),
                    _ => Err(Error::Validation(vec![super::FieldError::field(
                        "hotelId",
                        "name one of the hotels you work in: your role covers several, not the whole organization",
                    )])),
                },
            };
        }
        match (&self.hotel_pin, requested) {
            (Some(pin), Some(asked)) if pin != asked => {
                Err(Error::Forbidden("this API key is pinned to another hotel".into()))
            }
            (Some(pin), _) => Ok(Some(pin.clone())),
            (None, asked) => Ok(asked.map(str::to_owned)),
        }
    }

    /// Like [`Actor::resolve_hotel`], for endpoints where the hotel is required.
    pub fn require_hotel(&self, requested: Option<&str>) -> Result<String> {
        self.resolve_hotel(requested)?
            .ok_or_else(|| Error::Validation(vec![super::FieldError::field("hotelId", "hotelId is required")]))
    }

    /// Whether a record of `hotel_id` is visible to this caller (records outside a pin answer 404).
    pub fn sees_hotel(&self, hotel_id: Option<&str>) -> bool {
        if let Some(hotels) = self.operator_hotels() {
            // The organization's own records (no hotel) stay visible: they are not one hotel's.
            return hotel_id.is_none_or(|h| hotels.iter().any(|mine| mine == h));
        }
        match (&self.hotel_pin, hotel_id) {
            (None, _) => true,
            (Some(pin), Some(hotel)) => pin == hotel,
            (Some(_), None) => false,
        }
    }
}

/// What an operator may do beyond the scopes their role holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter)]
pub enum Task {
    /// Operators and their roles, API keys, webhooks, the assistant connector, other operators' tokens.
    Administer,
    /// A hotel's own settings: its details and its billing settings.
    ConfigureHotel,
    /// Room types and rooms as things (their names, types, floors), beyond a room's housekeeping status.
    SetUpRooms,
    /// Charging a folio: extras, free charges, fees.
    Charge,
    /// Correcting a posted charge with an allowance.
    Correct,
    /// Refunding a payment.
    Refund,
    /// Cancelling an invoice with a cancellation invoice.
    CancelInvoice,
}

impl Task {
    fn describe(self) -> &'static str {
        match self {
            Task::Administer => "manage operators, roles, API keys, webhooks or the assistant connector",
            Task::ConfigureHotel => "change a hotel's settings",
            Task::SetUpRooms => "set up room types and rooms",
            Task::Charge => "charge a folio",
            Task::Correct => "correct a folio line",
            Task::Refund => "refund a payment",
            Task::CancelInvoice => "cancel an invoice",
        }
    }

    /// Tasks an API key can never do, whatever its scopes: they belong to people.
    fn operators_only(self) -> bool {
        matches!(self, Task::Administer | Task::ConfigureHotel)
    }
}

impl Role {
    /// Whether the role holds `scope` (what an API key with that scope could do).
    pub fn holds(self, scope: Scope) -> bool {
        use Scope::*;
        match self {
            Role::Owner | Role::Manager => true,
            Role::FrontDesk => matches!(
                scope,
                ReservationsRead
                    | ReservationsWrite
                    | GuestsRead
                    | GuestsWrite
                    | RatesRead
                    | RoomsRead
                    | RoomsWrite
                    | FoliosRead
                    | FoliosWrite
                    | PaymentsWrite
                    | InvoicesWrite
            ),
            Role::Housekeeping => matches!(scope, RoomsRead | RoomsWrite),
            Role::Revenue => matches!(scope, RatesRead | RatesWrite | ReservationsRead | RoomsRead),
            Role::Accountant => matches!(
                scope,
                ReservationsRead
                    | GuestsRead
                    | RatesRead
                    | RoomsRead
                    | FoliosRead
                    | FoliosWrite
                    | InvoicesWrite
                    | AuditRead
            ),
        }
    }

    /// Whether the role may do `task`.
    pub fn may(self, task: Task) -> bool {
        match task {
            Task::Administer => self == Role::Owner,
            Task::ConfigureHotel | Task::SetUpRooms | Task::Refund => matches!(self, Role::Owner | Role::Manager),
            Task::Charge => matches!(self, Role::Owner | Role::Manager | Role::FrontDesk),
            Task::Correct | Task::CancelInvoice => matches!(self, Role::Owner | Role::Manager | Role::Accountant),
        }
    }

    fn roles_holding(scope: Scope) -> String {
        Self::named(|role| role.holds(scope))
    }

    fn roles_for(task: Task) -> String {
        Self::named(|role| role.may(task))
    }

    /// The roles that pass `test`, for a message: `Owner or Manager`.
    fn named(test: impl Fn(Role) -> bool) -> String {
        use strum::IntoEnumIterator;
        let names: Vec<&str> = Role::iter().filter(|r| test(*r)).map(Role::label).collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "none".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant() -> Actor {
        Actor {
            organization_id: "org".into(),
            hotel_pin: None,
            credential: Credential::Assistant { operator_id: "op".into(), client_id: "client".into(), hotels: None },
        }
    }

    #[test]
    fn an_assistant_reads_and_writes_nothing() {
        let actor = assistant();
        for scope in Scope::ALL {
            let allowed = actor.require_scope(scope).is_ok();
            assert_eq!(allowed, Scope::DEFAULT.contains(&scope), "{scope:?}");
        }
        assert!(actor.require_operator().is_err(), "an assistant is not an operator");
        assert_eq!(
            crate::model::changes::Writer::for_actor(&actor),
            Writer::Assistant { client_id: "client".into() },
            "what an assistant's sign-in writes is written as the assistant"
        );
    }
}
