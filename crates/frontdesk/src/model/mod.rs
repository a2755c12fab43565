//! The records: what the API, the dashboard and the store all speak of (a reservation, a room, a scope), with
//! their JSON and OpenAPI shapes and their text forms (`as_str`, `parse`), and nothing else.
//!
//! They sit below both [`crate::domain`] and [`crate::store`], so that the store can read and write them without
//! naming the domain, and the domain can call the store without the store calling back: dependencies run one way,
//! `domain -> store -> model`. This module imports nothing of the crate. The rules about a record (which status
//! moves exist, whether a room can be sold, what a hotel's "today" is) stay in the domain as `impl` blocks on these
//! types, and each domain module re-exports its records at their old paths.

pub mod access;
pub mod api_keys;
pub mod audit;
pub mod billing;
pub mod changes;
pub mod channels;
pub mod codes;
pub mod daily_rates;
pub mod events;
pub mod folios;
pub mod guests;
pub mod hotels;
pub mod identity;
pub mod invoices;
pub mod json_time;
pub mod limits;
pub mod rate_plans;
pub mod reservations;
pub mod room_types;
pub mod rooms;
pub mod webhooks;
