//! The `frontdesk` command. Each subcommand declares only the settings it uses (see [`crate::config`]); what they
//! have in common, the database and the log, comes from the same declarations.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use chrono::TimeDelta;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::AppState;
use crate::config::{self, Config, DatabaseSettings, LogFormat, LogSettings, TokenSettings};
use crate::domain::{self, api_keys, identity, Actor, Scope};
use crate::operations;
use crate::store::{Db, IfMissing};
use crate::worker::mail::{MailDispatcher, MailOptions, Postbox};
use crate::worker::webhooks::{Dispatcher, DispatcherOptions};
use crate::{http, router};

#[derive(Debug, Parser)]
#[command(
    name = "frontdesk",
    version,
    about = "Hotel operations service: REST API, operator dashboard, public booking page, webhooks"
)]
pub struct Cli {
    /// A TOML file with settings, for any command: the command's long options in snake_case, e.g.
    /// `listen = "0.0.0.0:8080"`. Flags and FRONTDESK_* variables win over the file.
    #[arg(long = "config", env = "FRONTDESK_CONFIG", value_name = "FILE", global = true)]
    pub config_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs the HTTP service: API, dashboard, booking page and webhook delivery (migrating the database first).
    Serve(ServeArgs),
    /// Creates the database if needed, applies its migrations and exits.
    Migrate(StoreArgs),
    /// Scriptable bootstrap of an existing database; each command prints one JSON object on stdout.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Checks the configuration and what it points at (database and migrations, Redis, public URL, listen
    /// address) without changing anything; exits 1 if anything would keep the service from working.
    Check(CheckArgs),
    /// Writes a verified copy of the SQLite database while the service keeps serving (PostgreSQL: pg_dump).
    Backup(BackupArgs),
    /// Replaces the SQLite database with a backup, after checking it; refused while a frontdesk process uses the
    /// database (PostgreSQL: pg_restore).
    Restore(RestoreArgs),
    /// Writes everything an organization has (operators, hotels, room types, rooms, rate plans, daily rates, API
    /// keys, webhook subscriptions, guests, reservations with rooms and folio) as JSON lines, each record as the REST
    /// API answers it; no secret, password hash or key digest.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The organization's id (see `admin list-orgs`).
    #[arg(long, value_name = "ID")]
    pub org: String,
    /// The file to write (it must not exist) [default: standard output].
    #[arg(long, value_name = "FILE")]
    pub to: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub config: Config,
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The backup file to write; it must not exist.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup file to restore (written by `frontdesk backup`).
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Seeds a demo hotel into an empty database and prints how to sign in and call the API.
    #[arg(long)]
    pub demo: bool,
    #[command(flatten)]
    pub config: Config,
}

/// The settings of commands that only open the database.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct StoreArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub database: DatabaseSettings,
    #[command(flatten)]
    #[serde(flatten)]
    pub log: LogSettings,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Creates an organization.
    CreateOrg {
        /// The organization's name.
        #[arg(long)]
        name: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Creates an operator (a dashboard user) in an organization.
    CreateOperator {
        /// The organization's id (see `admin list-orgs`).
        #[arg(long, value_name = "ID")]
        org: String,
        /// The operator's e-mail, used to sign in.
        #[arg(long)]
        email: String,
        /// The operator's name, as the dashboard shows it.
        #[arg(long)]
        name: String,
        /// At least 8 characters.
        #[arg(long, env = "FRONTDESK_OPERATOR_PASSWORD", hide_env_values = true)]
        password: String,
        /// The operator's role: owner (the default), manager, front-desk, housekeeping, revenue or accountant.
        #[arg(long, value_name = "ROLE", default_value = "owner")]
        role: String,
        /// A hotel the operator works in (repeat for several); without it, every hotel of the organization.
        #[arg(long = "hotel", value_name = "HOTEL_ID")]
        hotels: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Gives an operator a new password; every session, access token and assistant authorization of the operator
    /// ends.
    SetPassword {
        /// The operator's e-mail.
        #[arg(long)]
        email: String,
        /// At least 8 characters.
        #[arg(long, env = "FRONTDESK_OPERATOR_PASSWORD", hide_env_values = true)]
        password: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Removes an operator, with every session, access token and assistant authorization of theirs.
    RemoveOperator {
        /// The operator's e-mail.
        #[arg(long)]
        email: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Issues an access token for an operator.
    CreateToken {
        /// The operator's e-mail.
        #[arg(long)]
        email: String,
        #[command(flatten)]
        tokens: TokenSettings,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Creates an API key; prints its secret, once.
    CreateApiKey {
        /// The organization's id (see `admin list-orgs`).
        #[arg(long, value_name = "ID")]
        org: String,
        /// A name for the key, e.g. the system that will use it.
        #[arg(long)]
        name: String,
        /// A scope to grant (repeatable), e.g. `--scope rates:write`; `all` grants every scope [default: every
        /// `:read` scope].
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// Pins the key to one hotel (its id).
        #[arg(long, value_name = "ID")]
        hotel: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Lists organizations.
    ListOrgs {
        #[command(flatten)]
        store: StoreArgs,
    },
}

impl AdminCommand {
    fn store(&self) -> &StoreArgs {
        match self {
            AdminCommand::CreateOrg { store, .. }
            | AdminCommand::CreateOperator { store, .. }
            | AdminCommand::SetPassword { store, .. }
            | AdminCommand::RemoveOperator { store, .. }
            | AdminCommand::CreateToken { store, .. }
            | AdminCommand::CreateApiKey { store, .. }
            | AdminCommand::ListOrgs { store } => store,
        }
    }
}

/// Parses the command line (exiting with clap's message on a mistake). The matches are kept: they tell which
/// settings were given, so that the settings file fills in only the others.
pub fn parse() -> (Cli, ArgMatches) {
    let matches = Cli::command().get_matches();
    match Cli::from_arg_matches(&matches) {
        Ok(cli) => (cli, matches),
        Err(err) => err.exit(),
    }
}

pub async fn run(cli: Cli, matches: &ArgMatches) -> anyhow::Result<()> {
    // The settings were declared on the innermost subcommand.
    let mut leaf = matches;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    let file = cli.config_file.as_deref();
    match cli.command {
        Command::Serve(args) => {
            let config = config::with_file(args.config, leaf, file)?;
            config.validate()?;
            init_tracing(config.log.log_format);
            let db = open(&config.database, IfMissing::Create).await?;
            let result = serve(db.clone(), config, args.demo).await;
            db.close().await;
            result
        }
        Command::Migrate(store) => {
            let store = config::with_file(store, leaf, file)?;
            init_tracing(store.log.log_format);
            let db = open(&store.database, IfMissing::Create).await?;
            tracing::info!("migrations applied");
            db.close().await;
            Ok(())
        }
        Command::Check(args) => {
            let findings = match config::with_file(args.config, leaf, file) {
                Ok(config) => {
                    init_tracing(config.log.log_format);
                    operations::check::check(&config).await
                }
                Err(err) => vec![operations::check::Finding {
                    status: operations::check::Status::Fail,
                    subject: "configuration",
                    detail: format!("{err:#}"),
                }],
            };
            for finding in &findings {
                println!("{finding}");
            }
            let failed = findings.iter().filter(|f| f.status == operations::check::Status::Fail).count();
            anyhow::ensure!(failed == 0, "{failed} check(s) failed");
            Ok(())
        }
        Command::Backup(args) => {
            let store = config::with_file(args.store, leaf, file)?;
            init_tracing(store.log.log_format);
            operations::backup::ensure_sqlite(&store.database.database_url)?;
            let db = open(&store.database, IfMissing::Refuse).await?;
            let result = operations::backup::backup(&db, &args.to).await;
            db.close().await;
            println!("{}", json!(result?));
            Ok(())
        }
        Command::Restore(args) => {
            let store = config::with_file(args.store, leaf, file)?;
            init_tracing(store.log.log_format);
            let summary = operations::backup::restore(&store.database.database_url, &args.from).await?;
            // Opened once, as `serve` would: migrations newer than the backup are applied now.
            let db = open(&store.database, IfMissing::Refuse).await?;
            db.close().await;
            println!("{}", json!({ "restored": Db::describe(&store.database.database_url), "from": summary }));
            Ok(())
        }
        Command::Export(args) => {
            let store = config::with_file(args.store, leaf, file)?;
            init_tracing(store.log.log_format);
            let db = open(&store.database, IfMissing::Refuse).await?;
            let result = export(&db, &args.org, args.to.as_deref()).await;
            db.close().await;
            let counts = result?;
            // The counts go to stderr when the records go to stdout.
            match args.to {
                Some(_) => println!("{}", json!(counts)),
                None => eprintln!("{}", json!(counts)),
            }
            Ok(())
        }
        Command::Admin(cmd) => {
            let store = config::with_file(cmd.store().clone(), leaf, file)?;
            init_tracing(store.log.log_format);
            // An administrator who runs this from the wrong directory must not get a new, empty database.
            let db = open(&store.database, IfMissing::Refuse).await?;
            let result = admin(&db, cmd, leaf, file).await;
            db.close().await;
            result
        }
    }
}

async fn export(db: &Db, org: &str, to: Option<&Path>) -> anyhow::Result<operations::export::ExportCounts> {
    match to {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| format!("creating {} (an export never overwrites a file)", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            operations::export::export(db, org, &mut out).await
        }
        None => operations::export::export(db, org, &mut std::io::BufWriter::new(std::io::stdout().lock())).await,
    }
}

/// Opens and migrates the database, saying which one it is.
async fn open(settings: &DatabaseSettings, if_missing: IfMissing) -> anyhow::Result<Db> {
    let db = Db::open(&settings.database_url, settings.database_max_connections, if_missing)
        .await?
        .with_audit_retention_days(settings.audit_retention_days);
    tracing::info!(database = %Db::describe(&settings.database_url), "database opened");
    crate::domain::migrate(&db).await?;
    Ok(db)
}

fn init_tracing(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("FRONTDESK_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,rmcp=warn"));
    // Colour codes only for a person at a terminal; a log file or collector would keep them as junk.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(db: Db, config: Config, demo: bool) -> anyhow::Result<()> {
    // Bind before seeding: if the port is taken, the demo's one-time key must not be spent on a run that exits.
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {} (set another address with --listen)", config.listen))?;
    let local = listener.local_addr()?;
    let metrics_listener = match config.metrics_listen {
        Some(address) => Some(tokio::net::TcpListener::bind(address).await.with_context(|| {
            format!("listening on {address} for metrics (set another address with --metrics-listen)")
        })?),
        None => None,
    };
    if demo {
        let seeded = crate::demo::seed(&db).await?;
        let base = config.public_base();
        println!("{}", seeded.instructions(&base, &config.database.database_url));
    }
    tracing::info!(address = %local, engine = ?db.engine(), "frontdesk is serving");
    let state = AppState::new(db, config).await?;
    let metrics_server = match metrics_listener {
        Some(listener) => {
            tracing::info!(address = %listener.local_addr()?, "serving /metrics");
            let router = http::metrics::listener_router(state.clone());
            Some(tokio::spawn(async move {
                if let Err(err) = http::serve_router(listener, router, std::future::pending()).await {
                    tracing::error!(error = %err, "the metrics listener stopped");
                }
            }))
        }
        None => None,
    };
    let dispatcher = match state.config.webhook_dispatcher {
        true => Some(Dispatcher::spawn(state.db.clone(), &state.webhooks, DispatcherOptions::default())?),
        false => None,
    };
    let mail_options = MailOptions::from_settings(&state.config.mail);
    let mail = match state.config.mail.mail_dispatcher {
        true => {
            let postbox = Postbox::from_settings(&state.config.mail, mail_options.timeout)?;
            Some(MailDispatcher::spawn(state.db.clone(), postbox, mail_options))
        }
        false => None,
    };
    let counts = crate::worker::counts::spawn(state.db.clone(), crate::worker::counts::FOLD_EVERY);
    let end_of_day = crate::worker::end_of_day::spawn(state.db.clone(), crate::worker::end_of_day::EVERY);
    let audit_filing = crate::worker::audit_filing::spawn(state.db.clone(), crate::worker::audit_filing::EVERY);
    let audit_retention =
        crate::worker::audit_retention::spawn(state.db.clone(), crate::worker::audit_retention::EVERY);
    // Channel connections (docs/channels.md): idle while no hotel is connected.
    let channex = crate::channels::channex::worker::Dispatcher::spawn(
        state.db.clone(),
        state.webhooks.secret_box.clone(),
        crate::channels::channex::worker::Options::default(),
    )?;
    router::serve(listener, state, http::shutdown_signal()).await?;
    channex.stop().await;
    audit_retention.stop().await;
    audit_filing.stop().await;
    end_of_day.stop().await;
    counts.stop().await;
    if let Some(server) = metrics_server {
        server.abort();
    }
    if let Some(dispatcher) = dispatcher {
        dispatcher.stop().await;
    }
    if let Some(mail) = mail {
        mail.stop().await;
    }
    tracing::info!("stopped");
    Ok(())
}

async fn admin(db: &Db, cmd: AdminCommand, leaf: &ArgMatches, file: Option<&Path>) -> anyhow::Result<()> {
    let out = match cmd {
        AdminCommand::CreateOrg { name, .. } => {
            json!(identity::create_organization(db, &name).await.map_err(explain)?)
        }
        AdminCommand::CreateOperator { org, email, name, password, role, hotels, .. } => {
            // The command line spells roles as flags do (`front-desk`); the API as its enum (`FRONT_DESK`).
            let role = role.trim().replace('-', "_").to_uppercase();
            let hotel_ids = (!hotels.is_empty()).then_some(hotels);
            let staffing = identity::RoleIn { role, hotel_ids }.staffing().map_err(explain)?;
            json!(identity::create_operator_as(
                db,
                crate::domain::change::Writer::CommandLine,
                identity::OperatorIn { organization_id: &org, email: &email, name: &name, password: &password },
                &staffing,
            )
            .await
            .map_err(explain)?)
        }
        // The same functions as the dashboard's Operators page, acting for the operator's organization.
        AdminCommand::SetPassword { email, password, .. } => {
            let operator = identity::find_operator_by_email(db, &email).await.map_err(explain)?;
            let actor = Actor::command_line(&operator.organization_id);
            let changed = identity::reset_password(db, &actor, &operator.id, &password).await.map_err(explain)?;
            json!({ "passwordChanged": changed })
        }
        AdminCommand::RemoveOperator { email, .. } => {
            let operator = identity::find_operator_by_email(db, &email).await.map_err(explain)?;
            let actor = Actor::command_line(&operator.organization_id);
            json!({ "removed": identity::remove_operator(db, &actor, &operator.id).await.map_err(explain)? })
        }
        AdminCommand::CreateToken { email, tokens, .. } => {
            let tokens = config::with_file(tokens, leaf, file)?;
            anyhow::ensure!(tokens.token_ttl_days >= 1, "token_ttl_days must be at least 1");
            let operator = identity::find_operator_by_email(db, &email).await.map_err(explain)?;
            json!(identity::issue_token(db, operator, TimeDelta::days(tokens.token_ttl_days)).await.map_err(explain)?)
        }
        AdminCommand::CreateApiKey { org, name, scopes, hotel, .. } => {
            let scopes = parse_scopes(&scopes)?;
            let input = api_keys::ApiKeyIn { name, scopes, hotel_id: hotel, rate_limit_per_minute: None };
            json!(api_keys::create_for_organization(db, &org, input).await.map_err(explain)?)
        }
        AdminCommand::ListOrgs { .. } => json!({ "organizations": identity::list_organizations(db).await? }),
    };
    println!("{out}");
    Ok(())
}

/// A domain error as a person at a terminal needs it: a refused input lists each field and why, as the API's
/// problem document does.
fn explain(err: domain::Error) -> anyhow::Error {
    match err {
        domain::Error::Validation(fields) | domain::Error::Unprocessable(fields) => {
            let reasons: Vec<String> = fields
                .iter()
                .map(|f| match &f.field {
                    Some(field) => format!("{}: {}", cli_name(field), f.message),
                    None => f.message.clone(),
                })
                .collect();
            anyhow::anyhow!("the request is invalid:\n  {}", reasons.join("\n  "))
        }
        other => anyhow::Error::new(other),
    }
}

/// A domain field name as the option that gives it (`organizationId` is `--org`).
fn cli_name(field: &str) -> String {
    let option = match field {
        "organizationId" => "org",
        "hotelId" | "hotelIds" => "hotel",
        "scopes" => "scope",
        other => other,
    };
    format!("--{option}")
}

fn parse_scopes(names: &[String]) -> anyhow::Result<Vec<Scope>> {
    let mut scopes = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        if name == "all" {
            scopes.extend(Scope::ALL);
        } else {
            scopes.push(Scope::parse(name).with_context(|| format!("unknown scope {name:?}"))?);
        }
    }
    Ok(scopes)
}
