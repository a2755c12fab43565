//! Webhooks: subscriptions (operator only, secret once, validation), signed deliveries of every writer's events to
//! a real receiver, filters by event and hotel, the 20-failure auto-disable and re-enable, the 5 s timeout of a
//! hanging receiver that blocks nothing else, the URL policy, and no event lost when the service dies.

mod deliveries;
mod dying_processes;
mod failing_receivers;
mod large_outbox;
mod subscriptions;
mod turning_off;

use crate::common::{Org, TestServer};
use serde_json::{json, Value};

async fn subscribe(s: &TestServer, org: &Org, hotel: &str, url: &str, events: Value) -> (String, String) {
    let created = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": url, "events": events}))
        .await
        .expect(200);
    (created.body["id"].as_str().unwrap().to_string(), created.body["secret"].as_str().unwrap().to_string())
}

/// Counts a subscription's queue rows: (all, claimed).
async fn queued(s: &TestServer, subscription: &str) -> (i64, i64) {
    let mut conn = s.db.read().await.unwrap();
    let row = frontdesk::store::query(
        "SELECT COUNT(*) AS n, COUNT(claimed_until) AS claimed FROM webhook_queue WHERE subscription_id = $1",
    )
    .bind(subscription)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    (row.try_get("n").unwrap(), row.try_get("claimed").unwrap())
}

/// The first half of a hand-out, as the dispatcher's: the new events and the (subscription, event) pairs the active
/// subscriptions want.
pub(super) async fn take_and_match(
    conn: &mut frontdesk::store::Conn,
    org: &Org,
) -> (Vec<frontdesk::store::outbox::PendingEvent>, Vec<(String, String)>) {
    let events = frontdesk::store::outbox::take_new(conn, 10).await.unwrap();
    let targets = frontdesk::store::webhooks::active_targets(conn, &org.id).await.unwrap();
    let mut pairs = Vec::new();
    for event in &events {
        let kind = frontdesk::domain::events::EventKind::parse(&event.kind).unwrap();
        for target in &targets {
            if frontdesk::domain::webhooks::wants(
                target,
                &event.organization_id,
                event.hotel_id.as_deref(),
                kind,
                event.created_at,
            ) {
                pairs.push((target.id.clone(), event.id.clone()));
            }
        }
    }
    (events, pairs)
}
