//! The read-only assistant endpoint: OAuth 2.1 sign-in and the MCP tools at `/mcp`, on both engines.
//!
//! The end-to-end test is driven by the official MCP SDK's own client and its OAuth support (`rmcp`), with the
//! browser steps (sign-in form, consent) scripted with reqwest; the other tests probe the rules one by one.

mod authorization;
mod end_to_end;
mod hostile_calls;
mod processes;
mod tools;

use std::collections::HashMap;

use crate::common::{day, Org, TestServer, PASSWORD};
use base64::Engine as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// A browser that does not follow redirects, so the callback can be read.
fn browser() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

/// A hotel with two room types, rooms, a rate plan priced for 40 nights: (hotel, room type, rate plan).
async fn catalogue(s: &TestServer, org: &Org, name: &str) -> (String, String, String) {
    let hotel = s.hotel(org, name).await;
    let room_type = s
        .create(
            "/api/roomTypes",
            &org.auth(),
            json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2, "maxChildren": 1}),
        )
        .await;
    s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Suite", "maxOccupancy": 4})).await;
    for n in 0..3 {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)}))
            .await
            .expect(200);
    }
    let plan = s
        .create(
            "/api/ratePlans",
            &org.auth(),
            json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible", "code": "FLEX"}),
        )
        .await;
    let values: Vec<Value> =
        (0..40).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 12000 + 100 * d})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type, plan)
}

fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::now_v7().simple(), uuid::Uuid::now_v7().simple());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

async fn register(s: &TestServer, redirect: &str) -> String {
    let answer = s
        .client
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"client_name": "Test assistant", "redirect_uris": [redirect]}))
        .send()
        .await
        .expect("register");
    let answer = TestServer::answer(answer).await;
    assert_eq!(answer.status.as_u16(), 201, "{}", answer.body);
    answer.body["client_id"].as_str().expect("client_id").to_string()
}

/// The value of the hidden `ticket` field of a consent page.
fn ticket(html: &str) -> Option<String> {
    let start = html.find("name=\"ticket\" value=\"")? + "name=\"ticket\" value=\"".len();
    Some(html[start..].split('"').next()?.to_string())
}

/// The operator signs in on the page at `authorize_url` and answers the consent: the Location the browser is sent
/// to afterwards.
async fn sign_in_and_consent(s: &TestServer, authorize_url: &str, email: &str, decision: &str) -> String {
    let b = browser();
    let form = b.get(authorize_url).send().await.expect("authorize page");
    assert_eq!(form.status().as_u16(), 200);
    let html = form.text().await.expect("html");
    assert!(html.contains("Sign in"), "{html}");
    // The sign-in form re-posts the authorization request's parameters as hidden fields.
    let query = url::Url::parse(authorize_url).expect("url");
    let mut fields: Vec<(String, String)> =
        query.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    fields.push(("email".into(), email.into()));
    fields.push(("password".into(), PASSWORD.into()));
    let consent = b.post(format!("{}/oauth/authorize", s.base)).form(&fields).send().await.expect("sign in");
    assert_eq!(consent.status().as_u16(), 200);
    let html = consent.text().await.expect("html");
    assert!(html.contains("service:read"), "the consent page names the scope: {html}");
    let ticket = ticket(&html).expect("consent ticket");
    let answer = b
        .post(format!("{}/oauth/authorize/consent", s.base))
        .form(&[("ticket", ticket.as_str()), ("decision", decision)])
        .send()
        .await
        .expect("consent");
    assert_eq!(answer.status().as_u16(), 303);
    answer.headers()["location"].to_str().expect("location").to_string()
}

fn query_of(location: &str) -> HashMap<String, String> {
    url::Url::parse(location).expect("callback url").query_pairs().map(|(k, v)| (k.into(), v.into())).collect()
}

fn authorize_url(s: &TestServer, client_id: &str, redirect: &str, challenge: &str, state: &str) -> String {
    let mut url = url::Url::parse(&format!("{}/oauth/authorize", s.base)).expect("url");
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect)
        .append_pair("code_challenge", challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", state)
        .append_pair("scope", "service:read")
        .append_pair("resource", &format!("{}/mcp", s.base));
    url.into()
}

async fn token_request(s: &TestServer, form: &[(&str, &str)]) -> crate::common::Answer {
    let res = s.client.post(format!("{}/oauth/token", s.base)).form(form).send().await.expect("token");
    TestServer::answer(res).await
}

/// A code for `org`'s operator through raw HTTP: (client id, code, verifier).
async fn code_for(s: &TestServer, org: &Org) -> (String, String, String) {
    let client_id = register(s, REDIRECT).await;
    let (verifier, challenge) = pkce();
    let location = sign_in_and_consent(
        s,
        &authorize_url(s, &client_id, REDIRECT, &challenge, "xyz"),
        &org.operator_email,
        "allow",
    )
    .await;
    let q = query_of(&location);
    assert_eq!(q.get("state").map(String::as_str), Some("xyz"), "state round trip");
    assert_eq!(q.get("iss"), Some(&s.base), "RFC 9207 issuer");
    (client_id, q["code"].clone(), verifier)
}

/// Access and refresh tokens for `org`'s operator.
async fn tokens_for(s: &TestServer, org: &Org) -> (String, String, String) {
    let (client_id, code, verifier) = code_for(s, org).await;
    let answer = token_request(
        s,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    assert_eq!(answer.status.as_u16(), 200, "{}", answer.body);
    (
        client_id,
        answer.body["access_token"].as_str().expect("access").to_string(),
        answer.body["refresh_token"].as_str().expect("refresh").to_string(),
    )
}

type Client = RunningService<RoleClient, ClientConfig>;

fn client_info(version: ProtocolVersion) -> ClientConfig {
    ClientConfig::new(Default::default(), Implementation::new("frontdesk-tests", "1.0")).with_protocol_version(version)
}

/// An MCP client (the SDK's) sending a fixed bearer token.
async fn connect(s: &TestServer, access_token: &str) -> Client {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", s.base)).auth_header(access_token),
    );
    client_info(ProtocolVersion::V_2025_11_25)
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .expect("MCP client connects")
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} answers: {e}"))
}

/// The structured answer of a successful call.
fn ok(result: CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "tool error: {result:?}");
    result.structured_content.expect("structured content")
}

/// One call of every tool for `hotel` / `room_type` / `plan`: each answer's JSON.
async fn every_tool(client: &Client, hotel: &str, room_type: &str, plan: &str) -> Vec<Value> {
    vec![
        ok(call(client, "list_hotels", json!({})).await),
        ok(call(client, "list_room_types", json!({"hotelId": hotel})).await),
        ok(call(client, "list_rate_plans", json!({"hotelId": hotel, "roomTypeId": room_type})).await),
        ok(call(client, "get_daily_prices", json!({"ratePlanId": plan, "dateFrom": day(0), "dateTo": day(6)})).await),
        ok(call(
            client,
            "check_availability",
            json!({"hotelId": hotel, "checkInDate": day(3), "checkOutDate": day(5), "adults": 2}),
        )
        .await),
        ok(call(client, "housekeeping_summary", json!({"hotelId": hotel})).await),
        ok(call(client, "schedule_counts", json!({"hotelId": hotel, "dateFrom": day(0), "dateTo": day(9)})).await),
    ]
}

/// Rows of `table` whose `column` holds `value` as it is (a stored secret would).
async fn count_matching(s: &TestServer, table: &str, column: &str, value: &str) -> i64 {
    let mut conn = s.db.read().await.expect("connection");
    frontdesk::store::query(&format!("SELECT COUNT(*) AS n FROM {table} WHERE {column} = $1"))
        .bind(value)
        .fetch_one(&mut conn)
        .await
        .expect("count")
        .try_get("n")
        .expect("n")
}
