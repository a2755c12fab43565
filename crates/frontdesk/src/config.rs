//! Configuration. Each setting is declared once, below: its flag, its `FRONTDESK_*` environment variable, its
//! default and its help all come from the one field. An optional TOML file (`--config` / `FRONTDESK_CONFIG`, keys as
//! the flags in snake_case) fills in what neither a flag nor a variable gave: flag > variable > file > default.
//!
//! Settings come in groups so that each command offers only the options it uses: every command opens the database
//! ([`DatabaseSettings`]) and logs ([`LogSettings`]); `serve` takes the whole [`Config`].

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// A secret setting: its value is not written by `Debug` (logs, panics).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SecretText(String);

impl SecretText {
    pub fn new(value: impl Into<String>) -> SecretText {
        SecretText(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for SecretText {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(SecretText(s.to_string()))
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretText(…)")
    }
}

/// Which database a command uses.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct DatabaseSettings {
    /// Database URL: `sqlite://FILE` (created by `serve` and `migrate` when missing) or
    /// `postgres://USER@HOST/DB`.
    #[arg(long, env = "FRONTDESK_DATABASE_URL", value_name = "URL", default_value = DatabaseSettings::DEFAULT_URL)]
    pub database_url: String,
    /// Most database connections this process opens (besides SQLite's one writer): half for the reservation
    /// list's pages and single reservations, the rest for everything else.
    #[arg(long, env = "FRONTDESK_DATABASE_MAX_CONNECTIONS", value_name = "N", default_value_t = 16)]
    pub database_max_connections: u32,
    /// Days each audit log entry is kept (ten years by default, as German bookkeeping law asks of records about
    /// money). The database refuses to delete an entry sooner; a longer or shorter setting applies to new entries.
    #[arg(long, env = "FRONTDESK_AUDIT_RETENTION_DAYS", value_name = "DAYS", default_value_t = 3650)]
    pub audit_retention_days: u32,
}

impl DatabaseSettings {
    pub const DEFAULT_URL: &'static str = "sqlite://frontdesk.db";
}

/// How a command writes its log (to standard error).
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct LogSettings {
    /// Log format. Colours are used only when standard error is a terminal.
    #[arg(long, env = "FRONTDESK_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Operator access tokens (issued by sign-in, the dashboard and `admin create-token`).
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct TokenSettings {
    /// Lifetime of operator access tokens, in days.
    #[arg(long, env = "FRONTDESK_TOKEN_TTL_DAYS", value_name = "DAYS", default_value_t = 14)]
    pub token_ttl_days: i64,
}

/// Sessions: the tokens signing in issues (the dashboard's cookie, `POST /api/auth/login`).
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct SessionSettings {
    /// A session not used for this many hours ends (the operator signs in again); at most the token lifetime
    /// matters. Tokens of `admin create-token` have no idle limit.
    #[arg(long, env = "FRONTDESK_SESSION_IDLE_TIMEOUT_HOURS", value_name = "HOURS", default_value_t = 12)]
    pub session_idle_timeout_hours: i64,
    /// Creating an API key or an access token, changing an operator's role, removing an operator and changing
    /// billing settings in the dashboard ask for the password again unless it was given (signing in included)
    /// within this many minutes; 0 asks every time (docs/roles.md).
    #[arg(long, env = "FRONTDESK_STEP_UP_MINUTES", value_name = "MINUTES", default_value_t = 10)]
    #[serde(default = "default_step_up_minutes")]
    pub step_up_minutes: u32,
}

fn default_step_up_minutes() -> u32 {
    10
}

/// Guest e-mails (docs/guest-messages.md).
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct MailSettings {
    /// The SMTP server guest e-mails are sent through: `smtp://USER:PASSWORD@HOST:587?tls=required` (STARTTLS),
    /// `smtps://USER:PASSWORD@HOST:465` (TLS), or `smtp://HOST:25` (no encryption: a relay on the same machine or
    /// network only). Without it, messages are recorded but not sent.
    #[arg(long, env = "FRONTDESK_SMTP_URL", value_name = "URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The sender of guest e-mails, e.g. `Hotel Aurora <desk@aurora.example>`; required with --smtp-url.
    #[arg(long, env = "FRONTDESK_MAIL_FROM", value_name = "MAILBOX")]
    pub mail_from: Option<String>,
    /// Seconds before a message the mail server refused for now (4xx, unreachable) is tried again; each later wait
    /// doubles, up to 2 hours, for a day.
    #[arg(long, env = "FRONTDESK_MAIL_FIRST_RETRY_SECS", value_name = "SECS", default_value_t = 30)]
    pub mail_first_retry_secs: u64,
    /// `false` runs this process without the mail dispatcher (another process sends).
    #[arg(long, env = "FRONTDESK_MAIL_DISPATCHER", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub mail_dispatcher: bool,
}

impl MailSettings {
    /// An SMTP URL for people: without its user and password.
    pub fn describe_url(url: &str) -> String {
        match url::Url::parse(url) {
            Ok(mut parsed) => {
                let _ = parsed.set_username("");
                let _ = parsed.set_password(None);
                parsed.to_string()
            }
            Err(_) => "(unreadable)".to_string(),
        }
    }
}

/// What `serve` runs with.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct Config {
    #[command(flatten)]
    #[serde(flatten)]
    pub database: DatabaseSettings,
    #[command(flatten)]
    #[serde(flatten)]
    pub log: LogSettings,
    #[command(flatten)]
    #[serde(flatten)]
    pub tokens: TokenSettings,
    #[command(flatten)]
    #[serde(flatten)]
    pub sessions: SessionSettings,
    #[command(flatten)]
    #[serde(flatten)]
    pub mail: MailSettings,
    /// Address to listen on.
    #[arg(long, env = "FRONTDESK_LISTEN", value_name = "ADDRESS", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "FRONTDESK_BODY_LIMIT_BYTES", value_name = "BYTES", default_value_t = 2 * 1024 * 1024)]
    pub body_limit_bytes: usize,
    /// Longest a request may take, in seconds.
    #[arg(long, env = "FRONTDESK_REQUEST_TIMEOUT_SECS", value_name = "SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// Longest a client may take to send a request's head (request line and headers), in seconds; also how long a
    /// kept-alive connection may wait for its next request. A connection that takes longer is closed. Behind a load
    /// balancer that keeps idle connections to the service open longer than this, raise it above the balancer's
    /// idle timeout (or lower that), so that the service never closes a connection the balancer is about to use.
    #[arg(long, env = "FRONTDESK_HEADER_READ_TIMEOUT_SECS", value_name = "SECS", default_value_t = 30)]
    pub header_read_timeout_secs: u64,
    /// The service's public base URL, used in the links it hands out (default: http://<listen>).
    #[arg(long, env = "FRONTDESK_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// Redis for rate limits shared by several processes, e.g. `redis://127.0.0.1:6379` (default: limits are
    /// kept in this process).
    #[arg(long, env = "FRONTDESK_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,
    /// `false` turns rate limiting off (for example behind a gateway that limits already).
    #[arg(long, env = "FRONTDESK_RATE_LIMITS", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub rate_limits: bool,
    /// Requests per minute per API key (bursts up to the same number), unless the key says otherwise.
    #[arg(long, env = "FRONTDESK_RATE_LIMIT_PER_MINUTE", value_name = "N", default_value_t = 600)]
    pub rate_limit_per_minute: u32,
    /// Requests per minute per operator access token holder.
    #[arg(long, env = "FRONTDESK_OPERATOR_RATE_LIMIT_PER_MINUTE", value_name = "N", default_value_t = 6000)]
    pub operator_rate_limit_per_minute: u32,
    /// Requests per minute per client address on the public availability and booking endpoints.
    #[arg(long, env = "FRONTDESK_PUBLIC_RATE_LIMIT_PER_MINUTE", value_name = "N", default_value_t = 300)]
    pub public_rate_limit_per_minute: u32,
    /// A file holding the service's secrets key (32 random bytes, base64): the keys that seal webhook secrets and
    /// sign booking offers are derived from it instead of kept in the database, so that a dump of the database alone
    /// reveals neither (docs/security.md, "Keys": making one, and moving to a new one).
    #[arg(long, env = "FRONTDESK_SECRETS_KEY_FILE", value_name = "PATH")]
    pub secrets_key_file: Option<String>,
    /// The secrets key itself (base64), for platforms that hand secrets over in the environment. Give it as the
    /// variable, not as the flag: other users of the machine can read a process's flags.
    #[arg(long, env = "FRONTDESK_SECRETS_KEY", value_name = "BASE64", hide_env_values = true)]
    pub secrets_key: Option<SecretText>,
    /// While moving to a new secrets key: a file holding the key the database was sealed with until now.
    #[arg(long, env = "FRONTDESK_PREVIOUS_SECRETS_KEY_FILE", value_name = "PATH")]
    pub previous_secrets_key_file: Option<String>,
    /// Sign-in requests per minute per client address (an IPv6 address counts by its /64): every way to sign in,
    /// and accepting an invitation. Checked before any password is and anything is written.
    #[arg(long, env = "FRONTDESK_SIGN_IN_RATE_LIMIT_PER_MINUTE", value_name = "N", default_value_t = 30)]
    pub sign_in_rate_limit_per_minute: u32,
    /// A header set by a trusted reverse proxy with the client address (e.g. `x-forwarded-for`); only then is it
    /// believed.
    #[arg(long, env = "FRONTDESK_TRUSTED_PROXY_HEADER", value_name = "HEADER")]
    pub trusted_proxy_header: Option<String>,
    /// How many trusted proxies in a row add to --trusted-proxy-header: the client address is the value this many
    /// places from the right (what the client itself sends stands further left, and is never believed).
    #[arg(long, env = "FRONTDESK_TRUSTED_PROXY_COUNT", value_name = "N", default_value_t = 1)]
    pub trusted_proxy_count: u32,
    /// Booking requests a hotel takes per hour from one client address, on the public booking page and API
    /// (callers with an API key that may write reservations are not counted); 0: no limit.
    #[arg(long, env = "FRONTDESK_BOOKING_REQUESTS_PER_ADDRESS_PER_HOUR", value_name = "N", default_value_t = 10)]
    pub booking_requests_per_address_per_hour: u32,
    /// Booking requests a hotel takes per hour for one guest e-mail address, counted like the above; 0: no limit.
    #[arg(long, env = "FRONTDESK_BOOKING_REQUESTS_PER_EMAIL_PER_HOUR", value_name = "N", default_value_t = 5)]
    pub booking_requests_per_email_per_hour: u32,
    /// `true` lets webhook subscriptions point at private, loopback and link-local addresses (local development,
    /// receivers inside your own network). Off by default: such URLs are refused.
    #[arg(
        long,
        env = "FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES",
        value_name = "BOOL",
        default_value_t = false,
        action = clap::ArgAction::Set
    )]
    pub webhook_allow_private_addresses: bool,
    /// `false` runs this process without the webhook dispatcher (another process delivers).
    #[arg(long, env = "FRONTDESK_WEBHOOK_DISPATCHER", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub webhook_dispatcher: bool,
    /// Serves `GET /metrics` (Prometheus text format) on this separate address, without a token: bind it to an
    /// address only the monitoring system reaches (e.g. `127.0.0.1:9090` or a private interface).
    #[arg(long, env = "FRONTDESK_METRICS_LISTEN", value_name = "ADDRESS")]
    pub metrics_listen: Option<SocketAddr>,
    /// Serves `GET /metrics` on the main listener to requests that send `Authorization: Bearer <TOKEN>` (at least
    /// 16 characters). Without it (and without --metrics-listen) /metrics answers 404.
    #[arg(long, env = "FRONTDESK_METRICS_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Lifetime of the assistant endpoint's OAuth access tokens, in seconds (1 to 86400).
    #[arg(long, env = "FRONTDESK_OAUTH_ACCESS_TOKEN_TTL_SECS", value_name = "SECS", default_value_t = 3600)]
    pub oauth_access_token_ttl_secs: i64,
    /// Lifetime of the assistant endpoint's OAuth refresh tokens, in days (1 to 365; each use rotates the token).
    #[arg(long, env = "FRONTDESK_OAUTH_REFRESH_TOKEN_TTL_DAYS", value_name = "DAYS", default_value_t = 30)]
    pub oauth_refresh_token_ttl_days: i64,
}

impl Default for Config {
    /// The defaults declared on the fields above (environment variables ignored).
    fn default() -> Self {
        defaults()
    }
}

/// A settings group with only its declared defaults: no flags, and the environment ignored.
pub fn defaults<T: Args + FromArgMatches>() -> T {
    let mut command = T::augment_args(clap::Command::new("defaults"));
    let ids: Vec<_> = command.get_arguments().map(|arg| arg.get_id().clone()).collect();
    for id in ids {
        command = command.mut_arg(id, |arg| arg.env(None));
    }
    let matches = command.get_matches_from(["defaults"]);
    // Cannot fail: every field above either has a default or is optional.
    T::from_arg_matches(&matches).unwrap_or_else(|err| panic!("settings without a default: {err}"))
}

/// Settings as given on the command line or in the environment, completed from the TOML file at `file` (if any)
/// for every setting neither gave. `matches` are those of the command that declared the settings.
pub fn with_file<T: Serialize + DeserializeOwned>(
    given: T,
    matches: &ArgMatches,
    file: Option<&Path>,
) -> anyhow::Result<T> {
    let Some(path) = file else { return Ok(given) };
    let table = read_file(path)?;
    let serde_json::Value::Object(mut settings) = serde_json::to_value(&given)? else {
        anyhow::bail!("settings are a table");
    };
    for (key, value) in table {
        let named = || matches!(matches.value_source(&key), Some(ValueSource::CommandLine | ValueSource::EnvVariable));
        if settings.contains_key(&key) && !named() {
            settings.insert(key, serde_json::to_value(value)?);
        }
    }
    serde_json::from_value(serde_json::Value::Object(settings))
        .with_context(|| format!("reading {}: a setting has the wrong type", path.display()))
}

/// Every setting's file key (all commands' settings: one file serves every command).
fn known_keys() -> BTreeSet<String> {
    let command = Config::augment_args(clap::Command::new("settings"));
    command.get_arguments().map(|arg| arg.get_id().to_string()).collect()
}

fn read_file(path: &Path) -> anyhow::Result<toml::Table> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Table = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let known = known_keys();
    if let Some(unknown) = table.keys().find(|key| !known.contains(*key)) {
        anyhow::bail!(
            "{}: unknown setting `{unknown}` (settings are the long options in snake_case: {})",
            path.display(),
            known.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(table)
}

impl Config {
    /// Checks what the types alone do not.
    pub fn validate(&self) -> anyhow::Result<()> {
        let config = self;
        anyhow::ensure!(config.tokens.token_ttl_days >= 1, "token_ttl_days must be at least 1");
        anyhow::ensure!(
            config.sessions.session_idle_timeout_hours >= 1,
            "session_idle_timeout_hours must be at least 1"
        );
        anyhow::ensure!(config.trusted_proxy_count >= 1, "trusted_proxy_count must be at least 1");
        anyhow::ensure!(config.header_read_timeout_secs >= 1, "header_read_timeout_secs must be at least 1");
        anyhow::ensure!(
            config.rate_limit_per_minute >= 1
                && config.operator_rate_limit_per_minute >= 1
                && config.public_rate_limit_per_minute >= 1
                && config.sign_in_rate_limit_per_minute >= 1,
            "rate limits must be at least 1 request per minute"
        );
        anyhow::ensure!(config.database.database_max_connections >= 1, "database_max_connections must be at least 1");
        anyhow::ensure!(
            (1..=36_500).contains(&config.database.audit_retention_days),
            "audit_retention_days must be between 1 and 36500"
        );
        anyhow::ensure!(
            (1..=86_400).contains(&config.oauth_access_token_ttl_secs),
            "oauth_access_token_ttl_secs must be between 1 and 86400"
        );
        anyhow::ensure!(
            (1..=365).contains(&config.oauth_refresh_token_ttl_days),
            "oauth_refresh_token_ttl_days must be between 1 and 365"
        );
        if let Some(token) = &config.metrics_token {
            anyhow::ensure!(
                token.chars().count() >= 16 && token.bytes().all(|b| b.is_ascii_graphic()),
                "metrics_token must be at least 16 characters, printable ASCII without spaces"
            );
        }
        if let Some(address) = config.metrics_listen {
            anyhow::ensure!(
                address != config.listen || address.port() == 0,
                "metrics_listen must differ from listen (the main listener serves /metrics with --metrics-token)"
            );
        }
        if let Some(url) = &config.public_url {
            let parsed = url::Url::parse(url).context("public_url must be an absolute URL")?;
            anyhow::ensure!(
                matches!(parsed.scheme(), "http" | "https") && parsed.query().is_none() && parsed.fragment().is_none(),
                "public_url must be an http(s) URL without query or fragment"
            );
        }
        Ok(())
    }

    /// Whether this process keeps metrics: they are served somewhere (the main listener with a token, or their own
    /// address).
    pub fn metrics_enabled(&self) -> bool {
        self.metrics_token.is_some() || self.metrics_listen.is_some()
    }

    /// The limits sign-in sessions get.
    pub fn session_limits(&self) -> crate::domain::identity::SessionLimits {
        crate::domain::identity::SessionLimits {
            ttl: chrono::TimeDelta::days(self.tokens.token_ttl_days),
            idle: Some(chrono::TimeDelta::hours(self.sessions.session_idle_timeout_hours)),
        }
    }

    /// The limits of public booking requests.
    pub fn booking_limits(&self) -> crate::model::limits::BookingLimits {
        crate::model::limits::BookingLimits {
            per_address: self.booking_requests_per_address_per_hour,
            per_email: self.booking_requests_per_email_per_hour,
        }
    }

    /// Whether the service is served over https (its public URL says so).
    pub fn is_https(&self) -> bool {
        self.public_url.as_deref().is_some_and(|u| u.starts_with("https://"))
    }

    /// The service's public base URL without a trailing slash: `public_url`, else `http://<listen>`.
    pub fn public_base(&self) -> String {
        let base = self.public_url.clone().unwrap_or_else(|| format!("http://{}", self.listen));
        base.trim_end_matches('/').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: &[&str]) -> (Config, ArgMatches) {
        let command = Config::augment_args(clap::Command::new("serve"));
        let matches = command.try_get_matches_from([&["serve"], flags].concat()).unwrap();
        (Config::from_arg_matches(&matches).unwrap(), matches)
    }

    #[test]
    fn flags_beat_file_and_file_beats_defaults() {
        let dir = std::env::temp_dir().join(format!("frontdesk-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("frontdesk.toml");
        std::fs::write(&path, "listen = \"127.0.0.1:9999\"\ntoken_ttl_days = 3\nrate_limits = false\n").unwrap();
        let (given, matches) = parse(&["--token-ttl-days", "7"]);
        let config = with_file(given, &matches, Some(&path)).unwrap();
        assert_eq!(config.listen.port(), 9999);
        assert_eq!(config.tokens.token_ttl_days, 7);
        assert!(!config.rate_limits);
        assert_eq!(config.database.database_url, "sqlite://frontdesk.db");

        std::fs::write(&path, "lisen = \"x\"\n").unwrap();
        let (given, matches) = parse(&[]);
        let err = with_file(given, &matches, Some(&path)).unwrap_err();
        assert!(format!("{err:#}").contains("unknown setting `lisen`"), "{err:#}");

        std::fs::write(&path, "listen = 8080\n").unwrap();
        let (given, matches) = parse(&[]);
        assert!(with_file(given, &matches, Some(&path)).is_err(), "a setting of the wrong type is refused");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn metrics_settings_are_checked() {
        let with = |token: Option<&str>, listen: Option<&str>| Config {
            metrics_token: token.map(str::to_string),
            metrics_listen: listen.map(|a| a.parse().unwrap()),
            ..Config::default()
        };
        assert!(with(Some("0123456789abcdef"), None).validate().is_ok());
        assert!(with(Some("0123456789abcde"), None).validate().is_err(), "under 16 characters");
        assert!(with(Some("0123456789 abcdef"), None).validate().is_err(), "a space");
        assert!(with(None, Some("127.0.0.1:9090")).validate().is_ok());
        assert!(with(None, Some("127.0.0.1:8080")).validate().is_err(), "the main listener's address");
        assert!(!with(None, None).metrics_enabled() && with(None, Some("127.0.0.1:9090")).metrics_enabled());
    }

    #[test]
    fn defaults_are_the_declared_ones() {
        let config = Config::default();
        assert_eq!(config.database.database_url, "sqlite://frontdesk.db");
        assert_eq!(config.listen.port(), 8080);
        assert!(config.rate_limits && config.webhook_dispatcher && !config.webhook_allow_private_addresses);
        assert_eq!(config.public_url, None);
        assert_eq!((config.metrics_listen, config.metrics_token.as_deref()), (None, None));
        config.validate().unwrap();
    }
}
