//! The dashboard's Integrations area, used as a person uses it: in a real headless Chromium, on SQLite
//! and PostgreSQL. API keys, operator access tokens and sessions, webhook subscriptions and connected assistants are
//! made and ended in the browser, and what they do is checked where it matters: on the API, at a webhook receiver,
//! at the assistant endpoint. The SQLite runs save screenshots to `docs/screenshots/integrations-*.png`; every page visited
//! is checked with axe-core and for sideways scrolling.

mod assistants;
mod credentials;
mod pages;
mod webhooks;

use crate::common::browser::Browser;
use crate::common::{Dashboard, Org, TestServer, PASSWORD};
use base64::Engine as _;
use frontdesk::store::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

async fn server(engine: Engine) -> Option<TestServer> {
    TestServer::configured(engine, |c| c.webhook_dispatcher = true).await
}

fn screenshots(s: &TestServer) -> bool {
    s.engine == Engine::Sqlite
}

/// The whole page's HTML, as the browser has it.
async fn html(b: &Browser) -> String {
    b.client.source().await.expect("page source")
}

/// The secret a creation page shows (the read-only field's value).
async fn shown_secret(b: &Browser) -> String {
    b.wait_for_text("Shown once").await;
    let field = b.find("#secret").await;
    field.prop("value").await.expect("value").expect("a secret")
}

fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::now_v7().simple(), uuid::Uuid::now_v7().simple());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// An assistant registers, the operator of `org` signs in and allows it: (client id, access, refresh token).
async fn connect_assistant(s: &TestServer, org: &Org, name: &str) -> (String, String, String) {
    let registered = s
        .client
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"client_name": name, "redirect_uris": [REDIRECT]}))
        .send()
        .await
        .expect("register");
    let registered: Value = registered.json().await.expect("json");
    let client_id = registered["client_id"].as_str().expect("client_id").to_string();
    let (verifier, challenge) = pkce();
    let mut url = url::Url::parse(&format!("{}/oauth/authorize", s.base)).expect("url");
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "xyz")
        .append_pair("scope", "service:read")
        .append_pair("resource", &format!("{}/mcp", s.base));
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let mut fields: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    fields.push(("email".into(), org.operator_email.clone()));
    fields.push(("password".into(), PASSWORD.into()));
    let consent = browser.post(format!("{}/oauth/authorize", s.base)).form(&fields).send().await.expect("sign in");
    let html = consent.text().await.expect("html");
    let start = html.find("name=\"ticket\" value=\"").expect("consent ticket") + "name=\"ticket\" value=\"".len();
    let ticket = html[start..].split('"').next().expect("ticket").to_string();
    let answer = browser
        .post(format!("{}/oauth/authorize/consent", s.base))
        .form(&[("ticket", ticket.as_str()), ("decision", "allow")])
        .send()
        .await
        .expect("consent");
    let location = answer.headers()["location"].to_str().expect("location").to_string();
    let code = url::Url::parse(&location)
        .expect("callback")
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("code");
    let tokens = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id.as_str()),
            ("code_verifier", verifier.as_str()),
        ])
        .send()
        .await
        .expect("token");
    let tokens: Value = tokens.json().await.expect("tokens");
    (
        client_id,
        tokens["access_token"].as_str().expect("access").to_string(),
        tokens["refresh_token"].as_str().expect("refresh").to_string(),
    )
}

/// The status of an MCP `initialize` sent with `access` as the bearer token.
async fn mcp_status(s: &TestServer, access: &str) -> u16 {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    s.client
        .post(format!("{}/mcp", s.base))
        .bearer_auth(access)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .expect("initialize")
        .status()
        .as_u16()
}
