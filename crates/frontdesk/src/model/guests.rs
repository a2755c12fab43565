//! Guests.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Guest {
    pub id: String,
    /// The hotel the guest is associated with; `null`: the whole organization.
    pub hotel_id: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    /// The postal address (with `country`): an invoice to the guest is addressed to it.
    pub street: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: Option<String>,
    /// BCP 47 language tag, e.g. `pt-PT`.
    pub language: Option<String>,
    pub notes: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Guest {
    /// The guest with their name and nothing else of them: no contact details, address, language or notes.
    pub fn name_only(self) -> Guest {
        Guest {
            email: None,
            phone: None,
            street: None,
            postal_code: None,
            city: None,
            country: None,
            language: None,
            notes: None,
            ..self
        }
    }
}
