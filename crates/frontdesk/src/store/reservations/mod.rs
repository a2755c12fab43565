//! Reservations, their rooms, folios and charges, and the inventory queries.
//!
//! Where things are: this file holds the reservation's own row (its columns, insert, update, get, delete, and
//! [`get_full`], the one read of a reservation with its rooms and folio); `rooms.rs` a reservation's rooms and the
//! rack's rows; `folios.rs` folios and their charges; `listing.rs` the filters and lists of reservations ([`list`],
//! [`page_with_total`], [`count()`]); `inventory.rs` what holds inventory and the locks that make writers take
//! turns; `stay.rs` a stay in the house (who occupies a room, check-outs as recorded).

mod folios;
mod inventory;
mod listing;
mod rooms;
mod stay;

use crate::domain::reservations::{FolioCharge, Reservation, ReservationRoom, ReservationStatus, Source};
use crate::store::format_date;
use crate::store::sql::Conditions;
use crate::store::{format_ts, Db, StoreResult};
use crate::store::{query, query_with, Conn};
use crate::store::{FromPortableRow, PortableRow};
use folios::{charges_of, folio_from};
pub use folios::{folio, folio_with_charges, save_folio, FolioHead};
pub use inventory::{held_assignment, held_rooms, held_stays, lock_room, lock_room_types, room_taken, rooms_in_status};
pub(super) use inventory::{held_per_night, HeldBy};
pub use listing::{
    count, count_in_status, list, longest_stay, page_with_total, reference_taken, PAGE_IN_ONE_STATEMENT,
};
pub use rooms::{rack_rows, rooms, rooms_of, save_rooms, RackRow};
use rooms::{room_at, ROOM_COLUMNS};
pub use stay::{check_out, delete_check_out, occupant, save_check_out, CheckOut, Occupant};

const COLUMNS: &str = "id, hotel_id, guest_id, status, check_in_date, check_out_date, start_time, end_time, adults, \
     children, infants, total_price, currency, source, channel_reference, notes, created_at, updated_at, reference";

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
const AFTER_COLUMNS: usize = 19;

pub async fn insert(conn: &mut Conn, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    query(&format!(
        "INSERT INTO reservations ({COLUMNS}, organization_id, nights) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
         $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
    ))
    .bind(&r.id)
    .bind(&r.hotel_id)
    .bind(&r.guest_id)
    .bind(r.status.as_str())
    .bind(format_date(r.check_in_date))
    .bind(format_date(r.check_out_date))
    .bind(format_ts(r.start_time))
    .bind(format_ts(r.end_time))
    .bind(r.adults)
    .bind(r.children)
    .bind(r.infants)
    .bind(r.total_price)
    .bind(&r.currency)
    .bind(r.source.as_str())
    .bind(&r.channel_reference)
    .bind(&r.notes)
    .bind(format_ts(r.created_at))
    .bind(format_ts(r.updated_at))
    .bind(&r.reference)
    .bind(organization_id)
    .bind(r.nights())
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn update(conn: &mut Conn, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    query(
        "UPDATE reservations SET guest_id = $1, status = $2, check_in_date = $3, check_out_date = $4, start_time = $5, \
         end_time = $6, adults = $7, children = $8, infants = $9, total_price = $10, channel_reference = $11, \
         notes = $12, updated_at = $13, nights = $14 WHERE organization_id = $15 AND id = $16",
    )
    .bind(&r.guest_id)
    .bind(r.status.as_str())
    .bind(format_date(r.check_in_date))
    .bind(format_date(r.check_out_date))
    .bind(format_ts(r.start_time))
    .bind(format_ts(r.end_time))
    .bind(r.adults)
    .bind(r.children)
    .bind(r.infants)
    .bind(r.total_price)
    .bind(&r.channel_reference)
    .bind(&r.notes)
    .bind(format_ts(r.updated_at))
    .bind(r.nights())
    .bind(organization_id)
    .bind(&r.id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<Option<Reservation>> {
    query(&format!("SELECT {COLUMNS} FROM reservations WHERE organization_id = $1 AND id = $2"))
        .bind(organization_id)
        .bind(id)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(reservation)
        .transpose()
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
    let reservation_columns = COLUMNS.split(", ").map(|c| format!("r.{c}")).collect::<Vec<_>>().join(", ");
    let room_columns = ROOM_COLUMNS.split(", ").map(|c| format!("rr.{c}")).collect::<Vec<_>>().join(", ");
    let mut c = Conditions::new(db.engine());
    c.push("r.organization_id = ?", organization_id);
    c.push("r.id = ?", id);
    // The reservation's columns, the folio's two, then the room's: read by position.
    let sql = format!(
        "SELECT {reservation_columns}, f.id, f.currency, {room_columns} \
         FROM reservations r LEFT JOIN folios f ON f.reservation_id = r.id \
         LEFT JOIN reservation_rooms rr ON rr.reservation_id = r.id{} ORDER BY rr.position",
        c.where_clause()
    );
    let mut conn = db.read().await?;
    let mut rows = query_with(&sql, c).fetch_records::<JoinedRow>(&mut conn).await?.into_iter();
    let Some(first) = rows.next() else { return Ok(None) };
    let JoinedRow { reservation: mut r, folio, room } = first;
    r.rooms = Some(room.into_iter().chain(rows.filter_map(|row| row.room)).collect());
    if let Some(head) = folio {
        let (sql, c) = charges_of(db.engine(), &head.id);
        let charges = query_with(&sql, c).fetch_records::<FolioCharge>(&mut conn).await?;
        r.folio = Some(folio_from(head, charges));
    }
    Ok(Some(r))
}

/// Deletes a reservation; its rooms, folio and charges go with it (ON DELETE CASCADE).
pub async fn delete(conn: &mut Conn, organization_id: &str, id: &str) -> StoreResult<()> {
    query("DELETE FROM reservations WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
