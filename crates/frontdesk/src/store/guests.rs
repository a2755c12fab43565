//! Guests.

use super::sql::Conditions;
use super::{format_ts, Db, Engine, RowExt, StoreResult};
use crate::domain::guests::{Guest, GuestFilter};
use crate::domain::listing::Page;
use crate::store::{query, query_with, Conn, Row};

const COLUMNS: &str = "id, hotel_id, first_name, last_name, email, phone, country, language, notes, created_at, \
     updated_at";

fn guest(row: &Row) -> StoreResult<Guest> {
    Ok(Guest {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        email: row.try_get("email")?,
        phone: row.try_get("phone")?,
        country: row.try_get("country")?,
        language: row.try_get("language")?,
        notes: row.try_get("notes")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

pub async fn insert(conn: &mut Conn, organization_id: &str, g: &Guest) -> StoreResult<()> {
    query(
        "INSERT INTO guests (id, organization_id, hotel_id, first_name, last_name, email, email_normalized, phone, \
         country, language, notes, created_at, updated_at, phone_digits_reversed) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    )
    .bind(&g.id)
    .bind(organization_id)
    .bind(&g.hotel_id)
    .bind(&g.first_name)
    .bind(&g.last_name)
    .bind(&g.email)
    .bind(g.email.as_deref().map(str::to_lowercase))
    .bind(&g.phone)
    .bind(&g.country)
    .bind(&g.language)
    .bind(&g.notes)
    .bind(format_ts(g.created_at))
    .bind(format_ts(g.updated_at))
    .bind(phone_key(g.phone.as_deref()))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, g: &Guest) -> StoreResult<()> {
    query(
        "UPDATE guests SET hotel_id = $1, first_name = $2, last_name = $3, email = $4, email_normalized = $5, \
         phone = $6, country = $7, language = $8, notes = $9, updated_at = $10, phone_digits_reversed = $11 \
         WHERE organization_id = $12 AND id = $13",
    )
    .bind(&g.hotel_id)
    .bind(&g.first_name)
    .bind(&g.last_name)
    .bind(&g.email)
    .bind(g.email.as_deref().map(str::to_lowercase))
    .bind(&g.phone)
    .bind(&g.country)
    .bind(&g.language)
    .bind(&g.notes)
    .bind(format_ts(g.updated_at))
    .bind(phone_key(g.phone.as_deref()))
    .bind(organization_id)
    .bind(&g.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Guest>> {
    query(&format!("SELECT {COLUMNS} FROM guests WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(guest)
        .transpose()
}

/// Up to `limit` guests of the hotel with this e-mail (case-insensitive) other than `except_id`, oldest first.
pub async fn with_email_in_hotel(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    email: &str,
    except_id: &str,
    limit: i64,
) -> StoreResult<Vec<Guest>> {
    query(&format!(
        "SELECT {COLUMNS} FROM guests WHERE organization_id = $1 AND email_normalized = $2 AND hotel_id = $3 \
         AND id <> $4 ORDER BY id LIMIT $5"
    ))
    .bind(organization_id)
    .bind(email.to_lowercase())
    .bind(hotel_id)
    .bind(except_id)
    .bind(limit)
    .fetch_all(conn)
    .await?
    .iter()
    .map(guest)
    .collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM guests WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

fn conditions(engine: Engine, organization_id: &str, filter: &GuestFilter, page: &Page) -> Conditions {
    let mut c = Conditions::new(engine);
    c.push("organization_id = ?", organization_id.to_string());
    if let Some(hotel_id) = &filter.hotel_id {
        c.push("hotel_id = ?", hotel_id.clone());
    }
    if let Some(email) = &filter.email {
        c.push("email_normalized = ?", email.to_lowercase());
    }
    if let Some(ids) = &page.ids {
        c.push_in("id", ids);
    }
    c
}

pub async fn count(db: &Db, organization_id: &str, filter: &GuestFilter, page: &Page) -> StoreResult<i64> {
    let c = conditions(db.engine(), organization_id, filter, page);
    let sql = format!("SELECT COUNT(*) AS n FROM guests{}", c.where_clause());
    super::count(db, &sql, c).await
}

pub async fn list(
    db: &Db,
    organization_id: &str,
    filter: &GuestFilter,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<Guest>>> {
    let mut c = conditions(db.engine(), organization_id, filter, page);
    let order = c.order_and_page(page);
    let sql = format!("SELECT {COLUMNS} FROM guests{}{order}", c.where_clause());
    super::stream(db, sql, c, guest).await
}

/// The guests among `ids` (of the organization).
pub async fn by_ids(conn: &mut Conn, organization_id: &str, ids: &[String]) -> StoreResult<Vec<Guest>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = Conditions::new(Engine::of(conn));
    c.push("organization_id = ?", organization_id.to_string());
    c.push_in("id", ids);
    let sql = format!("SELECT {COLUMNS} FROM guests{}", c.where_clause());
    query_with(&sql, c).fetch_all(conn).await?.iter().map(guest).collect()
}

/// The search key of a phone number: its digits in reverse order, so that the end of a number (what people type,
/// often without the country code) is a prefix of the key. `None` without a number.
pub fn phone_key(phone: Option<&str>) -> Option<String> {
    phone.map(|p| p.chars().rev().filter(char::is_ascii_digit).collect())
}

/// What the front desk types to find a guest.
pub enum GuestSearch {
    /// The last digits of a phone number, whatever its spacing: a prefix of the indexed reversed digits. (The
    /// caller asks with enough digits to be selective.)
    PhoneEnd(String),
    /// An e-mail address: an exact, case-insensitive match (indexed).
    Email(String),
    /// The start of a first or last name, lower-cased (indexed: `lower(first_name)`, `lower(last_name)`). SQLite's
    /// `lower` changes ASCII letters only, so there a name starting with another capital letter (Östberg) is found
    /// only as written.
    NamePrefix(String),
}

/// Guests of the organization that match, by last and first name, at most `limit`.
pub async fn search(
    conn: &mut Conn,
    organization_id: &str,
    search: &GuestSearch,
    limit: i64,
) -> StoreResult<Vec<Guest>> {
    match search {
        GuestSearch::PhoneEnd(typed) => {
            let key = phone_key(Some(typed)).unwrap_or_default();
            let sql = format!(
                "SELECT {COLUMNS} FROM guests WHERE organization_id = $1 AND phone_digits_reversed >= $2 \
                 AND phone_digits_reversed < $3 ORDER BY phone_digits_reversed, id LIMIT $4"
            );
            let upper = prefix_upper_bound(&key);
            let rows = query(&sql).bind(organization_id).bind(key.as_str()).bind(upper.as_str()).bind(limit);
            let mut found: Vec<Guest> = rows.fetch_all(conn).await?.iter().map(guest).collect::<StoreResult<_>>()?;
            found.sort_by(|a, b| (&a.last_name, &a.first_name, &a.id).cmp(&(&b.last_name, &b.first_name, &b.id)));
            Ok(found)
        }
        GuestSearch::Email(email) => {
            let sql = format!(
                "SELECT {COLUMNS} FROM guests WHERE organization_id = $1 AND email_normalized = $2 \
                 ORDER BY last_name, first_name, id LIMIT $3"
            );
            let rows = query(&sql).bind(organization_id).bind(email.to_lowercase()).bind(limit);
            rows.fetch_all(conn).await?.iter().map(guest).collect()
        }
        GuestSearch::NamePrefix(prefix) => {
            // Each name through its own index (a range of the lower-cased name); the two lists are merged.
            let upper = prefix_upper_bound(prefix);
            let mut found: Vec<Guest> = Vec::new();
            for column in ["lower(last_name)", "lower(first_name)"] {
                let sql = format!(
                    "SELECT {COLUMNS} FROM guests WHERE organization_id = $1 AND {column} >= $2 AND {column} < $3 \
                     ORDER BY {column}, id LIMIT $4"
                );
                let query = query(&sql).bind(organization_id).bind(prefix.as_str()).bind(upper.as_str()).bind(limit);
                for row in query.fetch_all(&mut *conn).await? {
                    let g = guest(&row)?;
                    if !found.iter().any(|f| f.id == g.id) {
                        found.push(g);
                    }
                }
            }
            found.sort_by(|a, b| (&a.last_name, &a.first_name, &a.id).cmp(&(&b.last_name, &b.first_name, &b.id)));
            found.truncate(usize::try_from(limit).unwrap_or(0));
            Ok(found)
        }
    }
}

/// The least text greater than every text starting with `prefix`: its last character, one code point higher.
fn prefix_upper_bound(prefix: &str) -> String {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = (u32::from(last) + 1..=0x10FFFF).find_map(char::from_u32) {
            chars.push(next);
            return chars.into_iter().collect();
        }
    }
    // Only U+10FFFF: nothing sorts above; a bound no name reaches.
    "\u{10FFFF}\u{10FFFF}".to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefix_bounds() {
        assert_eq!(super::prefix_upper_bound("silv"), "silw");
        assert_eq!(super::prefix_upper_bound("mü"), "mý");
        assert!(super::prefix_upper_bound("ab").as_str() > "abzzzz");
    }
}
