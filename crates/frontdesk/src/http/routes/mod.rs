//! One module per resource, each with a `router()` that carries its OpenAPI description.

pub mod api_keys;
pub mod auth;
pub mod health;
pub mod hotels;
