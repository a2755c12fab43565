//! One module per resource, each with a `router()` that carries its OpenAPI description.

pub mod api_keys;
pub mod audit_log;
pub mod auth;
pub mod availability;
pub mod billing;
pub mod daily_rates;
pub mod folios;
pub mod guests;
pub mod health;
pub mod hotels;
pub mod invoices;
pub mod oauth;
pub mod operators;
pub mod rate_plans;
pub mod reports;
pub mod reservations;
pub mod room_types;
pub mod rooms;
pub mod webhook_subscriptions;
