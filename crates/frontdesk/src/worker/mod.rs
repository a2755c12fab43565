//! Background work that `frontdesk serve` runs beside the HTTP server.
//!
//! * [`webhooks`]: the dispatcher that delivers the outbox's events to webhook subscribers.
//! * [`mail`]: the dispatcher that sends guest e-mails when they are due.
//! * [`counts`]: folds the reservation count changes into their counters (the lists' exact totals).

pub mod counts;
pub mod mail;
pub mod webhooks;
