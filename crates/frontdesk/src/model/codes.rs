//! The code lists that some fields take (IANA time zones, ISO 4217 currencies), described in the OpenAPI document
//! as enumerations so that integrators and their tooling know every accepted value.

use iso_currency::IntoEnumIterator;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// An IANA time zone name, e.g. `Europe/Lisbon`.
pub struct TimezoneName;

impl PartialSchema for TimezoneName {
    fn schema() -> RefOr<Schema> {
        let names = chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name());
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("An IANA time zone name."))
            .enum_values(Some(names))
            .examples(["Europe/Lisbon"])
            .build()
            .into()
    }
}

impl ToSchema for TimezoneName {}

/// An ISO 4217 currency code, e.g. `EUR`.
pub struct CurrencyCode;

impl PartialSchema for CurrencyCode {
    fn schema() -> RefOr<Schema> {
        let mut codes: Vec<String> = iso_currency::Currency::iter().map(|c| c.code().to_string()).collect();
        codes.sort();
        codes.dedup();
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("An ISO 4217 currency code; amounts are integers in its minor units."))
            .enum_values(Some(codes))
            .examples(["EUR"])
            .build()
            .into()
    }
}

impl ToSchema for CurrencyCode {}

pub fn is_currency(code: &str) -> bool {
    iso_currency::Currency::from_code(code).is_some()
}

pub fn is_timezone(name: &str) -> bool {
    name.parse::<chrono_tz::Tz>().is_ok()
}
