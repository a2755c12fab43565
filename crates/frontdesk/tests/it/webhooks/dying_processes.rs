//! No event is lost when a process dies: events a dead process claimed are taken over, and nothing is lost when the
//! service is killed.

use std::time::Duration;

use crate::common::receiver::Receiver;
use crate::common::{TestDatabase, TestServer, WAIT};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::subscribe;

on_both_engines_configured!(
    events_claimed_by_a_dead_process_are_taken_over,
    no_event_is_lost_when_the_service_is_killed,
);

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
    let (events, pairs) = super::take_and_match(tx.conn(), &org).await;
    assert_eq!(events.len(), 2);
    let queued: Vec<(&str, &str)> = pairs.iter().map(|(s, e)| (s.as_str(), e.as_str())).collect();
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
