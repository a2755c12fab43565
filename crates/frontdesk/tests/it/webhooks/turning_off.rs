//! A subscription turned off while a dispatcher hands events out keeps nothing queued, whichever commits first:
//! the turn-off waits for a hand-out that has queued rows for it and drops them, and a hand-out that queues after a
//! turn-off takes its rows back. Each test holds one transaction open across the other, as two processes would.

use std::time::Duration;

use crate::common::{Org, TestServer};
use frontdesk::store::outbox;
use frontdesk::store::{webhooks, Engine};
use serde_json::json;

use super::{queued, subscribe, take_and_match};

on_both_engines_configured!(a_turn_off_waits_for_a_hand_out_that_queued_for_it);

/// A server without a dispatcher (the test hands out by hand), an organization with one subscription, and one
/// event for it: (server, organization, subscription).
async fn one_event_for_one_subscription(engine: Engine) -> Option<(TestServer, Org, String)> {
    let s = TestServer::configured(engine, |c| c.webhook_dispatcher = false).await?;
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let (subscription, _) = subscribe(&s, &org, &hotel, "http://127.0.0.1:9/hook", json!([])).await;
    s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "A", "lastName": "B"})).await;
    Some((s, org, subscription))
}

async fn a_turn_off_waits_for_a_hand_out_that_queued_for_it(engine: Engine) {
    let Some((s, org, subscription)) = one_event_for_one_subscription(engine).await else { return };
    let s = std::sync::Arc::new(s);
    let mut hand_out = s.db.begin_write().await.unwrap();
    let (events, pairs) = take_and_match(hand_out.conn(), &org).await;
    assert_eq!(pairs.len(), 1);
    let queue: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    outbox::enqueue(hand_out.conn(), &queue, None).await.unwrap();

    // Turned off through the API while the hand-out has not committed.
    let path = format!("/api/webhooksubscriptions/{subscription}");
    let turn_off = {
        let (s, auth) = (s.clone(), org.auth());
        tokio::spawn(async move { s.put(&path, &auth, json!({"active": false})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!turn_off.is_finished(), "the turn-off waits for the hand-out that queued rows for its subscription");

    let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let taken_back = outbox::unqueue_turned_off(hand_out.conn(), &[subscription.as_str()], &ids).await.unwrap();
    assert!(taken_back.is_empty(), "the subscription was still on when the hand-out looked");
    hand_out.commit().await.unwrap();

    let answer = turn_off.await.unwrap().expect(200);
    assert_eq!(answer.body["active"], json!(false));
    assert_eq!(queued(&s, &subscription).await, (0, 0), "the turn-off dropped the rows the hand-out queued");
    assert_eq!(s.count("outbox_events").await, 0, "and the event nobody waits for");
}

/// PostgreSQL only: on SQLite one transaction writes at a time, so a hand-out cannot read a subscription active
/// while its turn-off is under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_out_that_queues_after_a_turn_off_takes_its_rows_back() {
    let Some((s, org, subscription)) = one_event_for_one_subscription(Engine::Postgres).await else { return };
    let mut hand_out = s.db.begin_write().await.unwrap();
    let (events, pairs) = take_and_match(hand_out.conn(), &org).await;
    assert_eq!(pairs.len(), 1, "the hand-out read the subscription active");

    // The turn-off takes the subscription first and commits while the hand-out waits to queue for it.
    let mut turn_off = s.db.begin_write().await.unwrap();
    webhooks::turn_off(turn_off.conn(), &subscription).await.unwrap();
    let enqueue = tokio::spawn(async move {
        let queue: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        outbox::enqueue(hand_out.conn(), &queue, None).await.unwrap();
        hand_out
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!enqueue.is_finished(), "queuing for the subscription waits for its turn-off");
    turn_off.commit().await.unwrap();
    let mut hand_out = enqueue.await.unwrap();

    let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let taken_back = outbox::unqueue_turned_off(hand_out.conn(), &[subscription.as_str()], &ids).await.unwrap();
    assert_eq!(taken_back, vec![(subscription.clone(), events[0].id.clone())]);
    hand_out.commit().await.unwrap();
    assert_eq!(queued(&s, &subscription).await, (0, 0));
    assert_eq!(s.count("outbox_events").await, 0, "the event nobody waits for is removed");
}
