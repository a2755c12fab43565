//! Channel connections: a hotel connected to a channel manager (Channex), which is kept in step with what the
//! hotel sells (docs/channels.md).

use chrono::{DateTime, NaiveDate, Utc};

/// What a channel must be told again about a hotel: the rooms it can sell (availability, per room type), or its
/// rates and restrictions (per rate plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChannelChangeKind {
    Availability,
    Rates,
}

impl ChannelChangeKind {
    pub const ALL: [ChannelChangeKind; 2] = [ChannelChangeKind::Availability, ChannelChangeKind::Rates];

    pub fn as_str(self) -> &'static str {
        match self {
            ChannelChangeKind::Availability => "availability",
            ChannelChangeKind::Rates => "rates",
        }
    }

    pub fn parse(text: &str) -> Option<ChannelChangeKind> {
        ChannelChangeKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// Whether a connection sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionState {
    /// Changes are sent.
    Active,
    /// The channel refused the credentials (or an operator stopped it): nothing is sent, changes wait.
    Stopped,
}

impl ConnectionState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionState::Active => "active",
            ConnectionState::Stopped => "stopped",
        }
    }

    pub fn parse(text: &str) -> Option<ConnectionState> {
        [ConnectionState::Active, ConnectionState::Stopped].into_iter().find(|s| s.as_str() == text)
    }
}

/// A hotel's connection to a channel manager, as stored (the API key only sealed).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelConnection {
    pub id: String,
    pub organization_id: String,
    pub hotel_id: String,
    /// Which channel manager (`channex`).
    pub channel: String,
    /// Where its API is (`https://staging.channex.io/api/v1`).
    pub base_url: String,
    /// The hotel's id at the channel manager.
    pub property_id: String,
    pub api_key_sealed: String,
    /// The digest of the secret the channel's webhook sends in its header; `None`: no webhook is accepted.
    pub webhook_secret_digest: Option<String>,
    /// The channel manager's id of the booking webhook registered from here; `None`: none was.
    pub webhook_id: Option<String>,
    pub state: ConnectionState,
    /// Why the connection stopped, in words.
    pub state_reason: Option<String>,
    /// Nothing is sent before this instant (after an error answer).
    pub paused_until: Option<DateTime<Utc>>,
    /// The hotel's local hour (0 to 23) of the nightly full sync; `None`: none.
    pub nightly_sync_hour: Option<i64>,
    /// The hotel's date the nightly full sync last ran on.
    pub nightly_synced_on: Option<NaiveDate>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Our room type ↔ the channel's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomTypeMapping {
    pub room_type_id: String,
    pub remote_id: String,
}

/// Our rate plan on one room type ↔ the channel's rate plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatePlanMapping {
    pub rate_plan_id: String,
    pub room_type_id: String,
    pub remote_id: String,
}

/// A recorded change: the hotel's `kind` changed over `[from, to]` (inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelChange {
    pub id: String,
    pub kind: ChannelChangeKind,
    /// The room type (availability) or rate plan (rates) that changed; `None`: all of the hotel's.
    pub subject: Option<String>,
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// How a request to a channel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestOutcome {
    /// Accepted (perhaps with warnings about some values): the changes it carried are done.
    Accepted,
    /// Refused as a whole for its values (422): the changes it carried are done, the refusal is shown.
    Refused,
    /// Failed in passing (429, 5xx, no answer): the changes wait and are sent again after the pause.
    Retry,
    /// The channel refused the credentials: the connection stops, the changes wait.
    Unauthorized,
}

impl RequestOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RequestOutcome::Accepted => "accepted",
            RequestOutcome::Refused => "refused",
            RequestOutcome::Retry => "retry",
            RequestOutcome::Unauthorized => "unauthorized",
        }
    }

    pub fn parse(text: &str) -> Option<RequestOutcome> {
        [RequestOutcome::Accepted, RequestOutcome::Refused, RequestOutcome::Retry, RequestOutcome::Unauthorized]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A request sent to a channel, as the connection page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRequest {
    pub id: String,
    pub connection_id: String,
    pub kind: ChannelChangeKind,
    pub sent_at: DateTime<Utc>,
    /// The HTTP status; `None` when no answer came.
    pub status: Option<i64>,
    pub outcome: RequestOutcome,
    /// The task id the channel gave the request.
    pub task_id: Option<String>,
    /// The answer in words.
    pub detail: String,
    /// The channel's warnings (JSON array: each refused value with its reasons).
    pub warnings: String,
    /// How many values the request carried.
    pub value_count: i64,
}

/// How many nights ahead, today included, a channel is told of (Channex's certification asks for 500).
pub const CHANNEL_HORIZON_DAYS: u64 = 500;

/// A booking revision as recorded when it was taken (or could not be).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRevision {
    pub revision_id: String,
    pub booking_id: String,
    /// `new`, `modified` or `cancelled`.
    pub status: String,
    /// The reservation the booking is (for an applied revision).
    pub reservation_id: Option<String>,
    /// `applied`, or `needs_attention` (not applied; `detail` says why).
    pub outcome: String,
    pub detail: String,
    pub recorded_at: DateTime<Utc>,
    /// When the channel was told the revision is in.
    pub acked_at: Option<DateTime<Utc>>,
}
