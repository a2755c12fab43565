//! Hostile tool calls and malformed JSON-RPC never fail the server.

use crate::common::{day, TestServer};
use serde_json::{json, Value};

use super::{catalogue, tokens_for};

on_both_engines!(hostile_tool_calls_never_fail_the_server);

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
