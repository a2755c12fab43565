//! Deliveries: every writer delivers signed, complete events to a real receiver, records side by side and each record
//! in order.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::receiver::{Behaviour, Received, Receiver};
use crate::common::{day, delivering, Auth, Org, TestServer, WAIT};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use super::subscribe;

on_both_engines_configured!(
    every_writer_delivers_signed_complete_events,
    records_are_delivered_side_by_side_and_each_record_in_order,
);

/// Checks a delivery's signature the way a receiver would, without the service's signing code: parse the header,
/// refuse anything malformed, recompute the HMAC over the raw body and compare in constant time.
fn verify(secret: &str, delivery: &Received) -> bool {
    let header = delivery.header("x-service-signature");
    let Some((t, v1)) = header.split_once(',') else { return false };
    let (Some(t), Some(v1)) = (t.strip_prefix("t="), v1.strip_prefix("v1=")) else { return false };
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || v1.len() != 64 {
        return false;
    }
    let Ok(expected) = hex::decode(v1) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(&delivery.body);
    mac.verify_slice(&expected).is_ok()
}

/// A hotel that can be booked publicly: one room type with one room, a rate plan priced for 60 days.
async fn bookable(s: &TestServer, org: &Org) -> (String, String) {
    let hotel = s.hotel(org, "Sea").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await.expect(200);
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..60).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type)
}

async fn every_writer_delivers_signed_complete_events(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let (hotel, room_type) = bookable(&s, &org).await;
    let receiver = Receiver::start().await;
    let (subscription, secret) = subscribe(&s, &org, &hotel, &format!("{}/hooks", receiver.url), json!([])).await;
    let key = Auth::Key(s.key(&org, &Scope::ALL, None).await);

    // The REST API, with an operator token and with a key.
    let guest = s
        .post("/api/guests", &key, json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"}))
        .await
        .expect(200)
        .body;
    let guest_id = guest["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/guests/{guest_id}"), &org.auth(), json!({"phone": "+351 900 000 000"})).await.expect(200);
    let direct = s
        .post(
            "/api/reservations",
            &key,
            json!({"hotelId": hotel, "guestId": guest_id, "checkInDate": day(20), "checkOutDate": day(22),
                   "rooms": [{"roomTypeId": room_type, "price": 30000}]}),
        )
        .await
        .expect(200)
        .body;
    let direct_id = direct["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/reservations/{direct_id}"), &key, json!({"notes": "Quiet room"})).await.expect(200);
    s.delete(&format!("/api/reservations/{direct_id}"), &key).await.expect(200);
    // The public booking endpoint (a new guest and a request), then staff approval.
    let offers = s
        .get(&format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(5), day(7)), &Auth::None)
        .await
        .expect(200)
        .body;
    let booked = s
        .post(
            &format!("/api/hotels/{hotel}/book-reservation"),
            &Auth::None,
            json!({"offerId": offers[0]["offerId"], "guest": {"firstName": "Bo", "lastName": "Berg", "email": "bo@example.com"}}),
        )
        .await
        .expect(201)
        .body;
    let requested_id = booked["reservationId"].as_str().unwrap().to_string();
    s.post(&format!("/api/reservations/{requested_id}/approve"), &org.auth(), json!({})).await.expect(200);
    let approved = s.get(&format!("/api/reservations/{requested_id}"), &org.auth()).await.expect(200).body;
    let booker_id = approved["guestId"].as_str().unwrap().to_string();
    let booker = s.get(&format!("/api/guests/{booker_id}"), &org.auth()).await.expect(200).body;
    let ana = s.get(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(200).body;
    s.delete(&format!("/api/guests/{guest_id}"), &key).await.expect(200);

    let expected = [
        ("guest.created", guest_id.as_str()),
        ("guest.updated", guest_id.as_str()),
        ("reservation.created", direct_id.as_str()),
        ("reservation.updated", direct_id.as_str()),
        ("reservation.deleted", direct_id.as_str()),
        ("guest.created", booker_id.as_str()),
        ("reservation.created", requested_id.as_str()),
        ("reservation.updated", requested_id.as_str()),
        ("guest.deleted", guest_id.as_str()),
    ];
    let received = receiver.wait_for(expected.len(), WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), expected.len(), "each event once");

    let mut seen = Vec::new();
    let mut event_ids = std::collections::HashSet::new();
    let mut delivery_ids = std::collections::HashSet::new();
    for delivery in &received {
        assert_eq!(delivery.path, "/hooks");
        assert_eq!(delivery.header("content-type"), "application/json");
        let body = delivery.json();
        let object = body.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["data", "event", "id", "timestamp"], "{body}");
        assert_eq!(delivery.header("x-service-event"), body["event"].as_str().unwrap());
        let signature = delivery.header("x-service-signature");
        assert!(signature.starts_with("t=") && signature.contains(",v1=") && !signature.contains(' '), "{signature}");
        assert!(verify(&secret, delivery), "the signature verifies: {signature}");
        assert!(!verify("whsec_wrong", delivery));
        let mut tampered = delivery.clone();
        tampered.body = axum::body::Bytes::from(delivery.body.iter().copied().chain(*b" ").collect::<Vec<u8>>());
        assert!(!verify(&secret, &tampered), "a changed body does not verify");
        let now = chrono::Utc::now().timestamp();
        assert!((now - body["timestamp"].as_i64().unwrap()).abs() < 120, "{body}");
        assert!(event_ids.insert(body["id"].as_str().unwrap().to_string()), "event ids are unique");
        assert!(delivery_ids.insert(delivery.header("x-service-delivery").to_string()));
        assert!(!delivery.header("x-service-delivery").is_empty());
        seen.push((body["event"].as_str().unwrap().to_string(), body["data"]["id"].as_str().unwrap().to_string()));
    }
    let mut want: Vec<(String, String)> = expected.iter().map(|(e, id)| (e.to_string(), id.to_string())).collect();
    want.sort();
    let mut got = seen.clone();
    got.sort();
    assert_eq!(got, want);
    // The events about one record arrive in the order they were written.
    for (_, record) in &expected {
        let written: Vec<&str> = expected.iter().filter(|(_, id)| id == record).map(|(e, _)| *e).collect();
        let arrived: Vec<&str> = seen.iter().filter(|(_, id)| id == record).map(|(e, _)| e.as_str()).collect();
        assert_eq!(arrived, written, "events of {record}");
    }

    // `data` is the record as GET answered it at that moment; for deletions, as it was.
    let data_of = |event: &str, id: &str| {
        received.iter().map(|d| d.json()).find(|b| b["event"] == json!(event) && b["data"]["id"] == json!(id)).unwrap()
            ["data"]
            .clone()
    };
    assert_eq!(data_of("guest.created", &booker_id), booker);
    assert_eq!(data_of("reservation.updated", &requested_id), approved);
    assert_eq!(data_of("guest.deleted", &guest_id), ana);
    assert_eq!(data_of("guest.created", &guest_id), guest);
    assert_eq!(data_of("reservation.created", &direct_id), direct);

    // The delivery log: newest first, every attempt a success.
    let log = s.get(&format!("/api/webhooksubscriptions/{subscription}/deliveries"), &org.auth()).await.expect(200);
    let log = log.body.as_array().unwrap().clone();
    assert_eq!(log.len(), expected.len());
    assert!(log.iter().all(|d| d["success"] == json!(true) && d["statusCode"] == json!(200) && d["error"].is_null()));
    // Newest first. Deliveries about different records overlap, so only each record's own events keep an order:
    // the reverse of the order they were written.
    let record_of: HashMap<String, String> = received
        .iter()
        .map(|d| d.json())
        .map(|b| (b["id"].as_str().unwrap().to_string(), b["data"]["id"].as_str().unwrap().to_string()))
        .collect();
    for (_, record) in &expected {
        let mut written: Vec<&str> = expected.iter().filter(|(_, id)| id == record).map(|(e, _)| *e).collect();
        written.reverse();
        let logged: Vec<&str> = log
            .iter()
            .filter(|d| record_of.get(d["eventId"].as_str().unwrap()).map(String::as_str) == Some(*record))
            .map(|d| d["event"].as_str().unwrap())
            .collect();
        assert_eq!(logged, written, "the log's events of {record}, newest first");
    }
    let limited = s.get(&format!("/api/webhooksubscriptions/{subscription}/deliveries?limit=2"), &org.auth()).await;
    assert_eq!(limited.expect(200).body.as_array().unwrap().len(), 2);
    assert_eq!(s.count("outbox_events").await, 0, "delivered events leave the outbox");

    // The example in docs/webhooks.md verifies a real delivery too (when Python is at hand).
    if let Ok(version) = std::process::Command::new("python3").arg("--version").output() {
        if version.status.success() {
            let last = &received[received.len() - 1];
            let dir = std::env::temp_dir().join(format!("frontdesk-webhook-{}", uuid::Uuid::now_v7().simple()));
            std::fs::create_dir_all(&dir).unwrap();
            let body_path = dir.join("body.json");
            std::fs::write(&body_path, &last.body).unwrap();
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/examples/verify_webhook.py");
            let run = |secret: &str| {
                std::process::Command::new("python3")
                    .args([script, secret, last.header("x-service-signature"), body_path.to_str().unwrap()])
                    .output()
                    .unwrap()
            };
            let good = run(&secret);
            assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
            assert!(!run("whsec_wrong").status.success());
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}

async fn records_are_delivered_side_by_side_and_each_record_in_order(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &hotel, &receiver.url, json!(["guest.updated"])).await;
    let mut guests = Vec::new();
    for n in 0..4 {
        let body = json!({"hotelId": hotel, "firstName": "G", "lastName": format!("{n}")});
        guests.push(s.create("/api/guests", &org.auth(), body).await);
    }
    // Each delivery takes the receiver a second; three updates of each of four guests.
    let answer_after = Duration::from_secs(1);
    receiver.set(Behaviour::Slow(answer_after));
    for round in 0..3 {
        for guest in &guests {
            s.put(&format!("/api/guests/{guest}"), &org.auth(), json!({"notes": format!("{round}")})).await.expect(200);
        }
    }
    let received = receiver.wait_for(12, WAIT).await;

    for guest in &guests {
        let arrivals: Vec<&Received> = received.iter().filter(|d| d.json()["data"]["id"] == json!(guest)).collect();
        let notes: Vec<Value> = arrivals.iter().map(|d| d.json()["data"]["notes"].clone()).collect();
        assert_eq!(notes, [json!("0"), json!("1"), json!("2")], "one guest's updates arrive in the order written");
        for pair in arrivals.windows(2) {
            assert!(pair[1].at - pair[0].at >= answer_after, "an update is sent once the one before it was answered");
        }
    }
    // Updates of different guests did not wait for each other: a one-at-a-time lane would space every arrival a
    // second apart.
    let firsts: Vec<std::time::Instant> = guests
        .iter()
        .map(|guest| received.iter().find(|d| d.json()["data"]["id"] == json!(guest)).unwrap().at)
        .collect();
    let spread = *firsts.iter().max().unwrap() - *firsts.iter().min().unwrap();
    assert!(spread < answer_after, "the first updates of four guests were under way together ({spread:?} apart)");
}
