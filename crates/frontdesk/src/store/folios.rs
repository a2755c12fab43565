//! Folios and their lines (`folio_lines`): read whole (with the reservation, or inside a write), added to, posted.
//! The store never decides which lines follow a stay or how a balance is reckoned: the domain
//! (`domain::finance::folios`) passes that in.

use chrono::{DateTime, NaiveDate, Utc};

use crate::model::folios::{FolioLine, LineKind, LineSource, PaymentMethod};
use crate::model::reservations::{Folio, FolioCharge};
use crate::store::schema::{FolioLines as L, Folios, Reservations as R};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, Order, SelectStatement, Sql};
use crate::store::{format_date, format_ts, Conn, Row, RowExt, StoreResult};

/// What identifies a folio before its lines are read.
#[derive(Debug, Clone)]
pub struct FolioHead {
    pub id: String,
    pub currency: String,
}

/// A folio found by its id, with what the ledger needs of its reservation.
#[derive(Debug, Clone)]
pub struct FolioOwner {
    pub head: FolioHead,
    pub reservation_id: String,
    pub hotel_id: String,
    pub on_account_reason: Option<String>,
    pub city_tax_exempt_reason: Option<String>,
}

/// The columns of a line, as [`line`] reads them.
const LINE_COLUMNS: [L; 23] = [
    L::Id,
    L::FolioId,
    L::Position,
    L::Kind,
    L::Source,
    L::ServiceDate,
    L::Description,
    L::Quantity,
    L::Category,
    L::VatRateBp,
    L::Gross,
    L::Net,
    L::Vat,
    L::Currency,
    L::CorrectsLineId,
    L::Method,
    L::Reference,
    L::PaidAt,
    L::Reason,
    L::MadeBy,
    L::CreatedAt,
    L::PostedAt,
    L::InvoiceId,
];

fn decode<T: std::str::FromStr>(what: &str, text: &str) -> StoreResult<T> {
    text.parse().map_err(|_| sqlx::Error::Decode(format!("folio line {what}: {text}").into()).into())
}

fn line(row: &Row) -> StoreResult<FolioLine> {
    let method: Option<String> = row.try_get("method")?;
    Ok(FolioLine {
        id: row.try_get("id")?,
        folio_id: row.try_get("folio_id")?,
        kind: decode::<LineKind>("kind", &row.try_get::<String, _>("kind")?)?,
        source: decode::<LineSource>("source", &row.try_get::<String, _>("source")?)?,
        service_date: row.get_date("service_date")?,
        description: row.try_get("description")?,
        quantity: row.try_get("quantity")?,
        category: row.try_get("category")?,
        vat_rate_basis_points: row.try_get("vat_rate_bp")?,
        gross: row.try_get("gross")?,
        net: row.try_get("net")?,
        vat: row.try_get("vat")?,
        currency: row.try_get("currency")?,
        corrects_line_id: row.try_get("corrects_line_id")?,
        method: method.map(|m| decode::<PaymentMethod>("method", &m)).transpose()?,
        reference: row.try_get("reference")?,
        paid_at: row.get_opt_ts("paid_at")?,
        reason: row.try_get("reason")?,
        made_by: row.try_get("made_by")?,
        created_at: row.get_ts("created_at")?,
        posted_at: row.get_opt_ts("posted_at")?,
        invoice_id: row.try_get("invoice_id")?,
    })
}

/// The statement that reads a folio's lines, in the folio's order.
fn lines_of(folio_id: &str) -> SelectStatement {
    Sql::select()
        .columns(LINE_COLUMNS)
        .from(L::Table)
        .and_where(Expr::col(L::FolioId).eq(folio_id))
        .order_by(L::Position, Order::Asc)
        .take()
}

/// A folio's lines, in its order.
pub async fn lines(conn: &mut Conn, folio_id: &str) -> StoreResult<Vec<FolioLine>> {
    statement(conn.engine(), &lines_of(folio_id)).fetch_all(conn).await?.iter().map(line).collect()
}

/// The folio of a reservation as the reservation shows it: its charges, their total and the balance.
pub async fn folio(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<Folio>> {
    let Some(head) = head_of(conn, reservation_id).await? else { return Ok(None) };
    folio_with_lines(conn, head).await.map(Some)
}

/// The folio `head` names, read in `conn` (inside a write, say).
pub async fn folio_with_lines(conn: &mut Conn, head: FolioHead) -> StoreResult<Folio> {
    let lines = lines(conn, &head.id).await?;
    Ok(folio_from(head, &lines))
}

/// The reservation's view of a folio: its charges (lines of kind CHARGE) and their total, and the balance of all
/// its lines. Amounts of stored lines were checked when written; the sums saturate rather than wrap for rows no
/// check ever saw.
pub fn folio_from(head: FolioHead, lines: &[FolioLine]) -> Folio {
    let charges: Vec<FolioCharge> = lines
        .iter()
        .filter(|l| l.kind == LineKind::Charge)
        .map(|l| FolioCharge {
            id: l.id.clone(),
            folio_id: l.folio_id.clone(),
            date: l.service_date,
            description: l.description.clone(),
            amount: l.gross,
            currency: l.currency.clone(),
            source: l.source,
            posted: l.posted_at.is_some(),
        })
        .collect();
    let total = charges.iter().fold(0_i64, |t, c| t.saturating_add(c.amount));
    let balance = lines.iter().fold(0_i64, |t, l| t.saturating_add(l.kind.sign().saturating_mul(l.gross)));
    Folio { id: head.id, currency: head.currency, charges, total, balance }
}

/// The folio of a reservation: its id and currency.
pub async fn head_of(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<FolioHead>> {
    let select = Sql::select()
        .columns([Folios::Id, Folios::Currency])
        .from(Folios::Table)
        .and_where(Expr::col(Folios::ReservationId).eq(reservation_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| Ok(FolioHead { id: row.try_get("id")?, currency: row.try_get("currency")? })).transpose()
}

/// A folio by its id, if its reservation is of `organization_id`.
pub async fn owner(conn: &mut Conn, organization_id: &str, folio_id: &str) -> StoreResult<Option<FolioOwner>> {
    let select = Sql::select()
        .columns([
            (Folios::Table, Folios::Id),
            (Folios::Table, Folios::Currency),
            (Folios::Table, Folios::ReservationId),
            (Folios::Table, Folios::OnAccountReason),
            (Folios::Table, Folios::CityTaxExemptReason),
        ])
        .column((R::Table, R::HotelId))
        .from(Folios::Table)
        .join(
            JoinType::InnerJoin,
            R::Table,
            Expr::col((R::Table, R::Id)).equals((Folios::Table, Folios::ReservationId)),
        )
        .and_where(Expr::col((Folios::Table, Folios::Id)).eq(folio_id))
        .and_where(Expr::col((R::Table, R::OrganizationId)).eq(organization_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| {
        Ok(FolioOwner {
            head: FolioHead { id: row.try_get("id")?, currency: row.try_get("currency")? },
            reservation_id: row.try_get("reservation_id")?,
            hotel_id: row.try_get("hotel_id")?,
            on_account_reason: row.try_get("on_account_reason")?,
            city_tax_exempt_reason: row.try_get("city_tax_exempt_reason")?,
        })
    })
    .transpose()
}

/// The folio of a reservation, made (with `new_id`) if it has none yet.
pub async fn ensure(
    conn: &mut Conn,
    reservation_id: &str,
    currency: &str,
    new_id: &str,
    at: DateTime<Utc>,
) -> StoreResult<FolioHead> {
    if let Some(head) = head_of(conn, reservation_id).await? {
        return Ok(head);
    }
    let insert = insert_row(
        Folios::Table,
        [
            (Folios::Id, Expr::val(new_id)),
            (Folios::ReservationId, Expr::val(reservation_id)),
            (Folios::Currency, Expr::val(currency)),
            (Folios::CreatedAt, Expr::val(format_ts(at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(FolioHead { id: new_id.to_string(), currency: currency.to_string() })
}

/// Removes a folio's unposted lines of `sources` (dated `from` or later, when given).
pub async fn remove_unposted(
    conn: &mut Conn,
    folio_id: &str,
    sources: &[LineSource],
    from: Option<NaiveDate>,
) -> StoreResult<u64> {
    let names: Vec<&'static str> = sources.iter().map(|s| s.into()).collect();
    let mut delete = Sql::delete()
        .from_table(L::Table)
        .and_where(Expr::col(L::FolioId).eq(folio_id))
        .and_where(Expr::col(L::PostedAt).is_null())
        .and_where(Expr::col(L::Source).is_in(names))
        .take();
    if let Some(from) = from {
        delete.and_where(Expr::col(L::ServiceDate).gte(format_date(from)));
    }
    Ok(statement(conn.engine(), &delete).execute(conn).await?.rows_affected())
}

/// Adds `lines` at the end of their folio (all of one folio).
pub async fn insert(conn: &mut Conn, lines: &[FolioLine]) -> StoreResult<()> {
    let Some(first) = lines.first() else { return Ok(()) };
    let last = Sql::select()
        .expr(Expr::col(L::Position).max())
        .from(L::Table)
        .and_where(Expr::col(L::FolioId).eq(&first.folio_id))
        .take();
    let start: Option<i64> = statement(conn.engine(), &last).fetch_one(conn).await?.try_get(0)?;
    let start = start.map_or(0, |p| p + 1);
    // A few hundred lines per statement: a folio of thousands would otherwise be one statement with more
    // parameters than an engine takes.
    const CHUNK: usize = 100;
    for (n, chunk) in lines.chunks(CHUNK).enumerate() {
        let mut insert = Sql::insert();
        insert.into_table(L::Table).columns(LINE_COLUMNS);
        for (i, l) in (n * CHUNK..).zip(chunk) {
            let kind: &'static str = l.kind.into();
            let source: &'static str = l.source.into();
            let method: Option<&'static str> = l.method.map(Into::into);
            // Cannot panic: the 23 LINE_COLUMNS in their order.
            insert.values_panic([
                Expr::val(&l.id),
                Expr::val(&l.folio_id),
                Expr::val(start + i as i64),
                Expr::val(kind),
                Expr::val(source),
                Expr::val(format_date(l.service_date)),
                Expr::val(&l.description),
                Expr::val(l.quantity),
                Expr::val(l.category.clone()),
                Expr::val(l.vat_rate_basis_points),
                Expr::val(l.gross),
                Expr::val(l.net),
                Expr::val(l.vat),
                Expr::val(&l.currency),
                Expr::val(l.corrects_line_id.clone()),
                Expr::val(method),
                Expr::val(l.reference.clone()),
                Expr::val(l.paid_at.map(format_ts)),
                Expr::val(l.reason.clone()),
                Expr::val(&l.made_by),
                Expr::val(format_ts(l.created_at)),
                Expr::val(l.posted_at.map(format_ts)),
                Expr::val(l.invoice_id.clone()),
            ]);
        }
        statement(conn.engine(), &insert).execute(conn).await?;
    }
    Ok(())
}

/// Posts a folio's unposted lines (those dated before `before`, when given).
pub async fn post(conn: &mut Conn, folio_id: &str, before: Option<NaiveDate>, at: DateTime<Utc>) -> StoreResult<u64> {
    let mut update = Sql::update()
        .table(L::Table)
        .value(L::PostedAt, format_ts(at))
        .and_where(Expr::col(L::FolioId).eq(folio_id))
        .and_where(Expr::col(L::PostedAt).is_null())
        .take();
    if let Some(before) = before {
        update.and_where(Expr::col(L::ServiceDate).lt(format_date(before)));
    }
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected())
}

/// Records (or clears) why a folio's balance was left open at check-out.
pub async fn set_on_account(conn: &mut Conn, folio_id: &str, reason: Option<&str>) -> StoreResult<()> {
    let update = Sql::update()
        .table(Folios::Table)
        .value(Folios::OnAccountReason, reason)
        .and_where(Expr::col(Folios::Id).eq(folio_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Why a folio's stay is exempt from the city tax, if it is.
pub async fn city_tax_exemption(conn: &mut Conn, folio_id: &str) -> StoreResult<Option<String>> {
    let select = Sql::select()
        .column(Folios::CityTaxExemptReason)
        .from(Folios::Table)
        .and_where(Expr::col(Folios::Id).eq(folio_id))
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    Ok(row.map(|row| row.try_get("city_tax_exempt_reason")).transpose()?.flatten())
}

/// Records (or lifts) a folio's exemption from the city tax.
pub async fn set_city_tax_exemption(conn: &mut Conn, folio_id: &str, reason: Option<&str>) -> StoreResult<()> {
    let update = Sql::update()
        .table(Folios::Table)
        .value(Folios::CityTaxExemptReason, reason)
        .and_where(Expr::col(Folios::Id).eq(folio_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// One group of a hotel's posted lines (by service date, kind, category, VAT rate, payment method and currency):
/// their sums and how many.
#[derive(Debug, Clone)]
pub struct PostedSum {
    pub service_date: NaiveDate,
    pub kind: LineKind,
    pub category: Option<String>,
    pub vat_rate_basis_points: i64,
    pub method: Option<PaymentMethod>,
    pub currency: String,
    pub gross: i64,
    pub net: i64,
    pub vat: i64,
    pub lines: i64,
}

/// The posted lines of a hotel's folios dated `from` to `to` (both included), summed by date, kind, category, VAT
/// rate, payment method and currency, in that order.
pub async fn posted_sums(
    conn: &mut Conn,
    hotel_id: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<PostedSum>> {
    let groups = [L::ServiceDate, L::Kind, L::Category, L::VatRateBp, L::Method, L::Currency];
    let mut select = Sql::select();
    select.columns(groups.map(|c| (L::Table, c)));
    for (column, alias) in [(L::Gross, "gross"), (L::Net, "net"), (L::Vat, "vat")] {
        // PostgreSQL sums BIGINT into NUMERIC: back to the integer the amounts are.
        select.expr_as(Expr::col((L::Table, column)).sum().cast_as("BIGINT"), alias);
    }
    select
        .expr_as(Expr::col((L::Table, L::Id)).count().cast_as("BIGINT"), "lines")
        .from(L::Table)
        .inner_join(Folios::Table, Expr::col((Folios::Table, Folios::Id)).equals((L::Table, L::FolioId)))
        .inner_join(R::Table, Expr::col((R::Table, R::Id)).equals((Folios::Table, Folios::ReservationId)))
        .and_where(Expr::col((R::Table, R::HotelId)).eq(hotel_id))
        .and_where(Expr::col((L::Table, L::ServiceDate)).gte(format_date(from)))
        .and_where(Expr::col((L::Table, L::ServiceDate)).lte(format_date(to)))
        .and_where(Expr::col((L::Table, L::PostedAt)).is_not_null());
    for column in groups {
        select.group_by_col((L::Table, column));
    }
    for column in groups {
        select.order_by((L::Table, column), Order::Asc);
    }
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter()
        .map(|row| {
            let method: Option<String> = row.try_get("method")?;
            Ok(PostedSum {
                service_date: row.get_date("service_date")?,
                kind: decode::<LineKind>("kind", &row.try_get::<String, _>("kind")?)?,
                category: row.try_get("category")?,
                vat_rate_basis_points: row.try_get("vat_rate_bp")?,
                method: method.map(|m| decode::<PaymentMethod>("method", &m)).transpose()?,
                currency: row.try_get("currency")?,
                gross: row.try_get("gross")?,
                net: row.try_get("net")?,
                vat: row.try_get("vat")?,
                lines: row.try_get("lines")?,
            })
        })
        .collect()
}

/// A folio's amounts of one kind at one VAT rate.
#[derive(Debug, Clone)]
pub struct KindTotal {
    pub kind: LineKind,
    pub vat_rate_basis_points: i64,
    pub gross: i64,
    pub net: i64,
    pub vat: i64,
}

/// A folio's amounts summed by kind and VAT rate: what a write needs of the lines it does not touch.
pub async fn totals(conn: &mut Conn, folio_id: &str) -> StoreResult<Vec<KindTotal>> {
    let mut select = Sql::select();
    select.columns([L::Kind, L::VatRateBp]);
    for (column, alias) in [(L::Gross, "gross"), (L::Net, "net"), (L::Vat, "vat")] {
        // PostgreSQL sums BIGINT into NUMERIC: back to the integer the amounts are.
        select.expr_as(Expr::col(column).sum().cast_as("BIGINT"), alias);
    }
    select
        .from(L::Table)
        .and_where(Expr::col(L::FolioId).eq(folio_id))
        .group_by_col(L::Kind)
        .group_by_col(L::VatRateBp);
    let rows = statement(conn.engine(), &select).fetch_all(conn).await?;
    rows.iter()
        .map(|row| {
            Ok(KindTotal {
                kind: decode::<LineKind>("kind", &row.try_get::<String, _>("kind")?)?,
                vat_rate_basis_points: row.try_get("vat_rate_bp")?,
                gross: row.try_get("gross")?,
                net: row.try_get("net")?,
                vat: row.try_get("vat")?,
            })
        })
        .collect()
}

/// A line of a folio and the lines against it (allowances of a charge, refunds of a payment), in the folio's order.
pub async fn line_with_corrections(conn: &mut Conn, folio_id: &str, line_id: &str) -> StoreResult<Vec<FolioLine>> {
    let mut select = lines_of(folio_id);
    select.and_where(Expr::col(L::Id).eq(line_id).or(Expr::col(L::CorrectsLineId).eq(line_id)));
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(line).collect()
}

/// The lines one write made: those of the folio made at the same instant as line `first_id`.
pub async fn made_with(conn: &mut Conn, folio_id: &str, first_id: &str) -> StoreResult<Vec<FolioLine>> {
    let at = Sql::select().column(L::CreatedAt).from(L::Table).and_where(Expr::col(L::Id).eq(first_id)).take();
    let mut select = lines_of(folio_id);
    select.and_where(Expr::col(L::CreatedAt).in_subquery(at));
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(line).collect()
}

/// Whether any folio of a hotel has a line.
pub async fn hotel_has_lines(conn: &mut Conn, hotel_id: &str) -> StoreResult<bool> {
    let select = Sql::select()
        .expr(Expr::cust("1"))
        .from(L::Table)
        .inner_join(Folios::Table, Expr::col((Folios::Table, Folios::Id)).equals((L::Table, L::FolioId)))
        .inner_join(R::Table, Expr::col((R::Table, R::Id)).equals((Folios::Table, Folios::ReservationId)))
        .and_where(Expr::col((R::Table, R::HotelId)).eq(hotel_id))
        .limit(1)
        .take();
    Ok(statement(conn.engine(), &select).fetch_optional(conn).await?.is_some())
}
