//! Who is asking, and what they may do: scopes, organization tenancy and hotel pins.

use super::{Error, Result};
pub use crate::model::access::Scope;
use crate::model::changes::Writer;

impl Scope {
    /// What a new key gets when it is created without scopes: read-only access to everything.
    pub const DEFAULT: [Scope; 4] = [Scope::ReservationsRead, Scope::GuestsRead, Scope::RatesRead, Scope::RoomsRead];
}

/// How the caller authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An operator's dashboard session token.
    Operator { operator_id: String, token_id: String },
    /// An API key with its scopes.
    ApiKey { key_id: String, scopes: Vec<Scope>, rate_limit_per_minute: Option<u32> },
    /// An AI assistant at the assistant endpoint, signed in by an operator (OAuth client `client_id`): it reads
    /// what that operator may read, and writes nothing.
    Assistant { operator_id: String, client_id: String },
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

    /// 403 unless the caller holds `scope` (operators hold all).
    pub fn require_scope(&self, scope: Scope) -> Result<()> {
        match &self.credential {
            Credential::Operator { .. } | Credential::System(_) => Ok(()),
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

    /// The hotel a request is about. A pinned key may leave it out (its pin is used) and may not name another
    /// hotel (403). An unpinned caller gets what it asked for.
    pub fn resolve_hotel(&self, requested: Option<&str>) -> Result<Option<String>> {
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
        match (&self.hotel_pin, hotel_id) {
            (None, _) => true,
            (Some(pin), Some(hotel)) => pin == hotel,
            (Some(_), None) => false,
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
            credential: Credential::Assistant { operator_id: "op".into(), client_id: "client".into() },
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
