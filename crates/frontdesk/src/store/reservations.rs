//! Reservations, their rooms, folios and charges, and the inventory queries.

use chrono::NaiveDate;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::daily_rates::format_date;
use super::native::{self, FromPortableRow, HotRead, PortableRow};
use super::reservation_counts;
use super::sql::Conditions;
use super::{bool_int, format_ts, Db, Engine, RowExt, StoreResult};
use crate::domain::listing::Page;
use crate::domain::reservations::inventory;
use crate::domain::reservations::{
    Folio, FolioCharge, Reservation, ReservationRoom, ReservationStatus, RoomStatus, Source, StayFilter,
};
use crate::domain::rooms::HousekeepingStatus;

const COLUMNS: &str = "id, hotel_id, guest_id, status, check_in_date, check_out_date, start_time, end_time, adults, \
     children, infants, total_price, currency, source, channel_reference, notes, created_at, updated_at, reference";

fn decode_err(what: &str, value: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("unknown {what} {value}").into())
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

pub async fn insert(conn: &mut AnyConnection, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    sqlx::query(&format!(
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

pub async fn update(conn: &mut AnyConnection, organization_id: &str, r: &Reservation) -> StoreResult<()> {
    sqlx::query(
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

pub async fn get(conn: &mut AnyConnection, organization_id: &str, id: &str) -> StoreResult<Option<Reservation>> {
    sqlx::query(&format!("SELECT {COLUMNS} FROM reservations WHERE organization_id = $1 AND id = $2"))
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
    let mut conn = HotRead::acquire(db).await?;
    let mut rows = conn.fetch_all::<JoinedRow>(&sql, c).await?.into_iter();
    let Some(first) = rows.next() else { return Ok(None) };
    let JoinedRow { reservation: mut r, folio, room } = first;
    r.rooms = Some(room.into_iter().chain(rows.filter_map(|row| row.room)).collect());
    if let Some(head) = folio {
        let (sql, c) = charges_of(db.engine(), &head.id);
        let charges = conn.fetch_all::<FolioCharge>(&sql, c).await?;
        r.folio = Some(folio_from(head, charges));
    }
    Ok(Some(r))
}

/// Deletes a reservation; its rooms, folio and charges go with it (ON DELETE CASCADE).
pub async fn delete(conn: &mut AnyConnection, organization_id: &str, id: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM reservations WHERE organization_id = $1 AND id = $2")
        .bind(organization_id)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

const ROOM_COLUMNS: &str = "id, room_type_id, rate_plan_id, room_id, status, adults, children, infants, price";

/// A reservation room from the [`ROOM_COLUMNS`] that start at column `first` of `row` (by position: a statement
/// that joins rooms to their reservation has both tables' `id`, `status`, `adults`…).
fn room_at<R: PortableRow>(row: &R, first: usize) -> StoreResult<ReservationRoom> {
    let status = row.text(first + 4)?;
    Ok(ReservationRoom {
        id: row.text(first)?,
        room_type_id: row.text(first + 1)?,
        rate_plan_id: row.optional_text(first + 2)?,
        room_id: row.optional_text(first + 3)?,
        status: RoomStatus::parse(&status).ok_or_else(|| decode_err("room status", &status))?,
        adults: row.integer(first + 5)?,
        children: row.integer(first + 6)?,
        infants: row.integer(first + 7)?,
        price: row.integer(first + 8)?,
    })
}

fn room(row: &AnyRow) -> StoreResult<ReservationRoom> {
    room_at(row, 0)
}

pub async fn rooms(conn: &mut AnyConnection, reservation_id: &str) -> StoreResult<Vec<ReservationRoom>> {
    sqlx::query(&format!("SELECT {ROOM_COLUMNS} FROM reservation_rooms WHERE reservation_id = $1 ORDER BY position"))
        .bind(reservation_id)
        .fetch_all(conn)
        .await?
        .iter()
        .map(room)
        .collect()
}

/// The rooms of several reservations: (reservation id, room), in each reservation's order.
pub async fn rooms_of(
    conn: &mut AnyConnection,
    reservation_ids: &[String],
) -> StoreResult<Vec<(String, ReservationRoom)>> {
    if reservation_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = Conditions::new(Engine::of(conn));
    c.push_in("reservation_id", reservation_ids);
    let sql = format!(
        "SELECT reservation_id, {ROOM_COLUMNS} FROM reservation_rooms{} ORDER BY reservation_id, position",
        c.where_clause()
    );
    sqlx::query_with(&sql, c.into_args())
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("reservation_id")?, room_at(row, 1)?)))
        .collect()
}

/// A reservation room on the room rack: the stay it belongs to and where it sleeps.
pub struct RackRow {
    pub reservation_id: String,
    /// The guest's first and last name, read in the same statement (a rack shows thousands of stays).
    pub guest_name: Option<(String, String)>,
    pub status: ReservationStatus,
    pub check_in_date: NaiveDate,
    pub check_out_date: NaiveDate,
    pub room: ReservationRoom,
}

/// The rooms of a hotel's stays that touch the nights `[from, to)`, except cancelled ones and no-shows. Stays
/// checking in before `check_in_from` are not looked at: the caller bounds it by the longest stay on record, so the
/// stay-window index starts near the window.
/// Columns of a rack row before its room's.
const RACK_COLUMNS_BEFORE_ROOM: usize = 6;

pub async fn rack_rows(
    conn: &mut AnyConnection,
    organization_id: &str,
    hotel_id: &str,
    check_in_from: NaiveDate,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<RackRow>> {
    let columns = ROOM_COLUMNS.split(", ").map(|c| format!("rr.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT r.id AS reservation_id, g.first_name AS guest_first_name, g.last_name AS guest_last_name, \
         r.status AS reservation_status, r.check_in_date AS stay_in, r.check_out_date AS stay_out, {columns} \
         FROM reservations r JOIN reservation_rooms rr ON rr.reservation_id = r.id \
         LEFT JOIN guests g ON g.id = r.guest_id \
         WHERE r.organization_id = $1 AND r.hotel_id = $2 AND r.check_in_date >= $3 AND r.check_in_date < $4 \
         AND r.check_out_date > $5 AND r.status IN ('REQUESTED', 'CONFIRMED', 'CHECKED_IN', 'CHECKED_OUT') \
         AND rr.status <> 'CANCELLED' ORDER BY r.check_in_date, r.id, rr.position"
    );
    sqlx::query(&sql)
        .bind(organization_id)
        .bind(hotel_id)
        .bind(format_date(check_in_from))
        .bind(format_date(to))
        .bind(format_date(from))
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            let status: String = row.try_get("reservation_status")?;
            Ok(RackRow {
                reservation_id: row.try_get("reservation_id")?,
                guest_name: match (row.try_get("guest_first_name")?, row.try_get("guest_last_name")?) {
                    (Some(first), Some(last)) => Some((first, last)),
                    _ => None,
                },
                status: ReservationStatus::parse(&status).ok_or_else(|| decode_err("status", &status))?,
                check_in_date: row.get_date("stay_in")?,
                check_out_date: row.get_date("stay_out")?,
                room: room_at(row, RACK_COLUMNS_BEFORE_ROOM)?,
            })
        })
        .collect()
}

/// Reservations of a hotel in one status (the dashboard's badge of booking requests waiting).
pub async fn count_in_status(
    conn: &mut AnyConnection,
    organization_id: &str,
    hotel_id: &str,
    status: ReservationStatus,
) -> StoreResult<i64> {
    sqlx::query("SELECT COUNT(*) AS n FROM reservations WHERE organization_id = $1 AND hotel_id = $2 AND status = $3")
        .bind(organization_id)
        .bind(hotel_id)
        .bind(status.as_str())
        .fetch_one(conn)
        .await?
        .try_get("n")
}

/// Writes the rooms of a reservation as they are now (insert or replace), with the stay dates and whether they
/// take inventory.
pub async fn save_rooms(conn: &mut AnyConnection, r: &Reservation, rooms: &[ReservationRoom]) -> StoreResult<()> {
    for (position, room) in rooms.iter().enumerate() {
        let holds = inventory::holds(r.status, room.status);
        sqlx::query(
            "INSERT INTO reservation_rooms (id, reservation_id, hotel_id, room_type_id, rate_plan_id, room_id, status, \
             adults, children, infants, price, check_in_date, check_out_date, holds_inventory, position) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (id) DO UPDATE SET room_id = excluded.room_id, status = excluded.status, \
             check_in_date = excluded.check_in_date, check_out_date = excluded.check_out_date, \
             holds_inventory = excluded.holds_inventory",
        )
        .bind(&room.id)
        .bind(&r.id)
        .bind(&r.hotel_id)
        .bind(&room.room_type_id)
        .bind(&room.rate_plan_id)
        .bind(&room.room_id)
        .bind(room.status.as_str())
        .bind(room.adults)
        .bind(room.children)
        .bind(room.infants)
        .bind(room.price)
        .bind(format_date(r.check_in_date))
        .bind(format_date(r.check_out_date))
        .bind(bool_int(holds))
        .bind(position as i64)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// What identifies a folio before its charges are read.
pub struct FolioHead {
    pub id: String,
    pub currency: String,
}

pub async fn folio(conn: &mut AnyConnection, reservation_id: &str) -> StoreResult<Option<Folio>> {
    let Some(row) = sqlx::query("SELECT id, currency FROM folios WHERE reservation_id = $1")
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
fn charges_of(engine: Engine, folio_id: &str) -> (String, Conditions) {
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
pub async fn folio_with_charges(conn: &mut AnyConnection, head: FolioHead) -> StoreResult<Folio> {
    let (sql, c) = charges_of(Engine::of(conn), &head.id);
    let charges = sqlx::query_with(&sql, c.into_args())
        .fetch_all(conn)
        .await?
        .iter()
        .map(FolioCharge::from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(folio_from(head, charges))
}

fn folio_from(head: FolioHead, charges: Vec<FolioCharge>) -> Folio {
    // Stored charges are amounts whose sum is one (checked when written); records from before the bound were
    // checked by nothing, so their sum saturates rather than wraps.
    let total = charges.iter().fold(0_i64, |total, c| total.saturating_add(c.amount));
    Folio { id: head.id, currency: head.currency, total, charges }
}

/// Replaces the folio of a reservation (its charges included).
pub async fn save_folio(
    conn: &mut AnyConnection,
    reservation_id: &str,
    folio: &Folio,
    at: chrono::DateTime<chrono::Utc>,
) -> StoreResult<()> {
    sqlx::query("DELETE FROM folios WHERE reservation_id = $1").bind(reservation_id).execute(&mut *conn).await?;
    sqlx::query("INSERT INTO folios (id, reservation_id, currency, created_at) VALUES ($1, $2, $3, $4)")
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
        sqlx::query_with(&sql, values.into_args()).execute(&mut *conn).await?;
    }
    Ok(())
}

/// The longest stay (in nights) among the organization's reservations, of one hotel when given.
pub async fn longest_stay(conn: &mut AnyConnection, organization_id: &str, hotel_id: Option<&str>) -> StoreResult<i64> {
    let row = match hotel_id {
        Some(hotel_id) => {
            sqlx::query("SELECT MAX(nights) AS n FROM reservations WHERE hotel_id = $1")
                .bind(hotel_id)
                .fetch_one(conn)
                .await?
        }
        None => {
            sqlx::query("SELECT MAX(nights) AS n FROM reservations WHERE organization_id = $1")
                .bind(organization_id)
                .fetch_one(conn)
                .await?
        }
    };
    Ok(row.try_get::<Option<i64>, _>("n")?.unwrap_or(0))
}

/// The longest stay that can touch a window starting on a date, as SQL: the bound is read in the statement that
/// needs it from the `(hotel_id, nights)` index (one index descent), so it is always exact and costs no statement of
/// its own. `?` stands for the window's first date, then the hotel or organization.
fn check_in_bound(engine: Engine, by_hotel: bool) -> &'static str {
    match (engine, by_hotel) {
        (Engine::Sqlite, true) => {
            "check_in_date >= date(?, '-' || (SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE hotel_id = ?) || ' days')"
        }
        (Engine::Sqlite, false) => {
            "check_in_date >= date(?, '-' || (SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE organization_id = ?) || ' days')"
        }
        (Engine::Postgres, true) => {
            "check_in_date >= to_char(CAST(? AS DATE) - CAST((SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE hotel_id = ?) AS INTEGER), 'YYYY-MM-DD')"
        }
        (Engine::Postgres, false) => {
            "check_in_date >= to_char(CAST(? AS DATE) - CAST((SELECT COALESCE(MAX(nights), 0) FROM reservations \
             WHERE organization_id = ?) AS INTEGER), 'YYYY-MM-DD')"
        }
    }
}

fn conditions(engine: Engine, organization_id: &str, f: &StayFilter, page: &Page) -> Conditions {
    let mut c = Conditions::new(engine);
    push_conditions(&mut c, organization_id, f, page);
    c
}

fn push_conditions(c: &mut Conditions, organization_id: &str, f: &StayFilter, page: &Page) {
    let engine = c.engine();
    // A few guests' stays are found through the guest index. SQLite's planner, which has no statistics, would rather
    // read the whole hotel in check-in order for the sake of the ORDER BY; `+column` keeps a term off any index.
    let (organization, hotel) = match (engine, &f.guest_ids) {
        (Engine::Sqlite, Some(_)) => ("+organization_id = ?", "+hotel_id = ?"),
        _ => ("organization_id = ?", "hotel_id = ?"),
    };
    c.push(organization, organization_id.to_string());
    if let Some(v) = &f.hotel_id {
        c.push(hotel, v.clone());
    }
    if let Some(v) = &f.guest_id {
        c.push("guest_id = ?", v.clone());
    }
    if let Some(v) = &f.reference {
        c.push("reference = ?", v.clone());
    }
    if let Some(v) = f.start_time {
        c.push("end_time > ?", format_ts(v));
    }
    if let Some(v) = f.end_time {
        c.push("start_time <= ?", format_ts(v));
    }
    match (f.check_in_from, f.stay_date_from) {
        (Some(v), _) => {
            c.push("check_in_date >= ?", format_date(v));
        }
        (None, Some(from)) => {
            let (by_hotel, scope) = match &f.hotel_id {
                Some(hotel) => (true, hotel.clone()),
                None => (false, organization_id.to_string()),
            };
            c.push_all(check_in_bound(engine, by_hotel), vec![format_date(from), scope]);
        }
        (None, None) => {}
    }
    if let Some(v) = f.stay_date_from {
        c.push("check_out_date > ?", format_date(v));
    }
    if let Some(v) = f.stay_date_to {
        c.push("check_in_date <= ?", format_date(v));
    }
    if let Some(v) = f.check_in_date {
        c.push("check_in_date = ?", format_date(v));
    }
    if let Some(v) = f.check_out_date {
        c.push("check_out_date = ?", format_date(v));
    }
    if !f.statuses.is_empty() {
        let statuses: Vec<String> = f.statuses.iter().map(|s| s.as_str().to_string()).collect();
        c.push_in("status", &statuses);
    }
    if let Some(v) = f.source {
        c.push("source = ?", v.as_str().to_string());
    }
    if let Some(ids) = &f.guest_ids {
        c.push_in("guest_id", ids);
    }
    if let Some(ids) = &page.ids {
        c.push_in("id", ids);
    }
}

/// How many reservations match: from the counts where they answer ([`reservation_counts::answers`]), else counted.
pub async fn count(db: &Db, organization_id: &str, filter: &StayFilter, page: &Page) -> StoreResult<i64> {
    if reservation_counts::answers(filter, page) {
        let mut c = Conditions::new(db.engine());
        let sql = format!("SELECT {} AS n", reservation_counts::total(&mut c, organization_id, filter));
        return super::count(db, &sql, c.into_args()).await;
    }
    let c = conditions(db.engine(), organization_id, filter, page);
    let sql = format!("SELECT COUNT(*) AS n FROM reservations{}", c.where_clause());
    super::count(db, &sql, c.into_args()).await
}

/// Most rows of a page read in one statement with its total ([`page_with_total`]); larger pages are streamed.
pub const PAGE_IN_ONE_STATEMENT: i64 = 1000;

/// A page of the matches and how many match in all, in one statement (the count is a subquery). The total is
/// `None` when the page is empty and skipped rows: no row carried it.
pub async fn page_with_total(
    db: &Db,
    organization_id: &str,
    filter: &StayFilter,
    page: &Page,
) -> StoreResult<(Vec<Reservation>, Option<i64>)> {
    let mut c = Conditions::new(db.engine());
    // The total's values first: its subquery comes first in the statement.
    let total = if reservation_counts::answers(filter, page) {
        reservation_counts::total(&mut c, organization_id, filter)
    } else {
        push_conditions(&mut c, organization_id, filter, page);
        format!("(SELECT COUNT(*) FROM reservations{})", c.take_where_clause())
    };
    push_conditions(&mut c, organization_id, filter, page);
    let page_where = c.take_where_clause();
    let order = c.order_and_page(page);
    let sql = format!("SELECT {COLUMNS}, {total} AS total_count FROM reservations{page_where}{order}");
    let rows = native::fetch_all::<PageRow>(db, &sql, c).await?;
    let total = rows.first().map(|row| row.total);
    let items = rows.into_iter().map(|row| row.reservation).collect();
    Ok((items, total.or((page.skip == 0).then_some(0))))
}

/// One row of [`page_with_total`]: a reservation and the total of the page's matches.
struct PageRow {
    reservation: Reservation,
    total: i64,
}

impl FromPortableRow for PageRow {
    fn from_row<R: PortableRow>(row: &R) -> StoreResult<Self> {
        Ok(PageRow { reservation: reservation(row)?, total: row.integer(AFTER_COLUMNS)? })
    }
}

pub async fn list(
    db: &Db,
    organization_id: &str,
    filter: &StayFilter,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<Reservation>>> {
    let mut c = conditions(db.engine(), organization_id, filter, page);
    let order = c.order_and_page(page);
    let sql = format!("SELECT {COLUMNS} FROM reservations{}{order}", c.where_clause());
    super::stream(db, sql, c.into_args(), reservation).await
}

/// Locks the given room types until the transaction ends (PostgreSQL; SQLite's write transactions are exclusive),
/// so that writers taking inventory of the same room types take turns.
pub async fn lock_room_types(conn: &mut AnyConnection, engine: Engine, ids: &[String]) -> StoreResult<()> {
    if ids.is_empty() || engine.lock_rows().is_empty() {
        return Ok(());
    }
    let mut c = Conditions::new(Engine::of(conn));
    c.push_in("id", ids);
    let sql = format!("SELECT id FROM room_types{} ORDER BY id{}", c.where_clause(), engine.lock_rows());
    sqlx::query_with(&sql, c.into_args()).fetch_all(conn).await?;
    Ok(())
}

/// Locks one physical room until the transaction ends (PostgreSQL), for assignments.
pub async fn lock_room(conn: &mut AnyConnection, engine: Engine, room_id: &str) -> StoreResult<()> {
    if engine.lock_rows().is_empty() {
        return Ok(());
    }
    sqlx::query(&format!("SELECT id FROM rooms WHERE id = $1{}", engine.lock_rows()))
        .bind(room_id)
        .fetch_optional(conn)
        .await?;
    Ok(())
}

/// Sellable physical rooms per room type (those whose housekeeping status the domain calls sellable).
pub async fn sellable_rooms(conn: &mut AnyConnection, room_type_ids: &[String]) -> StoreResult<Vec<(String, i64)>> {
    if room_type_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sellable: Vec<String> =
        HousekeepingStatus::ALL.into_iter().filter(|s| s.sellable()).map(|s| s.as_str().to_string()).collect();
    let mut c = Conditions::new(Engine::of(conn));
    c.push_in("room_type_id", room_type_ids);
    c.push_in("housekeeping_status", &sellable);
    let sql = format!("SELECT room_type_id, COUNT(*) AS n FROM rooms{} GROUP BY room_type_id", c.where_clause());
    sqlx::query_with(&sql, c.into_args())
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("room_type_id")?, row.try_get("n")?)))
        .collect()
}

/// Rooms that take inventory on each night of `[from, to)`, per room type: (room type, counts by night, index 0 is
/// `from`), leaving out the rooms of `except_reservation`. Types holding no room on those nights are left out.
pub async fn held_rooms(
    conn: &mut AnyConnection,
    room_type_ids: &[String],
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: Option<&str>,
) -> StoreResult<Vec<(String, Vec<i64>)>> {
    held_per_night(conn, HeldBy::RoomType, room_type_ids, from, to, except_reservation).await
}

/// What [`held_per_night`] groups held rooms by.
#[derive(Debug, Clone, Copy)]
pub(super) enum HeldBy {
    RoomType,
    RatePlan,
}

impl HeldBy {
    fn column(self) -> &'static str {
        match self {
            HeldBy::RoomType => "room_type_id",
            HeldBy::RatePlan => "rate_plan_id",
        }
    }
}

/// Rooms that take inventory on each night of `[from, to)`, counted per room type or rate plan among `ids`:
/// (id, counts by night, index 0 is `from`), leaving out the rooms of `except_reservation`.
///
/// The database counts, one column per night, instead of answering a row per held room: a week's search of a busy
/// hotel would otherwise move hundreds of rows through the driver, and with sqlx that costs microseconds per row
/// (a value copied per column, a hand-off between threads on SQLite, a conversion to `Any`), far more than the
/// counting. A stay holds night `d` when `check_in_date <= d < check_out_date`.
pub(super) async fn held_per_night(
    conn: &mut AnyConnection,
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
    let mut c = Conditions::new(Engine::of(conn));
    // The counts come first in the statement, so their values are bound first.
    let counts: Vec<String> = nights
        .iter()
        .map(|night| {
            let (starts, ends) = (c.bind(night.clone()), c.bind(night.clone()));
            format!("COUNT(CASE WHEN check_in_date <= {starts} AND check_out_date > {ends} THEN 1 END)")
        })
        .collect();
    c.push_in(column, ids);
    c.push("holds_inventory = ?", 1_i64);
    c.push("check_in_date < ?", format_date(to));
    c.push("check_out_date > ?", format_date(from));
    if let Some(id) = except_reservation {
        c.push("reservation_id <> ?", id.to_string());
    }
    let sql =
        format!("SELECT {column}, {} FROM reservation_rooms{} GROUP BY {column}", counts.join(", "), c.where_clause());
    sqlx::query_with(&sql, c.into_args())
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
    conn: &mut AnyConnection,
    room_id: &str,
    from: NaiveDate,
    to: NaiveDate,
    except_reservation: &str,
) -> StoreResult<bool> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM reservation_rooms WHERE room_id = $1 AND holds_inventory = 1 \
         AND check_in_date < $2 AND check_out_date > $3 AND reservation_id <> $4",
    )
    .bind(room_id)
    .bind(format_date(to))
    .bind(format_date(from))
    .bind(except_reservation)
    .fetch_one(conn)
    .await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

/// The reference of a reservation that holds inventory with the physical room `room_id` assigned, if there is one.
pub async fn held_assignment(conn: &mut AnyConnection, room_id: &str) -> StoreResult<Option<String>> {
    let row = sqlx::query(
        "SELECT r.reference FROM reservation_rooms rr JOIN reservations r ON r.id = rr.reservation_id \
         WHERE rr.room_id = $1 AND rr.holds_inventory = 1 ORDER BY rr.check_in_date LIMIT 1",
    )
    .bind(room_id)
    .fetch_optional(conn)
    .await?;
    row.map(|row| row.try_get("reference")).transpose()
}

/// The stays (check-in, check-out) of the rooms of `room_type_id` that hold inventory.
pub async fn held_stays(conn: &mut AnyConnection, room_type_id: &str) -> StoreResult<Vec<(NaiveDate, NaiveDate)>> {
    sqlx::query(
        "SELECT check_in_date, check_out_date FROM reservation_rooms WHERE room_type_id = $1 AND holds_inventory = 1",
    )
    .bind(room_type_id)
    .fetch_all(conn)
    .await?
    .iter()
    .map(|row| Ok((row.get_date("check_in_date")?, row.get_date("check_out_date")?)))
    .collect()
}

/// Whether the organization has a reservation with this reference.
pub async fn reference_taken(conn: &mut AnyConnection, organization_id: &str, reference: &str) -> StoreResult<bool> {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM reservations WHERE organization_id = $1 AND reference = $2")
        .bind(organization_id)
        .bind(reference)
        .fetch_one(conn)
        .await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

/// A stay in the house: a checked-in reservation that has a physical room assigned.
#[derive(Debug, Clone)]
pub struct Occupant {
    pub reservation_id: String,
    pub reference: String,
    pub check_out_date: NaiveDate,
}

/// The checked-in stay, other than `except_reservation`, that has `room_id` assigned, whatever its dates (a guest
/// who stays past the departure date is still in the room).
pub async fn occupant(
    conn: &mut AnyConnection,
    room_id: &str,
    except_reservation: &str,
) -> StoreResult<Option<Occupant>> {
    let row = sqlx::query(
        "SELECT r.id, r.reference, r.check_out_date FROM reservation_rooms rr \
         JOIN reservations r ON r.id = rr.reservation_id \
         WHERE rr.room_id = $1 AND rr.status = $2 AND r.status = $3 AND r.id <> $4 \
         ORDER BY r.check_in_date LIMIT 1",
    )
    .bind(room_id)
    .bind(RoomStatus::Confirmed.as_str())
    .bind(ReservationStatus::CheckedIn.as_str())
    .bind(except_reservation)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(Occupant {
            reservation_id: row.try_get("id")?,
            reference: row.try_get("reference")?,
            check_out_date: row.get_date("check_out_date")?,
        })
    })
    .transpose()
}

/// A stay's check-out as recorded: when, and what an early departure shortened (to restore on an undo).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOut {
    pub checked_out_at: chrono::DateTime<chrono::Utc>,
    /// The departure date and instant that were booked, when the stay ended before them.
    pub booked: Option<(NaiveDate, chrono::DateTime<chrono::Utc>)>,
}

pub async fn save_check_out(conn: &mut AnyConnection, reservation_id: &str, c: &CheckOut) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO check_outs (reservation_id, checked_out_at, booked_check_out_date, booked_end_time) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (reservation_id) DO UPDATE SET checked_out_at = excluded.checked_out_at, \
         booked_check_out_date = excluded.booked_check_out_date, booked_end_time = excluded.booked_end_time",
    )
    .bind(reservation_id)
    .bind(format_ts(c.checked_out_at))
    .bind(c.booked.map(|(date, _)| format_date(date)))
    .bind(c.booked.map(|(_, at)| format_ts(at)))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn check_out(conn: &mut AnyConnection, reservation_id: &str) -> StoreResult<Option<CheckOut>> {
    let row = sqlx::query(
        "SELECT checked_out_at, booked_check_out_date, booked_end_time FROM check_outs WHERE reservation_id = $1",
    )
    .bind(reservation_id)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        let date: Option<String> = row.try_get("booked_check_out_date")?;
        let booked = match (date, row.get_opt_ts("booked_end_time")?) {
            (Some(date), Some(at)) => Some((native::parse_date(&date)?, at)),
            _ => None,
        };
        Ok(CheckOut { checked_out_at: row.get_ts("checked_out_at")?, booked })
    })
    .transpose()
}

pub async fn delete_check_out(conn: &mut AnyConnection, reservation_id: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM check_outs WHERE reservation_id = $1").bind(reservation_id).execute(conn).await?;
    Ok(())
}
