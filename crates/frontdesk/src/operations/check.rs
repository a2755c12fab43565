//! `frontdesk check`: everything the service needs, checked before it is started, in one report with an exit status:
//! configuration, database and its migrations, Redis, the public URL, the listen address, the metrics address,
//! e-mail. Run while the service runs, it fails on the addresses that service holds.

use std::fmt;
use std::time::Duration;

use crate::config::Config;
use crate::store::maintenance::migration_status;
use crate::store::{Db, IfMissing};

/// How long each outside service may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// Works, but probably not as intended in production.
    Warn,
    /// The service cannot run (or run correctly) like this.
    Fail,
    /// Not configured, and that is allowed.
    Skip,
}

#[derive(Debug)]
pub struct Finding {
    pub status: Status,
    pub subject: &'static str,
    pub detail: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        };
        write!(f, "{status:<5} {:<14} {}", self.subject, self.detail)
    }
}

fn finding(status: Status, subject: &'static str, detail: impl Into<String>) -> Finding {
    Finding { status, subject, detail: detail.into() }
}

/// Checks `config` (already read from flags, variables and the file) and what it points at. Changes nothing: a
/// missing SQLite file is reported, not created, and migrations are counted, not applied.
pub async fn check(config: &Config) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.push(match config.validate() {
        Ok(()) => finding(Status::Ok, "configuration", "valid"),
        Err(err) => finding(Status::Fail, "configuration", format!("{err:#}")),
    });
    findings.push(database(config).await);
    findings.push(redis(config).await);
    findings.push(public_url(config));
    findings.push(listen(config).await);
    findings.push(metrics(config).await);
    findings.push(finding(
        Status::Skip,
        "e-mail",
        "no SMTP settings: this version of Frontdesk sends no e-mail (booking requests are confirmed by the hotel)",
    ));
    findings
}

async fn database(config: &Config) -> Finding {
    let url = &config.database.database_url;
    let which = Db::describe(url);
    let db = match Db::open(url, 2, IfMissing::Refuse).await {
        Ok(db) => db,
        Err(err) => return finding(Status::Fail, "database", format!("{err:#}")),
    };
    let status = migration_status(&db).await;
    db.close().await;
    match status {
        Err(err) => finding(Status::Fail, "database", format!("{which}: reading its migrations: {err:#}")),
        Ok(s) if s.unknown > 0 => finding(
            Status::Fail,
            "database",
            format!("{which}: migrated by a newer Frontdesk ({} migrations this version does not know)", s.unknown),
        ),
        Ok(s) if s.applied < s.known => finding(
            Status::Warn,
            "database",
            format!(
                "{which}: {} of {} migrations pending (`frontdesk serve` and `frontdesk migrate` apply them)",
                s.known - s.applied,
                s.known
            ),
        ),
        Ok(s) => finding(Status::Ok, "database", format!("{which}: schema current ({} migrations)", s.known)),
    }
}

async fn redis(config: &Config) -> Finding {
    let Some(url) = &config.redis_url else {
        return finding(
            Status::Skip,
            "redis",
            "not configured: rate limits are kept in each process (set --redis-url when several processes serve)",
        );
    };
    let shown = crate::app::rate_limit::without_password(url);
    let ping = async {
        let client = redis::Client::open(url.as_str())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    match tokio::time::timeout(ANSWER_TIMEOUT, ping).await {
        Ok(Ok(_)) => finding(Status::Ok, "redis", format!("{shown} answers")),
        // The service would start and serve (limiting per process until Redis answers), but not as configured: the
        // limits of several processes would not add up.
        Ok(Err(err)) => {
            finding(Status::Fail, "redis", format!("{shown}: {err}; serve would limit per process until Redis answers"))
        }
        Err(_) => finding(
            Status::Fail,
            "redis",
            format!(
                "{shown}: no answer within {} s; serve would limit per process until Redis answers",
                ANSWER_TIMEOUT.as_secs()
            ),
        ),
    }
}

fn public_url(config: &Config) -> Finding {
    let Some(url) = &config.public_url else {
        return finding(
            Status::Warn,
            "public URL",
            format!(
                "not set: links, the booking page's embed snippet and the assistant endpoint's sign-in use {} \
                 (set --public-url to the address people and integrations reach)",
                config.public_base()
            ),
        );
    };
    match url::Url::parse(url) {
        Ok(parsed) if parsed.scheme() == "https" => finding(Status::Ok, "public URL", url.clone()),
        Ok(parsed) => {
            let local = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
            let status = if local { Status::Ok } else { Status::Warn };
            finding(
                status,
                "public URL",
                format!(
                    "{url}: plain http, so dashboard session cookies are not marked Secure; use https in production"
                ),
            )
        }
        Err(err) => finding(Status::Fail, "public URL", format!("{url}: {err}")),
    }
}

async fn listen(config: &Config) -> Finding {
    match tokio::net::TcpListener::bind(config.listen).await {
        Ok(listener) => {
            drop(listener);
            finding(Status::Ok, "listen", format!("{} is free", config.listen))
        }
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => finding(
            Status::Fail,
            "listen",
            format!("{} is in use (by a running frontdesk?): serve would not start", config.listen),
        ),
        Err(err) => finding(Status::Fail, "listen", format!("{}: {err}", config.listen)),
    }
}

/// Where `/metrics` is served: nowhere (skip), behind the token on the main listener, or on its own address
/// (free to bind; a warning when that address is every interface, since it asks for no token).
async fn metrics(config: &Config) -> Finding {
    let Some(address) = config.metrics_listen else {
        return match config.metrics_token {
            Some(_) => finding(Status::Ok, "metrics", "/metrics on the main listener, behind the metrics token"),
            None => finding(Status::Skip, "metrics", "not served (--metrics-token or --metrics-listen serve /metrics)"),
        };
    };
    match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => {
            drop(listener);
            if address.ip().is_unspecified() {
                let detail =
                    format!("{address} is every interface and /metrics there needs no token: bind a private one");
                finding(Status::Warn, "metrics", detail)
            } else {
                finding(Status::Ok, "metrics", format!("/metrics on {address} (no token: keep it private)"))
            }
        }
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => finding(
            Status::Fail,
            "metrics",
            format!("{address} is in use (by a running frontdesk?): serve would not start"),
        ),
        Err(err) => finding(Status::Fail, "metrics", format!("{address}: {err}")),
    }
}
