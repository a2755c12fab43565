//! Subscriptions: managed by operators with the secret shown once, bad input writes nothing, each gets its hotels and
//! chosen events only, and private addresses are refused unless allowed.

use std::time::Duration;

use crate::common::receiver::Receiver;
use crate::common::{delivering, Auth, TestDatabase, TestServer, WAIT};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::subscribe;

on_both_engines_configured!(
    subscriptions_are_managed_by_operators_and_show_their_secret_once,
    bad_subscription_input_writes_nothing,
    subscriptions_get_their_hotels_and_chosen_events_only,
    private_addresses_are_refused_unless_allowed,
);

async fn subscriptions_are_managed_by_operators_and_show_their_secret_once(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let key = Auth::Key(s.key(&org, &Scope::ALL, None).await);
    let body = json!({"hotelId": hotel, "url": "http://127.0.0.1:9/hook"});
    s.get("/api/webhooksubscriptions", &Auth::None).await.expect(401);
    let refused = s.get("/api/webhooksubscriptions", &key).await.expect(403);
    assert!(refused.body["detail"].as_str().unwrap().contains("operator access token"), "{}", refused.body);
    s.post("/api/webhooksubscriptions", &key, body.clone()).await.expect(403);
    assert_eq!(s.count("webhook_subscriptions").await, 0);

    let created = s.post("/api/webhooksubscriptions", &org.auth(), body).await.expect(200);
    let id = created.body["id"].as_str().unwrap().to_string();
    let secret = created.body["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{secret}");
    assert_eq!(created.body["events"], json!([]));
    assert_eq!(created.body["active"], json!(true));
    assert_eq!(created.body["hotelId"], json!(hotel));
    // The secret is not stored as given.
    let stored: i64 = {
        let mut conn = s.db.read().await.unwrap();
        frontdesk::store::query("SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE secret_sealed LIKE $1")
            .bind(format!("%{secret}%"))
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .try_get("n")
            .unwrap()
    };
    assert_eq!(stored, 0, "the secret is stored sealed");

    let path = format!("/api/webhooksubscriptions/{id}");
    let listed = s.get("/api/webhooksubscriptions", &org.auth()).await.expect(200);
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert!(listed.body[0].get("secret").is_none() && !listed.body.to_string().contains(secret));
    let one = s.get(&path, &org.auth()).await.expect(200);
    assert!(one.body.get("secret").is_none());
    let updated = s
        .put(
            &path,
            &org.auth(),
            json!({"url": "http://127.0.0.1:9/other", "events": ["guest.created", "guest.created"], "active": false}),
        )
        .await
        .expect(200);
    assert_eq!(updated.body["url"], json!("http://127.0.0.1:9/other"));
    assert_eq!(updated.body["events"], json!(["guest.created"]));
    assert_eq!(updated.body["active"], json!(false));
    assert_eq!(updated.body["hotelId"], json!(hotel));
    assert!(updated.body.get("secret").is_none());
    s.put(&path, &key, json!({"active": true})).await.expect(403);
    s.get(&format!("{path}/deliveries"), &org.auth()).await.expect(200);
    s.get(&format!("{path}/deliveries"), &key).await.expect(403);

    // Another organization sees none of it.
    let other = s.org("Other").await;
    assert_eq!(s.get("/api/webhooksubscriptions", &other.auth()).await.expect(200).body, json!([]));
    s.get(&path, &other.auth()).await.expect(404);
    s.put(&path, &other.auth(), json!({"active": true})).await.expect(404);
    s.delete(&path, &other.auth()).await.expect(404);
    s.get(&format!("{path}/deliveries"), &other.auth()).await.expect(404);
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body["active"], json!(false));

    let deleted = s.delete(&path, &org.auth()).await.expect(200);
    assert_eq!(deleted.body["id"], json!(id));
    s.get(&path, &org.auth()).await.expect(404);
    s.delete(&path, &org.auth()).await.expect(404);
}

async fn bad_subscription_input_writes_nothing(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let other = s.org("Other").await;
    let foreign_hotel = s.hotel(&other, "Theirs").await;
    let url = "http://127.0.0.1:9/hook";
    for (body, status) in [
        (json!({"hotelId": hotel, "url": url, "events": ["reservation.created", "room.created"]}), 400),
        (json!({"hotelId": hotel, "url": url, "events": "guest.created"}), 400),
        (json!({"hotelId": hotel}), 400),
        (json!({"url": url}), 400),
        (json!({"hotelId": hotel, "url": "ftp://127.0.0.1/x"}), 400),
        (json!({"hotelId": hotel, "url": "not a url"}), 400),
        (json!({"hotelId": hotel, "url": format!("http://127.0.0.1/{}", "x".repeat(2000))}), 400),
        (json!({"hotelId": hotel, "url": url, "secret": "mine"}), 400),
        (json!({"hotelId": hotel, "url": url, "active": false}), 400),
        (json!({"hotelId": foreign_hotel, "url": url}), 404),
        (json!({"hotelId": "no-such-hotel", "url": url}), 404),
    ] {
        s.post("/api/webhooksubscriptions", &org.auth(), body.clone()).await.expect(status);
    }
    assert_eq!(s.count("webhook_subscriptions").await, 0);

    let (id, _) = subscribe(&s, &org, &hotel, url, json!(["guest.created"])).await;
    let path = format!("/api/webhooksubscriptions/{id}");
    let before = s.get(&path, &org.auth()).await.expect(200).body;
    for body in [
        json!({"hotelId": foreign_hotel}),
        json!({"hotelId": hotel}),
        json!({"secret": "whsec_mine"}),
        json!({"events": ["guest.renamed"]}),
        json!({"url": "gopher://127.0.0.1/"}),
        json!({"url": "https://", "events": []}),
        json!({"active": "yes"}),
        json!([]),
    ] {
        s.put(&path, &org.auth(), body).await.expect(400);
    }
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body, before, "refused updates change nothing");
    for query in ["limit=0", "limit=101", "limit=x", "since=1"] {
        s.get(&format!("{path}/deliveries?{query}"), &org.auth()).await.expect(400);
    }
}

async fn subscriptions_get_their_hotels_and_chosen_events_only(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let sea = s.hotel(&org, "Sea").await;
    let mountain = s.hotel(&org, "Mountain").await;
    let receiver = Receiver::start().await;
    subscribe(&s, &org, &sea, &format!("{}/sea-guests", receiver.url), json!(["guest.created"])).await;
    subscribe(&s, &org, &mountain, &format!("{}/mountain-all", receiver.url), json!([])).await;
    let (off, _) = subscribe(&s, &org, &sea, &format!("{}/off", receiver.url), json!([])).await;
    s.put(&format!("/api/webhooksubscriptions/{off}"), &org.auth(), json!({"active": false})).await.expect(200);
    // Another organization's subscription on its own hotel hears nothing of this one.
    let other = s.org("Other").await;
    let theirs = s.hotel(&other, "Theirs").await;
    subscribe(&s, &other, &theirs, &format!("{}/other-org", receiver.url), json!([])).await;

    // A guest of no hotel reaches every subscription of the organization (that wants guest.created).
    s.post("/api/guests", &org.auth(), json!({"firstName": "No", "lastName": "Hotel"})).await.expect(200);
    // A guest of the mountain hotel reaches only the mountain subscription.
    s.post("/api/guests", &org.auth(), json!({"hotelId": mountain, "firstName": "Mo", "lastName": "Untain"}))
        .await
        .expect(200);
    // An update of a sea guest: the sea subscription wants only creations.
    let sea_guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": sea, "firstName": "Se", "lastName": "A"})).await;
    s.put(&format!("/api/guests/{sea_guest}"), &org.auth(), json!({"notes": "x"})).await.expect(200);

    let received = receiver.wait_for(4, WAIT).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut got: Vec<(String, String)> = receiver
        .received()
        .iter()
        .map(|d| {
            (
                d.path.clone(),
                format!("{} {}", d.header("x-service-event"), d.json()["data"]["lastName"].as_str().unwrap()),
            )
        })
        .collect();
    got.sort();
    assert_eq!(received.len(), 4);
    assert_eq!(
        got,
        [
            ("/mountain-all".to_string(), "guest.created Hotel".to_string()),
            ("/mountain-all".to_string(), "guest.created Untain".to_string()),
            ("/sea-guests".to_string(), "guest.created A".to_string()),
            ("/sea-guests".to_string(), "guest.created Hotel".to_string()),
        ]
    );
}

async fn private_addresses_are_refused_unless_allowed(engine: Engine) {
    use crate::common::process::spawn_with;
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let url = database.url.clone();
    // This server allows private addresses (and does not deliver); the process started below does not allow them.
    let s = TestServer::serve_database_with(database, |c| c.webhook_dispatcher = false).await.unwrap();
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let strict = spawn_with(&url, &[]).await;
    let client = reqwest::Client::new();
    let post = |body: Value| {
        client
            .post(format!("{}/api/webhooksubscriptions", strict.base))
            .header("authorization", format!("Token {}", org.token))
            .json(&body)
            .send()
    };
    for target in [
        "http://127.0.0.1:9/x",
        "http://localhost:9/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/x",
        "http://192.168.0.10/x",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://0.0.0.0/x",
    ] {
        let answer = post(json!({"hotelId": hotel, "url": target})).await.unwrap();
        assert_eq!(answer.status().as_u16(), 400, "{target}");
        let problem: Value = answer.json().await.unwrap();
        assert!(problem.to_string().contains("private"), "{problem}");
        assert!(problem.to_string().contains("--webhook-allow-private-addresses"), "names the switch: {problem}");
    }
    assert_eq!(s.count("webhook_subscriptions").await, 0);
    // A public address is accepted (a literal one: these machines may have no DNS).
    let public = post(json!({"hotelId": hotel, "url": "http://93.184.216.34/hook"})).await.unwrap();
    assert_eq!(public.status().as_u16(), 200);
    let public: Value = public.json().await.unwrap();
    let moved = client
        .put(format!("{}/api/webhooksubscriptions/{}", strict.base, public["id"].as_str().unwrap()))
        .header("authorization", format!("Token {}", org.token))
        .json(&json!({"url": "http://127.0.0.1/x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status().as_u16(), 400);
    s.delete(&format!("/api/webhooksubscriptions/{}", public["id"].as_str().unwrap()), &org.auth()).await.expect(200);

    // Subscriptions saved while private addresses were allowed are refused again at delivery.
    let receiver = Receiver::start().await;
    let port = receiver.url.rsplit(':').next().unwrap().to_string();
    let (literal, _) = subscribe(&s, &org, &hotel, &receiver.url, json!([])).await;
    let (named, _) = subscribe(&s, &org, &hotel, &format!("http://localhost:{port}/named"), json!([])).await;
    client
        .post(format!("{}/api/guests", strict.base))
        .header("authorization", format!("Token {}", org.token))
        .json(&json!({"hotelId": hotel, "firstName": "A", "lastName": "B"}))
        .send()
        .await
        .unwrap();
    for id in [literal, named] {
        let path = format!("/api/webhooksubscriptions/{id}/deliveries");
        let mut log = json!([]);
        for _ in 0..100 {
            log = s.get(&path, &org.auth()).await.expect(200).body;
            if !log.as_array().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(log[0]["success"], json!(false), "{log}");
        assert!(log[0]["error"].as_str().unwrap().contains("may not reach"), "{log}");
    }
    assert!(receiver.received().is_empty(), "nothing reached the private address");
}
