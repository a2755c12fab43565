//! Hotels and their addresses.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::{CurrencyCode, TimezoneName};

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
    pub region: Option<String>,
    /// ISO 3166-1 alpha-2 country code.
    pub country: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hotel {
    pub id: String,
    pub name: String,
    /// IANA time zone, e.g. `Europe/Lisbon`.
    #[schema(value_type = TimezoneName)]
    pub timezone: String,
    /// ISO 4217 code; prices of the hotel are integers in its minor units.
    #[schema(value_type = CurrencyCode)]
    pub currency: String,
    /// Local check-in time `HH:MM`.
    pub check_in_time: String,
    /// Local check-out time `HH:MM`.
    pub check_out_time: String,
    #[serde(flatten)]
    pub address: Address,
    /// Whether the public availability and booking endpoints, and the booking page `/book/{id}`, serve this hotel.
    pub public_booking: bool,
    /// The sites that may show the booking page in a frame (its `frame-ancestors`): origins such as
    /// `https://www.example-hotel.com`. Empty: no site may.
    #[schema(value_type = Vec<EmbedOrigin>)]
    pub booking_embed_origins: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An origin that may frame a hotel's booking page, e.g. `https://www.example-hotel.com` (the OpenAPI schema).
pub struct EmbedOrigin;

impl utoipa::PartialSchema for EmbedOrigin {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("A site that may show the booking page in a frame: scheme, host and port, no path."))
            .pattern(Some(EMBED_ORIGIN_PATTERN))
            .max_length(Some(200))
            .examples(["https://www.example-hotel.com"])
            .build()
            .into()
    }
}

impl ToSchema for EmbedOrigin {}

/// The form of an embedding origin, as the OpenAPI document states it: `https://` and a lower-case host name (its
/// last label starting with a letter), or `http(s)://` and `localhost` or `127.0.0.1` (development); an optional
/// port, an optional final `/`.
pub const EMBED_ORIGIN_PATTERN: &str = r"^(https://([a-z0-9]+(-[a-z0-9]+)*\.)*[a-z][a-z0-9]*(-[a-z0-9]+)*|https?://(localhost|127\.0\.0\.1))(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?/?$";
