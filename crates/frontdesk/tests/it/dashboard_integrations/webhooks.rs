//! A webhook subscription made in the dashboard: its deliveries are signed, and a failing one is turned on again.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::browser::Browser;
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::{PASSWORD, WAIT};
use frontdesk::store::Engine;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;

use super::{html, screenshots, server, shown_secret};

on_both_engines_configured!(a_webhook_made_in_the_dashboard_is_signed_and_a_failing_one_turns_on_again);

/// Verifies a delivery's `X-Service-Signature` the way the contract tells receivers to.
fn signature_is_valid(secret: &str, header: &str, body: &[u8]) -> bool {
    let parts: HashMap<&str, &str> = header.split(',').filter_map(|p| p.split_once('=')).collect();
    let (Some(t), Some(v1)) = (parts.get("t"), parts.get("v1")) else { return false };
    if v1.len() != 64 {
        return false;
    }
    let Ok(received) = hex::decode(v1) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&received).is_ok()
}

async fn a_webhook_made_in_the_dashboard_is_signed_and_a_failing_one_turns_on_again(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let receiver = Receiver::start().await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("New subscription").await;
    assert!(html(&b).await.contains("href=\"#verifying\""), "the page links to how to verify a delivery");
    b.fill("#url", &receiver.url).await;
    b.click("input[name='event-guest.created']").await;
    b.click_text("button", "Create subscription").await;
    let secret = shown_secret(&b).await;
    assert!(secret.starts_with("whsec_"), "{secret}");

    // A guest created in the dashboard is delivered, signed with that secret.
    b.goto(&format!("/hotels/{hotel}/guests/new")).await;
    b.fill("#firstName", "Ana").await;
    b.fill("#lastName", "Silva").await;
    b.fill("#email", "ana.silva@example.com").await;
    b.click_text("button", "Create").await;
    b.wait_for_text("Ana Silva").await;
    let received = receiver.wait_for(1, WAIT).await;
    let delivery = &received[0];
    assert_eq!(delivery.header("x-service-event"), "guest.created");
    assert_eq!(delivery.json()["data"]["email"], json!("ana.silva@example.com"));
    let signature = delivery.header("x-service-signature");
    assert!(signature_is_valid(&secret, signature, &delivery.body), "{signature}");
    assert!(!signature_is_valid("whsec_wrong", signature, &delivery.body));

    // The delivery log shows the attempt.
    let subscription = s.get("/api/webhooksubscriptions", &org.auth()).await.expect(200).body[0].clone();
    let id = subscription["id"].as_str().expect("id").to_string();
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks/{id}")).await;
    b.wait_for_text("Delivery log").await;
    let page = b.page_text().await;
    assert!(page.contains("guest.created") && page.contains("HTTP 200") && page.contains(" ms"), "{page}");
    assert!(!html(&b).await.contains(&secret), "the secret is never shown again");

    // Twenty failures in a row turn it off; the list says why, and one click turns it on with a fresh count.
    receiver.set(Behaviour::Status(500));
    for n in 0..20 {
        let guest = json!({"hotelId": hotel, "firstName": "Guest", "lastName": format!("Number {n}")});
        s.post("/api/guests", &org.auth(), guest).await.expect(200);
    }
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
        if now["active"] == json!(false) {
            assert_eq!(now["consecutiveFailures"], json!(20));
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never turned off: {now}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("turned off: failing").await;
    b.assert_page_ok("the webhooks page with a failing subscription").await;
    if screenshots(&s) {
        b.screenshot("integrations-webhooks").await;
    }
    receiver.set(Behaviour::Status(200));
    b.click_text("button", "Turn on again").await;
    b.wait_for_text("back on").await;
    let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!((now["active"].clone(), now["consecutiveFailures"].clone()), (json!(true), json!(0)));
    let before = receiver.received().len();
    s.post("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Back", "lastName": "Again"}))
        .await
        .expect(200);
    let received = receiver.wait_for(before + 1, WAIT).await;
    assert_eq!(received.last().expect("delivery").json()["data"]["firstName"], json!("Back"));

    // Editing: the URL, the events and the state change; turning it off from the form is not a failure.
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks/{id}")).await;
    b.wait_for_text("Delivery log").await;
    if screenshots(&s) {
        b.screenshot("integrations-webhook").await;
    }
    b.click("input[name='event-guest.updated']").await;
    b.click("#active").await;
    b.click_text("button", "Save").await;
    b.wait_for_text("Saved the webhook subscription").await;
    let now = s.get(&format!("/api/webhooksubscriptions/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(now["events"], json!(["guest.created", "guest.updated"]));
    assert_eq!(now["active"], json!(false));
    b.goto(&format!("/hotels/{hotel}/integrations/webhooks")).await;
    b.wait_for_text("paused").await;
    b.close().await;
}
