//! Channex (docs.channex.io; research in docs/channex-api-notes.md): a REST/JSON channel manager.
//!
//! * [`client`]: the HTTP calls, with the `user-api-key` header, and their answers read as documented (`data`,
//!   `meta` with its warnings inside a 200, `errors`; the task id of each ARI request).
//! * [`mapping`]: pure functions from our availability and rates to Channex's `POST /availability` and
//!   `POST /restrictions` bodies, with repeated values collapsed into date ranges.
//! * [`worker`]: the dispatcher that sends a hotel's recorded changes, coalesced, within Channex's limits, and
//!   polls the booking revision feed.
//! * [`revisions`]: booking revisions read from Channex and applied as reservations, once each, then acknowledged.
//! * [`setup`]: the property's room types and rate plans read from Channex or created there, and the booking
//!   webhook registered, so that connecting needs no ids copied by hand.
//! * [`webhook`]: `POST /channels/channex/{hotelId}`, Channex's booking webhook (a trigger to read the revision).

pub mod client;
pub mod mapping;
pub mod revisions;
pub mod setup;
pub mod webhook;
pub mod worker;

/// The channel's name in a connection.
pub const CHANNEL: &str = "channex";
