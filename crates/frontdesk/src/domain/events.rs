//! Webhook events: the kinds the contract names. A write records its event through the one door for writes
//! ([`super::change::Change`]), inside the write's own transaction (the outbox), so an event is never lost nor sent
//! for a change that rolled back.

pub use crate::model::events::EventKind;
