//! Channel connections, their mappings, the change rows that say what a channel must be told again, and the log of
//! the requests sent (docs/channels.md).

use chrono::{DateTime, NaiveDate, Utc};

use super::{format_date, format_ts, new_id, RowExt, StoreResult};
use crate::model::channels::{
    ChannelChange, ChannelChangeKind, ChannelConnection, ChannelRequest, ChannelRevision, ConnectionState,
    RatePlanMapping, RequestOutcome, RoomTypeMapping,
};
use crate::store::schema::{
    ChannelBookings as B, ChannelChanges as K, ChannelConnections as C, ChannelRatePlans as P, ChannelRequests as Q,
    ChannelRevisions as V, ChannelRoomTypes as T,
};
use crate::store::statement::{
    insert_row, statement, Asterisk, Expr, ExprTrait, Func, OnConflict, Order, RowLocks, Sql,
};
use crate::store::{Conn, Row};

const COLUMNS: [C; 16] = [
    C::Id,
    C::OrganizationId,
    C::HotelId,
    C::Channel,
    C::BaseUrl,
    C::PropertyId,
    C::ApiKeySealed,
    C::WebhookSecretDigest,
    C::WebhookId,
    C::State,
    C::StateReason,
    C::PausedUntil,
    C::NightlySyncHour,
    C::NightlySyncedOn,
    C::CreatedAt,
    C::UpdatedAt,
];

fn connection(row: &Row) -> StoreResult<ChannelConnection> {
    let state: String = row.try_get("state")?;
    Ok(ChannelConnection {
        id: row.try_get("id")?,
        organization_id: row.try_get("organization_id")?,
        hotel_id: row.try_get("hotel_id")?,
        channel: row.try_get("channel")?,
        base_url: row.try_get("base_url")?,
        property_id: row.try_get("property_id")?,
        api_key_sealed: row.try_get("api_key_sealed")?,
        webhook_secret_digest: row.try_get("webhook_secret_digest")?,
        webhook_id: row.try_get("webhook_id")?,
        state: ConnectionState::parse(&state)
            .ok_or_else(|| super::Error::undecodable(format!("unknown connection state {state}")))?,
        state_reason: row.try_get("state_reason")?,
        paused_until: row.get_opt_ts("paused_until")?,
        nightly_sync_hour: row.try_get("nightly_sync_hour")?,
        nightly_synced_on: row.try_get("nightly_synced_on")?,
        created_at: row.get_ts("created_at")?,
        updated_at: row.get_ts("updated_at")?,
    })
}

/// Whether `hotel_id` has a channel connection (active or stopped: a stopped one keeps its changes for later).
pub async fn hotel_connected(conn: &mut Conn, hotel_id: &str) -> StoreResult<bool> {
    let select =
        Sql::select().column(C::Id).from(C::Table).and_where(Expr::col(C::HotelId).eq(hotel_id)).limit(1).take();
    Ok(statement(conn.engine(), &select).fetch_optional(conn).await?.is_some())
}

/// Records that `hotel_id`'s `kind` changed over `[from, to]`, for `subject` (a room type or rate plan) or all.
pub async fn record_change(
    conn: &mut Conn,
    hotel_id: &str,
    kind: ChannelChangeKind,
    subject: Option<&str>,
    from: NaiveDate,
    to: NaiveDate,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let insert = insert_row(
        K::Table,
        [
            (K::Id, Expr::val(new_id())),
            (K::HotelId, Expr::val(hotel_id)),
            (K::Kind, Expr::val(kind.as_str())),
            (K::SubjectId, Expr::val(subject.map(str::to_string))),
            (K::DateFrom, Expr::val(format_date(from))),
            (K::DateTo, Expr::val(format_date(to))),
            (K::CreatedAt, Expr::val(format_ts(at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

pub async fn insert(conn: &mut Conn, c: &ChannelConnection) -> StoreResult<()> {
    let insert = insert_row(
        C::Table,
        [
            (C::Id, Expr::val(&c.id)),
            (C::OrganizationId, Expr::val(&c.organization_id)),
            (C::HotelId, Expr::val(&c.hotel_id)),
            (C::Channel, Expr::val(&c.channel)),
            (C::BaseUrl, Expr::val(&c.base_url)),
            (C::PropertyId, Expr::val(&c.property_id)),
            (C::ApiKeySealed, Expr::val(&c.api_key_sealed)),
            (C::WebhookSecretDigest, Expr::val(c.webhook_secret_digest.clone())),
            (C::WebhookId, Expr::val(c.webhook_id.clone())),
            (C::State, Expr::val(c.state.as_str())),
            (C::StateReason, Expr::val(c.state_reason.clone())),
            (C::PausedUntil, Expr::val(c.paused_until.map(format_ts))),
            (C::NightlySyncHour, Expr::val(c.nightly_sync_hour)),
            (C::NightlySyncedOn, Expr::val(c.nightly_synced_on.map(format_date))),
            (C::CreatedAt, Expr::val(format_ts(c.created_at))),
            (C::UpdatedAt, Expr::val(format_ts(c.updated_at))),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// Writes what an operator may change of a connection: where, which property, the key, the state, the nightly
/// sync.
pub async fn update(conn: &mut Conn, c: &ChannelConnection) -> StoreResult<()> {
    let update = Sql::update()
        .table(C::Table)
        .values([
            (C::BaseUrl, Expr::val(&c.base_url)),
            (C::PropertyId, Expr::val(&c.property_id)),
            (C::ApiKeySealed, Expr::val(&c.api_key_sealed)),
            (C::WebhookSecretDigest, Expr::val(c.webhook_secret_digest.clone())),
            (C::WebhookId, Expr::val(c.webhook_id.clone())),
            (C::State, Expr::val(c.state.as_str())),
            (C::StateReason, Expr::val(c.state_reason.clone())),
            (C::PausedUntil, Expr::val(c.paused_until.map(format_ts))),
            (C::NightlySyncHour, Expr::val(c.nightly_sync_hour)),
            (C::NightlySyncedOn, Expr::val(c.nightly_synced_on.map(format_date))),
            (C::UpdatedAt, Expr::val(format_ts(c.updated_at))),
        ])
        .and_where(Expr::col(C::Id).eq(&c.id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// The connection of `hotel_id` of `organization_id` to `channel`.
pub async fn for_hotel(
    conn: &mut Conn,
    organization_id: &str,
    hotel_id: &str,
    channel: &str,
) -> StoreResult<Option<ChannelConnection>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(C::Table)
        .and_where(Expr::col(C::HotelId).eq(hotel_id))
        .and_where(Expr::col(C::OrganizationId).eq(organization_id))
        .and_where(Expr::col(C::Channel).eq(channel))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(connection).transpose()
}

pub async fn get(conn: &mut Conn, id: &str) -> StoreResult<Option<ChannelConnection>> {
    let select = Sql::select().columns(COLUMNS).from(C::Table).and_where(Expr::col(C::Id).eq(id)).take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(connection).transpose()
}

/// The active connections of `channel`, not paused at `at`, whose hotel has changes waiting.
pub async fn due(conn: &mut Conn, channel: &str, at: DateTime<Utc>) -> StoreResult<Vec<ChannelConnection>> {
    let waiting = Sql::select().distinct().column(K::HotelId).from(K::Table).take();
    let select = Sql::select()
        .columns(COLUMNS)
        .from(C::Table)
        .and_where(Expr::col(C::Channel).eq(channel))
        .and_where(Expr::col(C::State).eq(ConnectionState::Active.as_str()))
        .and_where(Expr::col(C::PausedUntil).is_null().or(Expr::col(C::PausedUntil).lte(format_ts(at))))
        .and_where(Expr::col(C::ClaimedUntil).is_null().or(Expr::col(C::ClaimedUntil).lt(format_ts(at))))
        .and_where(Expr::col(C::HotelId).in_subquery(waiting))
        .order_by(C::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(connection).collect()
}

/// Claims the connection for this dispatcher until `until`, if it is active and nobody holds it at `at`: whether
/// it was taken.
pub async fn claim(conn: &mut Conn, id: &str, at: DateTime<Utc>, until: DateTime<Utc>) -> StoreResult<bool> {
    let update = Sql::update()
        .table(C::Table)
        .value(C::ClaimedUntil, format_ts(until))
        .and_where(Expr::col(C::Id).eq(id))
        .and_where(Expr::col(C::State).eq(ConnectionState::Active.as_str()))
        .and_where(Expr::col(C::ClaimedUntil).is_null().or(Expr::col(C::ClaimedUntil).lt(format_ts(at))))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// Gives the claim up.
pub async fn release(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let update = Sql::update()
        .table(C::Table)
        .value(C::ClaimedUntil, Option::<String>::None)
        .and_where(Expr::col(C::Id).eq(id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Nothing is sent for the connection before `until`.
pub async fn pause(conn: &mut Conn, id: &str, until: DateTime<Utc>) -> StoreResult<()> {
    let update =
        Sql::update().table(C::Table).value(C::PausedUntil, format_ts(until)).and_where(Expr::col(C::Id).eq(id)).take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Stops the connection for `reason` (the channel refused the key): nothing more is sent until an operator
/// connects it again.
pub async fn stop(conn: &mut Conn, id: &str, reason: &str, at: DateTime<Utc>) -> StoreResult<()> {
    let update = Sql::update()
        .table(C::Table)
        .values([
            (C::State, Expr::val(ConnectionState::Stopped.as_str())),
            (C::StateReason, Expr::val(reason)),
            (C::UpdatedAt, Expr::val(format_ts(at))),
        ])
        .and_where(Expr::col(C::Id).eq(id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// Replaces the connection's mappings.
pub async fn set_mappings(
    conn: &mut Conn,
    connection_id: &str,
    room_types: &[RoomTypeMapping],
    rate_plans: &[RatePlanMapping],
) -> StoreResult<()> {
    let delete = Sql::delete().from_table(T::Table).and_where(Expr::col(T::ConnectionId).eq(connection_id)).take();
    statement(conn.engine(), &delete).execute(&mut *conn).await?;
    let delete = Sql::delete().from_table(P::Table).and_where(Expr::col(P::ConnectionId).eq(connection_id)).take();
    statement(conn.engine(), &delete).execute(&mut *conn).await?;
    for m in room_types {
        let insert = insert_row(
            T::Table,
            [
                (T::ConnectionId, Expr::val(connection_id)),
                (T::RoomTypeId, Expr::val(&m.room_type_id)),
                (T::RemoteId, Expr::val(&m.remote_id)),
            ],
        );
        statement(conn.engine(), &insert).execute(&mut *conn).await?;
    }
    for m in rate_plans {
        let insert = insert_row(
            P::Table,
            [
                (P::ConnectionId, Expr::val(connection_id)),
                (P::RatePlanId, Expr::val(&m.rate_plan_id)),
                (P::RoomTypeId, Expr::val(&m.room_type_id)),
                (P::RemoteId, Expr::val(&m.remote_id)),
            ],
        );
        statement(conn.engine(), &insert).execute(&mut *conn).await?;
    }
    Ok(())
}

pub async fn room_type_mappings(conn: &mut Conn, connection_id: &str) -> StoreResult<Vec<RoomTypeMapping>> {
    let select = Sql::select()
        .columns([T::RoomTypeId, T::RemoteId])
        .from(T::Table)
        .and_where(Expr::col(T::ConnectionId).eq(connection_id))
        .order_by(T::RoomTypeId, Order::Asc)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            Ok(RoomTypeMapping { room_type_id: row.try_get("room_type_id")?, remote_id: row.try_get("remote_id")? })
        })
        .collect()
}

pub async fn rate_plan_mappings(conn: &mut Conn, connection_id: &str) -> StoreResult<Vec<RatePlanMapping>> {
    let select = Sql::select()
        .columns([P::RatePlanId, P::RoomTypeId, P::RemoteId])
        .from(P::Table)
        .and_where(Expr::col(P::ConnectionId).eq(connection_id))
        .order_by(P::RatePlanId, Order::Asc)
        .order_by(P::RoomTypeId, Order::Asc)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            Ok(RatePlanMapping {
                rate_plan_id: row.try_get("rate_plan_id")?,
                room_type_id: row.try_get("room_type_id")?,
                remote_id: row.try_get("remote_id")?,
            })
        })
        .collect()
}

/// The first `limit` changes of `kind` waiting for `hotel_id`, oldest first, with when each was recorded.
pub async fn waiting_changes(
    conn: &mut Conn,
    hotel_id: &str,
    kind: ChannelChangeKind,
    limit: u64,
) -> StoreResult<Vec<(ChannelChange, DateTime<Utc>)>> {
    let select = Sql::select()
        .columns([K::Id, K::SubjectId, K::DateFrom, K::DateTo, K::CreatedAt])
        .from(K::Table)
        .and_where(Expr::col(K::HotelId).eq(hotel_id))
        .and_where(Expr::col(K::Kind).eq(kind.as_str()))
        .order_by(K::Id, Order::Asc)
        .limit(limit)
        .take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| {
            Ok((
                ChannelChange {
                    id: row.try_get("id")?,
                    kind,
                    subject: row.try_get("subject_id")?,
                    from: row.get_date("date_from")?,
                    to: row.get_date("date_to")?,
                },
                row.get_ts("created_at")?,
            ))
        })
        .collect()
}

/// How many changes wait for `hotel_id`.
pub async fn count_waiting(conn: &mut Conn, hotel_id: &str) -> StoreResult<i64> {
    let select = Sql::select()
        .expr_as(Func::count(Expr::col(Asterisk)), "n")
        .from(K::Table)
        .and_where(Expr::col(K::HotelId).eq(hotel_id))
        .take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("n")
}

/// Removes changes that were sent.
pub async fn delete_changes(conn: &mut Conn, ids: &[String]) -> StoreResult<()> {
    for chunk in ids.chunks(500) {
        let delete = Sql::delete()
            .from_table(K::Table)
            .and_where(Expr::col(K::Id).is_in(chunk.iter().map(String::as_str)))
            .take();
        statement(conn.engine(), &delete).execute(&mut *conn).await?;
    }
    Ok(())
}

pub async fn record_request(conn: &mut Conn, r: &ChannelRequest) -> StoreResult<()> {
    let insert = insert_row(
        Q::Table,
        [
            (Q::Id, Expr::val(&r.id)),
            (Q::ConnectionId, Expr::val(&r.connection_id)),
            (Q::Kind, Expr::val(r.kind.as_str())),
            (Q::SentAt, Expr::val(format_ts(r.sent_at))),
            (Q::Status, Expr::val(r.status)),
            (Q::Outcome, Expr::val(r.outcome.as_str())),
            (Q::TaskId, Expr::val(r.task_id.clone())),
            (Q::Detail, Expr::val(&r.detail)),
            (Q::Warnings, Expr::val(&r.warnings)),
            (Q::ValueCount, Expr::val(r.value_count)),
        ],
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// How many requests of `kind` were sent for the connection since `since` (the channel's limits count them all).
pub async fn requests_since(
    conn: &mut Conn,
    connection_id: &str,
    kind: ChannelChangeKind,
    since: DateTime<Utc>,
) -> StoreResult<i64> {
    let select = Sql::select()
        .expr_as(Func::count(Expr::col(Asterisk)), "n")
        .from(Q::Table)
        .and_where(Expr::col(Q::ConnectionId).eq(connection_id))
        .and_where(Expr::col(Q::Kind).eq(kind.as_str()))
        .and_where(Expr::col(Q::SentAt).gt(format_ts(since)))
        .take();
    statement(conn.engine(), &select).fetch_one(conn).await?.try_get("n")
}

/// The connection's last `limit` requests, newest first.
pub async fn recent_requests(conn: &mut Conn, connection_id: &str, limit: u64) -> StoreResult<Vec<ChannelRequest>> {
    let select = Sql::select()
        .columns([
            Q::Id,
            Q::ConnectionId,
            Q::Kind,
            Q::SentAt,
            Q::Status,
            Q::Outcome,
            Q::TaskId,
            Q::Detail,
            Q::Warnings,
            Q::ValueCount,
        ])
        .from(Q::Table)
        .and_where(Expr::col(Q::ConnectionId).eq(connection_id))
        .order_by(Q::Id, Order::Desc)
        .limit(limit)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(request).collect()
}

fn request(row: &Row) -> StoreResult<ChannelRequest> {
    let kind: String = row.try_get("kind")?;
    let outcome: String = row.try_get("outcome")?;
    Ok(ChannelRequest {
        id: row.try_get("id")?,
        connection_id: row.try_get("connection_id")?,
        kind: ChannelChangeKind::parse(&kind)
            .ok_or_else(|| super::Error::undecodable(format!("unknown channel change kind {kind}")))?,
        sent_at: row.get_ts("sent_at")?,
        status: row.try_get("status")?,
        outcome: RequestOutcome::parse(&outcome)
            .ok_or_else(|| super::Error::undecodable(format!("unknown request outcome {outcome}")))?,
        task_id: row.try_get("task_id")?,
        detail: row.try_get("detail")?,
        warnings: row.try_get("warnings")?,
        value_count: row.try_get("value_count")?,
    })
}

/// Every connection's id and sealed API key (moving them to another sealing key).
pub async fn sealed_keys(conn: &mut Conn) -> StoreResult<Vec<(String, String)>> {
    let select = Sql::select().columns([C::Id, C::ApiKeySealed]).from(C::Table).order_by(C::Id, Order::Asc).take();
    statement(conn.engine(), &select)
        .fetch_all(conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("id")?, row.try_get("api_key_sealed")?)))
        .collect()
}

pub async fn set_sealed_key(conn: &mut Conn, id: &str, sealed: &str) -> StoreResult<()> {
    let update = Sql::update().table(C::Table).value(C::ApiKeySealed, sealed).and_where(Expr::col(C::Id).eq(id)).take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// The connection of `hotel_id` to `channel`, whatever the organization (a channel's webhook names only the hotel).
pub async fn of_hotel(conn: &mut Conn, hotel_id: &str, channel: &str) -> StoreResult<Option<ChannelConnection>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(C::Table)
        .and_where(Expr::col(C::HotelId).eq(hotel_id))
        .and_where(Expr::col(C::Channel).eq(channel))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(connection).transpose()
}

/// The active connections of `channel`.
pub async fn active(conn: &mut Conn, channel: &str) -> StoreResult<Vec<ChannelConnection>> {
    let select = Sql::select()
        .columns(COLUMNS)
        .from(C::Table)
        .and_where(Expr::col(C::Channel).eq(channel))
        .and_where(Expr::col(C::State).eq(ConnectionState::Active.as_str()))
        .order_by(C::Id, Order::Asc)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(connection).collect()
}

/// Locks the connection until the transaction ends (revisions of one connection are applied one at a time).
pub async fn lock(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let select =
        Sql::select().column(C::Id).from(C::Table).and_where(Expr::col(C::Id).eq(id)).lock_for_writing().take();
    statement(conn.engine(), &select).fetch_optional(conn).await?;
    Ok(())
}

const REVISION_COLUMNS: [V; 8] =
    [V::RevisionId, V::BookingId, V::Status, V::ReservationId, V::Outcome, V::Detail, V::RecordedAt, V::AckedAt];

fn revision_of(row: &Row) -> StoreResult<ChannelRevision> {
    Ok(ChannelRevision {
        revision_id: row.try_get("revision_id")?,
        booking_id: row.try_get("booking_id")?,
        status: row.try_get("status")?,
        reservation_id: row.try_get("reservation_id")?,
        outcome: row.try_get("outcome")?,
        detail: row.try_get("detail")?,
        recorded_at: row.get_ts("recorded_at")?,
        acked_at: row.get_opt_ts("acked_at")?,
    })
}

pub async fn revision(conn: &mut Conn, connection_id: &str, revision_id: &str) -> StoreResult<Option<ChannelRevision>> {
    let select = Sql::select()
        .columns(REVISION_COLUMNS)
        .from(V::Table)
        .and_where(Expr::col(V::ConnectionId).eq(connection_id))
        .and_where(Expr::col(V::RevisionId).eq(revision_id))
        .take();
    statement(conn.engine(), &select).fetch_optional(conn).await?.as_ref().map(revision_of).transpose()
}

/// The reservation the channel's booking `booking_id` became in `hotel_id`, whichever connection took it.
pub async fn reservation_of_booking(
    conn: &mut Conn,
    hotel_id: &str,
    channel: &str,
    booking_id: &str,
) -> StoreResult<Option<String>> {
    let select = Sql::select()
        .column(B::ReservationId)
        .from(B::Table)
        .and_where(Expr::col(B::HotelId).eq(hotel_id))
        .and_where(Expr::col(B::Channel).eq(channel))
        .and_where(Expr::col(B::BookingId).eq(booking_id))
        .take();
    match statement(conn.engine(), &select).fetch_optional(conn).await? {
        Some(row) => row.try_get("reservation_id"),
        None => Ok(None),
    }
}

/// Records that the channel's booking `booking_id` became `reservation_id` (once: a booking is one reservation).
pub async fn link_booking(
    conn: &mut Conn,
    hotel_id: &str,
    channel: &str,
    booking_id: &str,
    reservation_id: &str,
) -> StoreResult<()> {
    let mut insert = insert_row(
        B::Table,
        [
            (B::HotelId, Expr::val(hotel_id)),
            (B::Channel, Expr::val(channel)),
            (B::BookingId, Expr::val(booking_id)),
            (B::ReservationId, Expr::val(reservation_id)),
        ],
    );
    insert.on_conflict(OnConflict::columns([B::HotelId, B::Channel, B::BookingId]).do_nothing().to_owned());
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// Records a revision's outcome (again, for one that needed attention and is tried again).
pub async fn record_revision(conn: &mut Conn, connection_id: &str, r: &ChannelRevision) -> StoreResult<()> {
    let mut insert = insert_row(
        V::Table,
        [
            (V::ConnectionId, Expr::val(connection_id)),
            (V::RevisionId, Expr::val(&r.revision_id)),
            (V::BookingId, Expr::val(&r.booking_id)),
            (V::Status, Expr::val(&r.status)),
            (V::ReservationId, Expr::val(r.reservation_id.clone())),
            (V::Outcome, Expr::val(&r.outcome)),
            (V::Detail, Expr::val(&r.detail)),
            (V::RecordedAt, Expr::val(format_ts(r.recorded_at))),
            (V::AckedAt, Expr::val(r.acked_at.map(format_ts))),
        ],
    );
    insert.on_conflict(
        OnConflict::columns([V::ConnectionId, V::RevisionId])
            .update_columns([V::Status, V::ReservationId, V::Outcome, V::Detail, V::RecordedAt])
            .to_owned(),
    );
    statement(conn.engine(), &insert).execute(conn).await?;
    Ok(())
}

/// Takes the acknowledgement of an applied revision for this process: notes it acknowledged at `at` unless it
/// was already (at `stale_before` or later: an older note is of a process that may have died before sending).
/// Whether it was taken.
pub async fn take_ack(
    conn: &mut Conn,
    connection_id: &str,
    revision_id: &str,
    at: DateTime<Utc>,
    stale_before: DateTime<Utc>,
) -> StoreResult<bool> {
    let update = Sql::update()
        .table(V::Table)
        .value(V::AckedAt, format_ts(at))
        .and_where(Expr::col(V::ConnectionId).eq(connection_id))
        .and_where(Expr::col(V::RevisionId).eq(revision_id))
        .and_where(Expr::col(V::Outcome).eq("applied"))
        .and_where(Expr::col(V::AckedAt).is_null().or(Expr::col(V::AckedAt).lt(format_ts(stale_before))))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// Gives an acknowledgement taken by [`take_ack`] back, when it could not be sent.
pub async fn give_ack_back(conn: &mut Conn, connection_id: &str, revision_id: &str) -> StoreResult<()> {
    let update = Sql::update()
        .table(V::Table)
        .value(V::AckedAt, Option::<String>::None)
        .and_where(Expr::col(V::ConnectionId).eq(connection_id))
        .and_where(Expr::col(V::RevisionId).eq(revision_id))
        .take();
    statement(conn.engine(), &update).execute(conn).await?;
    Ok(())
}

/// The connection's last `limit` revisions, newest first.
pub async fn recent_revisions(conn: &mut Conn, connection_id: &str, limit: u64) -> StoreResult<Vec<ChannelRevision>> {
    let select = Sql::select()
        .columns(REVISION_COLUMNS)
        .from(V::Table)
        .and_where(Expr::col(V::ConnectionId).eq(connection_id))
        .order_by(V::RecordedAt, Order::Desc)
        .limit(limit)
        .take();
    statement(conn.engine(), &select).fetch_all(conn).await?.iter().map(revision_of).collect()
}

/// Notes that the nightly full sync of `id` runs for the hotel's date `on`, unless a process already noted it:
/// whether this call did (then it queues the sync).
pub async fn take_nightly_sync(conn: &mut Conn, id: &str, on: NaiveDate) -> StoreResult<bool> {
    let update = Sql::update()
        .table(C::Table)
        .value(C::NightlySyncedOn, format_date(on))
        .and_where(Expr::col(C::Id).eq(id))
        .and_where(Expr::col(C::NightlySyncedOn).is_null().or(Expr::col(C::NightlySyncedOn).ne(format_date(on))))
        .take();
    Ok(statement(conn.engine(), &update).execute(conn).await?.rows_affected() == 1)
}

/// Deletes a connection with its mappings, request log and revisions (they cascade).
pub async fn delete(conn: &mut Conn, id: &str) -> StoreResult<()> {
    let delete = Sql::delete().from_table(C::Table).and_where(Expr::col(C::Id).eq(id)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}

/// Deletes every change waiting for `hotel_id`'s channels.
pub async fn delete_hotel_changes(conn: &mut Conn, hotel_id: &str) -> StoreResult<()> {
    let delete = Sql::delete().from_table(K::Table).and_where(Expr::col(K::HotelId).eq(hotel_id)).take();
    statement(conn.engine(), &delete).execute(conn).await?;
    Ok(())
}
