//! Background work that `frontdesk serve` runs beside the HTTP server. The jobs that run in rounds (all but the
//! dispatchers) are each a [`periodic::Periodic`]: the file says what a round does and how often.
//!
//! * [`webhooks`]: the dispatcher that delivers the outbox's events to webhook subscribers.
//! * [`mail`]: the dispatcher that sends guest e-mails when they are due.
//! * [`counts`]: folds the reservation count changes into their counters (the lists' exact totals).
//! * [`end_of_day`]: closes the hotels' business days (posting the nights that passed, marking no-shows).
//! * [`audit_filing`]: files the audit log's newest entries (unindexed on SQLite) into the log, in batches.
//! * [`audit_retention`]: deletes the audit log's entries whose retention has ended.

pub mod audit_filing;
pub mod audit_retention;
pub mod counts;
pub mod end_of_day;
pub mod mail;
pub mod periodic;
pub mod webhooks;
