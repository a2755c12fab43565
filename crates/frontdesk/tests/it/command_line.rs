//! The `frontdesk` command as an operator meets it: what each command's help offers, what a refused admin command
//! says, which database a command opens (and that admin never creates one), logs fit for a file, a demo whose key
//! survives a taken port, and an unreachable PostgreSQL named with its reason.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use crate::common::TestDatabase;
use frontdesk::store::Engine;

/// The binary with a clean environment for its settings, run in `dir`.
fn frontdesk(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_frontdesk"));
    cmd.current_dir(dir).env("FRONTDESK_LOG", "info");
    for (key, _) in std::env::vars() {
        if key.starts_with("FRONTDESK_") && key != "FRONTDESK_LOG" {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn succeeded(out: Output) -> Output {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    out
}

fn failed(out: Output) -> String {
    assert!(!out.status.success(), "expected a failure; stdout: {}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "nothing on stdout when it fails: {}", text(&out.stdout));
    text(&out.stderr)
}

/// A directory of its own for a test, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("frontdesk-cli-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn help(dir: &std::path::Path, args: &[&str]) -> String {
    text(&succeeded(frontdesk(dir).args(args).arg("--help").output().unwrap()).stdout)
}

#[test]
fn each_command_offers_only_its_own_options_with_their_defaults() {
    let dir = TempDir::new();
    let serve = help(&dir.0, &["serve"]);
    for expected in [
        "--listen <ADDRESS>",
        "[env: FRONTDESK_LISTEN=]",
        "[default: 127.0.0.1:8080]",
        "--database-url <URL>",
        "[default: sqlite://frontdesk.db]",
        "--rate-limit-per-minute <N>",
        "[default: 600]",
        "--webhook-allow-private-addresses <BOOL>",
        "--config <FILE>",
        "--demo",
    ] {
        assert!(serve.contains(expected), "serve --help lacks {expected:?}:\n{serve}");
    }
    assert!(!serve.contains("FileConfig"), "no internal type names:\n{serve}");

    let migrate = help(&dir.0, &["migrate"]);
    assert!(migrate.contains("--database-url <URL>") && migrate.contains("--log-format"), "{migrate}");
    for foreign in ["--listen", "--rate-limit", "--webhook", "--public-url", "--token-ttl-days"] {
        assert!(!migrate.contains(foreign), "migrate --help offers {foreign}:\n{migrate}");
    }

    let create_org = help(&dir.0, &["admin", "create-org"]);
    assert!(create_org.contains("The organization's name"), "{create_org}");
    assert!(create_org.contains("--database-url <URL>"), "{create_org}");
    assert!(!create_org.contains("--listen"), "{create_org}");
    let create_operator = help(&dir.0, &["admin", "create-operator"]);
    for described in ["The operator's e-mail", "The operator's name", "At least 8 characters"] {
        assert!(create_operator.contains(described), "{create_operator}");
    }
    let create_token = help(&dir.0, &["admin", "create-token"]);
    assert!(create_token.contains("--token-ttl-days <DAYS>") && create_token.contains("[default: 14]"));
}

#[test]
fn admin_never_creates_a_database_and_says_which_one_it_opened() {
    let dir = TempDir::new();
    let missing = failed(frontdesk(&dir.0).args(["admin", "list-orgs"]).output().unwrap());
    let expected_path = dir.0.join("frontdesk.db");
    assert!(missing.contains(&expected_path.display().to_string()), "names the full path: {missing}");
    assert!(missing.contains("never creates"), "{missing}");
    assert!(!expected_path.exists(), "no empty database was created");

    succeeded(frontdesk(&dir.0).arg("migrate").output().unwrap());
    assert!(expected_path.exists(), "migrate creates it");
    let listed = succeeded(frontdesk(&dir.0).args(["admin", "list-orgs"]).output().unwrap());
    assert_eq!(text(&listed.stdout).trim(), r#"{"organizations":[]}"#);
    let log = text(&listed.stderr);
    assert!(log.contains(&format!("SQLite file {}", expected_path.display())), "says which database: {log}");
    assert!(!log.contains('\u{1b}'), "no colour codes when stderr is not a terminal: {log:?}");
}

#[test]
fn refused_admin_input_is_explained_field_by_field() {
    let dir = TempDir::new();
    succeeded(frontdesk(&dir.0).arg("migrate").output().unwrap());
    let empty_name = failed(frontdesk(&dir.0).args(["admin", "create-org", "--name", ""]).output().unwrap());
    assert!(empty_name.contains("the request is invalid") && empty_name.contains("--name:"), "{empty_name}");

    let org = succeeded(frontdesk(&dir.0).args(["admin", "create-org", "--name", "Acme"]).output().unwrap());
    let org: serde_json::Value = serde_json::from_slice(&org.stdout).unwrap();
    let org_id = org["id"].as_str().unwrap();
    let short = failed(
        frontdesk(&dir.0)
            .args(["admin", "create-operator", "--org", org_id, "--email", "ana@example.com", "--name", "Ana"])
            .args(["--password", "short"])
            .output()
            .unwrap(),
    );
    assert!(short.contains("--password: must be at least 8 characters"), "{short}");
}

#[test]
fn a_settings_file_fills_in_and_an_unknown_key_is_named() {
    let dir = TempDir::new();
    std::fs::write(dir.0.join("frontdesk.toml"), "database_url = \"sqlite://from-file.db\"\n").unwrap();
    succeeded(frontdesk(&dir.0).args(["migrate", "--config", "frontdesk.toml"]).output().unwrap());
    assert!(dir.0.join("from-file.db").exists(), "the file's database_url was used");
    // A flag beats the file.
    succeeded(
        frontdesk(&dir.0)
            .args(["migrate", "--config", "frontdesk.toml", "--database-url", "sqlite://from-flag.db"])
            .output()
            .unwrap(),
    );
    assert!(dir.0.join("from-flag.db").exists(), "the flag's database_url was used");

    std::fs::write(dir.0.join("typo.toml"), "databse_url = \"sqlite://x.db\"\n").unwrap();
    let typo = failed(frontdesk(&dir.0).args(["migrate", "--config", "typo.toml"]).output().unwrap());
    assert!(typo.contains("unknown setting `databse_url`"), "{typo}");
}

#[test]
fn an_unreachable_postgres_is_named_with_its_reason() {
    let dir = TempDir::new();
    // Nothing listens on port 1.
    let out = failed(
        frontdesk(&dir.0)
            .args(["migrate", "--database-url", "postgres://postgres:secret@127.0.0.1:1/test"])
            .output()
            .unwrap(),
    );
    assert!(out.contains("cannot connect to PostgreSQL at 127.0.0.1:1 (database test, user postgres)"), "{out}");
    assert!(!out.contains("secret"), "no password in the message: {out}");
    assert!(!out.contains("pool timed out"), "{out}");
}

/// Runs `serve --demo` until it has printed its instructions, then stops it; returns what it printed.
fn demo_instructions(dir: &std::path::Path, url: &str) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = frontdesk(dir)
        .args(["serve", "--demo", "--listen", &format!("127.0.0.1:{port}"), "--database-url", url])
        .env("FRONTDESK_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut printed = String::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        let last = line.contains("assistant endpoint");
        printed.push_str(&line);
        printed.push('\n');
        if last {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    printed
}

async fn demo_key_survives_a_taken_port(engine: Engine) {
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let dir = TempDir::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let refused = failed(
        frontdesk(&dir.0)
            .args(["serve", "--demo", "--listen", &address, "--database-url", &database.url])
            .output()
            .unwrap(),
    );
    assert!(refused.contains("Address already in use") && refused.contains("--listen"), "{refused}");
    drop(taken);

    let first = demo_instructions(&dir.0, &database.url);
    assert!(first.contains("API key (every scope; shown only now): fdk_"), "the key was not spent: {first}");
    let second = demo_instructions(&dir.0, &database.url);
    assert!(!second.contains("fdk_"), "{second}");
    assert!(second.contains("frontdesk admin create-api-key --org "), "says how to get a new key: {second}");
    assert!(second.contains("--database-url"), "names the database it serves: {second}");
}

mod demo {
    use super::*;

    #[tokio::test]
    async fn sqlite() {
        demo_key_survives_a_taken_port(Engine::Sqlite).await;
    }

    #[tokio::test]
    async fn postgres() {
        demo_key_survives_a_taken_port(Engine::Postgres).await;
    }
}
