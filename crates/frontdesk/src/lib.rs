//! Frontdesk: a hotel operations REST service.
//!
//! # Architecture
//!
//! The crate is layered so that a change has one obvious home:
//!
//! * [`app`]: the application state every handler reaches ([`app::AppState`]) and the request helpers the surfaces
//!   share (client address, rate limits). Every surface may import it; it names none of them (it builds on
//!   [`domain`], [`store`] and [`config`]).
//! * [`router`]: the whole application assembled in one place: the REST, OAuth, assistant and web routers, the
//!   answer to an unknown path, the middleware, serving. Above every surface, so no surface names another.
//! * [`http`]: the REST API. One `router()` per resource file under `http/routes`, each handler thin:
//!   parse (extractors in `http/extract.rs`), authorize ([`http::auth::Principal`]), call the domain, shape the
//!   answer. Every error leaves through [`domain::Error`]'s `IntoResponse` as RFC 9457 problem JSON.
//! * [`domain`]: business rules (validation, tenancy, state moves, secrets). It knows nothing of HTTP and is written
//!   once for both database engines. Every write goes through one door, [`domain::change::Change`]: it begins with
//!   who makes the change ([`model::changes::Writer`]), holds the write transaction, and is told what was written,
//!   record by record; the webhook event follows from that, in the same transaction.
//! * [`model`]: the records themselves (a reservation, a room, a scope, an event kind): fields, JSON and OpenAPI
//!   shape, text forms. Below both [`domain`] and [`store`], importing nothing of the crate; the rules about a
//!   record are `impl` blocks in [`domain`].
//! * [`store`]: data access. All SQL lives here, written once in the portable subset that SQLite and PostgreSQL share
//!   (see the module docs for the rules that keep it portable), run through each engine's own sqlx driver
//!   ([`store::Conn`], [`store::query`]). A write's transaction is a [`store::WriteTx`], begun only by the door
//!   (and by the store's own writes that change no record); it records webhook events in the outbox. Where storage is going (native types) is `docs/storage.md`.
//! * [`web`]: the web pages: the operator dashboard, the public booking page and the assistant endpoint's sign-in
//!   and consent pages; askama templates, handlers as thin as the REST ones over the same domain functions.
//! * [`mcp`]: the read-only assistant endpoint (an MCP server) and its tools; its bearer check is `http/mcp.rs`.
//! * [`worker`]: background work beside the HTTP server: the webhook dispatcher, which delivers the outbox; the
//!   guest e-mail dispatcher; the folder of the reservation count changes (the lists' exact totals).
//! * [`operations`]: what an operator runs beside the service: `check`, backup and restore, export.
//! * [`cli`] and [`config`]: the `frontdesk` command (`serve`, `migrate`, `admin …`) and its configuration.
//! * [`demo`]: the demo data of `frontdesk serve --demo`.
//! * [`documents`]: documents made for people outside the web pages (an issued invoice as a PDF), from
//!   [`model`]'s records and [`domain::money`] only.
//! * [`metrics`]: `GET /metrics` in the Prometheus text format, and the calls that record what it shows.
//!
//! Dependencies run one way: [`router`] and [`cli`] sit above the surfaces ([`http`], [`web`], [`mcp`], [`worker`]),
//! which import [`app`], [`domain`] and [`store`]; [`domain`] calls [`store`], and both speak [`model`]'s records;
//! [`store`] never names [`domain`] and [`model`] names nothing (`tests/it/layers.rs` reads the source to hold this,
//! that no write begins outside the door, and that no files import each other in a loop). Among the surfaces only
//! `http/mcp.rs`, the bearer check, names [`mcp`] (to hand it the caller); nothing names [`http`] or [`web`] but
//! [`router`] and [`cli`].

pub mod app;
pub mod channels;
pub mod cli;
pub mod config;
pub mod demo;
pub mod documents;
pub mod domain;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod model;
pub mod operations;
pub mod router;
pub mod store;
pub mod web;
pub mod worker;
