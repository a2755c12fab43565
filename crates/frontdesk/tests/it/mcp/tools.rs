//! The tools: an operator sees only their organization, nothing about guests leaks, input is validated, large counts
//! are lower bounds, and calls are counted in the metrics.

use crate::common::{day, Org, TestServer, PASSWORD};
use frontdesk::store::Engine;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::json;

use super::{call, catalogue, connect, every_tool, ok, tokens_for};

on_both_engines!(
    operators_see_only_their_organization,
    an_assistant_sees_only_its_operators_hotels,
    nothing_about_guests_leaks,
    tool_input_is_validated,
    large_counts_are_lower_bounds,
);

on_both_engines_configured!(tool_calls_are_counted_in_the_metrics);

/// The text of a tool error.
fn tool_error(result: CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "expected a tool error: {result:?}");
    serde_json::to_string(&result.content).expect("content")
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

/// An assistant signed in by an operator limited to one hotel reads that hotel only: the others are not found,
/// as another organization's are.
async fn an_assistant_sees_only_its_operators_hotels(s: TestServer) {
    use frontdesk::domain::identity::{self, Role, Staffing};
    use frontdesk::model::changes::Writer;
    let acme = s.org("Acme").await;
    let (mine, _, _) = catalogue(&s, &acme, "Acme Sea").await;
    let (theirs, _, their_plan) = catalogue(&s, &acme, "Acme Hills").await;
    let email = format!("{}@example.com", uuid::Uuid::now_v7().simple());
    let input = identity::OperatorIn { organization_id: &acme.id, email: &email, name: "Desk", password: PASSWORD };
    let staffing = Staffing { role: Role::FrontDesk, hotel_ids: Some(vec![mine.clone()]) };
    identity::create_operator_as(&s.db, Writer::CommandLine, input, &staffing).await.expect("operator");
    let desk = Org { id: acme.id.clone(), token: acme.token.clone(), operator_email: email };
    let (_, access, _) = tokens_for(&s, &desk).await;
    let client = connect(&s, &access).await;
    let hotels = ok(call(&client, "list_hotels", json!({})).await);
    let ids: Vec<&str> = hotels["hotels"].as_array().expect("hotels").iter().filter_map(|h| h["id"].as_str()).collect();
    assert_eq!(ids, [mine.as_str()]);
    ok(call(&client, "housekeeping_summary", json!({"hotelId": mine})).await);
    for (tool, args) in [
        ("list_room_types", json!({"hotelId": theirs})),
        ("housekeeping_summary", json!({"hotelId": theirs})),
        ("schedule_counts", json!({"hotelId": theirs, "dateFrom": day(0), "dateTo": day(3)})),
        ("get_daily_prices", json!({"ratePlanId": their_plan, "dateFrom": day(0), "dateTo": day(3)})),
    ] {
        let message = tool_error(call(&client, tool, args).await);
        assert!(message.contains("not found"), "{tool}: {message}");
    }
    // The owner's assistant reads both.
    let (_, access, _) = tokens_for(&s, &acme).await;
    let owners = connect(&s, &access).await;
    let hotels = ok(call(&owners, "list_hotels", json!({})).await);
    assert_eq!(hotels["hotels"].as_array().expect("hotels").len(), 2);
    owners.cancel().await.expect("close");
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
        assert_eq!(s.count(table).await, count, "the assistant endpoint wrote to {table}");
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

/// `/metrics` counts tool calls by tool and result; a tool name the assistant endpoint does not have is `unknown`, never
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
