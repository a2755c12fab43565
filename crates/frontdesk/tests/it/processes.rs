//! Several `frontdesk serve` processes on one PostgreSQL database behave as one service: racing approvals sent to
//! different processes take the last room once, an offer found through one process books through the other, and
//! idempotent retries spread over both book once; with both dispatching webhooks, each event is delivered once.

use std::time::Duration;

use crate::common::process::{spawn, spawn_with};
use crate::common::{Auth, TestDatabase, TestServer};
use frontdesk::store::Engine;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_postgres_act_as_one_service() {
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let url = database.url.clone();
    // The in-process server migrates and seeds; the two processes serve the same database.
    let s = TestServer::serve_database(database).await.unwrap();
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await.expect(200);
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let today = chrono::Utc::now().date_naive();
    let day = |n: u64| (today + chrono::Days::new(n)).to_string();
    s.post("/api/dailyRates", &org.auth(), json!({"values": [{"ratePlanId": plan, "date": day(3), "price": 9000}]}))
        .await
        .expect(200);

    let a = spawn(&url).await;
    let b = spawn(&url).await;
    let client = reqwest::Client::new();
    let auth = format!("Token {}", org.token);

    // An offer found through process A books through process B (one signing key per database).
    let search = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(3), day(4));
    let offers: Value = client.get(format!("{}{search}", a.base)).send().await.unwrap().json().await.unwrap();
    let offer_id = offers[0]["offerId"].as_str().unwrap().to_string();

    // Idempotent retries spread over both processes book once.
    let mut calls = Vec::new();
    for n in 0..10 {
        let base = if n % 2 == 0 { a.base.clone() } else { b.base.clone() };
        let (client, hotel, offer_id) = (client.clone(), hotel.clone(), offer_id.clone());
        calls.push(tokio::spawn(async move {
            let body = json!({"offerId": offer_id, "guest": {"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"}});
            let res = client
                .post(format!("{base}/api/hotels/{hotel}/book-reservation"))
                .header("idempotency-key", "same-retry")
                .json(&body)
                .send()
                .await
                .unwrap();
            TestServer::answer(res).await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for call in calls {
        ids.insert(call.await.unwrap().expect(201).body["reservationId"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "one reservation for one idempotency key");

    // More requests for the same night, then approvals racing through both processes: exactly one wins.
    for n in 0..19 {
        let body = json!({"offerId": offer_id, "guest": {"firstName": "G", "lastName": "N", "email": format!("g{n}@example.com")}});
        let res =
            client.post(format!("{}/api/hotels/{hotel}/book-reservation", b.base)).json(&body).send().await.unwrap();
        ids.insert(TestServer::answer(res).await.expect(201).body["reservationId"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 20);
    let mut calls = Vec::new();
    for (n, id) in ids.into_iter().enumerate() {
        let base = if n % 2 == 0 { a.base.clone() } else { b.base.clone() };
        let (client, auth) = (client.clone(), auth.clone());
        calls.push(tokio::spawn(async move {
            client
                .post(format!("{base}/api/reservations/{id}/approve"))
                .header("authorization", auth)
                .json(&json!({}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }));
    }
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(call.await.unwrap());
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 19, "{statuses:?}");
    let sold = s.get(&search, &Auth::None).await.expect(200);
    assert_eq!(sold.body, json!([]), "the room is sold for that night");
    // Each process answers searches from its own copy of the hotel's rates and inventory, and sees what the other
    // process changed within the bound on how long it reuses the hotel's availability version.
    tokio::time::sleep(frontdesk::store::recent::MAX_AGE).await;
    for base in [&a.base, &b.base] {
        let offers: Value = client.get(format!("{base}{search}")).send().await.unwrap().json().await.unwrap();
        assert_eq!(offers, json!([]), "{base} sees the approval");
    }
    let later = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(5), day(6));
    for (price, writer, reader) in [(7000, &b.base, &a.base), (7500, &a.base, &b.base), (8000, &b.base, &a.base)] {
        let values = json!({"values": [{"ratePlanId": plan, "date": day(5), "price": price}]});
        let res =
            client.post(format!("{writer}/api/dailyRates")).header("authorization", &auth).json(&values).send().await;
        assert!(res.unwrap().status().is_success());
        tokio::time::sleep(frontdesk::store::recent::MAX_AGE).await;
        let offers: Value = client.get(format!("{reader}{later}")).send().await.unwrap().json().await.unwrap();
        assert_eq!(offers[0]["totalPrice"], json!(price), "a price set through {writer} is offered by {reader}");
    }
    // Both processes fold the reservation count changes (worker/counts.rs), one at a time: the changes of the 20
    // bookings and the approval go into the counters, and the list's total still equals the reservations.
    let deadline = tokio::time::Instant::now() + crate::common::WAIT;
    while s.count("reservation_count_changes").await > 0 {
        assert!(tokio::time::Instant::now() < deadline, "the serve processes did not fold the count changes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let listed = client.get(format!("{}/api/reservations?limit=1", a.base)).header("authorization", &auth).send();
    let total = listed.await.unwrap().headers()["x-total-count"].to_str().unwrap().to_string();
    assert_eq!(total, s.count("reservations").await.to_string());
}

/// Two `frontdesk serve` processes sharing Redis hold one limit for a key: N requests spread over both, and only
/// the key's limit of them is served. On both engines (two processes on one SQLite file work too).
async fn two_processes_sharing_redis_hold_one_limit(engine: Engine) {
    let redis = std::env::var("FRONTDESK_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let address = redis.trim_start_matches("redis://").to_string();
    if std::net::TcpStream::connect(&address).is_err() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "Redis is required under CI=true at {redis}");
        eprintln!("skipping: Redis unreachable at {redis}");
        return;
    }
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let url = database.url.clone();
    let s = TestServer::serve_database(database).await.unwrap();
    let org = s.org("Acme").await;
    let secret = s.key(&org, &[frontdesk::domain::Scope::RoomsRead], None).await;
    let env = [("FRONTDESK_REDIS_URL", redis.as_str()), ("FRONTDESK_RATE_LIMIT_PER_MINUTE", "12")];
    let a = spawn_with(&url, &env).await;
    let b = spawn_with(&url, &env).await;
    let client = reqwest::Client::new();
    let mut served = 0;
    for n in 0..40 {
        let base = if n % 2 == 0 { &a.base } else { &b.base };
        let res = client
            .get(format!("{base}/api/hotels"))
            .header("authorization", crate::common::basic(&secret))
            .send()
            .await
            .unwrap();
        match res.status().as_u16() {
            200 => served += 1,
            429 => assert!(res.headers().contains_key("retry-after")),
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(served, 12, "12 a minute for the key across both processes, not 12 each");
}

mod two_processes_sharing_redis_hold_one_limit {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::two_processes_sharing_redis_hold_one_limit(frontdesk::store::Engine::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::two_processes_sharing_redis_hold_one_limit(frontdesk::store::Engine::Postgres).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_deliver_each_webhook_event_once() {
    use crate::common::receiver::Receiver;
    let Some(database) = TestDatabase::create_or_skip(Engine::Postgres).await else { return };
    let url = database.url.clone();
    let s = TestServer::serve_database_with(database, |c| c.webhook_dispatcher = false).await.unwrap();
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    s.post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": receiver.url})).await.expect(200);

    // Both processes write and both dispatch, claiming from the one outbox.
    let allow = [("FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true"), ("FRONTDESK_RATE_LIMITS", "false")];
    let a = spawn_with(&url, &allow).await;
    let b = spawn_with(&url, &allow).await;
    let client = reqwest::Client::new();
    let writes = (0..200).map(|n| {
        let base = if n % 2 == 0 { a.base.clone() } else { b.base.clone() };
        let client = client.clone();
        let token = org.token.clone();
        let hotel = hotel.clone();
        async move {
            let answer = client
                .post(format!("{base}/api/guests"))
                .header("authorization", format!("Token {token}"))
                .json(&json!({"hotelId": hotel, "firstName": "Guest", "lastName": format!("{n}")}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status().as_u16(), 200);
            answer.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string()
        }
    });
    let created: std::collections::HashSet<String> = futures::future::join_all(writes).await.into_iter().collect();
    assert_eq!(created.len(), 200);

    receiver.wait_for(200, Duration::from_secs(30)).await;
    // Give a duplicate, if there were one, time to arrive.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let received = receiver.received();
    let event_ids: std::collections::HashSet<String> =
        received.iter().map(|d| d.json()["id"].as_str().unwrap().to_string()).collect();
    let guests: std::collections::HashSet<String> =
        received.iter().map(|d| d.json()["data"]["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(received.len(), 200, "each event delivered once");
    assert_eq!(event_ids.len(), 200);
    assert_eq!(guests, created);
    assert_eq!(s.count("outbox_events").await, 0);
}
