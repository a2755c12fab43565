//! Background work that `frontdesk serve` runs beside the HTTP server.
//!
//! * [`webhooks`]: the dispatcher that delivers the outbox's events to webhook subscribers.

pub mod webhooks;
