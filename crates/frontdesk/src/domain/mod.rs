//! Business rules, independent of HTTP and of the database engine.
//!
//! Each module owns one area: its input types (`XIn`, `XPatch`), validation, tenancy rules, the rules about its
//! records (as `impl` blocks on the records of [`crate::model`], which it re-exports at its own paths) and the
//! transactions it runs through [`crate::store`]. Errors are [`Error`], which the HTTP layer turns into
//! RFC 9457 problem documents.

pub mod access;
pub mod api_keys;
pub mod assistant;
pub mod attempts;
pub mod audit;
pub mod availability;
pub mod booking_requests;
pub mod change;
pub mod connected_assistants;
pub mod daily_rates;
pub mod events;
pub mod finance;
pub mod front_office;
pub mod guest_messages;
pub mod guests;
pub mod hotels;
pub mod housekeeping;
pub mod idempotency;
pub mod identity;
pub mod listing;
pub mod money;
pub mod oauth;
pub mod operator_tokens;
pub mod rate_calendar;
pub mod rate_plans;
pub mod reservations;
pub mod room_types;
pub mod rooms;
pub mod secrets;
pub mod service_keys;
pub mod validate;
pub mod webhooks;

// The records moved below both layers (`crate::model`); their old paths stay, so callers change nothing.
pub use crate::model::{codes, json_time};

use crate::store::{self, ErrorKind};
use anyhow::Context;
use serde::Serialize;
use utoipa::ToSchema;

pub use access::{Actor, Scope};

/// One reason an input was refused: the field (a JSON pointer-like path) or batch index, and a message.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FieldError {
    /// The offending field, e.g. `name` or `values[3].price`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The offending entry of a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub message: String,
}

impl FieldError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: Some(field.into()), index: None, message: message.into() }
    }
}

/// Everything that can go wrong in the domain, by kind; each kind has exactly one HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    /// The record does not exist for this caller (missing, another organization's, or outside the key's hotel).
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{0}")]
    Conflict(String),
    /// The input is well-formed JSON but breaks a rule; each offending field is listed.
    #[error("the request is invalid")]
    Validation(Vec<FieldError>),
    /// The input is valid, but what it names cannot be done as things stand (a folio that cannot be invoiced yet);
    /// every reason is listed.
    #[error("the request cannot be carried out")]
    Unprocessable(Vec<FieldError>),
    #[error("{0}")]
    BadRequest(String),
    /// The caller's rate limit is spent.
    #[error("{0}")]
    RateLimited(String),
    /// Too many attempts of one kind (failed sign-ins, booking requests): the next may be made after
    /// `retry_after_secs`.
    #[error("{message}")]
    TooManyAttempts { message: String, retry_after_secs: u64 },
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl From<store::Error> for Error {
    /// A database error the request itself caused is a conflict, not a failure of the service. Every write checks
    /// what it names before writing, so a foreign-key or unique violation that still reaches here means another
    /// request changed the same records in between (a referenced record deleted, the same name taken), and a
    /// deadlock or serialization failure that PostgreSQL broke in this request's disfavour: nothing was written, and
    /// the caller may retry. Writes with a more precise answer ([`in_use`], [`store_conflict`]) map the error first.
    fn from(err: store::Error) -> Self {
        match err.kind() {
            ErrorKind::StillReferenced => {
                tracing::info!(error = %err, "a write lost a race: a record it refers to changed meanwhile");
                Error::Conflict("a record this request refers to was changed or deleted meanwhile; try again".into())
            }
            ErrorKind::Taken => {
                tracing::info!(error = %err, "a write lost a race: the same record was created meanwhile");
                Error::Conflict("another request created the same record meanwhile; try again".into())
            }
            ErrorKind::Collided => {
                tracing::warn!(error = %err, "a transaction was given up for a concurrent one");
                Error::Conflict("the request collided with a concurrent one and changed nothing; try again".into())
            }
            ErrorKind::Unavailable | ErrorKind::Other => {
                Error::Internal(anyhow::Error::new(err).context("database error"))
            }
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Brings a database up to this release: the store's migrations ([`store::Db::migrate`]), then what they added that
/// only the domain's rules can fill (the references of reservations written before references existed).
pub async fn migrate(db: &store::Db) -> anyhow::Result<()> {
    db.migrate().await?;
    reservations::reference::fill_missing(db).await.context("giving older reservations their references")
}

/// A new opaque identifier ([`store::new_id`]).
pub use crate::store::new_id;

tokio::task_local! {
    /// The instant the writes of a task happen at, when it is not now: see [`as_of`].
    static AS_OF: chrono::DateTime<chrono::Utc>;
}

/// The current instant, truncated to the microsecond precision that is stored. Inside [`as_of`], that instant.
pub fn now() -> chrono::DateTime<chrono::Utc> {
    use chrono::{DurationRound, TimeDelta};
    let now = AS_OF.try_with(|at| *at).unwrap_or_else(|_| chrono::Utc::now());
    now.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(now)
}

/// Runs `work` as if it were `at`: every rule that reads the clock (the front desk's "today", the stamps written)
/// sees `at`. For recording history as it happened (the demo's past stays are checked in on their arrival day and
/// out on their departure day, through the same rules as the desk); requests never run under it.
pub async fn as_of<F: std::future::Future>(at: chrono::DateTime<chrono::Utc>, work: F) -> F::Output {
    AS_OF.scope(at, work).await
}

/// Deserializes a field of a partial update that may be set to `null`: left out is `None`, `null` is
/// `Some(None)`. Use with `#[serde(default, deserialize_with = "nullable")]`.
pub fn nullable<'de, D, T>(deserializer: D) -> std::result::Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::Deserialize;
    Ok(Some(Option::<T>::deserialize(deserializer)?))
}

/// Deserializes a field of a partial update that cannot be cleared: left out is `None`, and `null` is refused
/// (400 naming the field) rather than read as "keep the value". Use with
/// `#[serde(default, deserialize_with = "not_null")]` and `#[schema(nullable = false)]`, so that the OpenAPI
/// document says the same.
pub fn not_null<'de, D, T>(deserializer: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::de::Error as _;
    use serde::Deserialize;
    match Option::<T>::deserialize(deserializer)? {
        Some(value) => Ok(Some(value)),
        None => Err(D::Error::custom("must not be null (leave the field out to keep its value)")),
    }
}

/// Maps a foreign-key violation on delete to 409 with `message`; any other error stays what it is.
pub fn in_use(err: store::Error, message: &str) -> Error {
    if err.kind() == ErrorKind::StillReferenced {
        Error::Conflict(message.to_string())
    } else {
        err.into()
    }
}

/// Maps a unique-constraint violation to 409 with `message`; any other error stays what it is.
pub fn store_conflict(err: store::Error, message: &str) -> Error {
    if err.kind() == ErrorKind::Taken {
        Error::Conflict(message.to_string())
    } else {
        err.into()
    }
}

#[cfg(test)]
mod tests {
    /// The enums' names are derived twice, by serde (the API, the OpenAPI document) and by strum (`as_str`, `parse`:
    /// what the database stores and forms post): both must spell every variant the same way.
    #[test]
    fn serde_and_strum_spell_every_variant_alike() {
        fn check<T: serde::Serialize + Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            as_str: fn(T) -> &'static str,
            parse: fn(&str) -> Option<T>,
        ) {
            for &v in all {
                assert_eq!(serde_json::to_value(v).unwrap(), as_str(v), "{v:?}");
                assert_eq!(parse(as_str(v)), Some(v));
            }
        }
        use super::reservations::{ReservationStatus, RoomStatus, Source};
        check(&ReservationStatus::ALL, ReservationStatus::as_str, ReservationStatus::parse);
        check(
            &[RoomStatus::Pending, RoomStatus::Confirmed, RoomStatus::Cancelled],
            RoomStatus::as_str,
            RoomStatus::parse,
        );
        check(&[Source::Api, Source::Dashboard, Source::BookingPage, Source::Channel], Source::as_str, Source::parse);
        check(
            &super::rooms::HousekeepingStatus::ALL,
            super::rooms::HousekeepingStatus::as_str,
            super::rooms::HousekeepingStatus::parse,
        );
        check(&super::events::EventKind::ALL, super::events::EventKind::as_str, super::events::EventKind::parse);
        check(&super::Scope::ALL, super::Scope::as_str, super::Scope::parse);
        // StaySort is not serialized: its names are the dashboard's query values.
        use super::front_office::StaySort;
        let names: Vec<&str> = StaySort::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["checkIn", "checkOut", "created"]);
        assert!(StaySort::ALL.iter().all(|&s| StaySort::parse(s.as_str()) == Some(s)));
        assert_eq!(StaySort::parse("CheckIn"), None);
    }
}
