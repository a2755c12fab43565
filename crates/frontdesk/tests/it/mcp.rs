//! The read-only assistant connector: OAuth 2.1 sign-in and the MCP tools at `/mcp`, on both engines.
//!
//! The end-to-end test is driven by the official MCP SDK's own client and its OAuth support (`rmcp`), with the
//! browser steps (sign-in form, consent) scripted with reqwest; the other tests probe the rules one by one.

use std::collections::HashMap;

use crate::common::{day, Auth, Org, TestServer, PASSWORD};
use base64::Engine as _;
use frontdesk::store::Engine;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

on_both_engines!(
    assistant_connects_end_to_end,
    authorization_rules,
    only_oauth_access_tokens_open_mcp,
    operators_see_only_their_organization,
    nothing_about_guests_leaks,
    tool_input_is_validated,
    processes_share_every_step,
    large_counts_are_lower_bounds,
    hostile_tool_calls_never_fail_the_server,
);

on_both_engines_configured!(
    expired_access_tokens_are_refused,
    metadata_names_the_public_url,
    tool_calls_are_counted_in_the_metrics
);

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Every tool the connector offers.
const TOOLS: [&str; 7] = [
    "list_hotels",
    "list_room_types",
    "list_rate_plans",
    "get_daily_prices",
    "check_availability",
    "housekeeping_summary",
    "schedule_counts",
];

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

/// The text of a tool error.
fn tool_error(result: CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "expected a tool error: {result:?}");
    serde_json::to_string(&result.content).expect("content")
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

async fn assistant_connects_end_to_end(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org, "Sea View").await;
    // One confirmed stay (nights 3 and 4) and one pending request arriving on day 6.
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "checkInDate": day(3), "checkOutDate": day(5), "rooms": [{"roomTypeId": room_type, "price": 100}]}),
    )
    .await
    .expect(200);
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "status": "REQUESTED", "checkInDate": day(6), "checkOutDate": day(7), "rooms": [{"roomTypeId": room_type, "price": 100}]}),
    )
    .await
    .expect(200);
    let mcp_url = format!("{}/mcp", s.base);

    // Discovery starts from the 401 challenge of an unauthenticated request.
    let unauthenticated = s.client.post(&mcp_url).json(&json!({})).send().await.expect("post");
    assert_eq!(unauthenticated.status().as_u16(), 401);
    let challenge = unauthenticated.headers()["www-authenticate"].to_str().expect("header").to_string();
    assert!(
        challenge
            .starts_with(&format!(r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource""#, s.base)),
        "{challenge}"
    );

    // The SDK discovers the metadata, registers itself and builds the PKCE authorization URL.
    let mut oauth = OAuthState::new(&mcp_url, None).await.expect("oauth state");
    oauth
        .start_authorization(
            AuthorizationRequest::new(REDIRECT)
                .with_client_name("rmcp e2e")
                .with_scopes(["service:read"])
                .with_challenge(challenge),
        )
        .await
        .expect("discovery and registration");
    let OAuthState::Session(session) = &oauth else { panic!("a session after start_authorization") };
    let auth_url = session.get_authorization_url().to_string();
    let asked = query_of(&auth_url);
    assert_eq!(asked.get("code_challenge_method").map(String::as_str), Some("S256"));
    assert_eq!(asked.get("resource"), Some(&mcp_url), "RFC 8707 resource indicator");

    // The operator signs in and consents in a browser; the SDK exchanges the code (PKCE, state, iss checked).
    let callback = sign_in_and_consent(&s, &auth_url, &org.operator_email, "allow").await;
    assert!(callback.starts_with(REDIRECT), "{callback}");
    session.handle_callback_url(&callback).await.expect("token exchange");
    oauth.complete_authorization().await.expect("authorized");
    let OAuthState::Authorized(manager) = oauth else { panic!("authorized") };
    let (client_id, first) = tokens_of(&manager).await;
    let auth_client = AuthClient::new(reqwest13::Client::new(), manager);

    // Both protocol versions: initialize, tools/list and a call of every tool.
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let transport = StreamableHttpClientTransport::with_client(
            auth_client.clone(),
            StreamableHttpClientTransportConfig::with_uri(mcp_url.clone()),
        );
        let client = client_info(version.clone())
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .expect("initialize");
        let server = client.peer_info().expect("server info");
        assert_eq!(server.protocol_version, version);
        assert_eq!(server.server_info.as_ref().map(|i| i.name.as_str()), Some("frontdesk"));

        let tools = client.list_all_tools().await.expect("tools/list");
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        let mut expected = TOOLS.to_vec();
        expected.sort_unstable();
        assert_eq!(names, expected);
        for tool in &tools {
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true), "{} is read-only", tool.name);
            assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        }

        let answers = every_tool(&client, &hotel, &room_type, &plan).await;
        assert_eq!(
            answers[0]["hotels"],
            json!([{"id": hotel, "name": "Sea View", "currency": "EUR", "timezone": "Europe/Lisbon"}])
        );
        assert_eq!(answers[1]["roomTypes"].as_array().expect("types").len(), 2);
        let rate_plan = &answers[2]["ratePlans"][0];
        assert_eq!(rate_plan["id"], json!(plan));
        assert_eq!(rate_plan["code"], json!("FLEX"));
        assert_eq!(rate_plan["lowestPriceNext30Nights"], json!(12000));
        assert_eq!(rate_plan["highestPriceNext30Nights"], json!(12000 + 100 * 29));
        let days = answers[3]["days"].as_array().expect("days");
        assert_eq!(days.len(), 7);
        assert_eq!(
            days[1],
            json!({"date": day(1), "price": 12100, "availability": null, "stopSell": false, "closedToArrival": false, "closedToDeparture": false, "minStay": null, "maxStay": null})
        );
        assert_eq!(answers[3]["currency"], json!("EUR"));
        let offer = &answers[4]["offers"][0];
        assert_eq!(offer["totalPrice"], json!(12300 + 12400));
        assert_eq!(offer["availableUnits"], json!(2), "three rooms, one held");
        assert!(offer.get("offerId").is_none(), "the connector cannot book: no offer ids");
        assert_eq!(answers[5]["roomsByStatus"]["CLEAN"], json!(3));
        assert_eq!(answers[5]["totalRooms"], json!(3));
        let schedule = answers[6]["days"].as_array().expect("days");
        assert_eq!(schedule.len(), 10);
        assert_eq!(
            schedule[3],
            json!({"date": day(3), "arrivals": 1, "departures": 0, "inHouse": 1, "pendingRequests": 0})
        );
        assert_eq!(schedule[4]["inHouse"], json!(1));
        assert_eq!(
            schedule[5],
            json!({"date": day(5), "arrivals": 0, "departures": 1, "inHouse": 0, "pendingRequests": 0})
        );
        assert_eq!(schedule[6]["pendingRequests"], json!(1));
        client.cancel().await.expect("close");
    }

    // Refresh through the SDK: a new pair; the old refresh token is spent.
    auth_client.auth_manager.lock().await.refresh_token().await.expect("refresh");
    let (_, (access, refresh)) = tokens_of(&*auth_client.auth_manager.lock().await).await;
    let (first_access, first_refresh) = first;
    assert_ne!(access, first_access);
    assert_ne!(refresh, first_refresh);
    let client = connect(&s, &access).await;
    ok(call(&client, "list_hotels", json!({})).await);
    client.cancel().await.expect("close");

    // Revocation of the refresh token revokes its family: the access tokens stop working, refreshing fails.
    let revoked = s
        .client
        .post(format!("{}/oauth/revoke", s.base))
        .form(&[("token", refresh.as_str()), ("token_type_hint", "refresh_token"), ("client_id", &client_id)])
        .send()
        .await
        .expect("revoke");
    assert_eq!(revoked.status().as_u16(), 200);
    for token in [&access, &first_access] {
        let answer = s.client.post(&mcp_url).bearer_auth(token).json(&json!({})).send().await.expect("post");
        assert_eq!(answer.status().as_u16(), 401);
    }
    for token in [&refresh, &first_refresh] {
        let again =
            token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", &client_id)])
                .await;
        assert_eq!(again.status.as_u16(), 400);
        assert_eq!(again.body["error"], json!("invalid_grant"));
        assert_eq!(again.header("content-type"), Some("application/json"));
    }
    // Tokens and codes are stored as digests only.
    for secret in [&access, &refresh, &first_access, &first_refresh] {
        assert_eq!(count_matching(&s, "oauth_tokens", "token_hash", secret).await, 0);
    }
}

/// The client id and the (access, refresh) tokens an SDK authorization manager holds.
async fn tokens_of(manager: &rmcp::transport::auth::AuthorizationManager) -> (String, (String, String)) {
    let (client_id, credentials) = manager.get_credentials().await.expect("credentials");
    let credentials = serde_json::to_value(credentials.expect("token response")).expect("json");
    let field = |name: &str| credentials[name].as_str().expect("token").to_string();
    (client_id, (field("access_token"), field("refresh_token")))
}

/// Rows of `table` whose `column` holds `value` as it is (a stored secret would).
async fn count_matching(s: &TestServer, table: &str, column: &str, value: &str) -> i64 {
    use sqlx::Row;
    let mut conn = s.db.read().await.expect("connection");
    sqlx::query(&format!("SELECT COUNT(*) AS n FROM {table} WHERE {column} = $1"))
        .bind(value)
        .fetch_one(&mut *conn)
        .await
        .expect("count")
        .try_get("n")
        .expect("n")
}

async fn authorization_rules(s: TestServer) {
    let org = s.org("Acme").await;

    // A redirect URI that was not registered is never redirected to; nor is an unknown client.
    let client_id = register(&s, REDIRECT).await;
    let (verifier, challenge) = pkce();
    for url in [
        authorize_url(&s, &client_id, "http://127.0.0.1:9/other", &challenge, "s"),
        authorize_url(&s, &client_id, "http://127.0.0.1:9/callback/", &challenge, "s"),
        authorize_url(&s, "no-such-client", REDIRECT, &challenge, "s"),
    ] {
        let answer = browser().get(&url).send().await.expect("authorize");
        assert_eq!(answer.status().as_u16(), 400, "{url}");
        assert!(answer.headers().get("location").is_none());
    }
    // Registration refuses what it cannot honour.
    for body in [
        json!({"redirect_uris": []}),
        json!({"redirect_uris": ["http://evil.example/cb"]}),
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
    ] {
        let res = s.client.post(format!("{}/oauth/register", s.base)).json(&body).send().await.expect("register");
        let answer = TestServer::answer(res).await;
        assert_eq!(answer.status.as_u16(), 400, "{body}");
        assert!(answer.body["error"].as_str().is_some_and(|e| e.starts_with("invalid_")), "{}", answer.body);
    }

    // PKCE plain and a missing challenge are refused back to the client, with its state.
    let plain = authorize_url(&s, &client_id, REDIRECT, &challenge, "st").replace("S256", "plain");
    let answer = browser().get(&plain).send().await.expect("authorize");
    assert_eq!(answer.status().as_u16(), 303);
    let q = query_of(answer.headers()["location"].to_str().expect("location"));
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_request", "st"));
    // Another resource than the connector.
    let other = authorize_url(&s, &client_id, REDIRECT, &challenge, "st")
        .replace("resource=", "resource=https%3A%2F%2Fother.example%2Fmcp&x=");
    let answer = browser().get(&other).send().await.expect("authorize");
    assert_eq!(query_of(answer.headers()["location"].to_str().expect("location"))["error"], "invalid_target");

    // A wrong password shows the form again, with no ticket.
    let url = authorize_url(&s, &client_id, REDIRECT, &challenge, "st");
    let mut fields: Vec<(String, String)> =
        url::Url::parse(&url).expect("url").query_pairs().map(|(k, v)| (k.into(), v.into())).collect();
    fields.push(("email".into(), org.operator_email.clone()));
    fields.push(("password".into(), "wrong password".into()));
    let html = browser()
        .post(format!("{}/oauth/authorize", s.base))
        .form(&fields)
        .send()
        .await
        .expect("sign in")
        .text()
        .await
        .expect("html");
    assert!(html.contains("Invalid e-mail or password") && ticket(&html).is_none(), "{html}");

    // Declining answers access_denied to the client.
    let location = sign_in_and_consent(&s, &url, &org.operator_email, "deny").await;
    let q = query_of(&location);
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("access_denied", "st"));
    assert!(!q.contains_key("code"));

    // A wrong verifier is refused; the right one works once; the code cannot be used again, and its reuse
    // revokes what it gave.
    let location = sign_in_and_consent(&s, &url, &org.operator_email, "allow").await;
    let code = query_of(&location)["code"].clone();
    let exchange = |verifier: String, redirect: &'static str| {
        let (code, client_id) = (code.clone(), client_id.clone());
        let s = &s;
        async move {
            token_request(
                s,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", redirect),
                    ("client_id", &client_id),
                    ("code_verifier", &verifier),
                ],
            )
            .await
        }
    };
    let (wrong, _) = pkce();
    let answer = exchange(wrong, REDIRECT).await;
    assert_eq!((answer.status.as_u16(), answer.body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(answer.header("content-type"), Some("application/json"), "OAuth's JSON, not a problem document");
    let answer = exchange(challenge.clone(), REDIRECT).await;
    assert_eq!(answer.body["error"], json!("invalid_grant"), "the challenge itself is no verifier (plain)");
    let answer = exchange(verifier.clone(), "http://127.0.0.1:9/other").await;
    assert_eq!(answer.body["error"], json!("invalid_grant"), "redirect_uri must match");
    let answer = exchange(verifier.clone(), REDIRECT).await;
    assert_eq!(answer.status.as_u16(), 200, "{}", answer.body);
    assert_eq!(answer.body["token_type"], json!("Bearer"));
    assert_eq!(answer.body["expires_in"], json!(3600));
    assert_eq!(answer.body["scope"], json!("service:read"));
    let access = answer.body["access_token"].as_str().expect("access").to_string();
    let refresh = answer.body["refresh_token"].as_str().expect("refresh").to_string();
    connect(&s, &access).await.cancel().await.expect("close");
    let answer = exchange(verifier.clone(), REDIRECT).await;
    assert_eq!((answer.status.as_u16(), answer.body["error"].as_str()), (400, Some("invalid_grant")));
    let mcp = format!("{}/mcp", s.base);
    let answer = s.client.post(&mcp).bearer_auth(&access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401, "a reused code revokes the tokens it gave");
    let answer =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(answer.body["error"], json!("invalid_grant"));
    assert_eq!(count_matching(&s, "oauth_grants", "code_hash", &code).await, 0, "codes are stored hashed");

    // Refresh tokens rotate; presenting a spent one revokes the family.
    let (client_id, _, refresh) = tokens_for(&s, &org).await;
    let first =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(first.status.as_u16(), 200, "{}", first.body);
    let newer = first.body["refresh_token"].as_str().expect("refresh").to_string();
    let newer_access = first.body["access_token"].as_str().expect("access").to_string();
    let reused =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(reused.body["error"], json!("invalid_grant"));
    let after =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &newer), ("client_id", &client_id)])
            .await;
    assert_eq!(after.body["error"], json!("invalid_grant"), "the whole family is revoked");
    let answer = s.client.post(&mcp).bearer_auth(&newer_access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401);
    // Another client cannot use the refresh token.
    let (_, _, refresh) = tokens_for(&s, &org).await;
    let other = register(&s, REDIRECT).await;
    let answer =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &other)]).await;
    assert_eq!(answer.body["error"], json!("invalid_grant"));
    let answer = token_request(&s, &[("grant_type", "password"), ("client_id", &other)]).await;
    assert_eq!(answer.body["error"], json!("unsupported_grant_type"));
}

async fn only_oauth_access_tokens_open_mcp(s: TestServer) {
    let org = s.org("Acme").await;
    let key = s.key(&org, &[], None).await;
    let (_, _, refresh) = tokens_for(&s, &org).await;
    let mcp = format!("{}/mcp", s.base);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    for auth in [
        Auth::None,
        Auth::Key(key.clone()),
        Auth::Token(org.token.clone()),
        Auth::Raw(format!("Bearer {key}")),
        Auth::Raw(format!("Bearer {}", org.token)),
        Auth::Raw(format!("Bearer {refresh}")),
        Auth::Raw("Bearer fdo_forged".into()),
    ] {
        let answer = s.post("/mcp", &auth, initialize.clone()).await;
        assert_eq!(answer.status.as_u16(), 401, "{auth:?}");
        let challenge = answer.header("www-authenticate").expect("challenge");
        assert!(
            challenge
                .starts_with(&format!(r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource""#, s.base)),
            "{challenge}"
        );
    }
    // And the connector's tokens open nothing of the REST API.
    let (_, access, _) = tokens_for(&s, &org).await;
    s.get("/api/hotels", &Auth::Raw(format!("Bearer {access}"))).await.expect(401);
    s.get("/api/hotels", &Auth::Token(access.clone())).await.expect(401);
    let answer = s
        .client
        .post(&mcp)
        .bearer_auth(&access)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .expect("initialize");
    assert_eq!(answer.status().as_u16(), 200);
    let body: Value = answer.json().await.expect("json");
    assert_eq!(body["result"]["protocolVersion"], json!("2025-06-18"));
    assert!(body["result"]["capabilities"]["tools"].is_object());
}

async fn operators_see_only_their_organization(s: TestServer) {
    let acme = s.org("Acme").await;
    let other = s.org("Other").await;
    let (hotel, room_type, plan) = catalogue(&s, &acme, "Acme Sea").await;
    let (other_hotel, _, _) = catalogue(&s, &other, "Other Hills").await;
    let (_, access, _) = tokens_for(&s, &other).await;
    let client = connect(&s, &access).await;
    let hotels = ok(call(&client, "list_hotels", json!({})).await);
    assert_eq!(hotels["hotels"].as_array().expect("hotels").len(), 1);
    assert_eq!(hotels["hotels"][0]["id"], json!(other_hotel));
    // Acme's ids are unknown to Other's operator: a readable tool error, the same as for an id that never existed.
    for (tool, args) in [
        ("list_room_types", json!({"hotelId": hotel})),
        ("list_rate_plans", json!({"hotelId": hotel})),
        ("list_rate_plans", json!({"hotelId": other_hotel, "roomTypeId": room_type})),
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": day(0), "dateTo": day(3)})),
        ("check_availability", json!({"hotelId": hotel, "checkInDate": day(1), "checkOutDate": day(2)})),
        ("housekeeping_summary", json!({"hotelId": hotel})),
        ("schedule_counts", json!({"hotelId": hotel, "dateFrom": day(0), "dateTo": day(3)})),
    ] {
        let message = tool_error(call(&client, tool, args).await);
        assert!(message.contains("not found"), "{tool}: {message}");
    }
    client.cancel().await.expect("close");
}

async fn nothing_about_guests_leaks(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org, "Harbour").await;
    let secrets = [
        "Zebulon",
        "Quixotically",
        "zq.secret.guest@example.org",
        "+351 912 345 678",
        "Allergic to peanuts, VIP-7731",
        "Booked via Uncle Bartholomew",
    ];
    let guest = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": hotel, "firstName": secrets[0], "lastName": secrets[1], "email": secrets[2], "phone": secrets[3], "notes": secrets[4]}),
        )
        .await;
    let mut reservation_ids = Vec::new();
    for (status, from, to) in [("CONFIRMED", 1, 3), ("REQUESTED", 2, 4), ("CONFIRMED", 0, 2)] {
        let id = s
            .create(
                "/api/reservations",
                &org.auth(),
                json!({"hotelId": hotel, "guestId": guest, "status": status, "checkInDate": day(from), "checkOutDate": day(to), "notes": secrets[5], "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
            )
            .await;
        reservation_ids.push(id);
    }
    let rooms = s.get(&format!("/api/rooms?hotelId={hotel}"), &org.auth()).await.expect(200);
    let room_ids: Vec<String> =
        rooms.body.as_array().expect("rooms").iter().map(|r| r["id"].as_str().expect("id").to_string()).collect();
    let (_, access, _) = tokens_for(&s, &org).await;
    let tables = ["guests", "reservations", "reservation_rooms", "rooms", "daily_rates", "rate_plans", "hotels"];
    let mut before = Vec::new();
    for table in tables {
        before.push(s.count(table).await);
    }
    let client = connect(&s, &access).await;
    let mut output = serde_json::to_string(&client.list_all_tools().await.expect("tools")).expect("json");
    for answer in every_tool(&client, &hotel, &room_type, &plan).await {
        output.push_str(&answer.to_string());
    }
    // Errors too: guest and reservation ids given as hotel ids.
    for id in [&guest, &reservation_ids[0]] {
        output.push_str(&tool_error(call(&client, "housekeeping_summary", json!({"hotelId": id})).await));
        output.push_str(&tool_error(
            call(&client, "get_daily_prices", json!({"ratePlanId": id, "dateFrom": day(0), "dateTo": day(1)})).await,
        ));
    }
    assert!(output.contains("Harbour"), "the answers are there");
    let lower = output.to_lowercase();
    let mut needles: Vec<&str> = secrets.to_vec();
    needles.push(&guest);
    needles.extend(reservation_ids.iter().map(String::as_str));
    for secret in needles {
        assert!(!lower.contains(&secret.to_lowercase()), "{secret} leaked");
    }
    for part in ["zebulon", "quixot", "secret.guest", "912 345", "peanut", "bartholomew"] {
        assert!(!lower.contains(part), "{part} leaked");
    }
    for room in &room_ids {
        assert!(!output.contains(room.as_str()), "room ids are not shown");
    }
    for (table, count) in tables.iter().zip(before) {
        assert_eq!(s.count(table).await, count, "the connector wrote to {table}");
    }
    client.cancel().await.expect("close");
}

async fn tool_input_is_validated(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, plan) = catalogue(&s, &org, "Harbour").await;
    let (_, access, _) = tokens_for(&s, &org).await;
    let client = connect(&s, &access).await;
    for (tool, args, expected) in [
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": "2026-02-30", "dateTo": day(3)}), "dateFrom"),
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": day(10), "dateTo": day(3)}), "dateTo"),
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": day(0), "dateTo": day(400)}), "366"),
        ("schedule_counts", json!({"hotelId": hotel, "dateFrom": day(0), "dateTo": day(366)}), "366"),
        ("schedule_counts", json!({"hotelId": hotel, "dateFrom": "yesterday", "dateTo": day(3)}), "dateFrom"),
        ("schedule_counts", json!({"hotelId": hotel, "dateFrom": "1999-12-31", "dateTo": "2000-01-02"}), "2000-01-01"),
        (
            "check_availability",
            json!({"hotelId": hotel, "checkInDate": day(5), "checkOutDate": day(5)}),
            "checkOutDate",
        ),
        (
            "check_availability",
            json!({"hotelId": hotel, "checkInDate": day(1), "checkOutDate": day(2), "adults": 0}),
            "adults",
        ),
        ("housekeeping_summary", json!({"hotelId": "not-an-id"}), "not found"),
        ("list_room_types", json!({"hotelId": "' OR 1=1 --"}), "not found"),
        // Control characters are refused before any tool runs, naming the argument (PostgreSQL cannot even
        // compare text holding U+0000).
        ("housekeeping_summary", json!({"hotelId": "a\u{0}b"}), "hotelId: must not contain control characters"),
        ("list_rate_plans", json!({"hotelId": hotel, "roomTypeId": "\u{0}"}), "roomTypeId: must not contain"),
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": "\u{1b}", "dateTo": day(3)}), "dateFrom: must"),
    ] {
        let message = tool_error(call(&client, tool, args.clone()).await);
        assert!(message.contains(expected), "{tool} {args}: {message}");
    }
    // Arguments of the wrong shape are refused by the SDK as invalid parameters, not a crash.
    let refused = client
        .call_tool(
            CallToolRequestParams::new("list_room_types")
                .with_arguments(json!({"hotelId": 5}).as_object().cloned().unwrap_or_default()),
        )
        .await;
    assert!(refused.is_err() || refused.as_ref().is_ok_and(|r| r.is_error == Some(true)), "{refused:?}");
    // Still serving.
    ok(call(&client, "list_hotels", json!({})).await);
    client.cancel().await.expect("close");
}

async fn expired_access_tokens_are_refused(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.oauth_access_token_ttl_secs = 1).await else { return };
    let org = s.org("Acme").await;
    let (client_id, access, refresh) = tokens_for(&s, &org).await;
    connect(&s, &access).await.cancel().await.expect("close");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let answer =
        s.client.post(format!("{}/mcp", s.base)).bearer_auth(&access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401);
    let challenge = answer.headers()["www-authenticate"].to_str().expect("header");
    assert!(challenge.contains(r#"error="invalid_token""#) && challenge.contains("expired"), "{challenge}");
    // The refresh token still gives a fresh one.
    let refreshed =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(refreshed.status.as_u16(), 200, "{}", refreshed.body);
    assert_eq!(refreshed.body["expires_in"], json!(1));
    // Long-expired tokens are deleted at a later sign-in.
    let digest = hex::encode(Sha256::digest(access.as_bytes()));
    {
        let mut tx = s.db.begin_write().await.expect("tx");
        sqlx::query("UPDATE oauth_tokens SET expires_at = $1 WHERE token_hash = $2")
            .bind("2000-01-01T00:00:00.000000Z")
            .bind(&digest)
            .execute(tx.conn())
            .await
            .expect("update");
        tx.commit().await.expect("commit");
    }
    assert_eq!(count_matching(&s, "oauth_tokens", "token_hash", &digest).await, 1);
    code_for(&s, &org).await;
    assert_eq!(count_matching(&s, "oauth_tokens", "token_hash", &digest).await, 0);
    s.stop().await;
}

async fn metadata_names_the_public_url(engine: Engine) {
    let public = "https://frontdesk.example.com";
    let Some(s) = TestServer::configured(engine, |c| c.public_url = Some(format!("{public}/"))).await else { return };
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let prm = s.get(path, &Auth::None).await;
        assert_eq!(prm.status.as_u16(), 200);
        assert_eq!(prm.body["resource"], json!(format!("{public}/mcp")));
        assert_eq!(prm.body["authorization_servers"], json!([public]));
        assert_eq!(prm.body["scopes_supported"], json!(["service:read"]));
    }
    let asm = s.get("/.well-known/oauth-authorization-server", &Auth::None).await;
    assert_eq!(asm.body["issuer"], json!(public));
    assert_eq!(asm.body["authorization_endpoint"], json!(format!("{public}/oauth/authorize")));
    assert_eq!(asm.body["token_endpoint"], json!(format!("{public}/oauth/token")));
    assert_eq!(asm.body["registration_endpoint"], json!(format!("{public}/oauth/register")));
    assert_eq!(asm.body["revocation_endpoint"], json!(format!("{public}/oauth/revoke")));
    assert_eq!(asm.body["code_challenge_methods_supported"], json!(["S256"]));
    let answer = s.post("/mcp", &Auth::None, json!({})).await;
    assert_eq!(answer.status.as_u16(), 401);
    assert!(answer.header("www-authenticate").is_some_and(
        |h| h.starts_with(&format!(r#"Bearer resource_metadata="{public}/.well-known/oauth-protected-resource""#))
    ));
    // Browser-based clients may fetch the metadata, the token endpoint and /mcp (preflight included).
    let preflight = s
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/mcp", s.base))
        .header("origin", "https://inspector.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, mcp-protocol-version")
        .send()
        .await
        .expect("preflight");
    assert!(preflight.status().is_success());
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    for path in ["/.well-known/oauth-authorization-server", "/mcp"] {
        let res = s
            .client
            .request(
                if path == "/mcp" { reqwest::Method::POST } else { reqwest::Method::GET },
                format!("{}{path}", s.base),
            )
            .header("origin", "https://inspector.example")
            .send()
            .await
            .expect("cors");
        assert_eq!(res.headers()["access-control-allow-origin"], "*", "{path}");
    }
    // Not part of the REST API's document.
    let doc = s.get("/api/openapi.json", &Auth::None).await;
    assert!(doc.body["paths"].as_object().is_some_and(|p| !p.keys().any(|k| k.contains("oauth") || k == "/mcp")));
    s.stop().await;
}

/// A second process of the service (its own pool, its own memory) on `s`'s database, behind the same public URL:
/// its base address and the sender that stops it.
async fn second_process(s: &TestServer) -> (String, tokio::sync::oneshot::Sender<()>) {
    let config = frontdesk::config::Config {
        database: frontdesk::config::DatabaseSettings {
            database_url: s.database_url().to_string(),
            database_max_connections: 4,
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

async fn large_counts_are_lower_bounds(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org, "Big").await;
    for n in 0..48 {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("B{n}")})).await.expect(200);
    }
    let (_, access, _) = tokens_for(&s, &org).await;
    let client = connect(&s, &access).await;
    let housekeeping = ok(call(&client, "housekeeping_summary", json!({"hotelId": hotel})).await);
    assert_eq!(housekeeping["roomsByStatus"]["CLEAN"], json!("50+"));
    assert_eq!(housekeeping["totalRooms"], json!("50+"));
    assert_eq!(housekeeping["roomsByStatus"]["DIRTY"], json!(0));
    let offers = ok(call(
        &client,
        "check_availability",
        json!({"hotelId": hotel, "checkInDate": day(2), "checkOutDate": day(3)}),
    )
    .await);
    assert_eq!(offers["offers"][0]["ratePlanId"], json!(plan));
    assert_eq!(offers["offers"][0]["availableUnits"], json!("50+"));
    client.cancel().await.expect("close");
}

/// Hostile tool calls and malformed JSON-RPC at `/mcp`: every tool with each argument spoiled (wrong types, control
/// characters, huge and negative numbers, long strings, another organization's ids), unknown tools, and requests
/// that are not JSON-RPC at all. MCP answers in its own terms (JSON-RPC errors, tool errors), never with a server
/// error, and keeps serving.
async fn hostile_tool_calls_never_fail_the_server(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org, "Harbour").await;
    let other = s.org("Other").await;
    let (their_hotel, _, their_plan) = catalogue(&s, &other, "Elsewhere").await;
    let (_, access, _) = tokens_for(&s, &org).await;
    let post = |body: Value| {
        let request = s
            .client
            .post(format!("{}/mcp", s.base))
            .bearer_auth(&access)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body);
        async move { TestServer::answer(request.send().await.expect("mcp")).await }
    };
    let valid: Vec<(&str, Value)> = vec![
        ("list_hotels", json!({})),
        ("list_room_types", json!({"hotelId": hotel})),
        ("list_rate_plans", json!({"hotelId": hotel, "roomTypeId": room_type})),
        ("get_daily_prices", json!({"ratePlanId": plan, "dateFrom": day(0), "dateTo": day(6)})),
        (
            "check_availability",
            json!({"hotelId": hotel, "checkInDate": day(3), "checkOutDate": day(5), "adults": 2,
            "children": 0, "infants": 0}),
        ),
        ("housekeeping_summary", json!({"hotelId": hotel})),
        ("schedule_counts", json!({"hotelId": hotel, "dateFrom": day(0), "dateTo": day(9)})),
    ];
    let hostile = [
        Value::Null,
        json!(""),
        json!("\u{0}"),
        json!("x".repeat(20_000)),
        json!(-1),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!(1e300),
        json!(true),
        json!([]),
        json!({"a": 1}),
        json!("0001-01-01"),
        json!("2026-02-30"),
        json!(their_hotel),
        json!(their_plan),
    ];
    let mut id = 10;
    let mut wrong = Vec::new();
    for (tool, args) in &valid {
        let mut cases = vec![args.clone(), json!({"unexpected": 1}), json!([]), json!("x")];
        for name in args.as_object().unwrap().keys() {
            for value in &hostile {
                let mut spoiled = args.clone();
                spoiled[name] = value.clone();
                cases.push(spoiled);
            }
        }
        for arguments in cases {
            id += 1;
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}});
            let answer = post(call).await;
            let speaks_mcp = answer.body["result"].is_object() || answer.body["error"].is_object();
            if answer.status.as_u16() >= 500 || !speaks_mcp {
                wrong.push(format!(
                    "{tool} {:.100}: {} {:.200}",
                    arguments.to_string(),
                    answer.status,
                    answer.body.to_string()
                ));
            }
            if answer.body["result"]["isError"] == json!(true) {
                let text = answer.body["result"]["content"].to_string();
                assert!(!text.contains("Elsewhere"), "{tool}: another organization's data leaked: {text}");
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for body in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\u{0}"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": []}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}),
        json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": u64::MAX, "method": "tools/list"}),
        json!({"id": 1}),
        json!([]),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]),
        json!("tools/list"),
        Value::Null,
    ] {
        let answer = post(body.clone()).await;
        assert!(answer.status.as_u16() < 500, "{body}: {} {}", answer.status, answer.body);
    }
    let not_json = s
        .client
        .post(format!("{}/mcp", s.base))
        .bearer_auth(&access)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body("{\"jsonrpc\": ")
        .send()
        .await
        .expect("mcp");
    assert!(not_json.status().as_u16() < 500, "{}", not_json.status());
    // Still serving.
    let list = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_hotels", "arguments": {}}}),
    )
    .await;
    assert_eq!(list.body["result"]["structuredContent"]["hotels"][0]["name"], json!("Harbour"), "{}", list.body);
}

/// `/metrics` counts tool calls by tool and result; a tool name the connector does not have is `unknown`, never
/// the name sent. (Other tests of this file may call tools meanwhile: counts are compared as at least.)
async fn tool_calls_are_counted_in_the_metrics(engine: Engine) {
    const METRICS_TOKEN: &str = "mcp-test-metrics-token-0123";
    let Some(s) = TestServer::configured(engine, |c| c.metrics_token = Some(METRICS_TOKEN.into())).await else {
        return;
    };
    let scrape = || async {
        let res = s.client.get(format!("{}/metrics", s.base)).bearer_auth(METRICS_TOKEN).send().await.unwrap();
        assert_eq!(res.status(), 200);
        res.text().await.unwrap()
    };
    let count = |text: &str, tool: &str, result: &str| -> f64 {
        let series = format!("frontdesk_mcp_tool_calls_total{{tool=\"{tool}\",result=\"{result}\"}} ");
        text.lines().find_map(|line| line.strip_prefix(series.as_str())).and_then(|v| v.parse().ok()).unwrap_or(0.0)
    };
    let org = s.org("Acme").await;
    let (_, access, _) = tokens_for(&s, &org).await;
    let client = connect(&s, &access).await;
    let before = scrape().await;
    ok(call(&client, "list_hotels", json!({})).await);
    tool_error(call(&client, "housekeeping_summary", json!({"hotelId": "not-an-id"})).await);
    let unknown = client.call_tool(CallToolRequestParams::new("secret_tool_name_41")).await;
    assert!(unknown.is_err() || unknown.as_ref().is_ok_and(|r| r.is_error == Some(true)), "{unknown:?}");
    let after = scrape().await;
    for (tool, result) in [("list_hotels", "ok"), ("housekeeping_summary", "error"), ("unknown", "error")] {
        assert!(count(&after, tool, result) > count(&before, tool, result), "{tool} {result}: {after}");
    }
    assert!(!after.contains("secret_tool_name_41") && !after.contains("not-an-id"), "{after}");
    assert!(after.contains("frontdesk_mcp_tool_call_duration_seconds_count{tool=\"list_hotels\"}"), "{after}");
    assert!(after.contains("route=\"/mcp\""), "{after}");
    client.cancel().await.expect("close");
}
