//! The audit log: entries written with the change they describe, read by record, actor, hotel and time. The tables
//! refuse UPDATE, and DELETE of an entry before its `keep_until` (migration 0030's triggers) or, among the newest
//! entries, before it is filed (0037's), so this module has no statement that changes an entry, and deletes only in
//! [`prune`] and [`file_recent`]. What an entry says, the domain decides (`domain::audit`).
//!
//! Where an entry is written depends on the engine (docs/audit-log.md): PostgreSQL writes it into `audit_log`;
//! SQLite into `audit_log_recent`, a table without an index that [`file_recent`] empties into `audit_log` in
//! batches, because SQLite's one writer would otherwise write the log's seven B-trees inside every write's lock.
//! Reads read the view `audit_entries`, both tables together, so an entry is found the moment its change commits.

use chrono::{DateTime, NaiveDate, Utc};

use super::{format_ts, Db, RowExt, StoreResult};
use crate::model::audit::{AuditActor, AuditEntry, BulkSummary, FieldChange};
use crate::store::schema::{ApiKeys, AuditLog as A, AuditLogRecent, Operators};
use crate::store::statement::{order_and_page, rendered, statement, Cond, Expr, ExprTrait, Order, Sql};
use crate::store::{query, Conn, Engine, Page, Row};

/// The view of every entry, filed (`audit_log`) or not yet (`audit_log_recent`), with the log's columns (migration
/// 0037). Not a table, so `store-schema.py` leaves it out of `schema.rs`.
#[derive(Debug, Clone, Copy, sea_query::Iden)]
enum AuditEntries {
    #[iden = "audit_entries"]
    Table,
}

/// Entries filed per transaction by [`file_recent`], so that a backlog never holds SQLite's writer for long.
const FILE_BATCH: u64 = 5000;

/// Rows per INSERT: 16 values each, far below either engine's limit of bound values.
const ROWS_PER_INSERT: usize = 500;

const COLUMNS: [A; 15] = [
    A::Id,
    A::HotelId,
    A::ChangeId,
    A::At,
    A::ActorKind,
    A::ActorId,
    A::ActorName,
    A::ActorRole,
    A::ActorAddress,
    A::RecordKind,
    A::RecordId,
    A::Action,
    A::Fields,
    A::Summary,
    A::OrganizationId,
];

/// Writes `entries` of `organization_id`s, each kept until `keep_until`.
pub async fn insert(conn: &mut Conn, entries: &[(String, AuditEntry)], keep_until: DateTime<Utc>) -> StoreResult<()> {
    for insert in insert_statements(conn.engine(), entries, keep_until)? {
        statement(conn.engine(), &insert).execute(conn).await?;
    }
    Ok(())
}

/// The INSERTs of `entries` of `organization_id`s, each kept until `keep_until`: one per [`ROWS_PER_INSERT`], into
/// the table `engine` writes new entries into (the module's note).
pub(super) fn insert_statements(
    engine: Engine,
    entries: &[(String, AuditEntry)],
    keep_until: DateTime<Utc>,
) -> StoreResult<Vec<sea_query::InsertStatement>> {
    let keep_until = format_ts(keep_until);
    let mut statements = Vec::new();
    for chunk in entries.chunks(ROWS_PER_INSERT) {
        let mut insert = Sql::insert();
        match engine {
            Engine::Sqlite => insert.into_table(AuditLogRecent::Table),
            Engine::Postgres => insert.into_table(A::Table),
        };
        insert.columns(COLUMNS.into_iter().chain([A::KeepUntil]));
        for (organization_id, entry) in chunk {
            let fields = serde_json::to_string(&entry.fields).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
            let summary = match &entry.summary {
                Some(summary) => Some(serde_json::to_string(summary).map_err(|e| sqlx::Error::Encode(Box::new(e)))?),
                None => None,
            };
            // Cannot panic: one value for each of the columns named above.
            insert.values_panic([
                Expr::val(entry.id.as_str()),
                Expr::val(entry.hotel_id.as_deref()),
                Expr::val(entry.change_id.as_str()),
                Expr::val(format_ts(entry.at)),
                Expr::val(entry.actor.kind.as_str()),
                Expr::val(entry.actor.id.as_deref()),
                Expr::val(entry.actor.name.as_deref()),
                Expr::val(entry.actor.role.as_deref()),
                Expr::val(entry.actor.address.as_deref()),
                Expr::val(entry.record_kind.as_str()),
                Expr::val(entry.record_id.as_str()),
                Expr::val(entry.action.as_str()),
                Expr::val(fields),
                Expr::val(summary),
                Expr::val(organization_id.as_str()),
                Expr::val(keep_until.as_str()),
            ]);
        }
        statements.push(insert);
    }
    Ok(statements)
}

/// An operator's name and role, as the log keeps them beside the operator's id.
pub async fn operator_name_and_role(conn: &mut Conn, operator_id: &str) -> StoreResult<Option<(String, String)>> {
    let select = Sql::select()
        .columns([Operators::Name, Operators::Role])
        .from(Operators::Table)
        .and_where(Expr::col(Operators::Id).eq(operator_id))
        .take();
    Ok(match statement(conn.engine(), &select).fetch_optional(conn).await? {
        Some(row) => Some((row.try_get("name")?, row.try_get("role")?)),
        None => None,
    })
}

/// An API key's name, as the log keeps it beside the key's id.
pub async fn api_key_name(conn: &mut Conn, key_id: &str) -> StoreResult<Option<String>> {
    let select =
        Sql::select().column(ApiKeys::Name).from(ApiKeys::Table).and_where(Expr::col(ApiKeys::Id).eq(key_id)).take();
    Ok(match statement(conn.engine(), &select).fetch_optional(conn).await? {
        Some(row) => Some(row.try_get("name")?),
        None => None,
    })
}

fn entry(row: &Row) -> StoreResult<AuditEntry> {
    let fields: String = row.try_get("fields")?;
    let fields: Vec<FieldChange> =
        serde_json::from_str(&fields).map_err(|e| sqlx::Error::Decode(format!("audit fields: {e}").into()))?;
    let summary: Option<String> = row.try_get("summary")?;
    let summary: Option<BulkSummary> = match summary {
        Some(text) => {
            Some(serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(format!("audit summary: {e}").into()))?)
        }
        None => None,
    };
    Ok(AuditEntry {
        id: row.try_get("id")?,
        at: row.get_ts("at")?,
        change_id: row.try_get("change_id")?,
        hotel_id: row.try_get("hotel_id")?,
        actor: AuditActor {
            kind: row.try_get("actor_kind")?,
            id: row.try_get("actor_id")?,
            name: row.try_get("actor_name")?,
            role: row.try_get("actor_role")?,
            address: row.try_get("actor_address")?,
        },
        record_kind: row.try_get("record_kind")?,
        record_id: row.try_get("record_id")?,
        action: row.try_get("action")?,
        fields,
        summary,
    })
}

/// Which entries a list asks for. `hotels`: only entries of these hotels (a pinned key's); `None`: any.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditWhere<'a> {
    pub record_ids: Option<&'a [String]>,
    pub actor_id: Option<&'a str>,
    pub hotel_id: Option<&'a str>,
    /// Written on or after the start of this day (UTC).
    pub from: Option<NaiveDate>,
    /// Written before the end of this day (UTC).
    pub to: Option<NaiveDate>,
}

fn filter(organization_id: &str, by: AuditWhere<'_>, page: Option<&Page>) -> Cond {
    let mut cond = Cond::all().add(Expr::col(A::OrganizationId).eq(organization_id));
    if let Some(ids) = by.record_ids {
        cond = cond.add(Expr::col(A::RecordId).is_in(ids.iter().map(String::as_str)));
    }
    if let Some(actor) = by.actor_id {
        cond = cond.add(Expr::col(A::ActorId).eq(actor));
    }
    if let Some(hotel) = by.hotel_id {
        cond = cond.add(Expr::col(A::HotelId).eq(hotel));
    }
    if let Some(from) = by.from.and_then(|d| d.and_hms_opt(0, 0, 0)) {
        cond = cond.add(Expr::col(A::At).gte(format_ts(from.and_utc())));
    }
    if let Some(after) = by.to.and_then(|d| d.succ_opt()).and_then(|d| d.and_hms_opt(0, 0, 0)) {
        cond = cond.add(Expr::col(A::At).lt(format_ts(after.and_utc())));
    }
    if let Some(ids) = page.and_then(|p| p.ids.as_ref()) {
        cond = cond.add(Expr::col(A::Id).is_in(ids.iter().map(String::as_str)));
    }
    cond
}

pub async fn count(db: &Db, organization_id: &str, by: AuditWhere<'_>, page: &Page) -> StoreResult<i64> {
    let counted = Sql::select()
        .expr_as(Expr::col(sea_query::Asterisk).count(), "n")
        .from(AuditEntries::Table)
        .cond_where(filter(organization_id, by, Some(page)))
        .take();
    let (sql, values) = rendered(db.engine(), &counted)?;
    super::count(db, &sql, values).await
}

/// The entries, paged and streamed in `page`'s order (by id: the order they were written).
pub async fn list(
    db: &Db,
    organization_id: &str,
    by: AuditWhere<'_>,
    page: &Page,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<AuditEntry>>> {
    let mut select = Sql::select();
    select.columns(COLUMNS).from(AuditEntries::Table).cond_where(filter(organization_id, by, Some(page)));
    order_and_page(&mut select, page);
    let (sql, values) = rendered(db.engine(), &select)?;
    super::stream(db, sql, values, entry).await
}

/// The history of some records (a reservation and its folio), oldest first, at most `limit` entries (the newest).
pub async fn of_records(
    conn: &mut Conn,
    organization_id: &str,
    record_ids: &[String],
    limit: u64,
) -> StoreResult<Vec<AuditEntry>> {
    if record_ids.is_empty() {
        return Ok(Vec::new());
    }
    let by = AuditWhere { record_ids: Some(record_ids), ..AuditWhere::default() };
    let select = Sql::select()
        .columns(COLUMNS)
        .from(AuditEntries::Table)
        .cond_where(filter(organization_id, by, None))
        .order_by(A::Id, Order::Desc)
        .limit(limit)
        .take();
    let mut entries =
        statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(entry).collect::<StoreResult<Vec<_>>>()?;
    entries.reverse();
    Ok(entries)
}

/// Deletes up to `limit` filed entries whose retention ended before `now`; answers how many. An entry not yet filed
/// is pruned once [`file_recent`] has filed it.
pub async fn prune(conn: &mut Conn, now: DateTime<Utc>, limit: u64) -> StoreResult<u64> {
    let expired = Sql::select()
        .column(A::Id)
        .from(A::Table)
        .and_where(Expr::col(A::KeepUntil).lt(format_ts(now)))
        .order_by(A::KeepUntil, Order::Asc)
        .limit(limit)
        .take();
    let delete = Sql::delete().from_table(A::Table).and_where(Expr::col(A::Id).in_subquery(expired)).take();
    Ok(statement(conn.engine(), &delete).execute(conn).await?.rows_affected())
}

/// Files the newest entries (`audit_log_recent`) into the log, [`FILE_BATCH`] per transaction until none is left;
/// answers how many. An entry is read the same before and after (the view `audit_entries`); filing only moves the
/// cost of the log's indexes out of the writes, into batches that write each page once. Several processes may run
/// it at once: an entry another filed first is left alone (`ON CONFLICT`), and it leaves `audit_log_recent` only
/// once it is in `audit_log`, which the table's trigger checks again.
pub async fn file_recent(db: &Db) -> StoreResult<u64> {
    let columns = COLUMNS.into_iter().chain([A::KeepUntil]);
    let mut newest = Sql::select();
    newest
        .columns(columns.clone())
        .from(AuditLogRecent::Table)
        // SQLite reads an `ON CONFLICT` after `INSERT … SELECT … FROM t` as a join's constraint without a WHERE.
        .and_where(Expr::cust("1 = 1"))
        .limit(FILE_BATCH);
    let mut file = Sql::insert();
    file.into_table(A::Table)
        .columns(columns)
        .select_from(newest)
        .map_err(|e| sqlx::Error::Protocol(format!("filing the audit log: {e}")))?
        .on_conflict(sea_query::OnConflict::column(A::Id).do_nothing().to_owned());
    let filed = Expr::exists(
        Sql::select()
            .expr(Expr::val(1))
            .from(A::Table)
            .and_where(Expr::col((A::Table, A::Id)).equals((AuditLogRecent::Table, AuditLogRecent::Id)))
            .take(),
    );
    let clear = Sql::delete().from_table(AuditLogRecent::Table).and_where(filed).take();
    let mut total = 0;
    loop {
        // Most rounds find nothing: a read says so without taking SQLite's one writer.
        let waiting: i64 = query("SELECT COUNT(*) FROM (SELECT 1 FROM audit_log_recent LIMIT 1) AS any_entry")
            .fetch_one(&mut *db.read().await?)
            .await?
            .try_get(0)?;
        if waiting == 0 {
            return Ok(total);
        }
        let mut tx = db.begin_write().await?;
        statement(tx.engine(), &file).execute(tx.conn()).await?;
        let moved = statement(tx.engine(), &clear).execute(tx.conn()).await?.rows_affected();
        tx.commit().await?;
        total += moved;
        if moved < FILE_BATCH {
            return Ok(total);
        }
    }
}
