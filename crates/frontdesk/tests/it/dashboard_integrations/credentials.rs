//! API keys and operator access tokens made in the dashboard: they work, their secret is shown once, and they (and
//! other sessions) end when revoked.

use crate::common::browser::Browser;
use crate::common::{Auth, TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{html, screenshots, server, shown_secret, Dashboard};

on_both_engines_configured!(
    an_api_key_made_in_the_dashboard_works_and_its_secret_is_shown_once,
    an_operator_token_works_until_revoked_and_other_sessions_can_be_ended,
    making_a_key_or_a_token_asks_for_the_password_again,
);

/// The value of the read-only secret field in a page's HTML.
fn secret_in(html: &str) -> String {
    let start = html.find("id=\"secret\"").expect("secret field");
    let value = html[start..].find("value=\"").expect("value") + start + "value=\"".len();
    html[value..].split('"').next().expect("secret").to_string()
}

async fn an_api_key_made_in_the_dashboard_works_and_its_secret_is_shown_once(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/today")).await;
    b.click_text("nav.tabs a", "Integrations").await;
    b.wait_for_text("New API key").await;
    assert!(b.path().await.ends_with("/integrations/api-keys"), "{}", b.path().await);
    // New keys start read-only: the read scopes are ticked, the write scopes are not.
    for scope in ["reservations", "guests", "rates", "rooms"] {
        let read = b.find(&format!("input[name='scope-{scope}:read']")).await;
        assert!(read.is_selected().await.expect("state"), "{scope}:read is ticked");
        let write = b.find(&format!("input[name='scope-{scope}:write']")).await;
        assert!(!write.is_selected().await.expect("state"), "{scope}:write is not ticked");
    }
    b.assert_page_ok("the API keys page").await;
    b.fill("#name", "Channel manager").await;
    b.click("input[name='scope-guests:write']").await;
    b.select("#hotelId", &hotel).await;
    b.click_text("button", "Create API key").await;
    let secret = shown_secret(&b).await;
    assert!(secret.starts_with("fdk_"), "{secret}");
    assert!(b.page_text().await.contains("Channel manager"));
    b.assert_page_ok("the page showing a new key's secret").await;
    if screenshots(&s) {
        b.screenshot("integrations-api-key-created").await;
    }

    // The key works with Basic auth, with the scopes ticked and the pin chosen.
    let key = Auth::Key(secret.clone());
    s.get(&format!("/api/guests?hotelId={hotel}"), &key).await.expect(200);
    s.post("/api/guests", &key, json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await.expect(200);
    s.post("/api/roomTypes", &key, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await.expect(403);

    // Never shown again: not in the list, not on the key's page, not after a reload.
    b.click_text("a", "Back to API keys").await;
    b.wait_for_text("Keys").await;
    let list = html(&b).await;
    assert!(list.contains("Channel manager") && list.contains("guests:write") && list.contains("Seaside Inn"));
    assert!(!list.contains(&secret), "the list shows no secret");
    b.client.refresh().await.expect("reload");
    b.wait_for_text("Channel manager").await;
    assert!(!html(&b).await.contains(&secret), "a reload shows no secret");
    b.click_text("a", "Edit").await;
    b.wait_for_text("About this key").await;
    let page = html(&b).await;
    assert!(!page.contains(&secret) && !page.contains(&secret[4..20]), "the key's page shows no secret");

    // Scopes and the rate limit change; the API sees them at once.
    b.click("input[name='scope-rooms:write']").await;
    b.fill("#rateLimitPerMinute", "120").await;
    b.click_text("button", "Save").await;
    b.wait_for_text("Saved the API key").await;
    s.post("/api/roomTypes", &key, json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await.expect(200);
    let listed = s.get("/api/apiKeys", &org.auth()).await.expect(200).body;
    let listed = listed.as_array().expect("keys").iter().find(|k| k["name"] == json!("Channel manager")).cloned();
    assert_eq!(listed.expect("the key")["rateLimitPerMinute"], json!(120));

    // Revoked (after the browser asks), it stops at once.
    b.click_text("a", "Edit").await;
    b.wait_for_text("About this key").await;
    b.click_text("button", "Revoke this key").await;
    b.accept_dialog().await;
    b.wait_for_text("Revoked the API key").await;
    s.get(&format!("/api/guests?hotelId={hotel}"), &key).await.expect(401);

    // Without a browser: the answer to the POST is the page itself, never cached; refusals keep what was typed.
    let d = Dashboard::new(&s, &org.token);
    let path = format!("/hotels/{hotel}/integrations/api-keys");
    let (status, headers, body) = d.post(&path, &[("name", "Back office"), ("scope-rates:read", "on")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let other = secret_in(&body);
    s.get(&format!("/api/ratePlans?hotelId={hotel}"), &Auth::Key(other.clone())).await.expect(200);
    s.get("/api/guests", &Auth::Key(other.clone())).await.expect(403);
    let (status, _, body) = d.post(&path, &[("name", "Nothing"), ("rateLimitPerMinute", "lots")]).await;
    assert_eq!(status, 422);
    assert!(body.contains("Choose at least one scope") && body.contains("Enter a whole number"), "{body}");
    assert!(body.contains("value=\"Nothing\""), "what was typed stays");
    let (_, page) = d.get(&path).await;
    assert!(!page.contains(&other));
    b.close().await;
}

async fn an_operator_token_works_until_revoked_and_other_sessions_can_be_ended(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/tokens")).await;
    b.wait_for_text("New access token").await;
    b.fill("#name", "Nightly export").await;
    let last_day = crate::common::day(30);
    b.set_value("#expiresOn", &last_day).await;
    b.click_text("button", "Create access token").await;
    let token = shown_secret(&b).await;
    assert!(token.starts_with("fdt_"), "{token}");
    assert!(b.page_text().await.contains(&format!("Authorization: Token {token}")));
    let as_script = Auth::Token(token.clone());
    s.get("/api/hotels", &as_script).await.expect(200);
    s.get("/api/webhooksubscriptions", &as_script).await.expect(200);

    // Listed with its name, expiry and last use, without the token.
    b.click_text("a", "Back to access tokens").await;
    b.wait_for_text("Signed-in browsers").await;
    let page = b.page_text().await;
    assert!(page.contains("Nightly export"), "{page}");
    let expires = chrono::NaiveDate::parse_from_str(&last_day, "%Y-%m-%d").expect("date") + chrono::Days::new(1);
    assert!(page.contains(&expires.format("%-d %b %Y").to_string()), "the expiry is listed: {page}");
    assert!(!html(&b).await.contains(&token), "the list shows no token");
    assert!(page.contains("this browser"), "the current session is marked: {page}");

    // Another browser signs in (through the API's sign-in, saying who it is); a second script token exists too.
    let other = s
        .client
        .post(format!("{}/api/auth/login", s.base))
        .header("user-agent", "Other Browser/7.0 (a phone at the front desk)")
        .json(&json!({"email": org.operator_email, "password": PASSWORD}))
        .send()
        .await
        .expect("login");
    let other: Value = other.json().await.expect("session");
    let other = Auth::Token(other["token"].as_str().expect("token").to_string());
    s.get("/api/auth/me", &other).await.expect(200);
    b.client.refresh().await.expect("reload");
    b.wait_for_text("Other Browser/7.0").await;
    b.assert_page_ok("the access tokens page").await;
    if screenshots(&s) {
        b.screenshot("integrations-tokens").await;
    }

    // "Sign out everywhere else" ends the other session, not this one, and no named token.
    b.click_text("button", "Sign out everywhere else").await;
    b.accept_dialog().await;
    b.wait_for_text("Signed out 1 other session").await;
    s.get("/api/auth/me", &other).await.expect(401);
    s.get("/api/hotels", &as_script).await.expect(200);
    s.get("/api/hotels", &org.auth()).await.expect(200);
    assert!(!b.page_text().await.contains("Other Browser/7.0"));
    b.goto(&format!("/hotels/{hotel}/today")).await;
    b.wait_for_text("Sign out").await;

    // Revoked, the token's next call answers 401.
    b.goto(&format!("/hotels/{hotel}/integrations/tokens")).await;
    b.wait_for_text("Nightly export").await;
    b.click_text("button", "Revoke").await;
    b.accept_dialog().await;
    b.wait_for_text("Revoked the access token").await;
    s.get("/api/hotels", &as_script).await.expect(401);
    assert!(!b.text("table").await.contains("Nightly export"), "gone from the list");

    // Without JavaScript the revoke asks on a page of its own first, and changes nothing until confirmed.
    let d = Dashboard::new(&s, &org.token);
    let tokens = format!("/hotels/{hotel}/integrations/tokens");
    let (status, headers, body) = d.post(&tokens, &[("name", "Spare")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let spare = Auth::Token(secret_in(&body));
    let (_, page) = d.get(&tokens).await;
    // Newest first: the spare token's row comes first.
    let id = page.split("/tokens/").nth(1).and_then(|rest| rest.split('/').next()).expect("a token id").to_string();
    let (status, _, body) = d.post(&format!("{tokens}/{id}/revoke"), &[]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Yes, revoke the access token “Spare”"), "{body}");
    s.get("/api/hotels", &spare).await.expect(200);
    let (status, _, _) = d.post(&format!("{tokens}/{id}/revoke"), &[("confirmed", "yes")]).await;
    assert_eq!(status, 303);
    s.get("/api/hotels", &spare).await.expect(401);
    s.get("/api/hotels", &org.auth()).await.expect(200);
    // An expiry in the past is refused beside its field.
    let (status, _, body) =
        d.post(&format!("/hotels/{hotel}/integrations/tokens"), &[("name", "Old"), ("expiresOn", "2020-01-01")]).await;
    assert_eq!(status, 422);
    assert!(body.contains("must be today or later"), "{body}");
    b.close().await;
}

/// With `--step-up-minutes 0` every key and token asks for the password: a wrong one makes nothing, the right one
/// makes what the form asked for.
async fn making_a_key_or_a_token_asks_for_the_password_again(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.sessions.step_up_minutes = 0).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{hotel}/integrations/api-keys")).await;
    b.fill("#name", "Channel manager").await;
    b.click("input[name='scope-guests:write']").await;
    b.click_text("button", "Create API key").await;
    b.wait_for_text("Confirm your password").await;
    let text = b.page_text().await;
    assert!(text.contains("Creating an API key needs your password") && text.contains("Nothing has been changed yet"));
    b.assert_page_ok("the step-up page").await;
    if screenshots(&s) {
        b.screenshot("integrations-step-up").await;
    }
    let keys = s.count("api_keys").await;
    b.fill("#stepUpPassword", "not the password").await;
    b.click_text("button", "Confirm and continue").await;
    b.wait_for_text("The password is not right").await;
    assert_eq!(s.count("api_keys").await, keys, "a wrong password makes no key");
    b.assert_page_ok("the step-up page after a wrong password").await;
    b.fill("#stepUpPassword", PASSWORD).await;
    b.click_text("button", "Confirm and continue").await;
    let secret = shown_secret(&b).await;
    assert_eq!(s.count("api_keys").await, keys + 1);
    assert!(b.page_text().await.contains("Channel manager"), "the key has the name typed before the password");
    // The scope ticked before the password came through too.
    let key = Auth::Key(secret);
    s.post("/api/guests", &key, json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await.expect(200);

    // An access token asks again (0 minutes: every time).
    b.goto(&format!("/hotels/{hotel}/integrations/tokens")).await;
    b.fill("#name", "Nightly export").await;
    b.click_text("button", "Create access token").await;
    b.wait_for_text("Confirm your password").await;
    assert!(b.page_text().await.contains("Creating an access token needs your password"));
    b.fill("#stepUpPassword", PASSWORD).await;
    b.click_text("button", "Confirm and continue").await;
    let token = shown_secret(&b).await;
    s.get("/api/hotels", &Auth::Token(token)).await.expect(200);
    b.close().await;
    s.stop().await;
}
