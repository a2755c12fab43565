//! Connected assistants: disconnecting one cuts it off at once.

use std::time::Duration;

use crate::common::browser::Browser;
use crate::common::{PASSWORD, WAIT};
use frontdesk::store::Engine;

use super::{connect_assistant, mcp_status, screenshots, server};

on_both_engines_configured!(disconnecting_an_assistant_cuts_it_off_at_once);

async fn disconnecting_an_assistant_cuts_it_off_at_once(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let (client_id, access, refresh) = connect_assistant(&s, &org, "Claude").await;
    let (_, other_access, _) = connect_assistant(&s, &org, "Another assistant").await;
    assert_eq!(mcp_status(&s, &access).await, 200);
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/assistants")).await;
    b.wait_for_text("Claude").await;
    let page = b.page_text().await;
    assert!(page.contains("Test Operator") && page.contains("127.0.0.1:9"), "who allowed it, and its host: {page}");
    // Its use is recorded (to the minute, after the call): the page says when.
    let deadline = tokio::time::Instant::now() + WAIT;
    while b.page_text().await.matches("not yet").count() > 1 {
        assert!(tokio::time::Instant::now() < deadline, "the last use never showed");
        tokio::time::sleep(Duration::from_millis(200)).await;
        b.client.refresh().await.expect("reload");
    }
    b.assert_page_ok("the connected assistants page").await;
    if screenshots(&s) {
        b.screenshot("integrations-assistants").await;
    }
    b.click(&format!("form[action$='/assistants/{client_id}/revoke'] button")).await;
    b.accept_dialog().await;
    b.wait_for_text("Disconnected the assistant").await;
    assert_eq!(mcp_status(&s, &access).await, 401, "the next call after the revoke");
    let refreshed = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh.as_str()),
            ("client_id", client_id.as_str()),
        ])
        .send()
        .await
        .expect("refresh");
    assert_eq!(refreshed.status().as_u16(), 400, "the refresh token buys nothing either");
    assert_eq!(mcp_status(&s, &other_access).await, 200, "the other assistant stays connected");
    let listed = b.text("table").await;
    assert!(!listed.contains("Claude") && listed.contains("Another assistant"), "{listed}");
    b.close().await;
}
