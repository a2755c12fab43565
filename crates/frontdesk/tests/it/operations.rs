//! The process as an operator runs it: panics, graceful shutdown, the admin commands, the OpenAPI document.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::process::{command, json_output};
use crate::common::{Auth, TestDatabase, TestServer};
use frontdesk::config::Config;
use frontdesk::store::{Db, Engine};
use serde_json::Value;

#[tokio::test]
async fn a_panicking_handler_answers_500_and_the_service_keeps_serving() {
    let database = TestDatabase::create(Engine::Sqlite).await.unwrap();
    let db = Db::connect(&database.url, 2).await.unwrap();
    let router = axum::Router::new().route(
        "/boom",
        axum::routing::get(|| async {
            if true {
                panic!("boom");
            }
            "unreachable"
        }),
    );
    let router = frontdesk::http::with_middleware(router, &Config::default());
    let s = TestServer::serve_router(router, db, Engine::Sqlite, database).await.unwrap();
    for _ in 0..2 {
        let answer = s.get("/boom", &Auth::None).await.expect(500);
        assert!(!answer.body.to_string().contains("boom"), "no panic text leaks");
    }
}

#[tokio::test]
async fn admin_commands_print_one_json_object_each() {
    let database = TestDatabase::create(Engine::Sqlite).await.unwrap();
    let url = &database.url;
    // Admin commands never create a database; `migrate` does.
    let migrated = command(url).arg("migrate").output().unwrap();
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let org = json_output(command(url).args(["admin", "create-org", "--name", "Acme"]));
    let org_id = org["id"].as_str().unwrap();
    let op = json_output(command(url).args([
        "admin",
        "create-operator",
        "--org",
        org_id,
        "--email",
        "ana@example.com",
        "--name",
        "Ana",
        "--password",
        "long enough",
    ]));
    assert_eq!(op["organizationId"], org["id"]);
    let token = json_output(command(url).args(["admin", "create-token", "--email", "ana@example.com"]));
    assert!(token["token"].as_str().unwrap().starts_with("fdt_"));
    let key =
        json_output(command(url).args(["admin", "create-api-key", "--org", org_id, "--name", "ci", "--scope", "all"]));
    assert!(key["secret"].as_str().unwrap().starts_with("fdk_"));
    assert_eq!(key["scopes"].as_array().unwrap().len(), frontdesk::domain::Scope::ALL.len());
    let orgs = json_output(command(url).args(["admin", "list-orgs"]));
    assert_eq!(orgs["organizations"][0]["id"], org["id"]);
    let failed = command(url)
        .args(["admin", "create-api-key", "--org", org_id, "--name", "x", "--scope", "nope"])
        .output()
        .unwrap();
    assert!(!failed.status.success());
    assert!(failed.stdout.is_empty(), "nothing on stdout when it fails");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn serve_demo_twice_and_shut_down_gracefully_on_sigterm() {
    let database = TestDatabase::create(Engine::Sqlite).await.unwrap();
    for run in 0..2 {
        let port = free_port();
        let mut child = command(&database.url)
            .args(["serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let client = reqwest::Client::new();
        let mut ready = false;
        for _ in 0..100 {
            if let Ok(res) = client.get(format!("http://127.0.0.1:{port}/readyz")).send().await {
                ready = res.status().is_success();
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ready, "the service came up");
        let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(status.success());
        let mut exited = None;
        for _ in 0..100 {
            if let Some(status) = child.try_wait().unwrap() {
                exited = Some(status);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let status = exited.expect("exited within 10 s of SIGTERM");
        assert!(status.success(), "clean exit, got {status:?}");
        let mut stdout = String::new();
        use std::io::Read;
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        assert!(stdout.contains("demo@frontdesk.local"), "{stdout}");
        assert_eq!(stdout.contains("fdk_"), run == 0, "the key secret is printed only when created");
    }
    let db = Db::connect(&database.url, 1).await.unwrap();
    let orgs = frontdesk::domain::identity::list_organizations(&db).await.unwrap();
    assert_eq!(orgs.len(), 1);
}

/// The committed `openapi.json` is the generated document: a change to the API shows up in review. Run with
/// `UPDATE_OPENAPI=1` to rewrite it.
#[test]
fn openapi_document_matches_the_committed_snapshot() {
    let doc = frontdesk::http::openapi_document();
    let generated = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openapi.json");
    if std::env::var("UPDATE_OPENAPI").is_ok() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi.json is stale: run `UPDATE_OPENAPI=1 cargo test -p frontdesk --test it openapi_document` and commit it"
    );
    let value: Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(value["openapi"], "3.1.0");
    let schemes = &value["components"]["securitySchemes"];
    assert_eq!(schemes["apiKey"]["scheme"], "basic");
    assert_eq!(schemes["accessToken"]["name"], "Authorization");
    for (path, item) in value["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert!(op["responses"]["default"].is_object(), "{method} {path} documents its errors");
        }
    }
}

/// Each create links to what can be done with the record it answers: every link names an operation of the document
/// (by `operationRef`, the key OpenAPI readers know) and fills that operation's path parameter from the answer's id.
#[test]
fn creates_link_to_their_records_operations() {
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).unwrap();
    let mut links = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(answers) = item["post"]["responses"].as_object() else { continue };
        for link in answers.values().filter_map(|answer| answer["links"].as_object()).flat_map(|l| l.values()) {
            let reference = link["operationRef"].as_str().unwrap_or_else(|| panic!("POST {path}: {link}"));
            assert!(link.get("operation_ref").is_none(), "{link}");
            let target = doc.pointer(reference.trim_start_matches('#')).unwrap_or_else(|| panic!("{reference}"));
            let declared: Vec<&str> = target["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for (name, value) in link["parameters"].as_object().unwrap() {
                assert!(declared.contains(&name.as_str()), "{reference} takes no path parameter {name}");
                assert_eq!(value, "$response.body#/id");
            }
            links += 1;
        }
    }
    let created = &doc["paths"]["/api/reservations"]["post"]["responses"]["200"]["links"];
    assert_eq!(created["get_reservation"]["operationRef"], "#/paths/~1api~1reservations~1{reservationId}/get");
    assert_eq!(created["approve_reservation"]["parameters"]["reservationId"], "$response.body#/id");
    assert!(links >= 20, "{links} links");
}
