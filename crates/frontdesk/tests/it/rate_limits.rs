//! Rate limits: per key (with per-key overrides), per operator, per client address on the public endpoints, and
//! serving on when Redis goes away (one limit across processes sharing Redis: `tests/it/processes.rs`). On both
//! engines.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{Auth, TestServer};
use frontdesk::store::Engine;
use serde_json::json;

on_both_engines_configured!(
    a_key_is_limited_alone_and_headers_count_down,
    keys_can_carry_their_own_limit,
    operators_and_public_addresses_have_their_own_limits,
    requests_are_served_when_redis_goes_away,
    public_limits_follow_a_trusted_proxy_header_only_when_configured,
);

async fn a_key_is_limited_alone_and_headers_count_down(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.rate_limit_per_minute = 5).await else { return };
    let org = s.org("Acme").await;
    let first = Auth::Key(s.key(&org, &[], None).await);
    let second = Auth::Key(s.key(&org, &[], None).await);
    for remaining in (0..5).rev() {
        let answer = s.get("/api/hotels", &first).await.expect(200);
        assert_eq!(answer.header("ratelimit-limit"), Some("5"));
        assert_eq!(answer.header("ratelimit-remaining"), Some(remaining.to_string().as_str()));
        assert!(answer.header("ratelimit-reset").is_some_and(|r| r.parse::<u64>().unwrap() <= 60));
    }
    let refused = s.get("/api/hotels", &first).await.expect(429);
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=12).contains(&retry), "one request frees up every 12 s: {retry}");
    assert_eq!(refused.header("ratelimit-remaining"), Some("0"));
    // The other key is untouched.
    let other = s.get("/api/hotels", &second).await.expect(200);
    assert_eq!(other.header("ratelimit-remaining"), Some("4"));
    // An operator's answers carry the operator limit, not a key's.
    let op = s.get("/api/hotels", &org.auth()).await.expect(200);
    assert_eq!(op.header("ratelimit-limit"), Some("6000"));
}

async fn keys_can_carry_their_own_limit(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let created = s
        .post("/api/apiKeys", &org.auth(), json!({"name": "slow", "scopes": ["rooms:read"], "rateLimitPerMinute": 2}))
        .await
        .expect(200);
    assert_eq!(created.body["rateLimitPerMinute"], json!(2));
    let key = Auth::Key(created.body["secret"].as_str().unwrap().to_string());
    s.get("/api/hotels", &key).await.expect(200);
    assert_eq!(s.get("/api/hotels", &key).await.expect(200).header("ratelimit-limit"), Some("2"));
    s.get("/api/hotels", &key).await.expect(429);
    // Back to the default.
    let id = created.body["id"].as_str().unwrap();
    let updated =
        s.put(&format!("/api/apiKeys/{id}"), &org.auth(), json!({"rateLimitPerMinute": null})).await.expect(200);
    assert_eq!(updated.body["rateLimitPerMinute"], serde_json::Value::Null);
    let answer = s.get("/api/hotels", &key).await.expect(200);
    assert_eq!(answer.header("ratelimit-limit"), Some("600"));
    s.post("/api/apiKeys", &org.auth(), json!({"name": "x", "rateLimitPerMinute": 0})).await.expect(400);
}

async fn operators_and_public_addresses_have_their_own_limits(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| {
        c.operator_rate_limit_per_minute = 3;
        c.public_rate_limit_per_minute = 2;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await; // one operator request
    s.get("/api/hotels", &org.auth()).await.expect(200);
    s.get("/api/hotels", &org.auth()).await.expect(200);
    s.get("/api/hotels", &org.auth()).await.expect(429);
    let today = chrono::Utc::now().date_naive();
    let search = format!(
        "/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}",
        today + chrono::Days::new(3),
        today + chrono::Days::new(4)
    );
    s.get(&search, &Auth::None).await.expect(200);
    let last = s.get(&search, &Auth::None).await.expect(200);
    assert_eq!(last.header("ratelimit-remaining"), Some("0"));
    let refused = s.get(&search, &Auth::None).await.expect(429);
    assert!(refused.header("retry-after").is_some());
}

async fn requests_are_served_when_redis_goes_away(engine: Engine) {
    if Command::new("redis-server").arg("--version").output().is_err() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "redis-server is required under CI=true");
        eprintln!("skipping: no redis-server to start and stop");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut redis = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..50 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let url = format!("redis://127.0.0.1:{port}");
    let Some(s) = TestServer::configured(engine, |c| {
        c.redis_url = Some(url.clone());
        c.rate_limit_per_minute = 1000;
    })
    .await
    else {
        let _ = redis.kill();
        let _ = redis.wait();
        return;
    };
    let org = s.org("Acme").await;
    let key = Auth::Key(s.key(&org, &[], None).await);
    s.get("/api/hotels", &key).await.expect(200);
    let _ = redis.kill();
    let _ = redis.wait();
    let s = Arc::new(s);
    for _ in 0..5 {
        let answer = s.get("/api/hotels", &key).await.expect(200);
        assert_eq!(answer.header("ratelimit-limit"), Some("1000"), "still limited, in memory");
    }

    // Redis comes back (empty, as a restarted cache does): the limits are kept there again, without a restart of
    // the service.
    let mut redis = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut shared_again = false;
    for _ in 0..100 {
        s.get("/api/hotels", &key).await.expect(200);
        if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
            let keys: i64 = redis::cmd("DBSIZE").query_async(&mut conn).await.unwrap_or(0);
            if keys > 0 {
                shared_again = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = redis.kill();
    let _ = redis.wait();
    assert!(shared_again, "the limiter uses Redis again once it is back");
}

async fn public_limits_follow_a_trusted_proxy_header_only_when_configured(engine: Engine) {
    for trusted in [true, false] {
        let Some(s) = TestServer::configured(engine, |c| {
            c.public_rate_limit_per_minute = 1;
            c.trusted_proxy_header = trusted.then(|| "x-forwarded-for".to_string());
        })
        .await
        else {
            return;
        };
        let org = s.org("Acme").await;
        let hotel = s.hotel(&org, "Sea").await;
        let today = chrono::Utc::now().date_naive();
        let url = format!(
            "{}/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}",
            s.base,
            today + chrono::Days::new(3),
            today + chrono::Days::new(4)
        );
        let from = |address: &'static str| {
            let (client, url) = (s.client.clone(), url.clone());
            async move {
                let res = client.get(&url).header("x-forwarded-for", address).send().await.unwrap();
                res.status().as_u16()
            }
        };
        assert_eq!(from("203.0.113.1").await, 200);
        // Another address behind the proxy has its own bucket only when the header is trusted.
        assert_eq!(from("203.0.113.2").await, if trusted { 200 } else { 429 });
        assert_eq!(from("203.0.113.1").await, 429);
    }
}
