//! The `frontdesk` command.

use anyhow::Context;
use chrono::TimeDelta;
use clap::{Parser, Subcommand};
use serde_json::json;

use crate::config::{Config, ConfigArgs, LogFormat};
use crate::domain::{api_keys, identity, Scope};
use crate::http::{self, AppState};
use crate::store::Db;
use crate::worker::webhooks::{Dispatcher, DispatcherOptions};

#[derive(Debug, Parser)]
#[command(name = "frontdesk", version, about = "Hotel operations REST service")]
pub struct Cli {
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs the HTTP service (migrating the database first).
    Serve {
        /// Seeds demo data into an empty database and prints how to use it.
        #[arg(long)]
        demo: bool,
    },
    /// Applies database migrations and exits.
    Migrate,
    /// Scriptable bootstrap; each command prints one JSON object on stdout.
    #[command(subcommand)]
    Admin(AdminCommand),
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Creates an organization.
    CreateOrg {
        #[arg(long)]
        name: String,
    },
    /// Creates an operator (dashboard user) in an organization.
    CreateOperator {
        /// Organization id.
        #[arg(long)]
        org: String,
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// At least 8 characters.
        #[arg(long, env = "FRONTDESK_OPERATOR_PASSWORD", hide_env_values = true)]
        password: String,
    },
    /// Issues an access token for an operator.
    CreateToken {
        /// The operator's e-mail.
        #[arg(long)]
        email: String,
    },
    /// Creates an API key; prints its secret, once.
    CreateApiKey {
        /// Organization id.
        #[arg(long)]
        org: String,
        #[arg(long)]
        name: String,
        /// A scope to grant (repeatable), e.g. `--scope rates:write`; `all` grants every scope. None: every
        /// `:read` scope.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// Pins the key to one hotel.
        #[arg(long)]
        hotel: Option<String>,
    },
    /// Lists organizations.
    ListOrgs,
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::resolve(&cli.config)?;
    init_tracing(config.log_format);
    let db = Db::connect(&config.database_url, config.database_max_connections).await?;
    db.migrate().await?;
    let result = match cli.command {
        Command::Serve { demo } => serve(db.clone(), config, demo).await,
        Command::Migrate => {
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Admin(cmd) => admin(&db, &config, cmd).await,
    };
    db.close().await;
    result
}

fn init_tracing(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("FRONTDESK_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,rmcp=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(db: Db, config: Config, demo: bool) -> anyhow::Result<()> {
    if demo {
        let seeded = crate::demo::seed(&db).await?;
        let base = config.public_base();
        println!("{}", seeded.instructions(&base));
    }
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let local = listener.local_addr()?;
    tracing::info!(address = %local, engine = ?db.engine(), "frontdesk is serving");
    let state = AppState::new(db, config).await?;
    let dispatcher = match state.config.webhook_dispatcher {
        true => Some(Dispatcher::spawn(state.db.clone(), &state.webhooks, DispatcherOptions::default())?),
        false => None,
    };
    http::serve(listener, state, http::shutdown_signal()).await?;
    if let Some(dispatcher) = dispatcher {
        dispatcher.stop().await;
    }
    tracing::info!("stopped");
    Ok(())
}

async fn admin(db: &Db, config: &Config, cmd: AdminCommand) -> anyhow::Result<()> {
    let out = match cmd {
        AdminCommand::CreateOrg { name } => json!(identity::create_organization(db, &name).await?),
        AdminCommand::CreateOperator { org, email, name, password } => json!(
            identity::create_operator(
                db,
                identity::OperatorIn { organization_id: &org, email: &email, name: &name, password: &password },
            )
            .await?
        ),
        AdminCommand::CreateToken { email } => {
            let operator = identity::find_operator_by_email(db, &email).await?;
            json!(identity::issue_token(db, operator, TimeDelta::days(config.token_ttl_days)).await?)
        }
        AdminCommand::CreateApiKey { org, name, scopes, hotel } => {
            let scopes = parse_scopes(&scopes)?;
            let input = api_keys::ApiKeyIn { name, scopes, hotel_id: hotel, rate_limit_per_minute: None };
            json!(api_keys::create_for_organization(db, &org, input).await?)
        }
        AdminCommand::ListOrgs => json!({ "organizations": identity::list_organizations(db).await? }),
    };
    println!("{out}");
    Ok(())
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
