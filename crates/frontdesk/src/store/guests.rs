//! Guests.

use super::{format_ts, Db, RowExt, StoreResult};
use crate::model::guests::Guest;
use crate::store::schema::Guests as G;
use crate::store::statement::{
    insert_row, one_of_organization, order_and_page, rendered, rows, statement, Asterisk, Cond, Expr, ExprTrait, Func,
    Order, Sql,
};
use crate::store::Page;
use crate::store::{Conn, Row};

/// The columns [`guest`] reads (by name).
const COLUMNS: [G; 14] = [
    G::Id,
    G::HotelId,
    G::FirstName,
    G::LastName,
    G::Email,
    G::Phone,
    G::Street,
    G::PostalCode,
    G::City,
    G::Country,
    G::Language,
    G::Notes,
    G::CreatedAt,
    G::UpdatedAt,
];

fn guest(row: &Row) -> StoreResult<Guest> {
    Ok(Guest {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        email: row.try_get("email")?,
        phone: row.try_get("phone")?,
        street: row.try_get("street")?,
        postal_code: row.try_get("postal_code")?,
        city: row.try_get("city")?,
        country: row.try_get("country")?,
        language: row.try_get("language")?,
        notes: row.try_get("notes")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

/// The columns an update writes (an insert writes them too, with the ones a record is created with).
fn written(g: &Guest) -> [(G, Expr); 14] {
    [
        (G::HotelId, Expr::val(g.hotel_id.clone())),
        (G::FirstName, Expr::val(&g.first_name)),
        (G::LastName, Expr::val(&g.last_name)),
        (G::Email, Expr::val(g.email.clone())),
        (G::EmailNormalized, Expr::val(g.email.as_deref().map(str::to_lowercase))),
        (G::Phone, Expr::val(g.phone.clone())),
        (G::Street, Expr::val(g.street.clone())),
        (G::PostalCode, Expr::val(g.postal_code.clone())),
        (G::City, Expr::val(g.city.clone())),
        (G::Country, Expr::val(g.country.clone())),
        (G::Language, Expr::val(g.language.clone())),
        (G::Notes, Expr::val(g.notes.clone())),
        (G::UpdatedAt, Expr::val(format_ts(g.updated_at))),
        (G::PhoneDigitsReversed, Expr::val(phone_key(g.phone.as_deref()))),
    ]
}

pub async fn insert(conn: &mut Conn, organization_id: &str, g: &Guest) -> StoreResult<()> {
    let insert = insert_row(
        G::Table,
        [
            (G::Id, Expr::val(&g.id)),
            (G::OrganizationId, Expr::val(organization_id)),
            (G::CreatedAt, Expr::val(format_ts(g.created_at))),
        ]
        .into_iter()
        .chain(written(g)),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, g: &Guest) -> StoreResult<()> {
    let update = Sql::update()
        .table(G::Table)
        .values(written(g))
        .and_where(one_of_organization(G::Id, &g.id, G::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Guest>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(G::Table)
        .and_where(one_of_organization(G::Id, id, G::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(guest).transpose()
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
    let select = Sql::select()
        .columns(COLUMNS)
        .from(G::Table)
        .and_where(Expr::col(G::OrganizationId).eq(organization_id))
        .and_where(Expr::col(G::EmailNormalized).eq(email.to_lowercase()))
        .and_where(Expr::col(G::HotelId).eq(hotel_id))
        .and_where(Expr::col(G::Id).ne(except_id))
        .order_by(G::Id, Order::Asc)
        .limit(rows(limit))
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(guest).collect()
}

pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(G::Table)
        .and_where(one_of_organization(G::Id, id, G::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// The filters of a list of guests: of one hotel, with one e-mail address (any case).
#[derive(Debug, Default, Clone, Copy)]
pub struct GuestsWhere<'a> {
    pub hotel_id: Option<&'a str>,
    pub email: Option<&'a str>,
}

/// The conditions of a list of guests.
fn filter(organization_id: &str, filter: GuestsWhere<'_>, page: &Page) -> Cond {
    let mut cond = Cond::all().add(Expr::col(G::OrganizationId).eq(organization_id));
    if let Some(hotel_id) = filter.hotel_id {
        cond = cond.add(Expr::col(G::HotelId).eq(hotel_id));
    }
    if let Some(email) = filter.email {
        cond = cond.add(Expr::col(G::EmailNormalized).eq(email.to_lowercase()));
    }
    if let Some(ids) = &page.ids {
        cond = cond.add(Expr::col(G::Id).is_in(ids.iter().map(String::as_str)));
    }
    cond
}

pub async fn count(db: &Db, organization_id: &str, filter: GuestsWhere<'_>, page: &Page) -> StoreResult<i64> {
    let counted = Sql::select()
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(G::Table)
        .cond_where(self::filter(organization_id, filter, page))
        .take();
    let (sql, values) = rendered(db.engine(), &counted)?;
    super::count(db, &sql, values).await
}

pub async fn list(
    db: &Db,
    organization_id: &str,
    filter: GuestsWhere<'_>,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<Guest>>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(G::Table).cond_where(self::filter(organization_id, filter, page));
    order_and_page(&mut select, page);
    let (sql, values) = rendered(db.engine(), &select)?;
    super::stream(db, sql, values, guest).await
}

/// The guests among `ids` (of the organization).
pub async fn by_ids(conn: &mut Conn, organization_id: &str, ids: &[String]) -> StoreResult<Vec<Guest>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .columns(COLUMNS)
        .from(G::Table)
        .and_where(Expr::col(G::OrganizationId).eq(organization_id))
        .and_where(Expr::col(G::Id).is_in(ids.iter().map(String::as_str)))
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(guest).collect()
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
            let upper = prefix_upper_bound(&key);
            let select = Sql::select()
                .columns(COLUMNS)
                .from(G::Table)
                .and_where(Expr::col(G::OrganizationId).eq(organization_id))
                .and_where(Expr::col(G::PhoneDigitsReversed).gte(key))
                .and_where(Expr::col(G::PhoneDigitsReversed).lt(upper))
                .order_by(G::PhoneDigitsReversed, Order::Asc)
                .order_by(G::Id, Order::Asc)
                .limit(rows(limit))
                .take();
            let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
            let mut found: Vec<Guest> = rows.iter().map(guest).collect::<StoreResult<_>>()?;
            found.sort_by(|a, b| (&a.last_name, &a.first_name, &a.id).cmp(&(&b.last_name, &b.first_name, &b.id)));
            Ok(found)
        }
        GuestSearch::Email(email) => {
            let select = Sql::select()
                .columns(COLUMNS)
                .from(G::Table)
                .and_where(Expr::col(G::OrganizationId).eq(organization_id))
                .and_where(Expr::col(G::EmailNormalized).eq(email.to_lowercase()))
                .order_by(G::LastName, Order::Asc)
                .order_by(G::FirstName, Order::Asc)
                .order_by(G::Id, Order::Asc)
                .limit(rows(limit))
                .take();
            statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(guest).collect()
        }
        GuestSearch::NamePrefix(prefix) => {
            // Each name through its own index (a range of the lower-cased name); the two lists are merged.
            let upper = prefix_upper_bound(prefix);
            let mut found: Vec<Guest> = Vec::new();
            for column in [G::LastName, G::FirstName] {
                let lowered = || Expr::expr(Func::lower(Expr::col(column)));
                let select = Sql::select()
                    .columns(COLUMNS)
                    .from(G::Table)
                    .and_where(Expr::col(G::OrganizationId).eq(organization_id))
                    .and_where(lowered().gte(prefix.as_str()))
                    .and_where(lowered().lt(upper.as_str()))
                    .order_by_expr(lowered(), Order::Asc)
                    .order_by(G::Id, Order::Asc)
                    .limit(rows(limit))
                    .take();
                for row in statement(conn.engine(), &select).fetch_all(&mut *conn).await? {
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

/// A caller's limit as the builder's LIMIT: a negative one finds nothing.
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
