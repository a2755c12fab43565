//! Folios and their charges: read (with the reservation, or inside a write) and replaced whole.

use crate::model::reservations::{Folio, FolioCharge};
use crate::store::format_date;
use crate::store::schema::{FolioCharges, Folios};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, Order, SelectStatement, Sql};
use crate::store::{format_ts, Conn, StoreResult};
use crate::store::{FromPortableRow, PortableRow};

/// What identifies a folio before its charges are read.
pub struct FolioHead {
    pub id: String,
    pub currency: String,
}

pub async fn folio(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<Folio>> {
    let select = Sql::select()
        .columns([Folios::Id, Folios::Currency])
        .from(Folios::Table)
        .and_where(Expr::col(Folios::ReservationId).eq(reservation_id))
        .take();
    let Some(row) = statement(conn.engine(), &select).fetch_optional(&mut *conn).await? else {
        return Ok(None);
    };
    let head = FolioHead { id: row.try_get("id")?, currency: row.try_get("currency")? };
    folio_with_charges(conn, head).await.map(Some)
}

/// The columns of a charge, in the order [`FolioCharge::from_row`] reads them.
const CHARGE_COLUMNS: [FolioCharges; 6] = [
    FolioCharges::Id,
    FolioCharges::FolioId,
    FolioCharges::Date,
    FolioCharges::Description,
    FolioCharges::Amount,
    FolioCharges::Currency,
];

/// The statement that reads a folio's charges, in the folio's order.
pub(super) fn charges_of(folio_id: &str) -> SelectStatement {
    Sql::select()
        .columns(CHARGE_COLUMNS)
        .from(FolioCharges::Table)
        .and_where(Expr::col(FolioCharges::FolioId).eq(folio_id))
        .order_by(FolioCharges::Position, Order::Asc)
        .take()
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
    let charges = statement(conn.engine(), &charges_of(&head.id)).fetch_records::<FolioCharge>(conn).await?;
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
    let delete =
        Sql::delete().from_table(Folios::Table).and_where(Expr::col(Folios::ReservationId).eq(reservation_id)).take();
    statement(conn.engine(), &delete).execute(&mut *conn).await?;
    let insert = insert_row(
        Folios::Table,
        [
            (Folios::Id, Expr::val(&folio.id)),
            (Folios::ReservationId, Expr::val(reservation_id)),
            (Folios::Currency, Expr::val(&folio.currency)),
            (Folios::CreatedAt, Expr::val(format_ts(at))),
        ],
    );
    statement(conn.engine(), &insert).execute(&mut *conn).await?;
    // A few hundred charges per statement: a folio of thousands would otherwise be one statement with more
    // parameters than an engine takes.
    const CHUNK: usize = 200;
    for (n, chunk) in folio.charges.chunks(CHUNK).enumerate() {
        let mut insert = Sql::insert();
        insert.into_table(FolioCharges::Table).columns(CHARGE_COLUMNS.into_iter().chain([FolioCharges::Position]));
        // The position is the charge's place in the whole folio, not in its chunk.
        for (i, c) in (n * CHUNK..).zip(chunk) {
            // Cannot panic: the six CHARGE_COLUMNS in their order, then the position.
            insert.values_panic([
                Expr::val(&c.id),
                Expr::val(&c.folio_id),
                Expr::val(format_date(c.date)),
                Expr::val(&c.description),
                Expr::val(c.amount),
                Expr::val(&c.currency),
                Expr::val(i as i64),
            ]);
        }
        statement(conn.engine(), &insert).execute(&mut *conn).await?;
    }
    Ok(())
}
