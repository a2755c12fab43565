//! The foundation: authentication, tenancy, API keys, hotels, errors, operations. Every test runs on SQLite and
//! on PostgreSQL.

use crate::common::{Auth, TestServer};
use chrono::TimeDelta;
use frontdesk::domain::{identity, Scope};
use serde_json::{json, Value};

on_both_engines!(
    missing_and_malformed_credentials_answer_401,
    tokens_expire_and_log_out,
    deleted_keys_stop_working,
    key_secrets_are_shown_once_and_stored_hashed,
    api_keys_cannot_manage_operator_resources,
    other_organizations_records_are_404,
    pinned_keys_see_only_their_hotel,
    new_keys_start_read_only,
    login_checks_passwords,
    hotels_validate_and_write_nothing_on_error,
    hotel_updates_are_partial,
    malformed_requests_answer_problem_json,
    demo_seeding_is_idempotent,
    readiness_checks_the_database,
);

async fn missing_and_malformed_credentials_answer_401(s: TestServer) {
    let org = s.org("Acme").await;
    let secret = s.key(&org, &[], None).await;
    use base64::Engine as _;
    let b64 = |v: &str| base64::engine::general_purpose::STANDARD.encode(v);
    let bad = [
        Auth::None,
        Auth::Raw("Basic".into()),
        Auth::Raw("Basic !!!not-base64!!!".into()),
        Auth::Raw(format!("Basic {}", b64(""))),
        Auth::Raw(format!("Basic {}", b64(&format!("user:{secret}")))),
        Auth::Raw(format!("Basic {}", b64(&format!("{secret}:")))),
        Auth::Raw(format!("Basic {}", b64(&format!(":{secret}")))),
        Auth::Raw(format!("Basic {}", b64("fdk_not-a-real-key"))),
        Auth::Raw(format!("Bearer {}", org.token)),
        Auth::Raw(format!("Basic {}", b64(&org.token))),
        Auth::Token(secret.clone()),
        Auth::Token("fdt_wrong".into()),
        Auth::Key(format!("{secret}x")),
    ];
    for auth in bad {
        let answer = s.get("/api/hotels", &auth).await.expect(401);
        assert!(answer.header("www-authenticate").is_some(), "{auth:?}");
    }
    s.get("/api/hotels", &Auth::Key(secret)).await.expect(200);
    s.get("/api/hotels", &org.auth()).await.expect(200);
}

async fn tokens_expire_and_log_out(s: TestServer) {
    let org = s.org("Acme").await;
    let operator = identity::find_operator_by_email(&s.db, &org.operator_email).await.unwrap();
    let expired = identity::issue_token(&s.db, operator, TimeDelta::seconds(-1)).await.unwrap();
    let answer = s.get("/api/auth/me", &Auth::Token(expired.token)).await.expect(401);
    assert!(answer.body["detail"].as_str().unwrap().contains("expired"));

    let me = s.get("/api/auth/me", &org.auth()).await.expect(200);
    assert_eq!(me.body["operator"]["email"], json!(org.operator_email));
    assert_eq!(me.body["organization"]["id"], json!(org.id));
    s.post("/api/auth/logout", &org.auth(), json!({})).await.expect(204);
    s.get("/api/auth/me", &org.auth()).await.expect(401);
}

async fn deleted_keys_stop_working(s: TestServer) {
    let org = s.org("Acme").await;
    let secret = s.key(&org, &[], None).await;
    s.get("/api/hotels", &Auth::Key(secret.clone())).await.expect(200);
    let keys = s.get("/api/apiKeys", &org.auth()).await.expect(200);
    let id = keys.body[0]["id"].as_str().unwrap().to_string();
    let deleted = s.delete(&format!("/api/apiKeys/{id}"), &org.auth()).await.expect(200);
    assert_eq!(deleted.body["id"], json!(id));
    s.get("/api/hotels", &Auth::Key(secret)).await.expect(401);
    s.delete(&format!("/api/apiKeys/{id}"), &org.auth()).await.expect(404);
}

async fn key_secrets_are_shown_once_and_stored_hashed(s: TestServer) {
    let org = s.org("Acme").await;
    let created = s
        .post("/api/apiKeys", &org.auth(), json!({"name": "channel manager", "scopes": ["rates:write"]}))
        .await
        .expect(200);
    let secret = created.body["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("fdk_"), "recognisable prefix");
    assert!(secret.len() >= 40);
    let id = created.body["id"].as_str().unwrap();
    assert_eq!(created.body["scopes"], json!(["rates:write"]));

    let list = s.get("/api/apiKeys", &org.auth()).await.expect(200);
    let updated = s.put(&format!("/api/apiKeys/{id}"), &org.auth(), json!({"name": "renamed"})).await.expect(200);
    for body in [&list.body, &updated.body] {
        let text = body.to_string();
        assert!(!text.contains(&secret), "secret leaked: {text}");
        assert!(!text.contains("\"secret\""), "secret field present: {text}");
    }
    assert_eq!(updated.body["name"], json!("renamed"));

    // At rest only a digest exists: the secret text appears in no column.
    let mut conn = s.db.read().await.unwrap();
    let rows = frontdesk::store::query("SELECT id, name, scopes, secret_hash FROM api_keys")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    for row in rows {
        for col in ["id", "name", "scopes", "secret_hash"] {
            let value: String = row.try_get(col).unwrap();
            assert!(!value.contains(&secret[4..]), "column {col} holds the secret");
        }
    }
}

async fn api_keys_cannot_manage_operator_resources(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let all = s.key(&org, &Scope::ALL, None).await;
    let key = Auth::Key(all);
    for answer in [
        s.get("/api/apiKeys", &key).await,
        s.post("/api/apiKeys", &key, json!({"name": "x"})).await,
        s.post("/api/hotels", &key, json!({"name": "x", "timezone": "UTC", "currency": "EUR"})).await,
        s.put(&format!("/api/hotels/{hotel}"), &key, json!({"name": "y"})).await,
        s.get("/api/auth/me", &key).await,
    ] {
        let answer = answer.expect(403);
        assert!(answer.body["detail"].as_str().unwrap().contains("operator"), "{}", answer.body);
    }
    assert_eq!(s.count("hotels").await, 1, "nothing was written");
}

async fn other_organizations_records_are_404(s: TestServer) {
    let mine = s.org("Mine").await;
    let theirs = s.org("Theirs").await;
    let their_hotel = s.hotel(&theirs, "Theirs").await;
    s.key(&theirs, &[], None).await;
    let their_key_id = s.get("/api/apiKeys", &theirs.auth()).await.body[0]["id"].as_str().unwrap().to_string();
    let my_key = Auth::Key(s.key(&mine, &Scope::ALL, None).await);

    s.get(&format!("/api/hotels/{their_hotel}"), &mine.auth()).await.expect(404);
    s.get(&format!("/api/hotels/{their_hotel}"), &my_key).await.expect(404);
    s.put(&format!("/api/hotels/{their_hotel}"), &mine.auth(), json!({"name": "mine now"})).await.expect(404);
    s.put(&format!("/api/apiKeys/{their_key_id}"), &mine.auth(), json!({"name": "x"})).await.expect(404);
    s.delete(&format!("/api/apiKeys/{their_key_id}"), &mine.auth()).await.expect(404);
    let listed = s.get("/api/hotels", &mine.auth()).await.expect(200);
    assert_eq!(listed.body, json!([]));
    // A key cannot be pinned to another organization's hotel.
    s.post("/api/apiKeys", &mine.auth(), json!({"name": "x", "hotelId": their_hotel})).await.expect(404);
    let theirs_still = s.get(&format!("/api/hotels/{their_hotel}"), &theirs.auth()).await.expect(200);
    assert_eq!(theirs_still.body["name"], json!("Theirs"));
}

async fn pinned_keys_see_only_their_hotel(s: TestServer) {
    let org = s.org("Acme").await;
    let a = s.hotel(&org, "A").await;
    let b = s.hotel(&org, "B").await;
    let pinned = Auth::Key(s.key(&org, &Scope::ALL, Some(&a)).await);
    let listed = s.get("/api/hotels", &pinned).await.expect(200);
    let ids: Vec<&str> = listed.body.as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![a.as_str()]);
    s.get(&format!("/api/hotels/{a}"), &pinned).await.expect(200);
    s.get(&format!("/api/hotels/{b}"), &pinned).await.expect(404);
    let keys = s.get("/api/apiKeys", &org.auth()).await.expect(200);
    assert_eq!(keys.body[0]["hotelId"], json!(a));
    // The pin is immutable.
    let id = keys.body[0]["id"].as_str().unwrap();
    s.put(&format!("/api/apiKeys/{id}"), &org.auth(), json!({"hotelId": b})).await.expect(400);
}

async fn new_keys_start_read_only(s: TestServer) {
    let org = s.org("Acme").await;
    for body in [json!({"name": "k"}), json!({"name": "k", "scopes": []})] {
        let created = s.post("/api/apiKeys", &org.auth(), body).await.expect(200);
        assert_eq!(created.body["scopes"], json!(["reservations:read", "guests:read", "rates:read", "rooms:read"]));
    }
    s.post("/api/apiKeys", &org.auth(), json!({"name": "k", "scopes": ["rooms:admin"]})).await.expect(400);
}

async fn login_checks_passwords(s: TestServer) {
    let org = s.org("Acme").await;
    let wrong = s
        .post("/api/auth/login", &Auth::None, json!({"email": org.operator_email, "password": "nope"}))
        .await
        .expect(401);
    let unknown = s
        .post("/api/auth/login", &Auth::None, json!({"email": "nobody@example.com", "password": "nope"}))
        .await
        .expect(401);
    assert_eq!(wrong.body["detail"], unknown.body["detail"], "no hint whether the e-mail exists");
    let session = s
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"email": org.operator_email.to_uppercase(), "password": "correct horse battery"}),
        )
        .await
        .expect(200);
    let token = session.body["token"].as_str().unwrap();
    assert!(token.starts_with("fdt_"));
    assert!(session.body["expiresAt"].is_string());
    assert_eq!(session.body["operator"]["organizationId"], json!(org.id));
    s.get("/api/auth/me", &Auth::Token(token.into())).await.expect(200);
}

async fn hotels_validate_and_write_nothing_on_error(s: TestServer) {
    let org = s.org("Acme").await;
    let answer = s
        .post(
            "/api/hotels",
            &org.auth(),
            json!({"name": " ", "timezone": "Mars/Olympus", "currency": "EURO", "checkInTime": "25:00", "country": "pt"}),
        )
        .await
        .expect(400);
    let fields: Vec<&str> =
        answer.body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, vec!["name", "timezone", "currency", "checkInTime", "country"]);
    assert_eq!(s.count("hotels").await, 0);

    let created = s
        .post("/api/hotels", &org.auth(), json!({"name": "Sea", "timezone": "Europe/Lisbon", "currency": "EUR"}))
        .await
        .expect(200);
    assert_eq!(created.body["checkInTime"], json!("15:00"));
    assert_eq!(created.body["checkOutTime"], json!("11:00"));
    assert_eq!(created.body["publicBooking"], json!(true));
    let id = created.body["id"].as_str().unwrap();
    s.put(&format!("/api/hotels/{id}"), &org.auth(), json!({"timezone": "Nowhere/Land"})).await.expect(400);
    let after = s.get(&format!("/api/hotels/{id}"), &org.auth()).await.expect(200);
    assert_eq!(after.body, created.body, "a refused update changes nothing");
}

async fn hotel_updates_are_partial(s: TestServer) {
    let org = s.org("Acme").await;
    let created = s
        .post(
            "/api/hotels",
            &org.auth(),
            json!({"name": "Sea", "timezone": "Europe/Lisbon", "currency": "EUR", "city": "Lisbon"}),
        )
        .await
        .expect(200);
    let id = created.body["id"].as_str().unwrap();
    let updated = s
        .put(
            &format!("/api/hotels/{id}"),
            &org.auth(),
            json!({"name": "Sea View", "city": null, "publicBooking": false}),
        )
        .await
        .expect(200);
    assert_eq!(updated.body["name"], json!("Sea View"));
    assert_eq!(updated.body["city"], Value::Null);
    assert_eq!(updated.body["publicBooking"], json!(false));
    assert_eq!(updated.body["timezone"], json!("Europe/Lisbon"));
    let read = s.get(&format!("/api/hotels/{id}"), &org.auth()).await.expect(200);
    assert_eq!(read.body, updated.body);
}

async fn malformed_requests_answer_problem_json(s: TestServer) {
    let org = s.org("Acme").await;
    s.get("/api/nothing-here", &org.auth()).await.expect(404);
    let answer = s.request(reqwest::Method::PATCH, "/api/hotels", &org.auth(), None).await.expect(405);
    assert!(answer.header("allow").unwrap().contains("GET"));
    // Unknown fields are typos, not silently ignored.
    let answer = s
        .post("/api/hotels", &org.auth(), json!({"name": "x", "timezone": "UTC", "currency": "EUR", "nmae": "y"}))
        .await
        .expect(400);
    assert!(answer.body["detail"].as_str().unwrap().contains("nmae"));
    // Wrong JSON types.
    s.post("/api/hotels", &org.auth(), json!({"name": 5, "timezone": "UTC", "currency": "EUR"})).await.expect(400);
    // A JSON array where an object belongs (serde alone would read it by position).
    let id = s.hotel(&org, "Sea").await;
    s.put(&format!("/api/hotels/{id}"), &org.auth(), json!([null, "Renamed"])).await.expect(400);
    // Not JSON at all, and no JSON content type.
    let raw = |body: &'static str, content_type: &'static str| {
        s.client
            .post(format!("{}/api/hotels", s.base))
            .header("authorization", format!("Token {}", org.token))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    TestServer::answer(raw("{not json", "application/json").await.unwrap()).await.expect(400);
    TestServer::answer(raw("name=x", "text/plain").await.unwrap()).await.expect(415);
    // Oversized bodies.
    // The service may answer 413 and close before the client has written the whole body, which the client then
    // sees as a failed send: try a few times for the answer itself.
    let huge = format!("{{\"name\":\"{}\"}}", "x".repeat(3 * 1024 * 1024));
    // A client of its own: the service closes that connection, which must not be reused by later requests.
    let client = reqwest::Client::new();
    let mut answered = None;
    for _ in 0..10 {
        let sent = client
            .post(format!("{}/api/hotels", s.base))
            .header("authorization", format!("Token {}", org.token))
            .header("content-type", "application/json")
            .body(huge.clone())
            .send()
            .await;
        if let Ok(res) = sent {
            answered = Some(TestServer::answer(res).await);
            break;
        }
    }
    answered.expect("an answer to the oversized body").expect(413);
    assert_eq!(s.count("hotels").await, 1);
    let unchanged = s.get(&format!("/api/hotels/{id}"), &org.auth()).await.expect(200);
    assert_eq!(unchanged.body["name"], json!("Sea"));
    // Every answer carries a request id.
    let answer = s.get("/healthz", &Auth::None).await.expect(200);
    assert!(answer.header("x-request-id").is_some_and(|v| !v.is_empty()));
}

async fn demo_seeding_is_idempotent(s: TestServer) {
    let first = frontdesk::demo::seed(&s.db).await.unwrap();
    assert!(first.api_key_secret.is_some());
    let counts = [
        s.count("organizations").await,
        s.count("operators").await,
        s.count("hotels").await,
        s.count("api_keys").await,
    ];
    let second = frontdesk::demo::seed(&s.db).await.unwrap();
    assert!(second.api_key_secret.is_none());
    assert_eq!(second.organization_id, first.organization_id);
    let again = [
        s.count("organizations").await,
        s.count("operators").await,
        s.count("hotels").await,
        s.count("api_keys").await,
    ];
    assert_eq!(counts, again, "a second --demo duplicates nothing");
    assert_eq!(counts, [1, 1, 1, 1]);
    assert_eq!(s.count("room_types").await, 3);
    assert_eq!(s.count("rooms").await, 17);
    assert_eq!(s.count("rate_plans").await, 3);
    assert_eq!(s.count("daily_rates").await, 3 * 90);
    // The seeded key has every scope and works.
    let secret = first.api_key_secret.unwrap();
    let hotels = s.get("/api/hotels", &Auth::Key(secret)).await.expect(200);
    assert_eq!(hotels.body.as_array().unwrap().len(), 1);
}

async fn readiness_checks_the_database(s: TestServer) {
    s.get("/readyz", &Auth::None).await.expect(200);
    s.db.close().await;
    s.get("/readyz", &Auth::None).await.expect(503);
}
