//! Webhook subscriptions: who is told about which events, and the log of what was sent to them.
//!
//! Subscriptions are managed by operators only. The signing secret is shown once, in the create answer; it is
//! kept sealed ([`SecretBox`]) because the dispatcher needs it back to sign every delivery. Delivery itself is
//! [`crate::worker::webhooks`].

pub mod signature;
pub mod url_policy;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::events::EventKind;
use super::validate::Checks;
use super::{new_id, now, secrets, Actor, Error, FieldError, Result};
use crate::domain::change::{Change, Job, Record, RecordKind, Writer};
pub use crate::model::webhooks::{WebhookDelivery, WebhookSubscription};
pub use crate::store::webhooks::Target;
use crate::store::{self, Db};

use crate::store::webhooks::FailureCount;
pub use secrets::SecretBox;

/// After this many failed deliveries in a row a subscription is turned off (`active = false`).
pub const MAX_CONSECUTIVE_FAILURES: i64 = 20;
/// Whether a subscription with `consecutive_failures` failed deliveries in a row is turned off: the
/// [`MAX_CONSECUTIVE_FAILURES`]th failure in a row does it.
pub fn failures_turn_off(consecutive_failures: i64) -> bool {
    consecutive_failures >= MAX_CONSECUTIVE_FAILURES
}
/// How many recent delivery attempts are kept (and listed) per subscription.
pub const DELIVERY_LOG_SIZE: i64 = 100;
/// Longest accepted subscription URL.
pub const MAX_URL_LENGTH: usize = 2000;
/// The prefix of signing secrets, so that a leaked one is recognisable.
pub const SECRET_PREFIX: &str = "whsec_";

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSubscriptionIn {
    /// The hotel whose events are delivered (guests without a hotel reach every subscription). Immutable.
    pub hotel_id: String,
    /// An `http` or `https` URL on a public address.
    #[schema(max_length = 2000, format = "uri")]
    pub url: String,
    /// Event kinds to deliver; left out or empty: every kind.
    #[serde(default)]
    pub events: Vec<EventKind>,
}

/// Changes to a subscription; fields left out keep their value. The hotel and the secret cannot change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSubscriptionPatch {
    #[schema(nullable = false, max_length = 2000, format = "uri")]
    #[serde(default, deserialize_with = "super::not_null")]
    pub url: Option<String>,
    /// Replaces the event kinds; empty: every kind.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "super::not_null")]
    pub events: Option<Vec<EventKind>>,
    /// `true` turns a subscription back on and clears its failure count.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "super::not_null")]
    pub active: Option<bool>,
}

/// The create answer: the subscription and, this once, its signing secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSubscriptionCreated {
    #[serde(flatten)]
    pub subscription: WebhookSubscription,
    /// Verifies `X-Service-Signature` (HMAC-SHA256 keyed with this string). Never shown again.
    pub secret: String,
}

/// Which subscriptions want an event: an event of `kind` about a record of `organization_id` and `hotel_id`
/// (none: an organization-wide record, such as a guest of no hotel), which happened at `at`, goes to the active
/// subscriptions of that organization on that hotel (or on any hotel, for an organization-wide record) that chose
/// that kind, or chose none and it is one of the contract's six (the extensions' kinds go only to those who name
/// them), and were created before it happened: a subscription hears of changes made after it was
/// created, not before. (Only active subscriptions are targets.)
pub fn wants(
    target: &Target,
    organization_id: &str,
    hotel_id: Option<&str>,
    kind: EventKind,
    at: DateTime<Utc>,
) -> bool {
    target.organization_id == organization_id
        && at >= target.created_at
        && hotel_id.is_none_or(|h| h == target.hotel_id)
        && (target.events.contains(&kind) || (target.events.is_empty() && EventKind::CONTRACT.contains(&kind)))
}

/// Counts a failed delivery to subscription `id`; the [`MAX_CONSECUTIVE_FAILURES`]th in a row turns it off (see
/// [`failures_turn_off`]) and drops what it still had queued. Answers the new count and whether the subscription is
/// still active (`None` if it was deleted meanwhile).
pub async fn record_failed_delivery(db: &Db, id: &str) -> Result<Option<(i64, bool)>> {
    // A failure that is not counted is lost for good (nothing counts it later), so a transaction given up for a
    // concurrent one (a deadlock, on PostgreSQL) is tried again.
    let mut tries = 0;
    loop {
        tries += 1;
        match count_failed_delivery(db, id).await {
            Err(Error::Conflict(_)) if tries < 3 => continue,
            outcome => return outcome,
        }
    }
}

async fn count_failed_delivery(db: &Db, id: &str) -> Result<Option<(i64, bool)>> {
    let mut tx = Change::begin_as(db, Writer::Job(Job::WebhookDispatcher)).await?;
    let Some(FailureCount { consecutive_failures, active }) =
        store::webhooks::count_failure(tx.conn(), id, &store::format_ts(now())).await?
    else {
        return Ok(None);
    };
    let active = active && !failures_turn_off(consecutive_failures);
    if !active {
        store::webhooks::turn_off(tx.conn(), id).await?;
    }
    tx.commit().await?;
    Ok(Some((consecutive_failures, active)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// How many attempts, newest first (1 to 100, default 100).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// What the webhook endpoints need beyond the database: the key that seals secrets and the address policy.
#[derive(Clone)]
pub struct WebhookSettings {
    pub secret_box: SecretBox,
    /// Allows subscription URLs on private, loopback and link-local addresses (tests, local development).
    pub allow_private_addresses: bool,
}

impl WebhookSettings {
    /// The settings with the service's sealing key ([`crate::domain::service_keys::KeyRing`]).
    pub fn new(secret_box: SecretBox, allow_private_addresses: bool) -> WebhookSettings {
        WebhookSettings { secret_box, allow_private_addresses }
    }

    /// The settings of a process given no secrets key (the database keeps the keys): a second dispatcher of a test
    /// or a benchmark.
    pub async fn load(db: &Db, allow_private_addresses: bool) -> Result<WebhookSettings> {
        let keys =
            crate::domain::service_keys::KeyRing::open(db, &Default::default()).await.map_err(Error::Internal)?;
        Ok(WebhookSettings::new(keys.sealing, allow_private_addresses))
    }
}

pub async fn list(db: &Db, actor: &Actor) -> Result<Vec<WebhookSubscription>> {
    actor.require(crate::domain::access::Task::Administer)?;
    Ok(store::webhooks::list(&mut *db.read().await?, &actor.organization_id).await?)
}

pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<WebhookSubscription> {
    actor.require(crate::domain::access::Task::Administer)?;
    store::webhooks::get(&mut *db.read().await?, &actor.organization_id, id)
        .await?
        .ok_or(Error::NotFound("webhook subscription"))
}

/// Checks a subscription URL: its shape, then where its host resolves (see [`url_policy`]).
async fn check_url(field: &str, url: &str, settings: &WebhookSettings) -> Result<String> {
    let refuse = |message: String| Error::Validation(vec![FieldError::field(field, message)]);
    if url.chars().count() > MAX_URL_LENGTH {
        return Err(refuse(format!("must be at most {MAX_URL_LENGTH} characters")));
    }
    let parsed = url_policy::parse(url).map_err(refuse)?;
    url_policy::resolve_allowed(&parsed, settings.allow_private_addresses).await.map_err(refuse)?;
    Ok(parsed.to_string())
}

fn normalized(mut events: Vec<EventKind>) -> Vec<EventKind> {
    events.sort_by_key(|e| e.as_str());
    events.dedup();
    events
}

pub async fn create(
    db: &Db,
    settings: &WebhookSettings,
    actor: &Actor,
    input: WebhookSubscriptionIn,
) -> Result<WebhookSubscriptionCreated> {
    actor.require(crate::domain::access::Task::Administer)?;
    // The hotel first: resolving the URL's host may take a while, and is pointless for a hotel that is not there.
    if store::hotels::get(&mut *db.read().await?, &actor.organization_id, &input.hotel_id).await?.is_none() {
        return Err(Error::NotFound("hotel"));
    }
    let url = check_url("url", &input.url, settings).await?;
    let secret = secrets::generate(SECRET_PREFIX);
    let sealed = settings.secret_box.seal(&secret)?;
    let at = now();
    let subscription = WebhookSubscription {
        id: new_id(),
        hotel_id: input.hotel_id,
        url,
        events: normalized(input.events),
        active: true,
        consecutive_failures: 0,
        created_at: at,
        updated_at: at,
    };
    let mut tx = Change::begin(db, actor).await?;
    store::webhooks::insert(tx.conn(), &actor.organization_id, &subscription, &sealed).await?;
    tx.created(&actor.organization_id, &subscription).await?;
    tx.commit().await?;
    Ok(WebhookSubscriptionCreated { subscription, secret })
}

pub async fn update(
    db: &Db,
    settings: &WebhookSettings,
    actor: &Actor,
    id: &str,
    patch: WebhookSubscriptionPatch,
) -> Result<WebhookSubscription> {
    let current = get(db, actor, id).await?;
    // Resolving the host may take a while: do it before taking the write lock.
    let url = match &patch.url {
        Some(url) if *url != current.url => Some(check_url("url", url, settings).await?),
        _ => None,
    };
    let mut tx = Change::begin(db, actor).await?;
    let mut subscription = store::webhooks::get(tx.conn(), &actor.organization_id, id)
        .await?
        .ok_or(Error::NotFound("webhook subscription"))?;
    let before = subscription.clone();
    if let Some(url) = url {
        subscription.url = url;
    }
    if let Some(events) = patch.events {
        subscription.events = normalized(events);
    }
    if let Some(active) = patch.active {
        // Turning a subscription on (again) starts its failure count afresh.
        if active {
            subscription.consecutive_failures = 0;
        }
        subscription.active = active;
        // What a subscription turned off still had queued is not sent, when it is turned on again or ever.
        if !active {
            store::webhooks::drop_queue(tx.conn(), id).await?;
        }
    }
    subscription.updated_at = now();
    store::webhooks::update(tx.conn(), &actor.organization_id, &subscription).await?;
    tx.updated(&actor.organization_id, &before, &subscription).await?;
    tx.commit().await?;
    Ok(subscription)
}

pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<WebhookSubscription> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut tx = Change::begin(db, actor).await?;
    let subscription = store::webhooks::get(tx.conn(), &actor.organization_id, id)
        .await?
        .ok_or(Error::NotFound("webhook subscription"))?;
    store::webhooks::delete(tx.conn(), &actor.organization_id, id).await?;
    tx.deleted(&actor.organization_id, &subscription).await?;
    tx.commit().await?;
    Ok(subscription)
}

/// The most recent delivery attempts of a subscription, newest first.
pub async fn deliveries(db: &Db, actor: &Actor, id: &str, query: DeliveriesQuery) -> Result<Vec<WebhookDelivery>> {
    actor.require(crate::domain::access::Task::Administer)?;
    let limit = query.limit.unwrap_or(DELIVERY_LOG_SIZE);
    let mut checks = Checks::new();
    checks.range("limit", limit, 1, DELIVERY_LOG_SIZE);
    checks.finish()?;
    let mut conn = db.read().await?;
    if store::webhooks::get(&mut conn, &actor.organization_id, id).await?.is_none() {
        return Err(Error::NotFound("webhook subscription"));
    }
    Ok(store::webhooks::deliveries(&mut conn, id, limit).await?)
}

impl Record for WebhookSubscription {
    const KIND: RecordKind = RecordKind::WebhookSubscription;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
