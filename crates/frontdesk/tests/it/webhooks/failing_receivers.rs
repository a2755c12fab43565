//! Receivers that fail or hang: twenty failures in a row turn a subscription off until a PUT turns it on, a hanging
//! receiver times out and holds up nobody else while its backlog waits in the database, and idle lanes are dropped and
//! come back.

use std::time::Duration;

use crate::common::receiver::{Behaviour, Receiver};
use crate::common::{delivering, Org, TestServer, WAIT};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{queued, subscribe};

on_both_engines_configured!(
    twenty_failures_in_a_row_turn_a_subscription_off_until_put_turns_it_on,
    a_hanging_receiver_times_out_and_holds_up_nobody_else,
    a_hanging_receivers_backlog_stays_in_the_database_and_others_keep_flowing,
    idle_lanes_are_dropped_and_come_back,
);

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
        frontdesk::store::outbox::insert(tx.conn(), event).await.unwrap();
    }
    tx.commit().await.unwrap();
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
