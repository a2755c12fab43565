//! What holds inventory: sellable rooms, rooms held per night, a physical room's assignments, and the row locks
//! that make writers taking the same inventory take turns (PostgreSQL).

use chrono::NaiveDate;

use crate::model::rooms::HousekeepingStatus;
use crate::store::format_date;
use crate::store::schema::{ReservationRooms as Rr, Reservations as R, RoomTypes, Rooms};
use crate::store::statement::{statement, Asterisk, Cond, Expr, ExprTrait, JoinType, Order, RowLocks, Sql};
use crate::store::Conn;
use crate::store::{Engine, RowExt, StoreResult};

/// Locks the given room types until the transaction ends (PostgreSQL; SQLite's write transactions are exclusive),
/// so that writers taking inventory of the same room types take turns.
pub async fn lock_room_types(conn: &mut Conn, engine: Engine, ids: &[String]) -> StoreResult<()> {
    // SQLite's write transactions are exclusive: there is nothing to lock.
    if ids.is_empty() || engine == Engine::Sqlite {
        return Ok(());
    }
    let select = Sql::select()
        .column(RoomTypes::Id)
        .from(RoomTypes::Table)
        .and_where(Expr::col(RoomTypes::Id).is_in(ids.iter().map(String::as_str)))
        .order_by(RoomTypes::Id, Order::Asc)
        .lock_for_writing()
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?;
    Ok(())
}

/// Locks one physical room until the transaction ends (PostgreSQL), for assignments.
pub async fn lock_room(conn: &mut Conn, engine: Engine, room_id: &str) -> StoreResult<()> {
    if engine == Engine::Sqlite {
        return Ok(());
    }
    let select = Sql::select()
        .column(Rooms::Id)
        .from(Rooms::Table)
        .and_where(Expr::col(Rooms::Id).eq(room_id))
        .lock_for_writing()
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?;
    Ok(())
}

/// Physical rooms per room type whose housekeeping status is one of `statuses` (types with none are left out).
pub async fn rooms_in_status(
    conn: &mut Conn,
    room_type_ids: &[String],
    statuses: &[HousekeepingStatus],
) -> StoreResult<Vec<(String, i64)>> {
    if room_type_ids.is_empty() || statuses.is_empty() {
        return Ok(Vec::new());
    }
    let select = Sql::select()
        .column(Rooms::RoomTypeId)
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(Rooms::Table)
        .and_where(Expr::col(Rooms::RoomTypeId).is_in(room_type_ids.iter().map(String::as_str)))
        .and_where(Expr::col(Rooms::HousekeepingStatus).is_in(statuses.iter().map(|s| s.as_str())))
        .group_by_col(Rooms::RoomTypeId)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("room_type_id")?, row.try_get("n")?)))
        .collect()
}

/// Rooms that take inventory on each night of `[from, to)`, per room type: (room type, counts by night, index 0 is
/// `from`), leaving out the rooms of `except_reservation`. Types holding no room on those nights are left out.
pub async fn held_rooms(
    conn: &mut Conn,
    room_type_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> StoreResult<Vec<(String, Vec<i64>)>> {
    held_per_night(conn, HeldBy::RoomType, room_type_ids, from, to, except_reservation).await
}

/// What [`held_per_night`] groups held rooms by.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum HeldBy {
    RoomType,
    RatePlan,
}

impl HeldBy {
    fn column(self) -> Rr {
        match self {
            HeldBy::RoomType => Rr::RoomTypeId,
            HeldBy::RatePlan => Rr::RatePlanId,
        }
    }
}

/// Rooms that take inventory on each night of `[from, to)`, counted per room type or rate plan among `ids`:
/// (id, counts by night, index 0 is `from`), leaving out the rooms of `except_reservation`.
///
/// The database counts, one column per night, instead of answering a row per held room: a week's search of a busy
/// hotel would otherwise move hundreds of rows through the driver, and with sqlx that costs microseconds per row
/// (a value copied per column, a hand-off between threads on SQLite), far more than the
/// counting. A stay holds night `d` when `check_in_date <= d < check_out_date`.
pub(in crate::store) async fn held_per_night(
    conn: &mut Conn,
    by: HeldBy,
    ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> StoreResult<Vec<(String, Vec<i64>)>> {
    let nights: Vec<String> = from.iter_days().take_while(|night| *night < to).map(format_date).collect();
    if ids.is_empty() || nights.is_empty() {
        return Ok(Vec::new());
    }
    let column = by.column();
    let mut select = Sql::select();
    select.column(column);
    for night in &nights {
        let holds_night = Cond::all()
            .add(Expr::col(Rr::CheckInDate).lte(night.as_str()))
            .add(Expr::col(Rr::CheckOutDate).gt(night.as_str()));
        select.expr(Expr::expr(Expr::case(holds_night, Expr::cust("1"))).count());
    }
    select
        .from(Rr::Table)
        .and_where(Expr::col(column).is_in(ids.iter().map(String::as_str)))
        .and_where(Expr::col(Rr::HoldsInventory).eq(true))
        .and_where(Expr::col(Rr::CheckInDate).lt(format_date(to)))
        .and_where(Expr::col(Rr::CheckOutDate).gt(format_date(from)));
    if let Some(id) = except_reservation {
        select.and_where(Expr::col(Rr::ReservationId).ne(id));
    }
    select.group_by_col(column);
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            let counts = (1..=nights.len()).map(|i| row.try_get::<i64, _>(i)).collect::<StoreResult<Vec<_>>>()?;
            Ok((row.try_get(0)?, counts))
        })
        .collect()
}

/// Whether a room of another reservation, holding inventory, is assigned `room_id` on some night of `[from, to)`.
pub async fn room_taken(
    conn: &mut Conn,
    room_id: &str,
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: &str,
) -> StoreResult<bool> {
    let select = Sql::select()
        .expr_as(Expr::col(Asterisk).count(), "n")
        .from(Rr::Table)
        .and_where(Expr::col(Rr::RoomId).eq(room_id))
        .and_where(Expr::col(Rr::HoldsInventory).eq(true))
        .and_where(Expr::col(Rr::CheckInDate).lt(format_date(to)))
        .and_where(Expr::col(Rr::CheckOutDate).gt(format_date(from)))
        .and_where(Expr::col(Rr::ReservationId).ne(except_reservation))
        .take();
    let row = statement(conn.engine(), &select).fetch_one(conn).await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

/// The reference of a reservation that holds inventory with the physical room `room_id` assigned, if there is one.
pub async fn held_assignment(conn: &mut Conn, room_id: &str) -> StoreResult<Option<String>> {
    let select = Sql::select()
        .column((R::Table, R::Reference))
        .from(Rr::Table)
        .join(JoinType::InnerJoin, R::Table, Expr::col((R::Table, R::Id)).equals((Rr::Table, Rr::ReservationId)))
        .and_where(Expr::col((Rr::Table, Rr::RoomId)).eq(room_id))
        .and_where(Expr::col((Rr::Table, Rr::HoldsInventory)).eq(true))
        .order_by((Rr::Table, Rr::CheckInDate), Order::Asc)
        .limit(1)
        .take();
    let row = statement(conn.engine(), &select).fetch_optional(conn).await?;
    row.map(|row| row.try_get("reference")).transpose()
}

/// The stays (check-in, check-out) of the rooms of `room_type_id` that hold inventory.
pub async fn held_stays(conn: &mut Conn, room_type_id: &str) -> StoreResult<Vec<(NaiveDate, NaiveDate)>> {
    let select = Sql::select()
        .columns([Rr::CheckInDate, Rr::CheckOutDate])
        .from(Rr::Table)
        .and_where(Expr::col(Rr::RoomTypeId).eq(room_type_id))
        .and_where(Expr::col(Rr::HoldsInventory).eq(true))
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.get_date("check_in_date")?, row.get_date("check_out_date")?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use sea_query::PostgresQueryBuilder;

    use super::*;

    #[test]
    fn each_night_is_counted_in_a_column_of_its_own() {
        let holds = Cond::all()
            .add(Expr::col(Rr::CheckInDate).lte("2026-12-01"))
            .add(Expr::col(Rr::CheckOutDate).gt("2026-12-01"));
        let select = Sql::select().expr(Expr::expr(Expr::case(holds, Expr::cust("1"))).count()).from(Rr::Table).take();
        let (sql, _) = select.build(PostgresQueryBuilder);
        assert_eq!(
            sql,
            r#"SELECT COUNT((CASE WHEN ("check_in_date" <= $1 AND "check_out_date" > $2) THEN 1 END)) FROM "reservation_rooms""#
        );
    }
}
