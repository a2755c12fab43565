//! `frontdesk export`: an organization's records as JSON lines, each as the REST API answers it, and nothing of
//! another organization; on both engines.

mod common;

use std::collections::BTreeMap;

use common::process::command;
use common::{day, TestServer};
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
            count("hotel"),
            count("roomType"),
            count("room"),
            count("ratePlan"),
            count("dailyRate"),
            count("guest"),
            count("reservation")
        ),
        (1, 1, 1, 1, 3, 1, 1),
        "{kinds:#?}"
    );
    let counts: Value = serde_json::from_slice(out.stderr.rsplit(|b| *b == b'\n').find(|l| !l.is_empty()).unwrap())
        .expect("the counts on stderr");
    assert_eq!(counts["dailyRates"], 3);

    // Each record is what the API answers for it.
    let api_reservation = s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["reservation"][0], api_reservation);
    assert!(!api_reservation["rooms"].as_array().unwrap().is_empty(), "with its rooms");
    let api_guest = s.get(&format!("/api/guests/{guest}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["guest"][0], api_guest);
    let api_hotel = s.get(&format!("/api/hotels/{hotel}"), &org.auth()).await.expect(200).body;
    assert_eq!(kinds["hotel"][0], api_hotel);
    assert!(!lines.iter().any(|l| l.to_string().contains("Zed")), "nothing of another organization");

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
