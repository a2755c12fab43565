//! The application: the state every request handler reaches, and the few request helpers that the REST API
//! ([`crate::http`]), the web pages ([`crate::web`]) and the assistant endpoint's endpoint share. Every layer may
//! import this module; it imports none of them, so the dependency runs one way (the routers are assembled in
//! [`crate::router`], above them all).
//!
//! * [`AppState`]: what every handler can reach.
//! * [`rate_limit`]: the limiter (in memory or in Redis) and the middleware that reports its decisions.
//! * [`limits`]: who the client is and counting a request against its limits, for extractors on every side.
//! * [`OwnFormat`]: the mark of an answer that carries its own error format (pages, OAuth, MCP).
//! * [`download`]: a file to download (a report's CSV), as both the REST API and the dashboard answer it.

pub mod download;
pub mod limits;
pub mod rate_limit;

use std::sync::Arc;

use crate::config::Config;
use crate::domain::availability::{AvailabilityCopies, OfferKey};
use crate::domain::service_keys::{KeyRing, KeySource, MasterKey};
use crate::domain::webhooks::WebhookSettings;
use crate::store::Db;
use rate_limit::RateLimiter;

/// What every handler can reach: a handle on one [`AppParts`], so that the copy axum makes for every request (and
/// each middleware that takes the state) is one reference count, not one per part. Cloning the parts themselves
/// (a dozen reference counts in [`Db`], the offer key's bytes) was about 7 % of the service's CPU on the single
/// reservation in `benches/throughput.rs` (measured with `perf`).
#[derive(Clone)]
pub struct AppState(Arc<AppParts>);

/// The parts of [`AppState`], reached through it (`state.db`, `state.config`).
pub struct AppParts {
    pub db: Db,
    pub config: Arc<Config>,
    /// Signs and checks public offers; kept in the database so every process shares it.
    pub offer_key: OfferKey,
    /// This process's copies of hotels' rates and inventory, for public availability searches.
    pub availability: AvailabilityCopies,
    /// `None` when rate limiting is turned off.
    pub limiter: Option<RateLimiter>,
    /// Seals subscription secrets; the URL policy.
    pub webhooks: WebhookSettings,
    /// `None` when metrics are not served (no `--metrics-token`, no `--metrics-listen`).
    pub metrics: Option<crate::metrics::Metrics>,
}

impl std::ops::Deref for AppState {
    type Target = AppParts;

    fn deref(&self) -> &AppParts {
        &self.0
    }
}

impl AppState {
    pub async fn new(db: Db, config: Config) -> anyhow::Result<AppState> {
        let keys = KeyRing::open(&db, &key_source(&config)?).await?;
        let offer_key = OfferKey::new(keys.offer_signing);
        let limiter = match config.rate_limits {
            true => Some(RateLimiter::new(config.redis_url.as_deref()).await?),
            false => None,
        };
        let webhooks = WebhookSettings::new(keys.sealing, config.webhook_allow_private_addresses);
        let availability = AvailabilityCopies::default();
        let metrics = crate::metrics::Metrics::new(&config);
        let parts = AppParts { db, config: Arc::new(config), offer_key, availability, limiter, webhooks, metrics };
        Ok(AppState(Arc::new(parts)))
    }

    /// Where the assistant endpoint's authorization server and resource live, and its token lifetimes.
    pub fn oauth(&self) -> crate::domain::oauth::Settings {
        crate::domain::oauth::Settings::new(
            &self.config.public_base(),
            chrono::TimeDelta::seconds(self.config.oauth_access_token_ttl_secs),
            chrono::TimeDelta::days(self.config.oauth_refresh_token_ttl_days),
        )
    }
}

/// Where `serve` takes its secrets key from: a file, or the environment (both at once is a mistake).
fn key_source(config: &Config) -> anyhow::Result<KeySource> {
    let current = match (&config.secrets_key_file, &config.secrets_key) {
        (Some(_), Some(_)) => anyhow::bail!("give the secrets key once: --secrets-key-file or FRONTDESK_SECRETS_KEY"),
        (Some(path), None) => Some(MasterKey::read(path)?),
        (None, Some(key)) => Some(MasterKey::parse(key.expose(), "FRONTDESK_SECRETS_KEY")?),
        (None, None) => None,
    };
    let previous = config.previous_secrets_key_file.as_deref().map(MasterKey::read).transpose()?;
    anyhow::ensure!(current.is_some() || previous.is_none(), "--previous-secrets-key-file needs a new secrets key too");
    Ok(KeySource { current, previous })
}

/// Marks an answer that speaks a protocol with error formats of its own (OAuth's `{error, error_description}`,
/// the MCP endpoint's JSON-RPC, the web and sign-in pages' HTML): the problem mapping of the REST API
/// (`http::problem::ensure_problem`) leaves it as it is.
#[derive(Debug, Clone, Copy)]
pub struct OwnFormat;
