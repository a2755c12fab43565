//! Reservations, their rooms, folios and charges, and the inventory queries.
//!
//! Where things are: this file holds the reservation's own row (its columns, insert, update, get, delete, and
//! [`get_full`], the one read of a reservation with its rooms and folio); `rooms.rs` a reservation's rooms and the
//! rack's rows; `folios.rs` folios and their charges; `listing.rs` the filters and lists of reservations ([`list`],
//! [`page_with_total`], [`count()`]); `inventory.rs` what holds inventory and the locks that make writers take
//! turns; `stay.rs` a stay in the house (who occupies a room, check-outs as recorded); `attention.rs` the flags of
//! reservations that need a person's attention.

pub mod attention;
mod inventory;
mod listing;
mod rooms;
mod stay;

use crate::model::reservations::{Reservation, ReservationRoom, ReservationStatus, Source};
use crate::store::folios::{folio_from, FolioHead};
use crate::store::format_date;
use crate::store::schema::{Folios, ReservationRooms, Reservations as R};
use crate::store::statement::{insert_row, one_of_organization, statement, Expr, ExprTrait, JoinType, Order, Sql};
use crate::store::{format_ts, Conn, Db, StoreResult};
use crate::store::{FromPortableRow, PortableRow};
pub use inventory::{held_assignment, held_rooms, held_stays, lock_room, lock_room_types, room_taken, rooms_in_status};
pub(super) use inventory::{held_per_night, HeldBy};
pub use listing::{
    count, count_in_status, list, longest_stay, page_statement_rendered, page_with_total, reference_taken, StayFilter,
    PAGE_IN_ONE_STATEMENT,
};
pub use rooms::{rack_rows, rooms, rooms_of, save_rooms, RackRow};
use rooms::{room_at, ROOM_COLUMNS};

/// The columns [`reservation`] reads, in its order.
const COLUMNS: [R; 19] = [
    R::Id,
    R::HotelId,
    R::GuestId,
    R::Status,
    R::CheckInDate,
    R::CheckOutDate,
    R::StartTime,
    R::EndTime,
    R::Adults,
    R::Children,
    R::Infants,
    R::TotalPrice,
    R::Currency,
    R::Source,
    R::ChannelReference,
    R::Notes,
    R::CreatedAt,
    R::UpdatedAt,
    R::Reference,
];

pub use stay::{check_out, delete_check_out, occupant, save_check_out, CheckOut, Occupant};

fn decode_err(what: &str, value: &str) -> super::Error {
    super::Error::undecodable(format!("unknown {what} {value}"))
}

/// A reservation from the [`COLUMNS`] that start a row, by position.
fn reservation<R: PortableRow>(row: &R) -> StoreResult<Reservation> {
    let status = row.text(3)?;
    let source = row.text(13)?;
    Ok(Reservation {
        id: row.text(0)?,
        hotel_id: row.text(1)?,
        guest_id: row.optional_text(2)?,
        status: ReservationStatus::parse(&status).ok_or_else(|| decode_err("status", &status))?,
        check_in_date: row.date(4)?,
        check_out_date: row.date(5)?,
        start_time: row.instant(6)?,
        end_time: row.instant(7)?,
        adults: row.integer(8)?,
        children: row.integer(9)?,
        infants: row.integer(10)?,
        total_price: row.integer(11)?,
        currency: row.text(12)?,
        source: Source::parse(&source).ok_or_else(|| decode_err("source", &source))?,
        channel_reference: row.optional_text(14)?,
        notes: row.optional_text(15)?,
        created_at: row.instant(16)?,
        updated_at: row.instant(17)?,
        reference: row.text(18)?,
        rooms: None,
        folio: None,
    })
}

/// How many of [`COLUMNS`] there are: what follows them in a row starts here.
const AFTER_COLUMNS: usize = COLUMNS.len();

/// The columns an update writes (an insert writes them too, with the ones a record is created with).
fn written(r: &Reservation) -> [(R, Expr); 14] {
    [
        (R::GuestId, Expr::val(r.guest_id.clone())),
        (R::Status, Expr::val(r.status.as_str())),
        (R::CheckInDate, Expr::val(format_date(r.check_in_date))),
        (R::CheckOutDate, Expr::val(format_date(r.check_out_date))),
        (R::Nights, Expr::val(r.nights())),
        (R::StartTime, Expr::val(format_ts(r.start_time))),
        (R::EndTime, Expr::val(format_ts(r.end_time))),
        (R::Adults, Expr::val(r.adults)),
        (R::Children, Expr::val(r.children)),
        (R::Infants, Expr::val(r.infants)),
        (R::TotalPrice, Expr::val(r.total_price)),
        (R::ChannelReference, Expr::val(r.channel_reference.clone())),
        (R::Notes, Expr::val(r.notes.clone())),
        (R::UpdatedAt, Expr::val(format_ts(r.updated_at))),
    ]
}

pub async fn insert(conn: &mut Conn, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    let insert = insert_row(
        R::Table,
        [
            (R::Id, Expr::val(&r.id)),
            (R::OrganizationId, Expr::val(organization_id)),
            (R::HotelId, Expr::val(&r.hotel_id)),
            (R::Currency, Expr::val(&r.currency)),
            (R::Source, Expr::val(r.source.as_str())),
            (R::CreatedAt, Expr::val(format_ts(r.created_at))),
            (R::Reference, Expr::val(&r.reference)),
        ]
        .into_iter()
        .chain(written(r)),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    let update = Sql::update()
        .table(R::Table)
        .values(written(r))
        .and_where(one_of_organization(R::Id, &r.id, R::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Reservation>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(R::Table)
        .and_where(one_of_organization(R::Id, id, R::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(reservation).transpose()
}

/// The reservations of a guest (of the organization) that carry notes, by id.
pub async fn with_notes_of_guest(
    conn: &mut Conn,
    organization_id: &str,
    guest_id: &str,
) -> StoreResult<Vec<Reservation>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(R::Table)
        .and_where(Expr::col(R::OrganizationId).eq(organization_id))
        .and_where(Expr::col(R::GuestId).eq(guest_id))
        .and_where(Expr::col(R::Notes).is_not_null())
        .order_by(R::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(reservation).collect()
}

/// One row of [`get_full`]: the reservation, its folio's head and one of its rooms (none when it has none).
struct JoinedRow {
    reservation: Reservation,
    folio: Option<FolioHead>,
    room: Option<ReservationRoom>,
}

impl FromPortableRow for JoinedRow {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self> {
        let folio = match (row.optional_text(AFTER_COLUMNS)?, row.optional_text(AFTER_COLUMNS + 1)?) {
            (Some(id), Some(currency)) => Some(FolioHead { id, currency }),
            _ => None,
        };
        let first_room = AFTER_COLUMNS + 2;
        // A reservation without rooms answers one row whose room columns are NULL.
        let room = match row.optional_text(first_room)? {
            Some(_) => Some(room_at(row, first_room)?),
            None => None,
        };
        Ok(JoinedRow { reservation: reservation(row)?, folio, room })
    }
}

/// A reservation with its rooms and folio, as a single read answers it: the reservation, its rooms and its folio's
/// id and currency in one statement, then the folio's charges when it has a folio, both on one connection of the
/// engine's own driver.
pub async fn get_full(db: &Db, organization_id: &str, id: &str) -> StoreResult<Option<Reservation>> {
    // The reservation's columns, the folio's two, then the room's: read by position.
    let select = Sql::select()
        .columns(COLUMNS.map(|c| (R::Table, c)))
        .columns([(Folios::Table, Folios::Id), (Folios::Table, Folios::Currency)])
        .columns(ROOM_COLUMNS.map(|c| (ReservationRooms::Table, c)))
        .from(R::Table)
        .join(
            JoinType::LeftJoin,
            Folios::Table,
            Expr::col((Folios::Table, Folios::ReservationId)).equals((R::Table, R::Id)),
        )
        .join(
            JoinType::LeftJoin,
            ReservationRooms::Table,
            Expr::col((ReservationRooms::Table, ReservationRooms::ReservationId)).equals((R::Table, R::Id)),
        )
        .and_where(one_of_organization((R::Table, R::Id), id, (R::Table, R::OrganizationId), organization_id))
        .order_by((ReservationRooms::Table, ReservationRooms::Position), Order::Asc)
        .take();
    let mut conn = db.read().await?;
    let mut rows = statement(db.engine(), &select).fetch_records::<JoinedRow>(&mut conn).await?.into_iter();
    let Some(first) = rows.next() else { return Ok(None) };
    let JoinedRow { reservation: mut r, folio, room } = first;
    r.rooms = Some(room.into_iter().chain(rows.filter_map(|row| row.room)).collect());
    if let Some(head) = folio {
        let lines = crate::store::folios::lines(&mut conn, &head.id).await?;
        r.folio = Some(folio_from(head, &lines));
    }
    Ok(Some(r))
}

/// Deletes a reservation; its rooms, folio and charges go with it (ON DELETE CASCADE).
pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    let delete = Sql::delete()
        .from_table(R::Table)
        .and_where(one_of_organization(R::Id, id, R::OrganizationId, organization_id))
        .take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
