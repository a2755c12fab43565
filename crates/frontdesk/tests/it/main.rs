//! The integration tests: one binary, one module per area, the helpers once in [`common`] (the real service on an
//! ephemeral port, on a fresh database of either engine, with `on_both_engines!`). One binary builds and links once
//! instead of once per file. Run an area with `cargo test --test it <area>::`, e.g. `cargo test --test it
//! reservations::`.
//!
//! To add an area: put the file here as `tests/it/<area>.rs` (`git mv tests/<area>.rs tests/it/` keeps its history),
//! add `mod <area>;` below in alphabetical order, drop its `mod common;` line and write `use crate::common::…`
//! instead of `use common::…`. Take `PASSWORD`, `WAIT`, `delivering` and `Browser::sign_in` from `common` rather than
//! declaring them again. An area that grows past about 500 lines becomes a folder, `tests/it/<area>/mod.rs` with the
//! helpers its topics share and a file per topic (e.g. `hardening/overselling.rs`), each registering its own tests
//! with `on_both_engines!`; run one topic with `cargo test --test it <area>::<topic>::`.
//!
//! `tests/metrics.rs` stays a binary of its own: the metrics recorder is global to a process and its tests compare
//! counters before and after, which the other areas' requests would move.
//!
//! A test is one scenario, read top to bottom in the order things happen; the longest (a sweep of hostile requests
//! over every endpoint, an assistant connecting end to end) run past 100 lines on purpose, since splitting them into
//! steps would hide that order. Helpers shared by a scenario's steps live in its area's `mod.rs`.

#[macro_use]
mod common;

mod audit_log;
mod availability;
mod backups;
mod billing;
mod booking_page;
mod catalogue;
mod channels;
mod command_line;
mod crash_safety;
mod dashboard;
mod dashboard_integrations;
mod dashboard_rates;
mod dashboard_setup;
mod export;
mod faults;
mod foundation;
mod front_desk;
mod guest_messages;
mod hardening;
mod invoices;
mod layers;
mod lists_in_id_order;
mod lookups_by_id;
mod mcp;
mod money;
mod native_types;
mod operations;
mod postgres_restart;
mod processes;
mod rate_limits;
mod reservation_counts;
mod reservations;
mod roles;
mod schema;
mod security;
mod webhooks;
