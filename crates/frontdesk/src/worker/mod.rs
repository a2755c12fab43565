//! Background work that `frontdesk serve` runs beside the HTTP server.
//!
//! * [`webhooks`]: the dispatcher that delivers the outbox's events to webhook subscribers.
//! * [`mail`]: the dispatcher that sends guest e-mails when they are due.

pub mod mail;
pub mod webhooks;
