//! The keys that seal webhook secrets and sign offers were kept in the database they protect: a dump alone opened
//! every webhook secret. Now a secrets key can be given from a file or the environment; the database then keeps
//! only a check value, a process given the wrong key (or none) is refused at start, and moving to a new key
//! re-seals what is sealed.

use crate::common::{Auth, TestServer};
use frontdesk::app::AppState;
use frontdesk::config::{Config, DatabaseSettings, SecretText};
use frontdesk::domain::service_keys::{KeyRing, KeySource, MasterKey};
use frontdesk::store::{Db, Engine};
use serde_json::json;

on_both_engines_configured!(a_given_secrets_key_keeps_the_keys_out_of_the_database);

/// A key file in a fresh directory: (its path, the key).
fn key_file(dir: &std::path::Path, name: &str) -> (String, MasterKey) {
    let text = MasterKey::generate();
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).expect("key file");
    (path.to_string_lossy().into_owned(), MasterKey::parse(&text, name).expect("key"))
}

/// Starts the service's state on `db` with the keys `configure` gives: the error, if it is refused.
async fn start(s: &TestServer, configure: impl FnOnce(&mut Config)) -> Result<AppState, String> {
    let mut config = Config {
        database: DatabaseSettings {
            database_url: s.database_url().to_string(),
            database_max_connections: 4,
            audit_retention_days: 3650,
        },
        ..Config::default()
    };
    configure(&mut config);
    let db = Db::connect(&config.database.database_url, 4).await.expect("database");
    AppState::new(db, config).await.map_err(|e| format!("{e:#}"))
}

/// The service's secrets stored in the database, by name.
async fn stored_secrets(s: &TestServer) -> Vec<String> {
    let mut conn = s.db.read().await.expect("connection");
    frontdesk::store::query("SELECT name FROM service_secrets WHERE value <> '' ORDER BY name")
        .fetch_all(&mut conn)
        .await
        .expect("secrets")
        .iter()
        .map(|row| row.get::<String, _>("name"))
        .collect()
}

/// The webhook subscription's secret, opened with `keys`.
async fn opened(s: &TestServer, keys: &KeyRing) -> String {
    let mut conn = s.db.read().await.expect("connection");
    let sealed = frontdesk::store::webhooks::sealed_secrets(&mut conn).await.expect("sealed");
    keys.sealing.open(&sealed[0].1).expect("opens with the key")
}

async fn a_given_secrets_key_keeps_the_keys_out_of_the_database(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let created = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": "http://127.0.0.1:9/hook"}))
        .await
        .expect(200);
    let secret = created.body["secret"].as_str().expect("the secret, shown once").to_string();
    assert_eq!(stored_secrets(&s).await, ["offer_signing_key", "webhook_secret_key"], "kept in the database");

    let dir = tempfile_dir();
    let (first_path, first) = key_file(&dir, "first.key");
    let (other_path, _) = key_file(&dir, "other.key");
    // Given a key, the process moves the database to it: the webhook secret is sealed anew, the keys are gone.
    start(&s, |c| c.secrets_key_file = Some(first_path.clone())).await.expect("starts with the key");
    assert_eq!(stored_secrets(&s).await, ["master_key_check"], "only a check value is left");
    let with_first = KeyRing::open(&s.db, &KeySource { current: Some(first.clone()), previous: None }).await.unwrap();
    assert_eq!(opened(&s, &with_first).await, secret);
    // The same key from the environment is the same key.
    let key_text = std::fs::read_to_string(&first_path).expect("key");
    start(&s, |c| c.secrets_key = Some(SecretText::new(key_text.trim()))).await.expect("starts with the variable");

    // Without it, or with another one, the process is refused, saying why.
    let refused = start(&s, |_| {}).await.err().expect("refused without the key");
    assert!(refused.contains("sealed with a secrets key from outside the database"), "{refused}");
    let refused = start(&s, |c| c.secrets_key_file = Some(other_path.clone())).await.err().expect("another key");
    assert!(refused.contains("sealed with another secrets key"), "{refused}");
    let refused = start(&s, |c| {
        c.secrets_key_file = Some(first_path.clone());
        c.secrets_key = Some(SecretText::new(key_text.trim()));
    })
    .await
    .err()
    .expect("two keys");
    assert!(refused.contains("give the secrets key once"), "{refused}");
    std::fs::write(&other_path, "c2hvcnQ=\n").expect("a short key");
    let refused = start(&s, |c| c.secrets_key_file = Some(other_path.clone())).await.err().expect("short key");
    assert!(refused.contains("must be 32 bytes"), "{refused}");

    // Rotation: the new key with the old one as the previous, once; then the new key alone.
    let (second_path, second) = key_file(&dir, "second.key");
    start(&s, |c| {
        c.secrets_key_file = Some(second_path.clone());
        c.previous_secrets_key_file = Some(first_path.clone());
    })
    .await
    .expect("rotates");
    let with_second = KeyRing::open(&s.db, &KeySource { current: Some(second), previous: None }).await.unwrap();
    assert_eq!(opened(&s, &with_second).await, secret);
    assert!(start(&s, |c| c.secrets_key_file = Some(first_path.clone())).await.is_err(), "the old key is refused");
    // The service answers as before: the subscription is there, its secret never shown again.
    let listed = s.get("/api/webhooksubscriptions", &org.auth()).await.expect(200);
    assert!(!listed.body.to_string().contains(&secret));
    s.get("/healthz", &Auth::None).await.expect(200);
    let _ = std::fs::remove_dir_all(&dir);
    s.stop().await;
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("frontdesk-keys-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).expect("key directory");
    dir
}
