//! Guests of an organization, optionally associated with one hotel.

use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::access::{Actor, Scope};
use super::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use super::validate::{clean, Checks};
use super::{hotels, new_id, not_null, now, nullable, Error, Result};
use crate::domain::change::{Change, Record, RecordKind};
pub use crate::model::guests::Guest;
use crate::store::{self, Db};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuestIn {
    /// A key pinned to a hotel associates the guest with its hotel.
    pub hotel_id: Option<String>,
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub first_name: String,
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub last_name: String,
    /// An e-mail address (the pattern is what the service accepts).
    #[schema(
        max_length = 254,
        pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f.][^@\s\x00-\x1f\x7f-\x9f]*\.[^@\s\x00-\x1f\x7f-\x9f]*[^@\s\x00-\x1f\x7f-\x9f.]$"
    )]
    pub email: Option<String>,
    #[schema(max_length = 50)]
    pub phone: Option<String>,
    /// The postal address, for invoices to the guest (an extension).
    #[serde(default)]
    #[schema(max_length = 200)]
    pub street: Option<String>,
    #[serde(default)]
    #[schema(max_length = 20)]
    pub postal_code: Option<String>,
    #[serde(default)]
    #[schema(max_length = 100)]
    pub city: Option<String>,
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    #[schema(pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$", max_length = 35)]
    pub language: Option<String>,
    #[schema(max_length = 5000)]
    pub notes: Option<String>,
}

/// Changes to a guest; fields left out keep their value, `null` clears an optional one.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuestPatch {
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub hotel_id: Option<Option<String>>,
    #[schema(nullable = false, min_length = 1, max_length = 100, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub first_name: Option<String>,
    #[schema(nullable = false, min_length = 1, max_length = 100, pattern = r"\S")]
    #[serde(default, deserialize_with = "not_null")]
    pub last_name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 254, pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f.][^@\s\x00-\x1f\x7f-\x9f]*\.[^@\s\x00-\x1f\x7f-\x9f]*[^@\s\x00-\x1f\x7f-\x9f.]$")]
    pub email: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 50)]
    pub phone: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 200)]
    pub street: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 20)]
    pub postal_code: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 100)]
    pub city: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, pattern = "^[A-Z]{2}$")]
    pub country: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$", max_length = 35)]
    pub language: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 5000)]
    pub notes: Option<Option<String>>,
}

/// The guest filters of `GET /api/guests`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct GuestFilter {
    /// Only guests of this hotel.
    pub hotel_id: Option<String>,
    /// Only guests with this e-mail (case-insensitive, exact).
    pub email: Option<String>,
    /// The field to sort by (default `id`, which is creation order).
    #[param(pattern = "^(id|hotelId|firstName|lastName|email|phone|country|language|createdAt|updatedAt)$")]
    pub sort_field: Option<String>,
    /// Comma-separated field names: answer only these fields of each guest.
    #[param(
        pattern = "^(id|hotelId|firstName|lastName|email|phone|street|postalCode|city|country|language|notes|createdAt|updatedAt)(,(id|hotelId|firstName|lastName|email|phone|street|postalCode|city|country|language|notes|createdAt|updatedAt))*$"
    )]
    pub fields: Option<String>,
}

pub const VOCABULARY: Vocabulary = Vocabulary {
    sortable: &[
        ("id", "id"),
        ("hotelId", "hotel_id"),
        ("firstName", "first_name"),
        ("lastName", "last_name"),
        ("email", "email_normalized"),
        ("phone", "phone"),
        ("country", "country"),
        ("language", "language"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    ],
    fields: &[
        "id",
        "hotelId",
        "firstName",
        "lastName",
        "email",
        "phone",
        "street",
        "postalCode",
        "city",
        "country",
        "language",
        "notes",
        "createdAt",
        "updatedAt",
    ],
};

fn validate(g: &Guest) -> Result<()> {
    let mut c = Checks::new();
    c.line("firstName", &g.first_name, 100);
    c.line("lastName", &g.last_name, 100);
    if let Some(email) = &g.email {
        c.email("email", email);
    }
    c.opt_line("phone", g.phone.as_deref(), 50);
    c.opt_line("street", g.street.as_deref(), 200);
    c.opt_line("postalCode", g.postal_code.as_deref(), 20);
    c.opt_line("city", g.city.as_deref(), 100);
    if let Some(country) = &g.country {
        if country.len() != 2 || !country.chars().all(|ch| ch.is_ascii_uppercase()) {
            c.fail("country", "must be an ISO 3166-1 alpha-2 code such as PT");
        }
    }
    if let Some(language) = &g.language {
        if !is_language_tag(language) {
            c.fail("language", "must be a BCP 47 language tag such as pt-PT");
        }
    }
    c.opt_text("notes", g.notes.as_deref(), 5000);
    c.finish()
}

/// An optional line of text, trimmed; empty as none.
fn text(value: Option<String>) -> Option<String> {
    value.map(|v| clean(&v)).filter(|v| !v.is_empty())
}

/// A BCP 47 language tag as guests' records take it (`pt`, `pt-PT`).
pub fn is_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let primary = parts.next().unwrap_or_default();
    tag.len() <= 35
        && (2..=3).contains(&primary.len())
        && primary.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A guest the actor may see, or 404.
pub async fn visible(conn: &mut store::Conn, actor: &Actor, id: &str) -> Result<Guest> {
    store::guests::get(conn, &actor.organization_id, id)
        .await?
        .filter(|g| actor.sees_hotel(g.hotel_id.as_deref()))
        .ok_or(Error::NotFound("guest"))
}

pub async fn list(db: &Db, actor: &Actor, mut filter: GuestFilter, params: ListParams) -> Result<Listing<Guest>> {
    actor.require_scope(Scope::GuestsRead)?;
    let shape = Shape { sort_field: filter.sort_field.as_deref(), fields: filter.fields.as_deref() };
    let page = params.validate(shape, &VOCABULARY)?;
    filter.hotel_id = hotels::optional_filter(&mut *db.read().await?, actor, filter.hotel_id.as_deref()).await?;
    let by = store::guests::GuestsWhere { hotel_id: filter.hotel_id.as_deref(), email: filter.email.as_deref() };
    let total = store::guests::count(db, &actor.organization_id, by, &page).await?;
    let items = store::guests::list(db, &actor.organization_id, by, &page).await?.map_err(Error::from).boxed();
    Ok(Listing { total, items: ListItems::Streamed(items), projection: page.projection })
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<Guest> {
    actor.require_scope(Scope::GuestsRead)?;
    visible(&mut *db.read().await?, actor, id).await
}

/// Other guests of the guest's hotel with the same e-mail (at most five): a hint for staff that a booking request,
/// which always brings a guest of its own as typed, may be from someone the hotel knows. Never guests of another
/// hotel, and only for a caller who may read guests.
pub async fn same_email_in_hotel(db: &Db, actor: &Actor, guest: &Guest) -> Result<Vec<Guest>> {
    actor.require_scope(Scope::GuestsRead)?;
    let (Some(hotel_id), Some(email)) = (&guest.hotel_id, &guest.email) else { return Ok(Vec::new()) };
    if !actor.sees_hotel(Some(hotel_id)) {
        return Ok(Vec::new());
    }
    let mut conn = db.read().await?;
    Ok(store::guests::with_email_in_hotel(&mut conn, &actor.organization_id, hotel_id, email, &guest.id, 5).await?)
}

/// Inserts a guest within a write that is already under way (the booking request creates its guest this way).
pub async fn insert(tx: &mut Change, actor: &Actor, input: GuestIn) -> Result<Guest> {
    let hotel_id = match actor.resolve_hotel(input.hotel_id.as_deref())? {
        Some(hotel_id) => Some(hotels::require_named(tx.conn(), actor, Some(&hotel_id)).await?.id),
        None => None,
    };
    let at = now();
    let guest = Guest {
        id: new_id(),
        hotel_id,
        first_name: clean(&input.first_name),
        last_name: clean(&input.last_name),
        email: input.email.map(|e| clean(&e)),
        phone: input.phone,
        street: text(input.street),
        postal_code: text(input.postal_code),
        city: text(input.city),
        country: input.country,
        language: input.language,
        notes: input.notes,
        created_at: at,
        updated_at: at,
    };
    validate(&guest)?;
    store::guests::insert(tx.conn(), &actor.organization_id, &guest).await?;
    tx.created(&actor.organization_id, &guest).await?;
    Ok(guest)
}

pub async fn create(db: &Db, actor: &Actor, input: GuestIn) -> Result<Guest> {
    actor.require_scope(Scope::GuestsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let guest = insert(&mut tx, actor, input).await?;
    tx.commit().await?;
    Ok(guest)
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: GuestPatch) -> Result<Guest> {
    actor.require_scope(Scope::GuestsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let g = update_within(&mut tx, actor, id, patch).await?;
    tx.commit().await?;
    Ok(g)
}

/// [`update`] inside a change that is under way (a channel's modified booking updates its guest with it).
pub(crate) async fn update_within(tx: &mut Change, actor: &Actor, id: &str, patch: GuestPatch) -> Result<Guest> {
    let mut g = visible(tx.conn(), actor, id).await?;
    let before = g.clone();
    if let Some(hotel_id) = patch.hotel_id {
        g.hotel_id = match hotel_id {
            Some(hotel_id) => Some(hotels::require_named(tx.conn(), actor, Some(&hotel_id)).await?.id),
            None if actor.hotel_pin.is_some() => {
                return Err(Error::Forbidden("a key pinned to a hotel cannot detach a guest from it".into()))
            }
            None => None,
        };
    }
    if let Some(v) = patch.first_name {
        g.first_name = clean(&v);
    }
    if let Some(v) = patch.last_name {
        g.last_name = clean(&v);
    }
    if let Some(v) = patch.email {
        g.email = v.map(|e| clean(&e));
    }
    if let Some(v) = patch.phone {
        g.phone = v;
    }
    if let Some(v) = patch.street {
        g.street = text(v);
    }
    if let Some(v) = patch.postal_code {
        g.postal_code = text(v);
    }
    if let Some(v) = patch.city {
        g.city = text(v);
    }
    if let Some(v) = patch.country {
        g.country = v;
    }
    if let Some(v) = patch.language {
        g.language = v;
    }
    if let Some(v) = patch.notes {
        g.notes = v;
    }
    g.updated_at = now();
    validate(&g)?;
    store::guests::update(tx.conn(), &actor.organization_id, &g).await?;
    tx.updated(&actor.organization_id, &before, &g).await?;
    Ok(g)
}

/// Deletes a guest who has no reservations (409 otherwise).
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<Guest> {
    actor.require_scope(Scope::GuestsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let g = visible(tx.conn(), actor, id).await?;
    store::guests::delete(tx.conn(), &actor.organization_id, id)
        .await
        .map_err(|e| super::in_use(e, "the guest has reservations; delete or reassign them first"))?;
    tx.deleted(&actor.organization_id, &g).await?;
    tx.commit().await?;
    Ok(g)
}

/// What an anonymised guest is called.
pub const ANONYMISED_FIRST_NAME: &str = "Anonymised";
pub const ANONYMISED_LAST_NAME: &str = "guest";

/// Erases a guest's personal data (GDPR Art. 17): the name becomes "Anonymised guest", and the e-mail, phone,
/// address, country, language and notes are cleared, on the guest, on the notes of their reservations and on the
/// addresses of the e-mails sent to them. Issued invoices stay as they were issued: the law requires them kept for
/// ten years (§ 147 AO, § 14b UStG), which Art. 17 (3) (b) allows. The stays themselves, their dates and their money
/// stay too. Records `guest.updated` and each changed reservation's `reservation.updated`.
pub async fn anonymise(db: &Db, actor: &Actor, id: &str) -> Result<Guest> {
    actor.require_scope(Scope::GuestsWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let before = visible(tx.conn(), actor, id).await?;
    let g = Guest {
        first_name: ANONYMISED_FIRST_NAME.to_string(),
        last_name: ANONYMISED_LAST_NAME.to_string(),
        updated_at: now(),
        ..before.clone().name_only()
    };
    store::guests::update(tx.conn(), &actor.organization_id, &g).await?;
    tx.updated(&actor.organization_id, &before, &g).await?;
    for r in store::reservations::with_notes_of_guest(tx.conn(), &actor.organization_id, id).await? {
        let after = crate::model::reservations::Reservation { notes: None, updated_at: g.updated_at, ..r.clone() };
        store::reservations::update(tx.conn(), &actor.organization_id, &after).await?;
        tx.updated(&actor.organization_id, &r, &after).await?;
    }
    store::guest_messages::forget_recipient(tx.conn(), &actor.organization_id, id).await?;
    tx.commit().await?;
    Ok(g)
}

impl Record for Guest {
    const KIND: RecordKind = RecordKind::Guest;
    const PRIVATE_FIELDS: &'static [&'static str] = &["email", "phone", "street", "postalCode", "city", "notes"];

    fn hotel_id(&self) -> Option<&str> {
        self.hotel_id.as_deref()
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
