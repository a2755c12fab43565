//! The dashboard's Integrations area (issue 30), used as a person uses it: in a real headless Chromium, on SQLite
//! and PostgreSQL. API keys, operator access tokens and sessions, webhook subscriptions and connected assistants are
//! made and ended in the browser, and what they do is checked where it matters: on the API, at a webhook receiver,
//! at the connector. The SQLite runs save screenshots to `docs/screenshots/integrations-*.png`; every page visited
//! is checked with axe-core and for sideways scrolling.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::browser::{Browser, PHONE};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::{Auth, Org, TestServer, PASSWORD, WAIT};
use base64::Engine as _;
use frontdesk::store::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

on_both_engines_configured!(
    an_api_key_made_in_the_dashboard_works_and_its_secret_is_shown_once,
    an_operator_token_works_until_revoked_and_other_sessions_can_be_ended,
    a_webhook_made_in_the_dashboard_is_signed_and_a_failing_one_turns_on_again,
    disconnecting_an_assistant_cuts_it_off_at_once,
    other_organizations_integrations_show_the_404_page,
    the_integrations_pages_read_well_on_desktop_and_phone,
);

/// The password of the operators that `TestServer::org` creates.
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

/// A client that shows redirects instead of following them, and sends the dashboard's cookie of `token`.
struct Dashboard<'a> {
    s: &'a TestServer,
    token: String,
    client: reqwest::Client,
}

impl<'a> Dashboard<'a> {
    fn new(s: &'a TestServer, token: &str) -> Dashboard<'a> {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
        Dashboard { s, token: token.to_string(), client }
    }

    async fn get(&self, path: &str) -> (u16, String) {
        let answer = self
            .client
            .get(format!("{}{path}", self.s.base))
            .header("cookie", format!("fd_session={}", self.token))
            .send()
            .await
            .expect("page");
        (answer.status().as_u16(), answer.text().await.expect("html"))
    }

    /// Posts a form with this session's CSRF token: (status, headers, body).
    async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
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

/// The value of the read-only secret field in a page's HTML.
fn secret_in(html: &str) -> String {
    let start = html.find("id=\"secret\"").expect("secret field");
    let value = html[start..].find("value=\"").expect("value") + start + "value=\"".len();
    html[value..].split('"').next().expect("secret").to_string()
}

async fn an_api_key_made_in_the_dashboard_works_and_its_secret_is_shown_once(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/today")).await;
    b.click_text("nav.tabs a", "Integrations").await;
    b.wait_for_text("New API key").await;
    assert!(b.path().await.ends_with("/integrations/api-keys"), "{}", b.path().await);
    // New keys start read-only: the read scopes are ticked, the write scopes are not.
    for scope in ["reservations", "guests", "rates", "rooms"] {
        let read = b.find(&format!("input[name='scope-{scope}:read']")).await;
        assert!(read.is_selected().await.expect("state"), "{scope}:read is ticked");
        let write = b.find(&format!("input[name='scope-{scope}:write']")).await;
        assert!(!write.is_selected().await.expect("state"), "{scope}:write is not ticked");
    }
    b.assert_page_ok("the API keys page").await;
    b.fill("#name", "Channel manager").await;
    b.click("input[name='scope-guests:write']").await;
    b.select("#hotelId", &hotel).await;
    b.click_text("button", "Create API key").await;
    let secret = shown_secret(&b).await;
    assert!(secret.starts_with("fdk_"), "{secret}");
    assert!(b.page_text().await.contains("Channel manager"));
    b.assert_page_ok("the page showing a new key's secret").await;
    if screenshots(&s) {
        b.screenshot("integrations-api-key-created").await;
    }

    // The key works with Basic auth, with the scopes ticked and the pin chosen.
    let key = Auth::Key(secret.clone());
    s.get(&format!("/api/guests?hotelId={hotel}"), &key).await.expect(200);
    s.post("/api/guests", &key, json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await.expect(200);
    s.post("/api/roomTypes", &key, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await.expect(403);

    // Never shown again: not in the list, not on the key's page, not after a reload.
    b.click_text("a", "Back to API keys").await;
    b.wait_for_text("Keys").await;
    let list = html(&b).await;
    assert!(list.contains("Channel manager") && list.contains("guests:write") && list.contains("Seaside Inn"));
    assert!(!list.contains(&secret), "the list shows no secret");
    b.client.refresh().await.expect("reload");
    b.wait_for_text("Channel manager").await;
    assert!(!html(&b).await.contains(&secret), "a reload shows no secret");
    b.click_text("a", "Edit").await;
    b.wait_for_text("About this key").await;
    let page = html(&b).await;
    assert!(!page.contains(&secret) && !page.contains(&secret[4..20]), "the key's page shows no secret");

    // Scopes and the rate limit change; the API sees them at once.
    b.click("input[name='scope-rooms:write']").await;
    b.fill("#rateLimitPerMinute", "120").await;
    b.click_text("button", "Save").await;
    b.wait_for_text("Saved the API key").await;
    s.post("/api/roomTypes", &key, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await.expect(200);
    let listed = s.get("/api/apiKeys", &org.auth()).await.expect(200).body;
    let listed = listed.as_array().expect("keys").iter().find(|k| k["name"] == json!("Channel manager")).cloned();
    assert_eq!(listed.expect("the key")["rateLimitPerMinute"], json!(120));

    // Revoked (after the browser asks), it stops at once.
    b.click_text("a", "Edit").await;
    b.wait_for_text("About this key").await;
    b.click_text("button", "Revoke this key").await;
    b.accept_dialog().await;
    b.wait_for_text("Revoked the API key").await;
    s.get(&format!("/api/guests?hotelId={hotel}"), &key).await.expect(401);

    // Without a browser: the answer to the POST is the page itself, never cached; refusals keep what was typed.
    let d = Dashboard::new(&s, &org.token);
    let path = format!("/hotels/{hotel}/integrations/api-keys");
    let (status, headers, body) = d.post(&path, &[("name", "Back office"), ("scope-rates:read", "on")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let other = secret_in(&body);
    s.get(&format!("/api/ratePlans?hotelId={hotel}"), &Auth::Key(other.clone())).await.expect(200);
    s.get("/api/guests", &Auth::Key(other.clone())).await.expect(403);
    let (status, _, body) = d.post(&path, &[("name", "Nothing"), ("rateLimitPerMinute", "lots")]).await;
    assert_eq!(status, 422);
    assert!(body.contains("Choose at least one scope") && body.contains("Enter a whole number"), "{body}");
    assert!(body.contains("value=\"Nothing\""), "what was typed stays");
    let (_, page) = d.get(&path).await;
    assert!(!page.contains(&other));
    b.close().await;
}

async fn an_operator_token_works_until_revoked_and_other_sessions_can_be_ended(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/tokens")).await;
    b.wait_for_text("New access token").await;
    b.fill("#name", "Nightly export").await;
    let last_day = crate::common::day(30);
    b.set_value("#expiresOn", &last_day).await;
    b.click_text("button", "Create access token").await;
    let token = shown_secret(&b).await;
    assert!(token.starts_with("fdt_"), "{token}");
    assert!(b.page_text().await.contains(&format!("Authorization: Token {token}")));
    let as_script = Auth::Token(token.clone());
    s.get("/api/hotels", &as_script).await.expect(200);
    s.get("/api/webhooksubscriptions", &as_script).await.expect(200);

    // Listed with its name, expiry and last use, without the token.
    b.click_text("a", "Back to access tokens").await;
    b.wait_for_text("Signed-in browsers").await;
    let page = b.page_text().await;
    assert!(page.contains("Nightly export"), "{page}");
    let expires = chrono::NaiveDate::parse_from_str(&last_day, "%Y-%m-%d").expect("date") + chrono::Days::new(1);
    assert!(page.contains(&expires.format("%-d %b %Y").to_string()), "the expiry is listed: {page}");
    assert!(!html(&b).await.contains(&token), "the list shows no token");
    assert!(page.contains("this browser"), "the current session is marked: {page}");

    // Another browser signs in (through the API's sign-in, saying who it is); a second script token exists too.
    let other = s
        .client
        .post(format!("{}/api/auth/login", s.base))
        .header("user-agent", "Other Browser/7.0 (a phone at the front desk)")
        .json(&json!({"email": org.operator_email, "password": PASSWORD}))
        .send()
        .await
        .expect("login");
    let other: Value = other.json().await.expect("session");
    let other = Auth::Token(other["token"].as_str().expect("token").to_string());
    s.get("/api/auth/me", &other).await.expect(200);
    b.client.refresh().await.expect("reload");
    b.wait_for_text("Other Browser/7.0").await;
    b.assert_page_ok("the access tokens page").await;
    if screenshots(&s) {
        b.screenshot("integrations-tokens").await;
    }

    // "Sign out everywhere else" ends the other session, not this one, and no named token.
    b.click_text("button", "Sign out everywhere else").await;
    b.accept_dialog().await;
    b.wait_for_text("Signed out 1 other session").await;
    s.get("/api/auth/me", &other).await.expect(401);
    s.get("/api/hotels", &as_script).await.expect(200);
    s.get("/api/hotels", &org.auth()).await.expect(200);
    assert!(!b.page_text().await.contains("Other Browser/7.0"));
    b.goto(&format!("/hotels/{hotel}/today")).await;
    b.wait_for_text("Sign out").await;

    // Revoked, the token's next call answers 401.
    b.goto(&format!("/hotels/{hotel}/integrations/tokens")).await;
    b.wait_for_text("Nightly export").await;
    b.click_text("button", "Revoke").await;
    b.accept_dialog().await;
    b.wait_for_text("Revoked the access token").await;
    s.get("/api/hotels", &as_script).await.expect(401);
    assert!(!b.text("table").await.contains("Nightly export"), "gone from the list");

    // Without JavaScript the revoke asks on a page of its own first, and changes nothing until confirmed.
    let d = Dashboard::new(&s, &org.token);
    let tokens = format!("/hotels/{hotel}/integrations/tokens");
    let (status, headers, body) = d.post(&tokens, &[("name", "Spare")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let spare = Auth::Token(secret_in(&body));
    let (_, page) = d.get(&tokens).await;
    // Newest first: the spare token's row comes first.
    let id = page.split("/tokens/").nth(1).and_then(|rest| rest.split('/').next()).expect("a token id").to_string();
    let (status, _, body) = d.post(&format!("{tokens}/{id}/revoke"), &[]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Yes, revoke the access token “Spare”"), "{body}");
    s.get("/api/hotels", &spare).await.expect(200);
    let (status, _, _) = d.post(&format!("{tokens}/{id}/revoke"), &[("confirmed", "yes")]).await;
    assert_eq!(status, 303);
    s.get("/api/hotels", &spare).await.expect(401);
    s.get("/api/hotels", &org.auth()).await.expect(200);
    // An expiry in the past is refused beside its field.
    let (status, _, body) =
        d.post(&format!("/hotels/{hotel}/integrations/tokens"), &[("name", "Old"), ("expiresOn", "2020-01-01")]).await;
    assert_eq!(status, 422);
    assert!(body.contains("must be today or later"), "{body}");
    b.close().await;
}

/// Verifies a delivery's `X-Service-Signature` the way the contract tells receivers to.
fn signature_is_valid(secret: &str, header: &str, body: &[u8]) -> bool {
    let parts: HashMap<&str, &str> = header.split(',').filter_map(|p| p.split_once('=')).collect();
    let (Some(t), Some(v1)) = (parts.get("t"), parts.get("v1")) else { return false };
    if v1.len() != 64 {
        return false;
    }
    let Ok(received) = hex::decode(v1) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&received).is_ok()
}

async fn a_webhook_made_in_the_dashboard_is_signed_and_a_failing_one_turns_on_again(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let receiver = Receiver::start().await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("New subscription").await;
    assert!(html(&b).await.contains("href=\"#verifying\""), "the page links to how to verify a delivery");
    b.fill("#url", &receiver.url).await;
    b.click("input[name='event-guest.created']").await;
    b.click_text("button", "Create subscription").await;
    let secret = shown_secret(&b).await;
    assert!(secret.starts_with("whsec_"), "{secret}");

    // A guest created in the dashboard is delivered, signed with that secret.
    b.goto(&format!("/hotels/{hotel}/guests/new")).await;
    b.fill("#firstName", "Ana").await;
    b.fill("#lastName", "Silva").await;
    b.fill("#email", "ana.silva@example.com").await;
    b.click_text("button", "Create").await;
    b.wait_for_text("Ana Silva").await;
    let received = receiver.wait_for(1, WAIT).await;
    let delivery = &received[0];
    assert_eq!(delivery.header("x-service-event"), "guest.created");
    assert_eq!(delivery.json()["data"]["email"], json!("ana.silva@example.com"));
    let signature = delivery.header("x-service-signature");
    assert!(signature_is_valid(&secret, signature, &delivery.body), "{signature}");
    assert!(!signature_is_valid("whsec_wrong", signature, &delivery.body));

    // The delivery log shows the attempt.
    let subscription = s.get("/api/webhooksubscriptions", &org.auth()).await.expect(200).body[0].clone();
    let id = subscription["id"].as_str().expect("id").to_string();
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks/{id}")).await;
    b.wait_for_text("Delivery log").await;
    let page = b.page_text().await;
    assert!(page.contains("guest.created") && page.contains("HTTP 200") && page.contains(" ms"), "{page}");
    assert!(!html(&b).await.contains(&secret), "the secret is never shown again");

    // Twenty failures in a row turn it off; the list says why, and one click turns it on with a fresh count.
    receiver.set(Behaviour::Status(500));
    for n in 0..20 {
        let guest = json!({"hotelId": hotel, "firstName": "Guest", "lastName": format!("Number {n}")});
        s.post("/api/guests", &org.auth(), guest).await.expect(200);
    }
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
        if now["active"] == json!(false) {
            assert_eq!(now["consecutiveFailures"], json!(20));
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never turned off: {now}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("turned off: failing").await;
    b.assert_page_ok("the webhooks page with a failing subscription").await;
    if screenshots(&s) {
        b.screenshot("integrations-webhooks").await;
    }
    receiver.set(Behaviour::Status(200));
    b.click_text("button", "Turn on again").await;
    b.wait_for_text("back on").await;
    let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!((now["active"].clone(), now["consecutiveFailures"].clone()), (json!(true), json!(0)));
    let before = receiver.received().len();
    s.post("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Back", "lastName": "Again"}))
        .await
        .expect(200);
    let received = receiver.wait_for(before + 1, WAIT).await;
    assert_eq!(received.last().expect("delivery").json()["data"]["firstName"], json!("Back"));

    // Editing: the URL, the events and the state change; turning it off from the form is not a failure.
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks/{id}")).await;
    b.wait_for_text("Delivery log").await;
    if screenshots(&s) {
        b.screenshot("integrations-webhook").await;
    }
    b.click("input[name='event-guest.updated']").await;
    b.click("#active").await;
    b.click_text("button", "Save").await;
    b.wait_for_text("Saved the webhook subscription").await;
    let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(now["events"], json!(["guest.created", "guest.updated"]));
    assert_eq!(now["active"], json!(false));
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("paused").await;
    b.close().await;
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

async fn disconnecting_an_assistant_cuts_it_off_at_once(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let (client_id, access, refresh) = connect_assistant(&s, &org, "Claude").await;
    let (_, other_access, _) = connect_assistant(&s, &org, "Another assistant").await;
    assert_eq!(mcp_status(&s, &access).await, 200);
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/assistants")).await;
    b.wait_for_text("Claude").await;
    let page = b.page_text().await;
    assert!(page.contains("Test Operator") && page.contains("127.0.0.1:9"), "who allowed it, and its host: {page}");
    // Its use is recorded (to the minute, after the call): the page says when.
    let deadline = tokio::time::Instant::now() + WAIT;
    while b.page_text().await.matches("not yet").count() > 1 {
        assert!(tokio::time::Instant::now() < deadline, "the last use never showed");
        tokio::time::sleep(Duration::from_millis(200)).await;
        b.client.refresh().await.expect("reload");
    }
    b.assert_page_ok("the connected assistants page").await;
    if screenshots(&s) {
        b.screenshot("integrations-assistants").await;
    }
    b.click(&format!("form[action$='/assistants/{client_id}/revoke'] button")).await;
    b.accept_dialog().await;
    b.wait_for_text("Disconnected the assistant").await;
    assert_eq!(mcp_status(&s, &access).await, 401, "the next call after the revoke");
    let refreshed = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
            ("client_id", client_id.as_str()),
        ])
        .send()
        .await
        .expect("refresh");
    assert_eq!(refreshed.status().as_u16(), 400, "the refresh token buys nothing either");
    assert_eq!(mcp_status(&s, &other_access).await, 200, "the other assistant stays connected");
    let listed = b.text("table").await;
    assert!(!listed.contains("Claude") && listed.contains("Another assistant"), "{listed}");
    b.close().await;
}

async fn other_organizations_integrations_show_the_404_page(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let rival = s.org("Rival").await;
    let rival_hotel = s.hotel(&rival, "Rival Inn").await;
    // Acme's records: a key, a subscription, a token and a connected assistant.
    s.key(&org, &[], None).await;
    let key_id = s.get("/api/apiKeys", &org.auth()).await.expect(200).body[0]["id"].as_str().expect("id").to_string();
    let receiver = Receiver::start().await;
    let subscription = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": receiver.url}))
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (client_id, access, _) = connect_assistant(&s, &org, "Acme's helper").await;
    let acme = Dashboard::new(&s, &org.token);
    let (_, tokens_page) = acme.get(&format!("/hotels/{hotel}/integrations/tokens")).await;
    let token_id =
        tokens_page.split("/tokens/").nth(1).and_then(|rest| rest.split('/').next()).expect("a token id").to_string();

    let d = Dashboard::new(&s, &rival.token);
    for h in [&rival_hotel, &hotel] {
        let base = format!("/hotels/{h}/integrations");
        for page in [format!("{base}/api-keys/{key_id}"), format!("{base}/webhooks/{subscription}")] {
            let (status, body) = d.get(&page).await;
            assert_eq!(status, 404, "{page}");
            assert!(body.contains("There is nothing here"), "{page}: {body}");
        }
        for (form, fields) in [
            (format!("{base}/api-keys/{key_id}"), vec![("name", "Stolen"), ("scope-rooms:write", "on")]),
            (format!("{base}/api-keys/{key_id}/revoke"), vec![("confirmed", "yes")]),
            (format!("{base}/webhooks/{subscription}"), vec![("url", "https://evil.example/"), ("active", "on")]),
            (format!("{base}/webhooks/{subscription}/enable"), vec![]),
            (format!("{base}/webhooks/{subscription}/delete"), vec![("confirmed", "yes")]),
            (format!("{base}/tokens/{token_id}/revoke"), vec![("confirmed", "yes")]),
            (format!("{base}/assistants/{client_id}/revoke"), vec![("confirmed", "yes")]),
        ] {
            let (status, _, body) = d.post(&form, &fields).await;
            assert_eq!(status, 404, "{form}");
            assert!(body.contains("There is nothing here"), "{form}: {body}");
        }
        // Nor do Rival's lists show any of Acme's.
        if *h == rival_hotel {
            for list in ["api-keys", "webhooks", "tokens", "assistants"] {
                let (status, body) = d.get(&format!("{base}/{list}")).await;
                assert_eq!(status, 200, "{list}");
                assert!(!body.contains(&key_id) && !body.contains(&subscription), "{list}");
                assert!(!body.contains(&token_id) && !body.contains(&client_id) && !body.contains("helper"), "{list}");
            }
        }
    }
    // Everything of Acme's still works, unchanged.
    let key = s.get("/api/apiKeys", &org.auth()).await.expect(200).body[0].clone();
    assert_eq!(key["name"], json!("test key"));
    let now = s.get(&format!("/api/webhooksubscriptions/{subscription}"), &org.auth()).await.expect(200).body;
    assert_eq!(now["url"], json!(format!("{}/", receiver.url)), "unchanged");
    s.get("/api/hotels", &org.auth()).await.expect(200);
    assert_eq!(mcp_status(&s, &access).await, 200);

    // The same in a browser: Rival's operator sees the 404 page.
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&rival.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{rival_hotel}/integrations/webhooks/{subscription}")).await;
    b.wait_for_text("There is nothing here").await;
    b.assert_page_ok("the 404 page").await;
    b.close().await;
}

async fn the_integrations_pages_read_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let auth = org.auth();
    for (name, scopes) in [
        ("Channel manager", json!(["reservations:read", "reservations:write", "rates:read", "rates:write"])),
        ("CRM", json!(["guests:read", "guests:write"])),
    ] {
        s.post("/api/apiKeys", &auth, json!({"name": name, "scopes": scopes, "hotelId": hotel})).await.expect(200);
    }
    s.post("/api/apiKeys", &auth, json!({"name": "Reporting", "rateLimitPerMinute": 60})).await.expect(200);
    let receiver = Receiver::start().await;
    let subscription = s
        .post(
            "/api/webhooksubscriptions",
            &auth,
            json!({"hotelId": hotel, "url": format!("{}/a-rather-long-path/for-frontdesk-events", receiver.url)}),
        )
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    for n in 0..3 {
        s.post("/api/guests", &auth, json!({"hotelId": hotel, "firstName": "Guest", "lastName": format!("{n}")}))
            .await
            .expect(200);
    }
    receiver.wait_for(3, WAIT).await;
    connect_assistant(&s, &org, "Claude").await;
    for size in [crate::common::browser::DESKTOP, PHONE] {
        let phone = size == PHONE;
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.sign_in(&org.operator_email, PASSWORD).await;
        for (page, shot) in [
            ("api-keys", "integrations-api-keys"),
            (&*format!("webhooks/{subscription}"), "integrations-webhook"),
            ("tokens", "integrations-tokens"),
            ("assistants", "integrations-assistants"),
        ] {
            b.goto(&format!("/hotels/{hotel}/integrations/{page}")).await;
            b.wait_for_text("Sign out").await;
            b.assert_page_ok(&format!("integrations/{page} at {}px", size.0)).await;
            if phone {
                b.assert_in_reach("td.actions button, td.actions .button, .subnav a", page).await;
            }
            if screenshots(&s) && (phone || page == "api-keys") {
                b.screenshot(&format!("{shot}{}", if phone { "-phone" } else { "" })).await;
            }
        }
        b.close().await;
    }
}
