//! API keys, managed by operators. The secret is shown once, in the create answer.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::{Actor, Scope};
use super::validate::{clean, Checks};
use super::{new_id, now, secrets, Error, Result};
use crate::domain::change::{Change, Record, RecordKind, Writer};
pub use crate::model::api_keys::ApiKey;
use crate::store::{self, Db};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyIn {
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: String,
    /// Scopes to grant. Left out or empty: every `:read` scope.
    #[serde(default)]
    pub scopes: Vec<Scope>,
    /// Pins the key to one hotel of the organization. Immutable.
    #[serde(default)]
    pub hotel_id: Option<String>,
    /// Requests per minute (1 to 1,000,000); left out or `null`: the service default.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000000)]
    pub rate_limit_per_minute: Option<i64>,
}

/// Changes to a key; fields left out keep their value. The pin and the secret cannot change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyPatch {
    #[schema(nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    #[serde(default, deserialize_with = "super::not_null")]
    pub name: Option<String>,
    /// Replaces the scopes. Empty: every `:read` scope.
    #[schema(nullable = false)]
    #[serde(default, deserialize_with = "super::not_null")]
    pub scopes: Option<Vec<Scope>>,
    /// Requests per minute (1 to 1,000,000); `null`: back to the service default.
    #[serde(default, deserialize_with = "super::nullable")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000000)]
    pub rate_limit_per_minute: Option<Option<i64>>,
}

/// The create answer: the key and, this once, its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyCreated {
    #[serde(flatten)]
    pub key: ApiKey,
    /// Send as `Authorization: Basic <base64 of this secret>`. Never shown again.
    pub secret: String,
}

/// The highest per-key rate limit, in requests per minute.
pub const MAX_RATE_LIMIT: i64 = 1_000_000;

fn effective_scopes(mut scopes: Vec<Scope>) -> Vec<Scope> {
    if scopes.is_empty() {
        scopes = Scope::DEFAULT.to_vec();
    }
    scopes.sort_unstable();
    scopes.dedup();
    scopes
}

pub async fn list(db: &Db, actor: &Actor) -> Result<Vec<ApiKey>> {
    actor.require(crate::domain::access::Task::Administer)?;
    Ok(store::api_keys::list(&mut *db.read().await?, &actor.organization_id).await?)
}

/// One key of the actor's organization (without its secret, which is never kept).
pub async fn get(db: &Db, actor: &Actor, id: &str) -> Result<ApiKey> {
    actor.require(crate::domain::access::Task::Administer)?;
    store::api_keys::get(&mut *db.read().await?, &actor.organization_id, id).await?.ok_or(Error::NotFound("API key"))
}

/// Creates a key for an organization, by the service's administrator (the admin command).
pub async fn create_for_organization(db: &Db, organization_id: &str, input: ApiKeyIn) -> Result<ApiKeyCreated> {
    create_as(db, Writer::CommandLine, organization_id, input).await
}

/// Creates a key for an organization, by `writer` (the operator check is the caller's).
pub async fn create_as(db: &Db, writer: Writer, organization_id: &str, input: ApiKeyIn) -> Result<ApiKeyCreated> {
    let mut checks = Checks::new();
    checks.line("name", &input.name, 200);
    if let Some(limit) = input.rate_limit_per_minute {
        checks.range("rateLimitPerMinute", limit, 1, MAX_RATE_LIMIT);
    }
    checks.finish()?;
    let mut tx = Change::begin_as(db, writer).await?;
    if let Some(hotel_id) = &input.hotel_id {
        if store::hotels::get(tx.conn(), organization_id, hotel_id).await?.is_none() {
            return Err(Error::NotFound("hotel"));
        }
    }
    let secret = secrets::generate(secrets::API_KEY_PREFIX);
    let key = ApiKey {
        id: new_id(),
        name: clean(&input.name),
        scopes: effective_scopes(input.scopes),
        hotel_id: input.hotel_id,
        rate_limit_per_minute: input.rate_limit_per_minute,
        created_at: now(),
        last_used_at: None,
    };
    store::api_keys::insert(tx.conn(), organization_id, &key, &secrets::digest(&secret)).await?;
    tx.created(organization_id, &key).await?;
    tx.commit().await?;
    Ok(ApiKeyCreated { key, secret })
}

pub async fn create(db: &Db, actor: &Actor, input: ApiKeyIn) -> Result<ApiKeyCreated> {
    actor.require(crate::domain::access::Task::Administer)?;
    create_as(db, Writer::for_actor(actor), &actor.organization_id, input).await
}

pub async fn update(db: &Db, actor: &Actor, id: &str, patch: ApiKeyPatch) -> Result<ApiKey> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut checks = Checks::new();
    if let Some(name) = &patch.name {
        checks.line("name", name, 200);
    }
    if let Some(Some(limit)) = patch.rate_limit_per_minute {
        checks.range("rateLimitPerMinute", limit, 1, MAX_RATE_LIMIT);
    }
    checks.finish()?;
    let mut tx = Change::begin(db, actor).await?;
    let mut key =
        store::api_keys::get(tx.conn(), &actor.organization_id, id).await?.ok_or(Error::NotFound("API key"))?;
    let before = key.clone();
    if let Some(name) = patch.name {
        key.name = clean(&name);
    }
    if let Some(scopes) = patch.scopes {
        key.scopes = effective_scopes(scopes);
    }
    if let Some(limit) = patch.rate_limit_per_minute {
        key.rate_limit_per_minute = limit;
    }
    store::api_keys::update(tx.conn(), &actor.organization_id, &key).await?;
    tx.updated(&actor.organization_id, &before, &key).await?;
    tx.commit().await?;
    Ok(key)
}

/// Deletes (revokes) a key: its secret stops working at once.
pub async fn delete(db: &Db, actor: &Actor, id: &str) -> Result<ApiKey> {
    actor.require(crate::domain::access::Task::Administer)?;
    let mut tx = Change::begin(db, actor).await?;
    let key = store::api_keys::get(tx.conn(), &actor.organization_id, id).await?.ok_or(Error::NotFound("API key"))?;
    store::api_keys::delete(tx.conn(), &actor.organization_id, id).await?;
    tx.deleted(&actor.organization_id, &key).await?;
    tx.commit().await?;
    Ok(key)
}

impl Record for ApiKey {
    const KIND: RecordKind = RecordKind::ApiKey;

    fn hotel_id(&self) -> Option<&str> {
        self.hotel_id.as_deref()
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }
}
