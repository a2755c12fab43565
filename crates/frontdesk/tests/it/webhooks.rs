//! Webhooks: subscriptions (operator only, secret once, validation), signed deliveries of every writer's events to
//! a real receiver, filters by event and hotel, the 20-failure auto-disable and re-enable, the 5 s timeout of a
//! hanging receiver that blocks nothing else, the URL policy, and no event lost when the service dies.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::receiver::{Behaviour, Received, Receiver};
use crate::common::{day, delivering, Auth, Org, TestDatabase, TestServer, WAIT};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

on_both_engines_configured!(
    subscriptions_are_managed_by_operators_and_show_their_secret_once,
    bad_subscription_input_writes_nothing,
    every_writer_delivers_signed_complete_events,
    subscriptions_get_their_hotels_and_chosen_events_only,
    twenty_failures_in_a_row_turn_a_subscription_off_until_put_turns_it_on,
    a_hanging_receiver_times_out_and_holds_up_nobody_else,
    a_hanging_receivers_backlog_stays_in_the_database_and_others_keep_flowing,
    idle_lanes_are_dropped_and_come_back,
    records_are_delivered_side_by_side_and_each_record_in_order,
    events_claimed_by_a_dead_process_are_taken_over,
    no_event_is_lost_when_the_service_is_killed,
    private_addresses_are_refused_unless_allowed,
);

async fn subscribe(s: &TestServer, org: &Org, hotel: &str, url: &str, events: Value) -> (String, String) {
    let created = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": url, "events": events}))
        .await
        .expect(200);
    (created.body["id"].as_str().unwrap().to_string(), created.body["secret"].as_str().unwrap().to_string())
}

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

async fn subscriptions_are_managed_by_operators_and_show_their_secret_once(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let key = Auth::Key(s.key(&org, &Scope::ALL, None).await);
    let body = json!({"hotelId": hotel, "url": "http://127.0.0.1:9/hook"});
    s.get("/api/webhooksubscriptions", &Auth::None).await.expect(401);
    let refused = s.get("/api/webhooksubscriptions", &key).await.expect(403);
    assert!(refused.body["detail"].as_str().unwrap().contains("operator access token"), "{}", refused.body);
    s.post("/api/webhooksubscriptions", &key, body.clone()).await.expect(403);
    assert_eq!(s.count("webhook_subscriptions").await, 0);

    let created = s.post("/api/webhooksubscriptions", &org.auth(), body).await.expect(200);
    let id = created.body["id"].as_str().unwrap().to_string();
    let secret = created.body["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{secret}");
    assert_eq!(created.body["events"], json!([]));
    assert_eq!(created.body["active"], json!(true));
    assert_eq!(created.body["hotelId"], json!(hotel));
    // The secret is not stored as given.
    let stored: i64 = {
        use sqlx::Row;
        let mut conn = s.db.read().await.unwrap();
        sqlx::query("SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE secret_sealed LIKE $1")
            .bind(format!("%{secret}%"))
            .fetch_one(&mut *conn)
            .await
            .unwrap()
            .try_get("n")
            .unwrap()
    };
    assert_eq!(stored, 0, "the secret is stored sealed");

    let path = format!("/api/webhooksubscriptions/{id}");
    let listed = s.get("/api/webhooksubscriptions", &org.auth()).await.expect(200);
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert!(listed.body[0].get("secret").is_none() && !listed.body.to_string().contains(secret));
    let one = s.get(&path, &org.auth()).await.expect(200);
    assert!(one.body.get("secret").is_none());
    let updated = s
        .put(
            &path,
            &org.auth(),
            json!({"url": "http://127.0.0.1:9/other", "events": ["guest.created", "guest.created"], "active": false}),
        )
        .await
        .expect(200);
    assert_eq!(updated.body["url"], json!("http://127.0.0.1:9/other"));
    assert_eq!(updated.body["events"], json!(["guest.created"]));
    assert_eq!(updated.body["active"], json!(false));
    assert_eq!(updated.body["hotelId"], json!(hotel));
    assert!(updated.body.get("secret").is_none());
    s.put(&path, &key, json!({"active": true})).await.expect(403);
    s.get(&format!("{path}/deliveries"), &org.auth()).await.expect(200);
    s.get(&format!("{path}/deliveries"), &key).await.expect(403);

    // Another organization sees none of it.
    let other = s.org("Other").await;
    assert_eq!(s.get("/api/webhooksubscriptions", &other.auth()).await.expect(200).body, json!([]));
    s.get(&path, &other.auth()).await.expect(404);
    s.put(&path, &other.auth(), json!({"active": true})).await.expect(404);
    s.delete(&path, &other.auth()).await.expect(404);
    s.get(&format!("{path}/deliveries"), &other.auth()).await.expect(404);
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body["active"], json!(false));

    let deleted = s.delete(&path, &org.auth()).await.expect(200);
    assert_eq!(deleted.body["id"], json!(id));
    s.get(&path, &org.auth()).await.expect(404);
    s.delete(&path, &org.auth()).await.expect(404);
}

async fn bad_subscription_input_writes_nothing(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let other = s.org("Other").await;
    let foreign_hotel = s.hotel(&other, "Theirs").await;
    let url = "http://127.0.0.1:9/hook";
    for (body, status) in [
        (json!({"hotelId": hotel, "url": url, "events": ["reservation.created", "room.created"]}), 400),
        (json!({"hotelId": hotel, "url": url, "events": "guest.created"}), 400),
        (json!({"hotelId": hotel}), 400),
        (json!({"url": url}), 400),
        (json!({"hotelId": hotel, "url": "ftp://127.0.0.1/x"}), 400),
        (json!({"hotelId": hotel, "url": "not a url"}), 400),
        (json!({"hotelId": hotel, "url": format!("http://127.0.0.1/{}", "x".repeat(2000))}), 400),
        (json!({"hotelId": hotel, "url": url, "secret": "mine"}), 400),
        (json!({"hotelId": hotel, "url": url, "active": false}), 400),
        (json!({"hotelId": foreign_hotel, "url": url}), 404),
        (json!({"hotelId": "no-such-hotel", "url": url}), 404),
    ] {
        s.post("/api/webhooksubscriptions", &org.auth(), body.clone()).await.expect(status);
    }
    assert_eq!(s.count("webhook_subscriptions").await, 0);

    let (id, _) = subscribe(&s, &org, &hotel, url, json!(["guest.created"])).await;
    let path = format!("/api/webhooksubscriptions/{id}");
    let before = s.get(&path, &org.auth()).await.expect(200).body;
    for body in [
        json!({"hotelId": foreign_hotel}),
        json!({"hotelId": hotel}),
        json!({"secret": "whsec_mine"}),
        json!({"events": ["guest.renamed"]}),
        json!({"url": "gopher://127.0.0.1/"}),
        json!({"url": "https://", "events": []}),
        json!({"active": "yes"}),
        json!([]),
    ] {
        s.put(&path, &org.auth(), body).await.expect(400);
    }
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body, before, "refused updates change nothing");
    for query in ["limit=0", "limit=101", "limit=x", "since=1"] {
        s.get(&format!("{path}/deliveries?{query}"), &org.auth()).await.expect(400);
    }
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

async fn subscriptions_get_their_hotels_and_chosen_events_only(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let sea = s.hotel(&org, "Sea").await;
    let mountain = s.hotel(&org, "Mountain").await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &sea, &format!("{}/sea-guests", receiver.url), json!(["guest.created"])).await;
    subscribe(&s, &org, &mountain, &format!("{}/mountain-all", receiver.url), json!([])).await;
    let (off, _) = subscribe(&s, &org, &sea, &format!("{}/off", receiver.url), json!([])).await;
    s.put(&format!("/api/webhooksubscriptions/{off}"), &org.auth(), json!({"active": false})).await.expect(200);
    // Another organization's subscription on its own hotel hears nothing of this one.
    let other = s.org("Other").await;
    let theirs = s.hotel(&other, "Theirs").await;
    subscribe(&s, &other, &theirs, &format!("{}/other-org", receiver.url), json!([])).await;

    // A guest of no hotel reaches every subscription of the organization (that wants guest.created).
    s.post("/api/guests", &org.auth(), json!({"firstName": "No", "lastName": "Hotel"})).await.expect(200);
    // A guest of the mountain hotel reaches only the mountain subscription.
    s.post("/api/guests", &org.auth(), json!({"hotelId": mountain, "firstName": "Mo", "lastName": "Untain"}))
        .await
        .expect(200);
    // An update of a sea guest: the sea subscription wants only creations.
    let sea_guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": sea, "firstName": "Se", "lastName": "A"})).await;
    s.put(&format!("/api/guests/{sea_guest}"), &org.auth(), json!({"notes": "x"})).await.expect(200);

    let received = receiver.wait_for(4, WAIT).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut got: Vec<(String, String)> = receiver
        .received()
        .iter()
        .map(|d| {
            (
                d.path.clone(),
                format!("{} {}", d.header("x-service-event"), d.json()["data"]["lastName"].as_str().unwrap()),
            )
        })
        .collect();
    got.sort();
    assert_eq!(received.len(), 4);
    assert_eq!(
        got,
        [
            ("/mountain-all".to_string(), "guest.created Hotel".to_string()),
            ("/mountain-all".to_string(), "guest.created Untain".to_string()),
            ("/sea-guests".to_string(), "guest.created A".to_string()),
            ("/sea-guests".to_string(), "guest.created Hotel".to_string()),
        ]
    );
}

async fn twenty_failures_in_a_row_turn_a_subscription_off_until_put_turns_it_on(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    let (id, _) = subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;
    let path = format!("/api/webhooksubscriptions/{id}");
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "A", "lastName": "B"})).await;
    receiver.wait_for(1, WAIT).await;
    let touch_guest = |guest: String, n: usize| {
        let s = &s;
        let org = &org;
        async move {
            s.put(&format!("/api/guests/{guest}"), &org.auth(), json!({"notes": format!("{n}")})).await.expect(200);
        }
    };
    let touch = |n: usize| touch_guest(guest.clone(), n);

    // A success clears the count.
    receiver.set(Behaviour::Status(500));
    for n in 0..3 {
        touch(n).await;
    }
    receiver.wait_for(4, WAIT).await;
    wait_until(&s, &org, &path, |sub| sub["consecutiveFailures"] == json!(3)).await;
    receiver.set(Behaviour::Status(204));
    touch(3).await;
    receiver.wait_for(5, WAIT).await;
    wait_until(&s, &org, &path, |sub| sub["consecutiveFailures"] == json!(0)).await;

    // Twenty failures in a row turn it off; what was still queued is not sent. The events are about 25 different
    // guests, which a healthy subscription would have under way side by side: a failing one gets one at a time, so
    // the 20th failure is the last attempt.
    let mut guests = vec![guest.clone()];
    for n in 1..25 {
        let body = json!({"hotelId": hotel, "firstName": "G", "lastName": format!("{n}")});
        guests.push(s.create("/api/guests", &org.auth(), body).await);
    }
    receiver.wait_for(5 + 24, WAIT).await;
    receiver.set(Behaviour::Status(503));
    for (n, guest) in guests.iter().enumerate() {
        touch_guest(guest.clone(), 100 + n).await;
    }
    receiver.wait_for(29 + 20, WAIT).await;
    let sub = wait_until(&s, &org, &path, |sub| sub["active"] == json!(false)).await;
    assert_eq!(sub["consecutiveFailures"], json!(20));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(receiver.received().len(), 29 + 20, "nothing is sent after the 20th failure");
    // The lane drops what it held and the recorder removes the rows in its next batch: soon, not at once.
    let deadline = tokio::time::Instant::now() + WAIT;
    while (s.count("webhook_queue").await, s.count("outbox_events").await) != (0, 0)
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(s.count("webhook_queue").await, 0, "what it had queued is dropped");
    assert_eq!(s.count("outbox_events").await, 0, "and the events nobody else waits for");
    let log = s.get(&format!("{path}/deliveries"), &org.auth()).await.expect(200).body;
    let failed: Vec<&Value> = log.as_array().unwrap().iter().filter(|d| d["success"] == json!(false)).collect();
    assert_eq!(failed.len(), 23);
    assert!(failed.iter().take(20).all(|d| d["statusCode"] == json!(503) && d["error"].is_null()));
    // Events of a turned-off subscription are not delivered.
    touch(200).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(receiver.received().len(), 49);

    // PUT active=true turns it back on with a clean count.
    receiver.set(Behaviour::Status(200));
    let on = s.put(&path, &org.auth(), json!({"active": true})).await.expect(200).body;
    assert_eq!(on["active"], json!(true));
    assert_eq!(on["consecutiveFailures"], json!(0));
    touch(300).await;
    let received = receiver.wait_for(50, WAIT).await;
    assert_eq!(received[49].json()["data"]["notes"], json!("300"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 50);
}

/// Polls a subscription until `done` holds (panics after a while), and answers it.
async fn wait_until(s: &TestServer, org: &Org, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..150 {
        let sub = s.get(path, &org.auth()).await.expect(200).body;
        if done(&sub) {
            return sub;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the subscription never reached the expected state: {}", s.get(path, &org.auth()).await.body);
}

async fn a_hanging_receiver_times_out_and_holds_up_nobody_else(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let hanging = Receiver::start().await;
    hanging.set(Behaviour::Hang);
    let fast = Receiver::start().await;
    let (slow_id, _) = subscribe(&s, &org, &hotel, &hanging.url, json!([])).await;
    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "A", "lastName": "B"})).await;
    hanging.wait_for(1, WAIT).await;
    let slow_log = format!("/api/webhooksubscriptions/{slow_id}/deliveries");

    // While the receiver hangs, the API answers and another subscription gets its events.
    subscribe(&s, &org, &hotel, &fast.url, json!([])).await;
    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "C", "lastName": "D"})).await;
    let fast_got = fast.wait_for(1, WAIT).await;
    assert_eq!(fast_got[0].json()["data"]["lastName"], json!("D"));
    assert_eq!(s.get(&slow_log, &org.auth()).await.expect(200).body, json!([]), "the first attempt is still hanging");

    // The attempt ends at the 5 s timeout and is logged as such.
    let mut log = json!([]);
    for _ in 0..100 {
        log = s.get(&slow_log, &org.auth()).await.expect(200).body;
        if !log.as_array().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let attempt = &log[0];
    assert_eq!(attempt["success"], json!(false), "{log}");
    assert!(attempt["statusCode"].is_null());
    assert_eq!(attempt["error"], json!("timed out"));
    let ms = attempt["durationMs"].as_i64().unwrap();
    assert!((4900..8000).contains(&ms), "the attempt lasted the 5 s timeout: {ms} ms");
}

/// A test database of `engine`, or `None` (skip) when PostgreSQL is unreachable outside CI.
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

async fn events_claimed_by_a_dead_process_are_taken_over(engine: Engine) {
    use frontdesk::domain::webhooks::WebhookSettings;
    use frontdesk::worker::webhooks::{Dispatcher, DispatcherOptions};
    let Some(s) = TestServer::configured(engine, |c| c.webhook_dispatcher = false).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    // A change made before the subscription existed is not its business, even if it is sent after.
    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Too", "lastName": "Early"})).await;
    subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "A", "lastName": "B"})).await;

    // A process hands the events out to the subscriptions that want them, claims them and dies before delivering
    // them.
    let claimed_at = std::time::Instant::now();
    let now = chrono::Utc::now();
    let mut tx = s.db.begin_write().await.unwrap();
    let events = frontdesk::store::outbox::take_new(tx.conn(), 10).await.unwrap();
    assert_eq!(events.len(), 2);
    let targets = frontdesk::store::webhooks::active_targets(tx.conn(), &org.id).await.unwrap();
    let mut queued = Vec::new();
    for event in &events {
        let kind = frontdesk::domain::events::EventKind::parse(&event.kind).unwrap();
        for target in &targets {
            if target.wants(&event.organization_id, event.hotel_id.as_deref(), kind, event.created_at) {
                queued.push((target.id.as_str(), event.id.as_str()));
            }
        }
    }
    assert_eq!(queued.len(), 1, "the change made before the subscription is not queued for it");
    frontdesk::store::outbox::enqueue(tx.conn(), &queued, None).await.unwrap();
    let claimed = frontdesk::store::outbox::claim_queued(
        tx.conn(),
        queued[0].0,
        &frontdesk::store::format_ts(now),
        &frontdesk::store::format_ts(now + chrono::TimeDelta::seconds(2)),
        10,
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(claimed.len(), 1);

    // Another dispatcher leaves the claim alone while it holds, then takes the event over.
    let settings = WebhookSettings::load(&s.db, true).await.unwrap();
    let dispatcher = Dispatcher::spawn(s.db.clone(), &settings, DispatcherOptions::default()).unwrap();
    let received = receiver.wait_for(1, WAIT).await;
    assert!(received[0].at.duration_since(claimed_at) >= Duration::from_millis(1900), "the claim was respected");
    assert_eq!(received[0].json()["data"]["id"], json!(guest));
    dispatcher.stop().await;
    assert_eq!(s.count("outbox_events").await, 0);
    assert_eq!(receiver.received().len(), 1);
}

async fn no_event_is_lost_when_the_service_is_killed(engine: Engine) {
    use crate::common::process::spawn_with;
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let url = database.url.clone();
    let s = TestServer::serve_database_with(database, |c| c.webhook_dispatcher = false).await.unwrap();
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;

    // A process writes and is killed (SIGKILL) before its dispatcher could send anything.
    let mut writer = spawn_with(&url, &[("FRONTDESK_WEBHOOK_DISPATCHER", "false")]).await;
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{}/api/guests", writer.base))
        .header("authorization", format!("Token {}", org.token))
        .json(&json!({"hotelId": hotel, "firstName": "Kept", "lastName": "Safe"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 200);
    let guest: Value = created.json().await.unwrap();
    writer.child.kill().unwrap();
    writer.child.wait().unwrap();
    assert_eq!(s.count("outbox_events").await, 1, "the event was committed with the guest");
    assert!(receiver.received().is_empty());

    // The service comes back: the event is delivered.
    let _restarted = spawn_with(&url, &[("FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true")]).await;
    let received = receiver.wait_for(1, WAIT).await;
    assert_eq!(received[0].header("x-service-event"), "guest.created");
    assert_eq!(received[0].json()["data"], guest);
}

async fn private_addresses_are_refused_unless_allowed(engine: Engine) {
    use crate::common::process::spawn_with;
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let url = database.url.clone();
    // This server allows private addresses (and does not deliver); the process started below does not allow them.
    let s = TestServer::serve_database_with(database, |c| c.webhook_dispatcher = false).await.unwrap();
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let strict = spawn_with(&url, &[]).await;
    let client = reqwest::Client::new();
    let post = |body: Value| {
        client
            .post(format!("{}/api/webhooksubscriptions", strict.base))
            .header("authorization", format!("Token {}", org.token))
            .json(&body)
            .send()
    };
    for target in [
        "http://127.0.0.1:9/x",
        "http://localhost:9/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/x",
        "http://192.168.0.10/x",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://0.0.0.0/x",
    ] {
        let answer = post(json!({"hotelId": hotel, "url": target})).await.unwrap();
        assert_eq!(answer.status().as_u16(), 400, "{target}");
        let problem: Value = answer.json().await.unwrap();
        assert!(problem.to_string().contains("private"), "{problem}");
        assert!(problem.to_string().contains("--webhook-allow-private-addresses"), "names the switch: {problem}");
    }
    assert_eq!(s.count("webhook_subscriptions").await, 0);
    // A public address is accepted (a literal one: these machines may have no DNS).
    let public = post(json!({"hotelId": hotel, "url": "http://93.184.216.34/hook"})).await.unwrap();
    assert_eq!(public.status().as_u16(), 200);
    let public: Value = public.json().await.unwrap();
    let moved = client
        .put(format!("{}/api/webhooksubscriptions/{}", strict.base, public["id"].as_str().unwrap()))
        .header("authorization", format!("Token {}", org.token))
        .json(&json!({"url": "http://127.0.0.1/x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status().as_u16(), 400);
    s.delete(&format!("/api/webhooksubscriptions/{}", public["id"].as_str().unwrap()), &org.auth()).await.expect(200);

    // Subscriptions saved while private addresses were allowed are refused again at delivery.
    let receiver = Receiver::start().await;
    let port = receiver.url.rsplit(':').next().unwrap().to_string();
    let (literal, _) = subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;
    let (named, _) = subscribe(&s, &org, &hotel, &format!("http://localhost:{port}/named"), json!([])).await;
    client
        .post(format!("{}/api/guests", strict.base))
        .header("authorization", format!("Token {}", org.token))
        .json(&json!({"hotelId": hotel, "firstName": "A", "lastName": "B"}))
        .send()
        .await
        .unwrap();
    for id in [literal, named] {
        let path = format!("/api/webhooksubscriptions/{id}/deliveries");
        let mut log = json!([]);
        for _ in 0..100 {
            log = s.get(&path, &org.auth()).await.expect(200).body;
            if !log.as_array().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(log[0]["success"], json!(false), "{log}");
        assert!(log[0]["error"].as_str().unwrap().contains("may not reach"), "{log}");
    }
    assert!(receiver.received().is_empty(), "nothing reached the private address");
}

/// Writes `n` events about `n` guests of `hotel` straight into the outbox, as a backlog would be.
async fn backlog(s: &TestServer, org: &Org, hotel: &str, n: usize) {
    let mut tx = s.db.begin_write().await.unwrap();
    for i in 0..n {
        let id = uuid::Uuid::now_v7().to_string();
        let payload = json!({"id": id, "hotelId": hotel, "firstName": "Back", "lastName": format!("Log {i}"),
                             "notes": "x".repeat(500)});
        let event = frontdesk::store::outbox::NewEvent {
            organization_id: &org.id,
            hotel_id: Some(hotel),
            kind: "guest.updated",
            payload: payload.to_string(),
        };
        frontdesk::store::outbox::insert(tx.conn(), &event).await.unwrap();
    }
    tx.commit().await.unwrap();
}

/// Counts a subscription's queue rows: (all, claimed).
async fn queued(s: &TestServer, subscription: &str) -> (i64, i64) {
    use sqlx::Row;
    let mut conn = s.db.read().await.unwrap();
    let row = sqlx::query(
        "SELECT COUNT(*) AS n, COUNT(claimed_until) AS claimed FROM webhook_queue WHERE subscription_id = $1",
    )
    .bind(subscription)
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    (row.try_get("n").unwrap(), row.try_get("claimed").unwrap())
}

async fn a_hanging_receivers_backlog_stays_in_the_database_and_others_keep_flowing(engine: Engine) {
    use frontdesk::domain::webhooks::WebhookSettings;
    use frontdesk::worker::webhooks::{Dispatcher, DispatcherOptions, LANE_CAPACITY, LANE_CONCURRENCY};
    const BACKLOG: usize = 1500;
    let Some(s) = TestServer::configured(engine, |c| c.webhook_dispatcher = false).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let hanging = Receiver::start().await;
    hanging.set(Behaviour::Hang);
    let fast = Receiver::start().await;
    // The hanging receiver wants everything; the healthy one new guests, which both get.
    let (slow_id, _) = subscribe(&s, &org, &hotel, &hanging.url, json!([])).await;
    let (fast_id, _) = subscribe(&s, &org, &hotel, &fast.url, json!(["guest.created"])).await;
    backlog(&s, &org, &hotel, BACKLOG).await;

    // Two dispatchers share the queue, as two processes would. Their timeout is longer than the test: the receiver
    // hangs throughout (so the subscription is not turned off after 20 timeouts meanwhile), until it is released at
    // the end.
    let settings = WebhookSettings::load(&s.db, true).await.unwrap();
    let options = DispatcherOptions { timeout: Duration::from_secs(60), ..DispatcherOptions::default() };
    let dispatchers: Vec<Dispatcher> =
        (0..2).map(|_| Dispatcher::spawn(s.db.clone(), &settings, options.clone()).unwrap()).collect();
    let slow_lanes =
        || dispatchers.iter().flat_map(|d| d.lanes()).filter(|l| l.subscription_id == slow_id).collect::<Vec<_>>();
    hanging.wait_for(1, WAIT).await;
    // Every event is handed out to the hanging subscription's queue, in the database.
    for _ in 0..100 {
        if queued(&s, &slow_id).await.0 == BACKLOG as i64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(queued(&s, &slow_id).await.0, BACKLOG as i64);

    // While the receiver hangs on its backlog, the healthy subscription gets each new guest well within the hanging
    // receiver's 5 s timeout: it waits for nothing of the other's.
    let mut written = Vec::new();
    for n in 0..20 {
        let body = json!({"hotelId": hotel, "firstName": "New", "lastName": format!("{n}")});
        written.push((s.create("/api/guests", &org.auth(), body).await, std::time::Instant::now()));
        let lanes = slow_lanes();
        assert!(!lanes.is_empty() && lanes.iter().all(|l| l.held <= LANE_CAPACITY), "{lanes:?}");
    }
    let received = fast.wait_for(written.len(), WAIT).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fast.received().len(), written.len(), "each event once, though two dispatchers deliver");
    for (guest, at) in &written {
        let arrival = received.iter().find(|d| d.json()["data"]["id"] == json!(guest)).expect("delivered");
        let latency = arrival.at.duration_since(*at);
        assert!(latency < Duration::from_secs(3), "a new guest reached the healthy subscription after {latency:?}");
    }

    // The hanging subscription's lane never held more than its capacity: the rest of its backlog is in the database,
    // unclaimed, for whichever process has room.
    let lanes: Vec<_> = dispatchers.iter().flat_map(|d| d.lanes()).collect();
    assert!(
        lanes.iter().all(|l| l.peak <= LANE_CAPACITY && l.held <= LANE_CAPACITY),
        "no lane of either dispatcher ever held more than {LANE_CAPACITY}: {lanes:?}"
    );
    assert!(lanes.iter().any(|l| l.subscription_id == fast_id), "{lanes:?}");
    let (all, claimed) = queued(&s, &slow_id).await;
    assert!(claimed as usize <= 2 * LANE_CAPACITY, "{claimed} of {all} claimed");
    assert_eq!(all as usize, BACKLOG + written.len(), "nothing of the hanging subscription's was done");
    let hanging_now = hanging.received().len();
    assert!(hanging_now <= 2 * LANE_CONCURRENCY, "{hanging_now} deliveries to the hanging receiver under way");
    // The healthy subscription's deliveries are recorded in a moment: then it has nothing waiting.
    for _ in 0..50 {
        if queued(&s, &fast_id).await.0 == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(queued(&s, &fast_id).await.0, 0, "the healthy subscription has nothing waiting");

    // Stopping gives the unsent claims back: nothing is lost, every event is still queued or was attempted.
    hanging.set(Behaviour::Status(200));
    hanging.release();
    for dispatcher in dispatchers {
        dispatcher.stop().await;
    }
    let (all, claimed) = queued(&s, &slow_id).await;
    assert_eq!(claimed, 0, "claims are released when the dispatcher stops");
    let attempts = s.count("webhook_deliveries").await - written.len() as i64;
    assert_eq!(all + attempts, (BACKLOG + written.len()) as i64, "{all} queued, {attempts} attempted");
    assert_eq!(s.count("outbox_events").await, all);
}

async fn idle_lanes_are_dropped_and_come_back(engine: Engine) {
    use frontdesk::domain::webhooks::WebhookSettings;
    use frontdesk::worker::webhooks::{Dispatcher, DispatcherOptions};
    let Some(s) = TestServer::configured(engine, |c| c.webhook_dispatcher = false).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    let (id, _) = subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;
    let settings = WebhookSettings::load(&s.db, true).await.unwrap();
    let options = DispatcherOptions { lane_idle: Duration::from_millis(300), ..DispatcherOptions::default() };
    let dispatcher = Dispatcher::spawn(s.db.clone(), &settings, options).unwrap();

    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "A", "lastName": "B"})).await;
    receiver.wait_for(1, WAIT).await;
    assert!(dispatcher.lanes().iter().any(|l| l.subscription_id == id), "{:?}", dispatcher.lanes());
    // Idle for longer than `lane_idle` (and a poll): the lane is gone.
    let mut gone = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if dispatcher.lanes().is_empty() {
            gone = true;
            break;
        }
    }
    assert!(gone, "the idle lane was dropped: {:?}", dispatcher.lanes());
    // The next event starts a new one.
    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "C", "lastName": "D"})).await;
    let received = receiver.wait_for(2, WAIT).await;
    assert_eq!(received[1].json()["data"]["lastName"], json!("D"));
    dispatcher.stop().await;
    assert_eq!(s.count("outbox_events").await, 0);
    assert_eq!(s.count("webhook_queue").await, 0);
}
