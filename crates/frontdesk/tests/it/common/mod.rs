//! The integration-test harness: the real service on an ephemeral port, on a fresh database of either engine.
//!
//! SQLite: a new file per test. PostgreSQL: a new schema per test in the database named by
//! `FRONTDESK_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`), dropped afterwards. When
//! PostgreSQL cannot be reached the PostgreSQL variant of a test is skipped, except under `CI=true`, where it fails.

pub mod browser;
pub mod disk;
pub mod process;
pub mod receiver;
pub mod smtp;

use base64::Engine as _;
use chrono::TimeDelta;
use frontdesk::app::AppState;
use frontdesk::config::{Config, DatabaseSettings};
use frontdesk::domain::{identity, Scope};
use frontdesk::store::{Db, Engine};
use frontdesk::worker::mail::{MailDispatcher, MailOptions, Postbox};
use frontdesk::worker::webhooks::{Dispatcher, DispatcherOptions};
use frontdesk::{http, router};
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// Runs each named `async fn(TestServer)` as two tests: `<name>::sqlite` and `<name>::postgres`.
#[macro_export]
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let server = $crate::common::TestServer::start(frontdesk::store::Engine::Sqlite).await;
                    super::$name(server.expect("SQLite test server")).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(server) = $crate::common::TestServer::start_postgres().await {
                        super::$name(server).await;
                    }
                }
            }
        )*
    };
}

/// Runs each named `async fn(Engine)` as two tests, for tests that configure their own server
/// ([`TestServer::configured`]).
#[macro_export]
macro_rules! on_both_engines_configured {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name(frontdesk::store::Engine::Sqlite).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::$name(frontdesk::store::Engine::Postgres).await;
                }
            }
        )*
    };
}

/// The password of every operator [`TestServer::org`] creates.
pub const PASSWORD: &str = "correct horse battery";

/// How long a test waits for something that happens in the background (a webhook delivery, a page update).
pub const WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// A test server that delivers webhooks (test servers do not, unless asked), or `None` when PostgreSQL is
/// unavailable outside CI.
pub async fn delivering(engine: Engine) -> Option<TestServer> {
    TestServer::configured(engine, |c| c.webhook_dispatcher = true).await
}

/// The calendar date `offset` days from today, `YYYY-MM-DD`.
pub fn day(offset: u64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Days::new(offset)).format("%Y-%m-%d").to_string()
}

/// The pages a statement read, from PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS)` text: the first `Buffers:` line
/// before `Planning:` is the whole statement's; a statement that read no page has none.
pub fn buffers_read(plan: &str) -> i64 {
    plan.lines()
        .take_while(|line| !line.starts_with("Planning"))
        .find_map(|line| line.trim().strip_prefix("Buffers: shared "))
        .map(|counts| {
            counts.split_whitespace().filter_map(|c| c.split_once('=')).filter_map(|(_, n)| n.parse::<i64>().ok()).sum()
        })
        .unwrap_or(0)
}

pub fn postgres_url() -> String {
    std::env::var("FRONTDESK_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A throwaway database: a SQLite file, a PostgreSQL schema or a PostgreSQL database, removed on drop.
pub struct TestDatabase {
    pub url: String,
    pub engine: Engine,
    cleanup: Option<Cleanup>,
}

enum Cleanup {
    File(std::path::PathBuf),
    Schema { admin_url: String, schema: String },
    Database { admin_url: String, name: String },
}

impl TestDatabase {
    /// A fresh database, or `None` (skipped, with a note) when it cannot be had outside CI; under `CI=true` a
    /// missing PostgreSQL fails the test.
    pub async fn create_or_skip(engine: Engine) -> Option<TestDatabase> {
        match TestDatabase::create(engine).await {
            Ok(db) => Some(db),
            Err(err) if std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("skipping: the {engine:?} test database is unavailable: {err:#} (set CI=true to make this a failure)");
                None
            }
            Err(err) => panic!("the {engine:?} test database is required under CI=true: {err:#}"),
        }
    }

    /// A SQLite database at `path` (created when served), removed with its `-wal` and `-shm` files on drop.
    pub fn sqlite_file(path: std::path::PathBuf) -> TestDatabase {
        TestDatabase {
            url: format!("sqlite://{}", path.display()),
            engine: Engine::Sqlite,
            cleanup: Some(Cleanup::File(path)),
        }
    }

    /// A PostgreSQL database of its own rather than a schema of the shared one, or `None` as [`Self::create_or_skip`]:
    /// for a test that a statement of another test's schema would disturb (an `ANALYZE` of the whole database, a
    /// transaction whose snapshot keeps `VACUUM` from removing this test's deleted rows).
    pub async fn postgres_of_its_own_or_skip() -> Option<TestDatabase> {
        TestDatabase::create_or_skip(Engine::Postgres).await?;
        use sqlx::Connection;
        let admin_url = postgres_url();
        let name = format!("fdown_{}", uuid::Uuid::now_v7().simple());
        let mut admin = sqlx::PgConnection::connect(&admin_url).await.expect("connect");
        sqlx::raw_sql(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("create the database");
        admin.close().await.expect("close");
        let (server, options) = admin_url.split_once('?').map_or((admin_url.as_str(), ""), |(s, o)| (s, o));
        let (server, _) = server.rsplit_once('/').expect("a database in the URL");
        let url = if options.is_empty() { format!("{server}/{name}") } else { format!("{server}/{name}?{options}") };
        Some(TestDatabase { url, engine: Engine::Postgres, cleanup: Some(Cleanup::Database { admin_url, name }) })
    }

    pub async fn create(engine: Engine) -> anyhow::Result<TestDatabase> {
        let id = uuid::Uuid::now_v7().simple().to_string();
        match engine {
            Engine::Sqlite => {
                let path = std::env::temp_dir().join(format!("frontdesk-test-{id}.db"));
                Ok(TestDatabase {
                    url: format!("sqlite://{}", path.display()),
                    engine,
                    cleanup: Some(Cleanup::File(path)),
                })
            }
            Engine::Postgres => {
                use sqlx::Connection;
                let admin_url = postgres_url();
                let schema = format!("fdtest_{id}");
                let mut conn = sqlx::PgConnection::connect(&admin_url).await?;
                sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&mut conn).await?;
                conn.close().await?;
                let sep = if admin_url.contains('?') { '&' } else { '?' };
                Ok(TestDatabase {
                    url: format!("{admin_url}{sep}options=-c%20search_path%3D{schema}"),
                    engine,
                    cleanup: Some(Cleanup::Schema { admin_url, schema }),
                })
            }
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        match self.cleanup.take() {
            Some(Cleanup::File(path)) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            Some(Cleanup::Schema { admin_url, schema }) => {
                drop_on_the_server(admin_url, format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            }
            Some(Cleanup::Database { admin_url, name }) => {
                drop_on_the_server(admin_url, format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            }
            None => {}
        }
    }
}

/// Runs `statement` on the PostgreSQL server of `admin_url`. Drop runs inside the test's runtime, which cannot
/// block on itself: a thread of our own does it.
fn drop_on_the_server(admin_url: String, statement: String) {
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&admin_url).await?;
            sqlx::raw_sql(&statement).execute(&mut conn).await?;
            conn.close().await
        })
        .map_err(anyhow::Error::from)
    })
    .join();
}

/// How a request authenticates.
#[derive(Clone, Debug)]
pub enum Auth {
    None,
    /// An API key secret, sent as `Basic base64(secret)`.
    Key(String),
    /// An operator access token, sent as `Token …`.
    Token(String),
    /// A raw Authorization header value.
    Raw(String),
}

pub fn basic(secret: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(secret))
}

/// An answer: status, headers and the JSON body (`Value::Null` when empty or not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status, and that an error answer is a problem document with that status.
    #[track_caller]
    pub fn expect(self, status: u16) -> Self {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.body);
        if status >= 400 {
            assert_eq!(self.header("content-type"), Some("application/problem+json"), "{}", self.body);
            assert_eq!(self.body["status"], json!(status), "{}", self.body);
            assert!(self.body["title"].is_string() && self.body["type"].is_string(), "{}", self.body);
        }
        self
    }
}

/// An organization with an operator signed in.
pub struct Org {
    pub id: String,
    pub token: String,
    pub operator_email: String,
}

impl Org {
    pub fn auth(&self) -> Auth {
        Auth::Token(self.token.clone())
    }
}

pub struct TestServer {
    pub base: String,
    pub client: reqwest::Client,
    pub db: Db,
    pub engine: Engine,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    dispatcher: Option<Dispatcher>,
    mail: Option<MailDispatcher>,
    _database: TestDatabase,
}

impl TestServer {
    pub async fn start(engine: Engine) -> anyhow::Result<TestServer> {
        Self::start_with(engine, |_| {}).await
    }

    /// The PostgreSQL variant: `None` (skipped, with a note) when PostgreSQL is unreachable outside CI.
    pub async fn start_postgres() -> Option<TestServer> {
        match Self::start(Engine::Postgres).await {
            Ok(server) => Some(server),
            Err(err) if std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("skipping the PostgreSQL variant: {err:#} (set CI=true to make this a failure)");
                None
            }
            Err(err) => panic!("PostgreSQL is required under CI=true: {err:#}"),
        }
    }

    /// A server on an existing test database (other processes may share it).
    pub async fn serve_database(database: TestDatabase) -> anyhow::Result<TestServer> {
        Self::start_on(database, |_| {}).await
    }

    /// Like [`TestServer::serve_database`], with its configuration adjusted.
    pub async fn serve_database_with(
        database: TestDatabase,
        configure: impl FnOnce(&mut Config),
    ) -> anyhow::Result<TestServer> {
        Self::start_on(database, configure).await
    }

    /// A server with its configuration adjusted; `None` (skipped, with a note) when PostgreSQL is asked for and is
    /// unreachable outside CI.
    pub async fn configured(engine: Engine, configure: impl FnOnce(&mut Config)) -> Option<TestServer> {
        match Self::start_with(engine, configure).await {
            Ok(server) => Some(server),
            Err(err) if engine == Engine::Postgres && std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("skipping the PostgreSQL variant: {err:#} (set CI=true to make this a failure)");
                None
            }
            Err(err) => panic!("test server: {err:#}"),
        }
    }

    pub async fn start_with(engine: Engine, configure: impl FnOnce(&mut Config)) -> anyhow::Result<TestServer> {
        Self::start_on(TestDatabase::create(engine).await?, configure).await
    }

    async fn start_on(database: TestDatabase, configure: impl FnOnce(&mut Config)) -> anyhow::Result<TestServer> {
        let engine = database.engine;
        // Bound first, so that the configuration names the address really served (the default public URL). Test
        // receivers listen on the loopback address, which the service refuses unless allowed.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let mut config = Config {
            database: DatabaseSettings {
                database_url: database.url.clone(),
                database_max_connections: 8,
                audit_retention_days: 3650,
            },
            listen: listener.local_addr()?,
            webhook_allow_private_addresses: true,
            // Delivery empties the outbox; tests that look into it see what the writes recorded. Webhook tests
            // turn the dispatcher on.
            webhook_dispatcher: false,
            // Tests book many requests from one address; the limits have tests of their own (tests/it/security/public_booking.rs).
            booking_requests_per_address_per_hour: 0,
            booking_requests_per_email_per_hour: 0,
            ..Config::default()
        };
        configure(&mut config);
        let db = Db::connect(&config.database.database_url, config.database.database_max_connections).await?;
        frontdesk::domain::migrate(&db).await?;
        let state = AppState::new(db.clone(), config).await?;
        let dispatcher = match state.config.webhook_dispatcher {
            true => Some(Dispatcher::spawn(db.clone(), &state.webhooks, DispatcherOptions::default())?),
            false => None,
        };
        // Guest e-mails are sent by tests that configure a mail server (tests/guest_messages.rs).
        let mail = match state.config.mail.smtp_url.is_some() {
            true => {
                let options = MailOptions::from_settings(&state.config.mail);
                Some(MailDispatcher::spawn(
                    db.clone(),
                    Postbox::from_settings(&state.config.mail, options.timeout)?,
                    options,
                ))
            }
            false => None,
        };
        let mut server = Self::serve_on(listener, router::app(state), db, engine, database).await?;
        server.dispatcher = dispatcher;
        server.mail = mail;
        Ok(server)
    }

    /// Serves an arbitrary router (used to test the middleware stack).
    pub async fn serve_router(
        router: axum::Router,
        db: Db,
        engine: Engine,
        database: TestDatabase,
    ) -> anyhow::Result<TestServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        Self::serve_on(listener, router, db, engine, database).await
    }

    async fn serve_on(
        listener: tokio::net::TcpListener,
        router: axum::Router,
        db: Db,
        engine: Engine,
        database: TestDatabase,
    ) -> anyhow::Result<TestServer> {
        let addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = http::serve_router(listener, router, async {
                let _ = rx.await;
            })
            .await;
        });
        Ok(TestServer {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            db,
            engine,
            shutdown: Some(tx),
            task: Some(task),
            dispatcher: None,
            mail: None,
            _database: database,
        })
    }

    /// The URL of this server's database (another process may serve it too).
    pub fn database_url(&self) -> &str {
        &self._database.url
    }

    pub async fn request(&self, method: Method, path: &str, auth: &Auth, body: Option<Value>) -> Answer {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        req = match auth {
            Auth::None => req,
            Auth::Key(secret) => req.header("authorization", basic(secret)),
            Auth::Token(token) => req.header("authorization", format!("Token {token}")),
            Auth::Raw(value) => req.header("authorization", value.as_str()),
        };
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request sent");
        Self::answer(res).await
    }

    pub async fn answer(res: reqwest::Response) -> Answer {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body read");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Answer { status, headers, body }
    }

    pub async fn get(&self, path: &str, auth: &Auth) -> Answer {
        self.request(Method::GET, path, auth, None).await
    }

    pub async fn post(&self, path: &str, auth: &Auth, body: Value) -> Answer {
        self.request(Method::POST, path, auth, Some(body)).await
    }

    pub async fn put(&self, path: &str, auth: &Auth, body: Value) -> Answer {
        self.request(Method::PUT, path, auth, Some(body)).await
    }

    pub async fn delete(&self, path: &str, auth: &Auth) -> Answer {
        self.request(Method::DELETE, path, auth, None).await
    }

    /// Creates a record through the API (200 expected) and answers its id.
    pub async fn create(&self, path: &str, auth: &Auth, body: Value) -> String {
        self.post(path, auth, body).await.expect(200).body["id"].as_str().expect("id").to_string()
    }

    /// A new organization with a signed-in operator.
    pub async fn org(&self, name: &str) -> Org {
        let org = identity::create_organization(&self.db, name).await.expect("organization");
        let email = format!("{}@example.com", uuid::Uuid::now_v7().simple());
        let operator = identity::create_operator(
            &self.db,
            identity::OperatorIn { organization_id: &org.id, email: &email, name: "Test Operator", password: PASSWORD },
        )
        .await
        .expect("operator");
        let session = identity::issue_token(&self.db, operator, TimeDelta::days(1)).await.expect("token");
        Org { id: org.id, token: session.token, operator_email: email }
    }

    /// A hotel of `org`, created through the API.
    pub async fn hotel(&self, org: &Org, name: &str) -> String {
        let answer = self
            .post("/api/hotels", &org.auth(), json!({"name": name, "timezone": "Europe/Lisbon", "currency": "EUR"}))
            .await
            .expect(200);
        answer.body["id"].as_str().expect("hotel id").to_string()
    }

    /// An API key of `org` with these scopes (empty: the default read scopes), optionally pinned.
    pub async fn key(&self, org: &Org, scopes: &[Scope], hotel: Option<&str>) -> String {
        let scopes: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
        let mut body = json!({"name": "test key", "scopes": scopes});
        if let Some(hotel) = hotel {
            body["hotelId"] = json!(hotel);
        }
        let answer = self.post("/api/apiKeys", &org.auth(), body).await.expect(200);
        answer.body["secret"].as_str().expect("secret").to_string()
    }

    /// Counts the rows of a table (tests use it to prove that refused writes changed nothing).
    pub async fn count(&self, table: &str) -> i64 {
        let mut conn = self.db.read().await.expect("connection");
        frontdesk::store::query(&format!("SELECT COUNT(*) AS n FROM {table}"))
            .fetch_one(&mut conn)
            .await
            .expect("count")
            .try_get("n")
            .expect("n")
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        if let Some(dispatcher) = self.dispatcher.take() {
            dispatcher.stop().await;
        }
        if let Some(mail) = self.mail.take() {
            mail.stop().await;
        }
        self.db.close().await;
    }
}

/// A client that shows redirects instead of following them, and sends the dashboard's cookie of `token`.
pub struct Dashboard<'a> {
    s: &'a TestServer,
    token: String,
    client: reqwest::Client,
}
impl<'a> Dashboard<'a> {
    pub fn new(s: &'a TestServer, token: &str) -> Dashboard<'a> {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
        Dashboard { s, token: token.to_string(), client }
    }

    pub async fn get(&self, path: &str) -> (u16, String) {
        let (status, _, html) = self.open(path).await;
        (status, html)
    }

    /// Like [`Dashboard::get`], with the headers (a redirect's `location`).
    pub async fn open(&self, path: &str) -> (u16, reqwest::header::HeaderMap, String) {
        let answer = self
            .client
            .get(format!("{}{path}", self.s.base))
            .header("cookie", format!("fd_session={}", self.token))
            .send()
            .await
            .expect("page");
        let (status, headers) = (answer.status().as_u16(), answer.headers().clone());
        (status, headers, answer.text().await.expect("html"))
    }

    /// Posts a form with this session's CSRF token: (status, headers, body).
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
        let csrf = frontdesk::web::session::csrf_for(&self.token);
        let mut form: Vec<(&str, &str)> = vec![("_csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        let answer = self
            .client
            .post(format!("{}{path}", self.s.base))
            .header("cookie", format!("fd_session={}", self.token))
            .form(&form)
            .send()
            .await
            .expect("post");
        let status = answer.status().as_u16();
        let headers = answer.headers().clone();
        (status, headers, answer.text().await.expect("html"))
    }
}
