//! Invoices (`invoices`), the counters of their number series (`invoice_counters`), and which folio lines are on
//! which invoice (`folio_lines.invoice_id`). The document is stored as issued, as JSON, and never updated; the columns
//! beside it are what lists and rules read. Which lines an invoice takes, and what it says, the domain decides
//! (`domain::finance::invoices`).

use chrono::NaiveDate;

use super::{format_date, format_ts, Db, RowExt, StoreResult};
use crate::model::invoices::{Invoice, InvoiceDocument};
use crate::store::schema::{FolioLines as L, InvoiceCounters as C, Invoices as I};
use crate::store::statement::{
    insert_row, one_of_organization, order_and_page, rendered, statement, Cond, Expr, ExprTrait, OnConflict, Order, Sql,
};
use crate::store::{Conn, Page, Row};

const COLUMNS: [I; 9] = [
    I::Id,
    I::HotelId,
    I::FolioId,
    I::ReservationId,
    I::CancelsInvoiceId,
    I::CancelledByInvoiceId,
    I::IssuedBy,
    I::CreatedAt,
    I::Document,
];

fn invoice(row: &Row) -> StoreResult<Invoice> {
    let document: String = row.try_get("document")?;
    let document: InvoiceDocument =
        serde_json::from_str(&document).map_err(|e| sqlx::Error::Decode(format!("invoice document: {e}").into()))?;
    Ok(Invoice {
        id: row.try_get("id")?,
        hotel_id: row.try_get("hotel_id")?,
        folio_id: row.try_get("folio_id")?,
        reservation_id: row.try_get("reservation_id")?,
        cancels_invoice_id: row.try_get("cancels_invoice_id")?,
        cancelled_by_invoice_id: row.try_get("cancelled_by_invoice_id")?,
        issued_by: row.try_get("issued_by")?,
        created_at: row.get_ts("created_at")?,
        document,
    })
}

/// Takes the next number of a hotel's `series` (1 for a new series): the counter row is made or incremented, and
/// stays locked until the transaction ends.
pub async fn next_in_series(conn: &mut Conn, hotel_id: &str, series: &str) -> StoreResult<i64> {
    let mut upsert = insert_row(
        C::Table,
        [(C::HotelId, Expr::val(hotel_id)), (C::Series, Expr::val(series)), (C::LastNumber, Expr::val(1_i64))],
    );
    upsert
        .on_conflict(
            OnConflict::columns([C::HotelId, C::Series])
                .value(C::LastNumber, Expr::col((C::Table, C::LastNumber)).add(1))
                .to_owned(),
        )
        .returning_col(C::LastNumber);
    statement(conn.engine(), &upsert).fetch_one(conn).await?.try_get("last_number")
}

/// The last number taken from a hotel's `series` (0 when none was).
pub async fn last_in_series(conn: &mut Conn, hotel_id: &str, series: &str) -> StoreResult<i64> {
    let select = Sql::select()
        .column(C::LastNumber)
        .from(C::Table)
        .and_where(Expr::col(C::HotelId).eq(hotel_id))
        .and_where(Expr::col(C::Series).eq(series))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    Ok(row.map(|r| r.try_get("last_number")).transpose()?.unwrap_or(0))
}

/// What is stored of a new invoice.
pub struct NewInvoice<'a> {
    pub organization_id: &'a str,
    pub invoice: &'a Invoice,
    pub document_json: &'a str,
}

pub async fn insert(conn: &mut Conn, new: &NewInvoice<'_>) -> StoreResult<()> {
    let i = new.invoice;
    let d = &i.document;
    let kind: &'static str = d.kind.into();
    let insert = insert_row(
        I::Table,
        [
            (I::Id, Expr::val(&i.id)),
            (I::OrganizationId, Expr::val(new.organization_id)),
            (I::HotelId, Expr::val(&i.hotel_id)),
            (I::FolioId, Expr::val(&i.folio_id)),
            (I::ReservationId, Expr::val(&i.reservation_id)),
            (I::Number, Expr::val(&d.number)),
            (I::Kind, Expr::val(kind)),
            (I::IssueDate, Expr::val(format_date(d.issue_date))),
            (I::Currency, Expr::val(&d.currency)),
            (I::TotalGross, Expr::val(d.total_gross)),
            (I::Paid, Expr::val(d.paid)),
            (I::RecipientName, Expr::val(&d.recipient.name)),
            (I::CancelsInvoiceId, Expr::val(i.cancels_invoice_id.clone())),
            (I::CancelledByInvoiceId, Expr::val(i.cancelled_by_invoice_id.clone())),
            (I::Document, Expr::val(new.document_json)),
            (I::IssuedBy, Expr::val(&i.issued_by)),
            (I::CreatedAt, Expr::val(format_ts(i.created_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// An invoice of the organization.
pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Invoice>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(I::Table)
        .and_where(one_of_organization(I::Id, id, I::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(invoice).transpose()
}

/// The invoices of a folio, oldest first.
pub async fn of_folio(conn: &mut Conn, folio_id: &str) -> StoreResult<Vec<Invoice>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(I::Table)
        .and_where(Expr::col(I::FolioId).eq(folio_id))
        .order_by(I::CreatedAt, Order::Asc)
        .order_by(I::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(invoice).collect()
}

/// Records that `cancellation_id` cancelled invoice `id`, unless another cancellation did first: whether this one
/// did.
pub async fn mark_cancelled(conn: &mut Conn, id: &str, cancellation_id: &str) -> StoreResult<bool> {
    let update = Sql::update()
        .table(I::Table)
        .value(I::CancelledByInvoiceId, cancellation_id)
        .and_where(Expr::col(I::Id).eq(id))
        .and_where(Expr::col(I::CancelledByInvoiceId).is_null())
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// Puts the folio lines `line_ids` on invoice `invoice_id`, each only if it is on none: how many were.
pub async fn take_lines(conn: &mut Conn, folio_id: &str, line_ids: &[String], invoice_id: &str) -> StoreResult<u64> {
    let mut taken = 0;
    for chunk in line_ids.chunks(500) {
        let update = Sql::update()
            .table(L::Table)
            .value(L::InvoiceId, invoice_id)
            .and_where(Expr::col(L::FolioId).eq(folio_id))
            .and_where(Expr::col(L::Id).is_in(chunk.iter().map(String::as_str)))
            .and_where(Expr::col(L::InvoiceId).is_null())
            .take();
        taken += statement(conn.engine(), &update).execute(conn).await?.rows_affected();
    }
    Ok(taken)
}

/// Takes the folio lines off invoice `invoice_id` (it was cancelled): they may be invoiced again.
pub async fn release_lines(conn: &mut Conn, folio_id: &str, invoice_id: &str) -> StoreResult<u64> {
    let update = Sql::update()
        .table(L::Table)
        .value(L::InvoiceId, Option::<String>::None)
        .and_where(Expr::col(L::FolioId).eq(folio_id))
        .and_where(Expr::col(L::InvoiceId).eq(invoice_id))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected())
}

/// The filters of a list of invoices: of one hotel, issued in a period, with a number containing some text.
#[derive(Debug, Default, Clone, Copy)]
pub struct InvoicesWhere<'a> {
    pub hotel_id: Option<&'a str>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub number: Option<&'a str>,
}

fn filter(organization_id: &str, by: InvoicesWhere<'_>, page: Option<&Page>) -> Cond {
    let mut cond = Cond::all().add(Expr::col(I::OrganizationId).eq(organization_id));
    if let Some(hotel_id) = by.hotel_id {
        cond = cond.add(Expr::col(I::HotelId).eq(hotel_id));
    }
    if let Some(from) = by.from {
        cond = cond.add(Expr::col(I::IssueDate).gte(format_date(from)));
    }
    if let Some(to) = by.to {
        cond = cond.add(Expr::col(I::IssueDate).lte(format_date(to)));
    }
    if let Some(number) = by.number {
        // A number is matched as typed, anywhere in it; LIKE's own characters in it are taken literally.
        let escaped = number.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
        cond = cond.add(Expr::col(I::Number).like(sea_query::LikeExpr::new(format!("%{escaped}%")).escape('\\')));
    }
    if let Some(ids) = page.and_then(|p| p.ids.as_ref()) {
        cond = cond.add(Expr::col(I::Id).is_in(ids.iter().map(String::as_str)));
    }
    cond
}

pub async fn count(db: &Db, organization_id: &str, by: InvoicesWhere<'_>, page: &Page) -> StoreResult<i64> {
    let counted = Sql::select()
        .expr_as(Expr::col(sea_query::Asterisk).count(), "n")
        .from(I::Table)
        .cond_where(filter(organization_id, by, Some(page)))
        .take();
    let (sql, values) = rendered(db.engine(), &counted)?;
    super::count(db, &sql, values).await
}

pub async fn list(
    db: &Db,
    organization_id: &str,
    by: InvoicesWhere<'_>,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<Invoice>>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(I::Table).cond_where(filter(organization_id, by, Some(page)));
    order_and_page(&mut select, page);
    let (sql, values) = rendered(db.engine(), &select)?;
    super::stream(db, sql, values, invoice).await
}

/// Every invoice of a hotel issued in a period, by number's order of issue (the export).
pub async fn issued_in(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<Invoice>> {
    let by = InvoicesWhere { hotel_id: Some(hotel_id), from: Some(from), to: Some(to), number: None };
    let select = Sql::select()
        .columns(COLUMNS)
        .from(I::Table)
        .cond_where(filter(organization_id, by, None))
        .order_by(I::IssueDate, Order::Asc)
        .order_by(I::CreatedAt, Order::Asc)
        .order_by(I::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(invoice).collect()
}

/// The invoices of some reservations (a guest's), newest first: the guest's page links them.
pub async fn of_reservations(conn: &mut Conn, reservation_ids: &[String]) -> StoreResult<Vec<Invoice>> {
    if reservation_ids.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .columns(COLUMNS)
        .from(I::Table)
        .and_where(Expr::col(I::ReservationId).is_in(reservation_ids.iter().map(String::as_str)))
        .order_by(I::CreatedAt, Order::Desc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(invoice).collect()
}

/// Whether any invoice names the reservation (it must then be kept).
pub async fn reservation_has_invoices(conn: &mut Conn, reservation_id: &str) -> StoreResult<bool> {
    let select = Sql::select()
        .column(I::Id)
        .from(I::Table)
        .and_where(Expr::col(I::ReservationId).eq(reservation_id))
        .limit(1)
        .take();
    Ok(statement(conn.engine(), &select).fetch_optional(conn).await?.is_some())
}
