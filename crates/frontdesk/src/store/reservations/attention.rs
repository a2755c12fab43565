//! Reservations that need a person's attention (`reservation_attention`).

use chrono::{DateTime, Utc};

use crate::model::reservations::{Attention, AttentionReason, ReservationStatus};
use crate::store::schema::{ReservationAttention as A, Reservations as R};
use crate::store::statement::{insert_row, statement, Expr, ExprTrait, JoinType, OnConflict, Order, Sql};
use crate::store::{format_ts, Conn, Row, RowExt, StoreResult};

const COLUMNS: [A; 6] = [A::ReservationId, A::HotelId, A::Reasons, A::Detail, A::RaisedAt, A::HandledAt];

fn attention_of(row: &Row) -> StoreResult<Attention> {
    let reasons: String = row.try_get("reasons")?;
    Ok(Attention {
        reservation_id: row.try_get("reservation_id")?,
        hotel_id: row.try_get("hotel_id")?,
        // A reason this build does not know (written by a newer one) is left out rather than failing the read.
        reasons: reasons.split(',').filter_map(|r| r.parse::<AttentionReason>().ok()).collect(),
        detail: row.try_get("detail")?,
        raised_at: row.get_ts("raised_at")?,
        handled_at: row.get_opt_ts("handled_at")?,
    })
}

/// Flags the reservation (again: a flag already there, open or handled, is replaced and open).
pub async fn raise(conn: &mut Conn, organization_id: &str, a: &Attention) -> StoreResult<()> {
    let reasons: Vec<&str> = a.reasons.iter().map(|r| r.as_str()).collect();
    let mut insert = insert_row(
        A::Table,
        [
            (A::ReservationId, Expr::val(&a.reservation_id)),
            (A::OrganizationId, Expr::val(organization_id)),
            (A::HotelId, Expr::val(&a.hotel_id)),
            (A::Reasons, Expr::val(reasons.join(","))),
            (A::Detail, Expr::val(&a.detail)),
            (A::RaisedAt, Expr::val(format_ts(a.raised_at))),
            (A::HandledAt, Expr::val(a.handled_at.map(format_ts))),
        ],
    );
    insert.on_conflict(
        OnConflict::column(A::ReservationId)
            .update_columns([A::Reasons, A::Detail, A::RaisedAt, A::HandledAt])
            .to_owned(),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// The reservation's flag, open or handled.
pub async fn of_reservation(conn: &mut Conn, reservation_id: &str) -> StoreResult<Option<Attention>> {
    let select =
        Sql::select().columns(COLUMNS).from(A::Table).and_where(Expr::col(A::ReservationId).eq(reservation_id)).take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(attention_of).transpose()
}

/// The hotel's open flags of reservations in one of `statuses`, oldest first, at most `limit`.
pub async fn open_in_hotel(
    conn: &mut Conn,
    hotel_id: &str,
    statuses: &[ReservationStatus],
    limit: u64,
) -> StoreResult<Vec<Attention>> {
    let select = Sql::select()
        .columns(COLUMNS.map(|c| (A::Table, c)))
        .from(A::Table)
        .join(JoinType::InnerJoin, R::Table, Expr::col((R::Table, R::Id)).equals((A::Table, A::ReservationId)))
        .and_where(Expr::col((A::Table, A::HotelId)).eq(hotel_id))
        .and_where(Expr::col((A::Table, A::HandledAt)).is_null())
        .and_where(Expr::col((R::Table, R::Status)).is_in(statuses.iter().map(|s| s.as_str())))
        .order_by((A::Table, A::RaisedAt), Order::Asc)
        .order_by((A::Table, A::ReservationId), Order::Asc)
        .limit(limit)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(attention_of).collect()
}

/// Marks the reservation's open flag handled at `at`; whether there was one.
pub async fn handle(conn: &mut Conn, reservation_id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
    let update = Sql::update()
        .table(A::Table)
        .value(A::HandledAt, format_ts(at))
        .and_where(Expr::col(A::ReservationId).eq(reservation_id))
        .and_where(Expr::col(A::HandledAt).is_null())
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}
