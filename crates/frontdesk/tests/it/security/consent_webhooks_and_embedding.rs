//! What reaches other parties: the assistant endpoint's consent page names where the answer goes, webhook URLs cannot reach
//! inside, and only https sites may embed the booking page.

use crate::common::{TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::json;

use super::{register, REDIRECT};

on_both_engines_configured!(
    consent_names_where_the_answer_goes,
    webhook_urls_cannot_reach_inside,
    only_https_sites_may_embed_the_booking_page,
);

// ---------------------------------------------------------------------------------------------------------------
// The assistant endpoint

/// The consent page showed only the name the client chose for itself. It shows where the answer goes now; clients
/// nobody signed in through are removed after a day.
async fn consent_names_where_the_answer_goes(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let redirect = "https://assistant.evil.example:8443/callback";
    let client_id = register(&s, "Claude", redirect).await;
    let mut authorize = url::Url::parse(&format!("{}/oauth/authorize", s.base)).unwrap();
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", redirect)
        .append_pair("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        .append_pair("code_challenge_method", "S256");
    let sign_in = s.client.get(authorize.as_str()).send().await.unwrap().text().await.unwrap();
    assert!(sign_in.contains("assistant.evil.example:8443"), "{sign_in}");
    let fields: Vec<(String, String)> = authorize
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .chain([("email".into(), org.operator_email.clone()), ("password".into(), PASSWORD.into())])
        .collect();
    let consent =
        s.client.post(format!("{}/oauth/authorize", s.base)).form(&fields).send().await.unwrap().text().await.unwrap();
    assert!(consent.contains("name=\"ticket\""), "{consent}");
    assert!(consent.contains("Your answer goes to <strong>assistant.evil.example:8443</strong>"), "{consent}");

    // Registered two days ago: the client used for that sign-in stays, one never used goes with the next
    // registration.
    let unused = register(&s, "Never used", REDIRECT).await;
    let two_days_ago = frontdesk::store::format_ts(chrono::Utc::now() - chrono::TimeDelta::days(2));
    let mut tx = s.db.begin_write().await.unwrap();
    frontdesk::store::query("UPDATE oauth_clients SET created_at = $1")
        .bind(&two_days_ago)
        .execute(tx.conn())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    register(&s, "Newcomer", REDIRECT).await;
    let ids: Vec<String> = {
        let mut conn = s.db.read().await.unwrap();
        frontdesk::store::query("SELECT id FROM oauth_clients")
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|r| r.get("id"))
            .collect()
    };
    assert!(ids.contains(&client_id), "the client in use stays");
    assert!(!ids.contains(&unused), "the unused client is gone");
    assert_eq!(ids.len(), 2);
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook URLs and embedding

/// 6to4 and Teredo addresses that embed private IPv4 were accepted, credentials in URLs were stored and listed,
/// and a name that resolves nowhere was told apart from one that resolves inward (a probe of internal names).
async fn webhook_urls_cannot_reach_inside(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.webhook_allow_private_addresses = false).await else {
        return;
    };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let auth = org.auth();
    let subscribe = |url: &str| {
        let body = json!({"hotelId": hotel, "url": url});
        s.post("/api/webhooksubscriptions", &auth, body)
    };
    let message = |answer: &crate::common::Answer| answer.body["errors"][0]["message"].as_str().unwrap().to_string();
    for url in [
        "http://[2002:7f00:1::1]/hook",
        "http://[2002:a9fe:a9fe::]/latest/meta-data",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
        // Local-use NAT64 (RFC 8215) reaches the local network's IPv4 through its translator.
        "http://[64:ff9b:1::a00:1]/hook",
        "http://[64:ff9b:1:a9fe:a9fe::]/latest/meta-data",
    ] {
        subscribe(url).await.expect(400);
    }
    let credentials = subscribe("https://user:secret@93.184.216.34/hook").await.expect(400);
    assert!(message(&credentials).contains("credentials"), "{}", credentials.body);
    let nowhere = subscribe("http://no-such-host.invalid/hook").await.expect(400);
    let inward = subscribe("http://localhost/hook").await.expect(400);
    assert_eq!(message(&nowhere), message(&inward), "one answer for both");
    assert_eq!(s.count("webhook_subscriptions").await, 0);
    // A subscription cannot take credentials later either.
    let created = subscribe("https://93.184.216.34/hook").await.expect(200);
    let id = created.body["id"].as_str().unwrap();
    s.put(&format!("/api/webhooksubscriptions/{id}"), &org.auth(), json!({"url": "https://u:p@93.184.216.34/hook"}))
        .await
        .expect(400);
}

/// The sites that may frame a hotel's booking page could be `http://` or bare addresses; https names only now
/// (and localhost, for development).
async fn only_https_sites_may_embed_the_booking_page(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let path = format!("/api/hotels/{hotel}");
    for bad in ["http://www.example.com", "https://93.184.216.34", "http://93.184.216.34:8080", "https://10.0.0.1"] {
        let answer = s.put(&path, &org.auth(), json!({"bookingEmbedOrigins": [bad]})).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!("bookingEmbedOrigins"), "{bad}");
    }
    let good = json!(["https://www.example.com", "http://localhost:3000", "http://127.0.0.1:8000"]);
    let saved = s.put(&path, &org.auth(), json!({"bookingEmbedOrigins": good})).await.expect(200);
    assert_eq!(saved.body["bookingEmbedOrigins"], good);
}
