//! Every step of the flow works across processes of the service sharing one database.

use crate::common::TestServer;
use serde_json::{json, Value};

use super::{catalogue, code_for, REDIRECT};

on_both_engines!(processes_share_every_step);

/// A second process of the service (its own pool, its own memory) on `s`'s database, behind the same public URL:
/// its base address and the sender that stops it.
async fn second_process(s: &TestServer) -> (String, tokio::sync::oneshot::Sender<()>) {
    let config = frontdesk::config::Config {
        database: frontdesk::config::DatabaseSettings {
            database_url: s.database_url().to_string(),
            database_max_connections: 4,
            audit_retention_days: 3650,
        },
        public_url: Some(s.base.clone()),
        ..Default::default()
    };
    let db = frontdesk::store::Db::connect(&config.database.database_url, 4).await.expect("database");
    let state = frontdesk::app::AppState::new(db, config).await.expect("state");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = frontdesk::router::serve(listener, state, async {
            let _ = rx.await;
        })
        .await;
    });
    (base, tx)
}

async fn processes_share_every_step(s: TestServer) {
    let org = s.org("Acme").await;
    catalogue(&s, &org, "Harbour").await;
    let (other, stop) = second_process(&s).await;
    // Registered and signed in on this process; the code exchanged on the other.
    let (client_id, code, verifier) = code_for(&s, &org).await;
    let res = s
        .client
        .post(format!("{other}/oauth/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ])
        .send()
        .await
        .expect("token");
    let tokens = TestServer::answer(res).await;
    assert_eq!(tokens.status.as_u16(), 200, "{}", tokens.body);
    let access = tokens.body["access_token"].as_str().expect("access");
    let refresh = tokens.body["refresh_token"].as_str().expect("refresh");
    // MCP requests spread over both processes: no session lives in either.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let list =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_hotels", "arguments": {}}});
    for (base, body) in [(&s.base, &initialize), (&other, &list), (&s.base, &list)] {
        let answer = s
            .client
            .post(format!("{base}/mcp"))
            .bearer_auth(access)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(body)
            .send()
            .await
            .expect("mcp");
        assert_eq!(answer.status().as_u16(), 200);
        let body: Value = answer.json().await.expect("json");
        assert!(body["result"].is_object(), "{body}");
    }
    // Revoked on this process, refused on the other.
    let revoked = s
        .client
        .post(format!("{}/oauth/revoke", s.base))
        .form(&[("token", refresh), ("client_id", client_id.as_str())])
        .send()
        .await
        .expect("revoke");
    assert_eq!(revoked.status().as_u16(), 200);
    let answer = s.client.post(format!("{other}/mcp")).bearer_auth(access).json(&list).send().await.expect("mcp");
    assert_eq!(answer.status().as_u16(), 401);
    let _ = stop.send(());
}
