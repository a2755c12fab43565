//! An assistant connects end to end through the official MCP SDK's client and its OAuth support.

use crate::common::{day, TestServer};
use rmcp::model::ProtocolVersion;
use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;

use super::{
    call, catalogue, client_info, connect, count_matching, every_tool, ok, query_of, sign_in_and_consent,
    token_request, REDIRECT,
};

on_both_engines!(assistant_connects_end_to_end);

/// Every tool the assistant endpoint offers.
const TOOLS: [&str; 7] = [
    "list_hotels",
    "list_room_types",
    "list_rate_plans",
    "get_daily_prices",
    "check_availability",
    "housekeeping_summary",
    "schedule_counts",
];

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
        assert!(offer.get("offerId").is_none(), "the assistant endpoint cannot book: no offer ids");
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
