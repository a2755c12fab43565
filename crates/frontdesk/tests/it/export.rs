//! `frontdesk export`: an organization's records as JSON lines, each as the REST API answers it, and nothing of
//! another organization; on both engines.

use std::collections::BTreeMap;

use crate::common::process::command;
use crate::common::{day, TestServer};
use serde_json::{json, Value};

on_both_engines!(an_export_holds_every_record_as_the_api_answers_it);

async fn an_export_holds_every_record_as_the_api_answers_it(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await;
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let values: Vec<Value> = (1..=3).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 9000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await;
    let reservation = s
        .create(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(1), "checkOutDate": day(3),
                   "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
        )
        .await;
    // Its setup: an API key pinned to the hotel and a webhook subscription, each with a secret shown once.
    let key = s
        .post(
            "/api/apiKeys",
            &org.auth(),
            json!({"name": "channel manager", "scopes": ["rooms:read"], "hotelId": hotel}),
        )
        .await
        .expect(200)
        .body;
    let subscription = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": "http://127.0.0.1:9/hooks"}))
        .await
        .expect(200)
        .body;
    // Another organization's records never appear.
    let other = s.org("Other").await;
    let other_hotel = s.hotel(&other, "Elsewhere").await;
    s.create("/api/guests", &other.auth(), json!({"hotelId": other_hotel, "firstName": "Zed", "lastName": "Other"}))
        .await;

    let out = command(s.database_url()).args(["export", "--org", &org.id]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines[0]["type"], "export");
    assert_eq!(lines[0]["data"]["organization"]["id"], json!(org.id));
    let mut kinds: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in &lines[1..] {
        kinds.entry(line["type"].as_str().unwrap().to_string()).or_default().push(line["data"].clone());
    }
    let count = |kind: &str| kinds.get(kind).map_or(0, Vec::len);
    assert_eq!(
        (
            count("operator"),
            count("hotel"),
            count("roomType"),
            count("room"),
            count("ratePlan"),
            count("dailyRate"),
            count("apiKey"),
            count("webhookSubscription"),
            count("guest"),
            count("reservation")
        ),
        (1, 1, 1, 1, 1, 3, 1, 1, 1, 1),
        "{kinds:#?}"
    );
    let counts: Value = serde_json::from_slice(out.stderr.rsplit(|b| *b == b'\n').find(|l| !l.is_empty()).unwrap())
        .expect("the counts on stderr");
    assert_eq!(counts["dailyRates"], 3);
    // The audit log, as the API answers it, oldest first, and as many entries as the export counts.
    let log = s.get("/api/auditLog", &org.auth()).await.expect(200).body;
    assert!(count("auditEntry") > 0);
    assert_eq!(counts["auditEntries"], json!(count("auditEntry")));
    assert_eq!(kinds["auditEntry"][..], log.as_array().unwrap()[..count("auditEntry")]);
    assert_eq!(
        (&counts["operators"], &counts["apiKeys"], &counts["webhookSubscriptions"]),
        (&json!(1), &json!(1), &json!(1))
    );

    // Each record is what the API answers for it.
    let api_reservation = s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["reservation"][0], api_reservation);
    assert!(!api_reservation["rooms"].as_array().unwrap().is_empty(), "with its rooms");
    let api_guest = s.get(&format!("/api/guests/{guest}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["guest"][0], api_guest);
    let api_hotel = s.get(&format!("/api/hotels/{hotel}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["hotel"][0], api_hotel);
    assert!(!lines.iter().any(|l| l.to_string().contains("Zed")), "nothing of another organization");

    // The setup, as the API answers it, and without any secret: no key or webhook secret, no password hash, no
    // digest of a key or an access token.
    let api_keys = s.get("/api/apiKeys", &org.auth()).await.expect(200).body;
    assert_eq!(kinds["apiKey"][0], api_keys[0]);
    let api_subscription =
        s.get(&format!("/api/webhooksubscriptions/{}", subscription["id"].as_str().unwrap()), &org.auth()).await;
    assert_eq!(kinds["webhookSubscription"][0], api_subscription.expect(200).body);
    let me = s.get("/api/auth/me", &org.auth()).await.expect(200).body;
    assert_eq!(kinds["operator"][0]["email"], json!(org.operator_email), "{me}");
    let mut secrets = vec![
        key["secret"].as_str().unwrap().to_string(),
        subscription["secret"].as_str().unwrap().to_string(),
        org.token.clone(),
    ];
    let stored = |sql: &'static str| {
        let (db, id) = (s.db.clone(), org.id.clone());
        async move {
            let mut conn = db.read().await.unwrap();
            let rows = frontdesk::store::query(sql).bind(id).fetch_all(&mut conn).await.unwrap();
            rows.iter().map(|row| row.get::<String, _>(0)).collect::<Vec<_>>()
        }
    };
    secrets.extend(stored("SELECT password_hash FROM operators WHERE organization_id = $1").await);
    secrets.extend(stored("SELECT secret_hash FROM api_keys WHERE organization_id = $1").await);
    secrets.extend(stored("SELECT token_hash FROM access_tokens WHERE organization_id = $1").await);
    secrets.extend(stored("SELECT secret_sealed FROM webhook_subscriptions WHERE organization_id = $1").await);
    assert_eq!(secrets.len(), 7);
    let text: String = lines.iter().map(Value::to_string).collect();
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "a secret or its digest is in the export");
    }
    for field in ["secret", "password", "hash", "sealed"] {
        assert!(!text.to_lowercase().contains(field), "{field} in the export: {text}");
    }

    // An unknown organization is named; an existing file is never overwritten.
    let unknown = command(s.database_url()).args(["export", "--org", "no-such-org"]).output().unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("there is no organization no-such-org"));
    let existing = std::env::temp_dir().join(format!("frontdesk-export-{}.jsonl", uuid::Uuid::now_v7().simple()));
    std::fs::write(&existing, "keep me").unwrap();
    let refused = command(s.database_url())
        .args(["export", "--org", &org.id, "--to", &existing.display().to_string()])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");
    let _ = std::fs::remove_file(existing);
}
