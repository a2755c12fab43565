//! Configuration: command-line flags, then `FRONTDESK_*` environment variables, then an optional TOML file
//! (`--config` / `FRONTDESK_CONFIG`), then defaults. Flags and variables are read by clap ([`ConfigArgs`]); the
//! file fills in whatever they leave unset.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// The settings a flag or an environment variable can give.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigArgs {
    /// A TOML file with settings (keys as in [`FileConfig`]: listen, database_url, …).
    #[arg(long = "config", env = "FRONTDESK_CONFIG", global = true)]
    pub config_file: Option<PathBuf>,
    /// Database URL: `sqlite://frontdesk.db` (default) or `postgres://user@host/db`.
    #[arg(long, env = "FRONTDESK_DATABASE_URL", global = true)]
    pub database_url: Option<String>,
    /// Maximum database connections of this process.
    #[arg(long, env = "FRONTDESK_DATABASE_MAX_CONNECTIONS", global = true)]
    pub database_max_connections: Option<u32>,
    /// Address to listen on (serve).
    #[arg(long, env = "FRONTDESK_LISTEN", global = true)]
    pub listen: Option<SocketAddr>,
    /// Log format: text or json.
    #[arg(long, env = "FRONTDESK_LOG_FORMAT", global = true)]
    pub log_format: Option<LogFormat>,
    /// Lifetime of operator access tokens, in days.
    #[arg(long, env = "FRONTDESK_TOKEN_TTL_DAYS", global = true)]
    pub token_ttl_days: Option<i64>,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "FRONTDESK_BODY_LIMIT_BYTES", global = true)]
    pub body_limit_bytes: Option<usize>,
    /// Longest a request may take, in seconds.
    #[arg(long, env = "FRONTDESK_REQUEST_TIMEOUT_SECS", global = true)]
    pub request_timeout_secs: Option<u64>,
    /// The service's public base URL (used in links it hands out).
    #[arg(long, env = "FRONTDESK_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,
    /// Redis for rate limits shared by several processes, e.g. `redis://127.0.0.1:6379`.
    #[arg(long, env = "FRONTDESK_REDIS_URL", global = true)]
    pub redis_url: Option<String>,
    /// `false` turns rate limiting off (for example behind a gateway that limits already).
    #[arg(long, env = "FRONTDESK_RATE_LIMITS", global = true)]
    pub rate_limits: Option<bool>,
    /// Requests per minute per API key (bursts up to the same number), unless the key says otherwise.
    #[arg(long, env = "FRONTDESK_RATE_LIMIT_PER_MINUTE", global = true)]
    pub rate_limit_per_minute: Option<u32>,
    /// Requests per minute per operator access token holder.
    #[arg(long, env = "FRONTDESK_OPERATOR_RATE_LIMIT_PER_MINUTE", global = true)]
    pub operator_rate_limit_per_minute: Option<u32>,
    /// Requests per minute per client address on the public availability and booking endpoints.
    #[arg(long, env = "FRONTDESK_PUBLIC_RATE_LIMIT_PER_MINUTE", global = true)]
    pub public_rate_limit_per_minute: Option<u32>,
    /// A header set by a trusted reverse proxy with the client address (e.g. `x-forwarded-for`); only then is it
    /// believed.
    #[arg(long, env = "FRONTDESK_TRUSTED_PROXY_HEADER", global = true)]
    pub trusted_proxy_header: Option<String>,
    /// `true` lets webhook subscriptions point at private, loopback and link-local addresses (local development,
    /// receivers inside your own network). Off by default: such URLs are refused.
    #[arg(long, env = "FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", global = true)]
    pub webhook_allow_private_addresses: Option<bool>,
    /// `false` runs this process without the webhook dispatcher (another process delivers).
    #[arg(long, env = "FRONTDESK_WEBHOOK_DISPATCHER", global = true)]
    pub webhook_dispatcher: Option<bool>,
    /// Lifetime of the assistant connector's OAuth access tokens, in seconds.
    #[arg(long, env = "FRONTDESK_OAUTH_ACCESS_TOKEN_TTL_SECS", global = true)]
    pub oauth_access_token_ttl_secs: Option<i64>,
    /// Lifetime of the assistant connector's OAuth refresh tokens, in days (each use rotates the token).
    #[arg(long, env = "FRONTDESK_OAUTH_REFRESH_TOKEN_TTL_DAYS", global = true)]
    pub oauth_refresh_token_ttl_days: Option<i64>,
}

/// The optional TOML file: the same settings as the flags, snake_case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub database_url: Option<String>,
    pub database_max_connections: Option<u32>,
    pub listen: Option<SocketAddr>,
    pub log_format: Option<LogFormat>,
    pub token_ttl_days: Option<i64>,
    pub body_limit_bytes: Option<usize>,
    pub request_timeout_secs: Option<u64>,
    pub public_url: Option<String>,
    pub redis_url: Option<String>,
    pub rate_limits: Option<bool>,
    pub rate_limit_per_minute: Option<u32>,
    pub operator_rate_limit_per_minute: Option<u32>,
    pub public_rate_limit_per_minute: Option<u32>,
    pub trusted_proxy_header: Option<String>,
    pub webhook_allow_private_addresses: Option<bool>,
    pub webhook_dispatcher: Option<bool>,
    pub oauth_access_token_ttl_secs: Option<i64>,
    pub oauth_refresh_token_ttl_days: Option<i64>,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub database_max_connections: u32,
    pub listen: SocketAddr,
    pub log_format: LogFormat,
    pub token_ttl_days: i64,
    pub body_limit_bytes: usize,
    pub request_timeout_secs: u64,
    pub public_url: Option<String>,
    pub redis_url: Option<String>,
    pub rate_limits: bool,
    pub rate_limit_per_minute: u32,
    pub operator_rate_limit_per_minute: u32,
    pub public_rate_limit_per_minute: u32,
    pub trusted_proxy_header: Option<String>,
    pub webhook_allow_private_addresses: bool,
    pub webhook_dispatcher: bool,
    pub oauth_access_token_ttl_secs: i64,
    pub oauth_refresh_token_ttl_days: i64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database_url: "sqlite://frontdesk.db".into(),
            database_max_connections: 16,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            log_format: LogFormat::Text,
            token_ttl_days: 14,
            body_limit_bytes: 2 * 1024 * 1024,
            request_timeout_secs: 30,
            public_url: None,
            redis_url: None,
            rate_limits: true,
            rate_limit_per_minute: 600,
            operator_rate_limit_per_minute: 6000,
            public_rate_limit_per_minute: 300,
            trusted_proxy_header: None,
            webhook_allow_private_addresses: false,
            webhook_dispatcher: true,
            oauth_access_token_ttl_secs: 3600,
            oauth_refresh_token_ttl_days: 30,
        }
    }
}

impl Config {
    pub fn resolve(args: &ConfigArgs) -> anyhow::Result<Config> {
        let file = match &args.config_file {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let d = Config::default();
        let config = Config {
            database_url: args.database_url.clone().or(file.database_url).unwrap_or(d.database_url),
            database_max_connections: args
                .database_max_connections
                .or(file.database_max_connections)
                .unwrap_or(d.database_max_connections),
            listen: args.listen.or(file.listen).unwrap_or(d.listen),
            log_format: args.log_format.or(file.log_format).unwrap_or(d.log_format),
            token_ttl_days: args.token_ttl_days.or(file.token_ttl_days).unwrap_or(d.token_ttl_days),
            body_limit_bytes: args.body_limit_bytes.or(file.body_limit_bytes).unwrap_or(d.body_limit_bytes),
            request_timeout_secs: args
                .request_timeout_secs
                .or(file.request_timeout_secs)
                .unwrap_or(d.request_timeout_secs),
            public_url: args.public_url.clone().or(file.public_url),
            redis_url: args.redis_url.clone().or(file.redis_url),
            rate_limits: args.rate_limits.or(file.rate_limits).unwrap_or(d.rate_limits),
            rate_limit_per_minute: args
                .rate_limit_per_minute
                .or(file.rate_limit_per_minute)
                .unwrap_or(d.rate_limit_per_minute),
            operator_rate_limit_per_minute: args
                .operator_rate_limit_per_minute
                .or(file.operator_rate_limit_per_minute)
                .unwrap_or(d.operator_rate_limit_per_minute),
            public_rate_limit_per_minute: args
                .public_rate_limit_per_minute
                .or(file.public_rate_limit_per_minute)
                .unwrap_or(d.public_rate_limit_per_minute),
            trusted_proxy_header: args.trusted_proxy_header.clone().or(file.trusted_proxy_header),
            webhook_allow_private_addresses: args
                .webhook_allow_private_addresses
                .or(file.webhook_allow_private_addresses)
                .unwrap_or(d.webhook_allow_private_addresses),
            webhook_dispatcher: args.webhook_dispatcher.or(file.webhook_dispatcher).unwrap_or(d.webhook_dispatcher),
            oauth_access_token_ttl_secs: args
                .oauth_access_token_ttl_secs
                .or(file.oauth_access_token_ttl_secs)
                .unwrap_or(d.oauth_access_token_ttl_secs),
            oauth_refresh_token_ttl_days: args
                .oauth_refresh_token_ttl_days
                .or(file.oauth_refresh_token_ttl_days)
                .unwrap_or(d.oauth_refresh_token_ttl_days),
        };
        anyhow::ensure!(config.token_ttl_days >= 1, "token_ttl_days must be at least 1");
        anyhow::ensure!(
            config.rate_limit_per_minute >= 1
                && config.operator_rate_limit_per_minute >= 1
                && config.public_rate_limit_per_minute >= 1,
            "rate limits must be at least 1 request per minute"
        );
        anyhow::ensure!(config.database_max_connections >= 1, "database_max_connections must be at least 1");
        anyhow::ensure!(
            (1..=86_400).contains(&config.oauth_access_token_ttl_secs),
            "oauth_access_token_ttl_secs must be between 1 and 86400"
        );
        anyhow::ensure!(
            (1..=365).contains(&config.oauth_refresh_token_ttl_days),
            "oauth_refresh_token_ttl_days must be between 1 and 365"
        );
        if let Some(url) = &config.public_url {
            let parsed = url::Url::parse(url).context("public_url must be an absolute URL")?;
            anyhow::ensure!(
                matches!(parsed.scheme(), "http" | "https") && parsed.query().is_none() && parsed.fragment().is_none(),
                "public_url must be an http(s) URL without query or fragment"
            );
        }
        Ok(config)
    }

    /// The service's public base URL without a trailing slash: `public_url`, else `http://<listen>`.
    pub fn public_base(&self) -> String {
        let base = self.public_url.clone().unwrap_or_else(|| format!("http://{}", self.listen));
        base.trim_end_matches('/').to_string()
    }
}

fn read_file(path: &Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_file_and_file_beats_defaults() {
        let dir = std::env::temp_dir().join(format!("frontdesk-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("frontdesk.toml");
        std::fs::write(&path, "listen = \"127.0.0.1:9999\"\ntoken_ttl_days = 3\n").unwrap();
        let args = ConfigArgs { config_file: Some(path.clone()), token_ttl_days: Some(7), ..Default::default() };
        let config = Config::resolve(&args).unwrap();
        assert_eq!(config.listen.port(), 9999);
        assert_eq!(config.token_ttl_days, 7);
        assert_eq!(config.database_url, "sqlite://frontdesk.db");
        std::fs::write(&path, "lisen = \"x\"\n").unwrap();
        assert!(Config::resolve(&args).is_err(), "an unknown key in the file is refused");
        std::fs::remove_dir_all(&dir).ok();
    }
}
