//! The Integrations pages: another organization's integrations are the 404 page, and every page reads well on desktop
//! and phone.

use crate::common::browser::{Browser, PHONE};
use crate::common::receiver::Receiver;
use crate::common::{PASSWORD, WAIT};
use frontdesk::store::Engine;
use serde_json::json;

use super::{connect_assistant, mcp_status, screenshots, server, Dashboard};

on_both_engines_configured!(
    other_organizations_integrations_show_the_404_page,
    the_integrations_pages_read_well_on_desktop_and_phone,
);

async fn other_organizations_integrations_show_the_404_page(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let rival = s.org("Rival").await;
    let rival_hotel = s.hotel(&rival, "Rival Inn").await;
    // Acme's records: a key, a subscription, a token and a connected assistant.
    s.key(&org, &[], None).await;
    let key_id = s.get("/api/apiKeys", &org.auth()).await.expect(200).body[0]["id"].as_str().expect("id").to_string();
    let receiver = Receiver::start().await;
    let subscription = s
        .post("/api/webhooksubscriptions", &org.auth(), json!({"hotelId": hotel, "url": receiver.url}))
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (client_id, access, _) = connect_assistant(&s, &org, "Acme's helper").await;
    let acme = Dashboard::new(&s, &org.token);
    let (_, tokens_page) = acme.get(&format!("/hotels/{hotel}/integrations/tokens")).await;
    let token_id =
        tokens_page.split("/tokens/").nth(1).and_then(|rest| rest.split('/').next()).expect("a token id").to_string();

    let d = Dashboard::new(&s, &rival.token);
    for h in [&rival_hotel, &hotel] {
        let base = format!("/hotels/{h}/integrations");
        for page in [format!("{base}/api-keys/{key_id}"), format!("{base}/webhooks/{subscription}")] {
            let (status, body) = d.get(&page).await;
            assert_eq!(status, 404, "{page}");
            assert!(body.contains("There is nothing here"), "{page}: {body}");
        }
        for (form, fields) in [
            (format!("{base}/api-keys/{key_id}"), vec![("name", "Stolen"), ("scope-rooms:write", "on")]),
            (format!("{base}/api-keys/{key_id}/revoke"), vec![("confirmed", "yes")]),
            (format!("{base}/webhooks/{subscription}"), vec![("url", "https://evil.example/"), ("active", "on")]),
            (format!("{base}/webhooks/{subscription}/enable"), vec![]),
            (format!("{base}/webhooks/{subscription}/delete"), vec![("confirmed", "yes")]),
            (format!("{base}/tokens/{token_id}/revoke"), vec![("confirmed", "yes")]),
            (format!("{base}/assistants/{client_id}/revoke"), vec![("confirmed", "yes")]),
        ] {
            let (status, _, body) = d.post(&form, &fields).await;
            assert_eq!(status, 404, "{form}");
            assert!(body.contains("There is nothing here"), "{form}: {body}");
        }
        // Nor do Rival's lists show any of Acme's.
        if *h == rival_hotel {
            for list in ["api-keys", "webhooks", "tokens", "assistants"] {
                let (status, body) = d.get(&format!("{base}/{list}")).await;
                assert_eq!(status, 200, "{list}");
                assert!(!body.contains(&key_id) && !body.contains(&subscription), "{list}");
                assert!(!body.contains(&token_id) && !body.contains(&client_id) && !body.contains("helper"), "{list}");
            }
        }
    }
    // Everything of Acme's still works, unchanged.
    let key = s.get("/api/apiKeys", &org.auth()).await.expect(200).body[0].clone();
    assert_eq!(key["name"], json!("test key"));
    let now = s.get(&format!("/api/webhooksubscriptions/{subscription}"), &org.auth()).await.expect(200).body;
    assert_eq!(now["url"], json!(format!("{}/", receiver.url)), "unchanged");
    s.get("/api/hotels", &org.auth()).await.expect(200);
    assert_eq!(mcp_status(&s, &access).await, 200);

    // The same in a browser: Rival's operator sees the 404 page.
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&rival.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{rival_hotel}/integrations/webhooks/{subscription}")).await;
    b.wait_for_text("There is nothing here").await;
    b.assert_page_ok("the 404 page").await;
    b.close().await;
}

async fn the_integrations_pages_read_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Seaside Inn").await;
    let auth = org.auth();
    for (name, scopes) in [
        ("Channel manager", json!(["reservations:read", "reservations:write", "rates:read", "rates:write"])),
        ("CRM", json!(["guests:read", "guests:write"])),
    ] {
        s.post("/api/apiKeys", &auth, json!({"name": name, "scopes": scopes, "hotelId": hotel})).await.expect(200);
    }
    s.post("/api/apiKeys", &auth, json!({"name": "Reporting", "rateLimitPerMinute": 60})).await.expect(200);
    let receiver = Receiver::start().await;
    let subscription = s
        .post(
            "/api/webhooksubscriptions",
            &auth,
            json!({"hotelId": hotel, "url": format!("{}/a-rather-long-path/for-frontdesk-events", receiver.url)}),
        )
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("id")
        .to_string();
    for n in 0..3 {
        s.post("/api/guests", &auth, json!({"hotelId": hotel, "firstName": "Guest", "lastName": format!("{n}")}))
            .await
            .expect(200);
    }
    receiver.wait_for(3, WAIT).await;
    connect_assistant(&s, &org, "Claude").await;
    for size in [crate::common::browser::DESKTOP, PHONE] {
        let phone = size == PHONE;
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.sign_in(&org.operator_email, PASSWORD).await;
        for (page, shot) in [
            ("api-keys", "integrations-api-keys"),
            (&*format!("webhooks/{subscription}"), "integrations-webhook"),
            ("tokens", "integrations-tokens"),
            ("assistants", "integrations-assistants"),
            ("channels", "integrations-channels"),
        ] {
            b.goto(&format!("/hotels/{hotel}/integrations/{page}")).await;
            b.wait_for_text("Sign out").await;
            b.assert_page_ok(&format!("integrations/{page} at {}px", size.0)).await;
            if phone {
                b.assert_in_reach("td.actions button, td.actions .button, .subnav a", page).await;
            }
            if screenshots(&s) && (phone || page == "api-keys") {
                b.screenshot(&format!("{shot}{}", if phone { "-phone" } else { "" })).await;
            }
        }
        b.close().await;
    }
}
