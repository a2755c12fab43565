//! What a change to the records is: who makes it ([`Writer`]), which record it wrote ([`RecordKind`]) and how
//! ([`Action`]). The door every write goes through, `domain::change`, speaks of changes in these words; they live
//! here so that the store can keep them (the audit log, channel change rows) without naming the domain.

/// Who makes a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writer {
    /// An operator, signed in (the dashboard, an operator token on the API).
    Operator { operator_id: String },
    /// A caller of the API with an API key.
    ApiKey { key_id: String },
    /// A guest on the public booking page or the public booking API, from a client address.
    BookingPage { address: String },
    /// An AI assistant through the assistant endpoint, registered as this OAuth client.
    Assistant { client_id: String },
    /// A sales channel through a channel manager.
    Channel { channel: String },
    /// Someone not signed in yet, from a client address: signing in, accepting an invitation, registering an
    /// assistant.
    Visitor { address: String },
    /// A job of the service itself.
    Job(Job),
    /// The service's administrator, with the `frontdesk` command.
    CommandLine,
}

/// The service's own jobs that write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// `serve --demo` seeding its data.
    Demo,
    /// Starting up: the service's own keys.
    Startup,
    /// Bringing older records up to date after a migration.
    Migration,
    /// Sending guest e-mails.
    MailDispatcher,
    /// Delivering webhooks.
    WebhookDispatcher,
    /// Recording when a credential was last used.
    LastUse,
    /// Closing a hotel's business day: posting the nights that passed, marking no-shows.
    EndOfDay,
    /// Deleting audit log entries whose retention has ended.
    AuditRetention,
    /// Sending availability, rates and restrictions to channel managers (docs/channels.md).
    ChannelDispatcher,
}

/// The kinds of record a change writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum RecordKind {
    Organization,
    Operator,
    Invitation,
    Hotel,
    BillingSettings,
    RoomType,
    Room,
    RatePlan,
    DailyRate,
    Guest,
    Reservation,
    Folio,
    /// A stay's exemption from the city tax, with its reason (named by its folio's id).
    CityTaxExemption,
    /// A reservation's flag that it needs a person's attention (named by the reservation's id).
    ReservationAttention,
    Payment,
    Invoice,
    GuestMessage,
    MessageSettings,
    MessageWording,
    WebhookSubscription,
    ApiKey,
    AccessToken,
    ConnectedAssistant,
}

/// What a change did to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    Created,
    Updated,
    Deleted,
}
