//! Folios and their charges: read (with the reservation, or inside a write) and replaced whole.

use crate::domain::reservations::{Folio, FolioCharge};
use crate::store::format_date;
use crate::store::sql::Conditions;
use crate::store::{format_ts, Engine, StoreResult};
use crate::store::{query, query_with, Conn};
use crate::store::{FromPortableRow, PortableRow};

/// What identifies a folio before its charges are read.
pub struct FolioHead {
    pub id: String,
    pub currency: String,
}

pub async fn folio(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<Folio>> {
    let Some(row) = query("SELECT id, currency FROM folios WHERE reservation_id = $1")
        .bind(reservation_id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    let head = FolioHead { id: row.try_get("id")?, currency: row.try_get("currency")? };
    folio_with_charges(conn, head).await.map(Some)
}

/// The statement that reads a folio's charges, and its value.
pub(super) fn charges_of(engine: Engine, folio_id: &str) -> (String, Conditions) {
    let mut c = Conditions::new(engine);
    c.push("folio_id = ?", folio_id);
    let sql = format!(
        "SELECT id, folio_id, date, description, amount, currency FROM folio_charges{} ORDER BY position",
        c.where_clause()
    );
    (sql, c)
}

impl FromPortableRow for FolioCharge {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self> {
        Ok(FolioCharge {
            id: row.text(0)?,
            folio_id: row.text(1)?,
            date: row.date(2)?,
            description: row.text(3)?,
            amount: row.integer(4)?,
            currency: row.text(5)?,
        })
    }
}

/// The folio `head` names, with its charges, read in `conn` (inside a write, say).
pub async fn folio_with_charges(conn: &mut Conn, head: FolioHead) -> StoreResult<Folio> {
    let (sql, c) = charges_of(Engine::of(conn), &head.id);
    let charges = query_with(&sql, c)
        .fetch_all(conn)
        .await?
        .iter()
        .map(FolioCharge::from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(folio_from(head, charges))
}

pub(super) fn folio_from(head: FolioHead, charges: Vec<FolioCharge>) -> Folio {
    // Stored charges are amounts whose sum is one (checked when written); records from before the bound were
    // checked by nothing, so their sum saturates rather than wraps.
    let total = charges.iter().fold(0_i64, |total, c| total.saturating_add(c.amount));
    Folio { id: head.id, currency: head.currency, total, charges }
}

/// Replaces the folio of a reservation (its charges included).
pub async fn save_folio(
    conn: &mut Conn,
    reservation_id: &str,
    folio: &Folio,
    at: chrono::DateTime<chrono::Utc>,
) -> StoreResult<()> {
    query("DELETE FROM folios WHERE reservation_id = $1").bind(reservation_id).execute(&mut *conn).await?;
    query("INSERT INTO folios (id, reservation_id, currency, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&folio.id)
        .bind(reservation_id)
        .bind(&folio.currency)
        .bind(format_ts(at))
        .execute(&mut *conn)
        .await?;
    const CHUNK: usize = 200;
    for (n, chunk) in folio.charges.chunks(CHUNK).enumerate() {
        let mut values = Conditions::new(Engine::of(conn));
        let mut tuples = Vec::with_capacity(chunk.len());
        // The position is the charge's place in the whole folio, not in its chunk.
        for (i, c) in (n * CHUNK..).zip(chunk) {
            let placeholders = [
                values.bind(c.id.clone()),
                values.bind(c.folio_id.clone()),
                values.bind(format_date(c.date)),
                values.bind(c.description.clone()),
                values.bind(c.amount),
                values.bind(c.currency.clone()),
                values.bind(i as i64),
            ];
            tuples.push(format!("({})", placeholders.join(", ")));
        }
        let sql = format!(
            "INSERT INTO folio_charges (id, folio_id, date, description, amount, currency, position) VALUES {}",
            tuples.join(", ")
        );
        query_with(&sql, values).execute(&mut *conn).await?;
    }
    Ok(())
}
