//! Idempotency keys: a request sent again with the key of an earlier one answers what the earlier one made, instead
//! of making it twice; the same key with a different request is refused (409), so a key never hands one caller's
//! result to another request.
//!
//! Keys live in [`Namespace`]s: the keys of one way in (the booking page's form, the API's `book-reservation`)
//! never answer another, whoever chooses them. Within a namespace a key belongs to a scope (a hotel, an
//! organization: whatever the namespace's requests are about). A new way in gets its own namespace: one variant
//! and its name below, nothing else.
//!
//! Use: digest the request ([`digest`]), ask [`replay`] before doing anything, and [`remember`] the result in the
//! transaction that makes it. When `remember` finds the key taken meanwhile (another process's request with the
//! same key committed first; PostgreSQL aborts the transaction), drop the transaction and ask [`replay`] again.

use super::{now, secrets, Error, Result};
use crate::domain::change::Change;
use crate::store::{self, idempotency as rows};

/// Which way in a key was sent to; keys of different namespaces never meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// The public booking page's guest form: keys the page issued ([`crate::domain::availability::booking_page`]).
    BookingPage,
    /// `POST /api/hotels/{hotelId}/book-reservation` with an `Idempotency-Key` header.
    BookReservation,
    /// `POST /api/reservations` with an `Idempotency-Key` header; keys are the caller's own (scope: the API key or
    /// the operator).
    Reservations,
    /// The dashboard's new-reservation form: the token the form was given when it was shown (scope: the operator).
    DeskReservation,
    /// The writes of `/api/folios/{folioId}/…` (charges, allowances, payments, refunds, fees) with an
    /// `Idempotency-Key` header; keys are the caller's own.
    Folios,
    Invoices,
}

impl Namespace {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::BookingPage => "booking-page",
            Namespace::BookReservation => "book-reservation",
            Namespace::Reservations => "reservations",
            Namespace::DeskReservation => "desk-reservation",
            Namespace::Folios => "folios",
            Namespace::Invoices => "invoices",
        }
    }
}

/// A key as a request sent it, and where it belongs.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    pub namespace: Namespace,
    /// The organization the scope belongs to (its keys go when it does).
    pub organization_id: &'a str,
    /// What the namespace keys within, e.g. the hotel id.
    pub scope: &'a str,
    pub key: &'a str,
}

impl Key<'_> {
    fn stored(&self) -> rows::KeyRef<'_> {
        rows::KeyRef { namespace: self.namespace.as_str(), scope: self.scope, key: self.key }
    }
}

/// The digest of a request's content, from its parts in a fixed order (the parts are separated, so that moving text
/// from one part to the next changes the digest).
pub fn digest(parts: &[&str]) -> String {
    secrets::digest(&parts.join("\u{1f}"))
}

/// What a key has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Never used.
    New,
    /// Used by the same request, which made this (its id).
    Same(String),
    /// Used by a different request.
    Different,
}

pub async fn seen(conn: &mut store::Conn, key: &Key<'_>, request_digest: &str) -> Result<Seen> {
    Ok(match rows::find(conn, key.stored()).await? {
        Some((stored, result_id)) if secrets::digests_match(&stored, request_digest) => Seen::Same(result_id),
        Some(_) => Seen::Different,
        None => Seen::New,
    })
}

/// What `key` already made: the id of the first request's result when this request is the same (same digest),
/// `None` when the key is new, 409 when it was used for a different request.
pub async fn replay(conn: &mut store::Conn, key: &Key<'_>, request_digest: &str) -> Result<Option<String>> {
    match seen(conn, key, request_digest).await? {
        Seen::Same(result_id) => Ok(Some(result_id)),
        Seen::Different => Err(Error::Conflict("this idempotency key was used for a different request".into())),
        Seen::New => Ok(None),
    }
}

/// Whether [`remember`] stored the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remembered {
    Stored,
    /// Another request with the same key committed first: drop the transaction and [`replay`].
    TakenMeanwhile,
}

/// The answer to a request whose [`remember`] found its key [`Remembered::TakenMeanwhile`]: what the request that
/// took it made (read after that request committed), as [`replay`] answers it.
pub async fn replay_after_race(db: &crate::store::Db, key: &Key<'_>, request_digest: &str) -> Result<String> {
    replay(&mut *db.read().await?, key, request_digest)
        .await?
        .ok_or_else(|| Error::Conflict("the idempotency key is in use by another request; try again".into()))
}

/// An idempotency key as a client sent it: 1 to 200 visible ASCII characters (what an HTTP header can carry
/// unchanged), else a message for the caller.
pub fn check_key(key: &str) -> Result<(), &'static str> {
    if (1..=200).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(())
    } else {
        Err("must be 1 to 200 visible ASCII characters")
    }
}

/// The scope of a caller's own keys: the API key, the operator, or the service.
pub fn caller_scope(actor: &super::Actor) -> String {
    match &actor.credential {
        super::access::Credential::ApiKey { key_id, .. } => format!("api-key:{key_id}"),
        super::access::Credential::Operator { operator_id, .. } => format!("operator:{operator_id}"),
        super::access::Credential::Assistant { client_id, .. } => format!("assistant:{client_id}"),
        // Stored in idempotency rows: the same text for every writer the service acts as.
        super::access::Credential::System(_) => "system".to_string(),
    }
}

/// Remembers what the request with `key` made, in the transaction that makes it.
pub async fn remember(tx: &mut Change, key: &Key<'_>, request_digest: &str, result_id: &str) -> Result<Remembered> {
    match rows::insert(tx.conn(), key.stored(), key.organization_id, request_digest, result_id, now()).await {
        Ok(()) => Ok(Remembered::Stored),
        Err(err) if err.kind() == store::ErrorKind::Taken => Ok(Remembered::TakenMeanwhile),
        Err(err) => Err(err.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_keep_the_parts_apart() {
        assert_eq!(digest(&["a", "b"]), digest(&["a", "b"]));
        assert_ne!(digest(&["a", "b"]), digest(&["ab", ""]));
        assert_ne!(digest(&["a", "b"]), digest(&["b", "a"]));
        assert_ne!(digest(&["a", "b"]), digest(&["a", "b", ""]));
    }

    #[test]
    fn namespaces_have_distinct_stored_names() {
        let names =
            [Namespace::BookingPage, Namespace::BookReservation, Namespace::Reservations, Namespace::DeskReservation]
                .map(Namespace::as_str);
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }

    #[test]
    fn keys_are_visible_ascii_of_1_to_200_characters() {
        assert!(check_key("a").is_ok() && check_key(&"k".repeat(200)).is_ok());
        for bad in ["", "with space", "tab\t", "é", &"k".repeat(201)] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
    }
}
