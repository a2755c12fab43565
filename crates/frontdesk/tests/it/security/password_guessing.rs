//! Password guessing on every way to sign in: one limit for all three ways, counted in the database, that locks out the
//! guesser's address rather than the operator; password checks in turns; and an address a client cannot choose behind a
//! proxy.

use std::time::Duration;

use crate::common::{day, TestServer, PASSWORD};
use frontdesk::config::Config;
use frontdesk::domain::secrets;
use frontdesk::store::Engine;
use serde_json::json;

use super::{behind_a_proxy, no_redirects, register, REDIRECT};

on_both_engines_configured!(
    guessing_is_cut_off_on_every_way_to_sign_in,
    a_guesser_cannot_lock_the_operator_out,
    every_process_shares_the_count,
    password_hashing_runs_in_turns,
    a_client_cannot_choose_its_address_behind_a_proxy,
);

/// A way to sign in.
#[derive(Clone, Copy, Debug)]
enum Way<'a> {
    Api,
    Dashboard,
    /// The assistant endpoint's sign-in, for the registered client with this id.
    Assistant(&'a str),
}

/// How a sign-in attempt ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    SignedIn,
    WrongPassword,
    /// 429, with the seconds of `Retry-After`.
    Wait(u64),
}

/// One sign-in attempt through `way`, from `address`.
async fn attempt(s: &TestServer, way: Way<'_>, email: &str, password: &str, address: &str) -> Outcome {
    let client = no_redirects();
    let request = match way {
        Way::Api => {
            client.post(format!("{}/api/auth/login", s.base)).json(&json!({"email": email, "password": password}))
        }
        Way::Dashboard => client.post(format!("{}/sign-in", s.base)).header("cookie", "fd_signin=t0k3n").form(&[
            ("email", email),
            ("password", password),
            ("_csrf", "t0k3n"),
        ]),
        Way::Assistant(client_id) => client.post(format!("{}/oauth/authorize", s.base)).form(&[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
            ("code_challenge_method", "S256"),
            ("email", email),
            ("password", password),
        ]),
    };
    let answer = request.header("x-forwarded-for", address).send().await.unwrap();
    let status = answer.status().as_u16();
    let retry = answer.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
    let body = answer.text().await.unwrap();
    match (way, status) {
        (_, 429) => Outcome::Wait(retry.unwrap_or_else(|| panic!("429 without Retry-After through {way:?}"))),
        (Way::Api, 200) | (Way::Dashboard, 303) => Outcome::SignedIn,
        (Way::Api | Way::Dashboard, 401) => Outcome::WrongPassword,
        (Way::Assistant(_), 200) if body.contains("name=\"ticket\"") => Outcome::SignedIn,
        (Way::Assistant(_), 200) if body.contains("Invalid e-mail or password") => Outcome::WrongPassword,
        _ => panic!("unexpected answer through {way:?}: {status} {body:.300}"),
    }
}

/// `POST /api/auth/login` took hundreds of wrong passwords without a 429, and the assistant endpoint's sign-in limited only
/// per address. Now all three ways count into one limit: after five failures of one account from one address, the
/// next attempt (whichever way, even with the right password) waits, and is told how long.
async fn guessing_is_cut_off_on_every_way_to_sign_in(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let client = register(&s, "Assistant", REDIRECT).await;
    let email = org.operator_email.as_str();
    let ways = [Way::Api, Way::Dashboard, Way::Assistant(&client)];
    for n in 0..5 {
        assert_eq!(attempt(&s, ways[n % 3], email, "wrong password", "203.0.113.1").await, Outcome::WrongPassword);
    }
    for way in ways {
        match attempt(&s, way, email, PASSWORD, "203.0.113.1").await {
            Outcome::Wait(secs) => assert!((1..=2).contains(&secs), "the first wait is a second: {secs}"),
            other => panic!("{way:?}: {other:?}"),
        }
    }
    // Waited out, one more attempt is let through; failing, it doubles the wait.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(attempt(&s, Way::Api, email, "wrong again", "203.0.113.1").await, Outcome::WrongPassword);
    assert!(matches!(attempt(&s, Way::Api, email, PASSWORD, "203.0.113.1").await, Outcome::Wait(2)));
    // Every way signs in from elsewhere.
    for (n, way) in ways.into_iter().enumerate() {
        assert_eq!(attempt(&s, way, email, PASSWORD, &format!("198.51.100.{n}")).await, Outcome::SignedIn);
    }
    // What is stored says nothing of who tried: no e-mail, no address.
    let mut conn = s.db.read().await.unwrap();
    let buckets: Vec<String> = frontdesk::store::query("SELECT bucket FROM attempt_counts")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get("bucket").unwrap())
        .collect();
    assert!(!buckets.is_empty());
    assert!(buckets.iter().all(|b| b.len() == 64 && !b.contains('@') && !b.contains("203.0")), "{buckets:?}");
}

/// Ten wrong passwords from anywhere used to lock the real operator out of the dashboard. Now a guesser's failures
/// hold back the guesser's address; the operator signs in from theirs. An unknown account answers exactly like a
/// known one.
async fn a_guesser_cannot_lock_the_operator_out(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let email = org.operator_email.as_str();
    let mut known = Vec::new();
    for _ in 0..6 {
        known.push(attempt(&s, Way::Dashboard, email, "guess", "203.0.113.66").await);
    }
    assert!(matches!(known[5], Outcome::Wait(_)), "{known:?}");
    // The guesser cannot get in even with the right password; the operator, elsewhere, can.
    assert!(matches!(attempt(&s, Way::Dashboard, email, PASSWORD, "203.0.113.66").await, Outcome::Wait(_)));
    assert_eq!(attempt(&s, Way::Dashboard, email, PASSWORD, "192.0.2.10").await, Outcome::SignedIn);
    // An account nobody has answers the same, attempt for attempt.
    let mut unknown = Vec::new();
    for _ in 0..6 {
        unknown.push(attempt(&s, Way::Dashboard, "nobody-here@example.com", "guess", "203.0.113.67").await);
    }
    assert_eq!(known, unknown, "a known and an unknown account answer alike");

    // Many addresses guessing one account: past its count, an address that failed before waits...
    for n in 1..=10 {
        assert_eq!(attempt(&s, Way::Api, email, "guess", &format!("203.0.113.{n}")).await, Outcome::WrongPassword);
    }
    assert!(matches!(attempt(&s, Way::Api, email, PASSWORD, "203.0.113.1").await, Outcome::Wait(_)));
    // ...and the operator's own address, with no failure of its own, is let through.
    assert_eq!(attempt(&s, Way::Api, email, PASSWORD, "192.0.2.11").await, Outcome::SignedIn);
}

/// The count lives in the database: a second process (its own pool, its own memory) sees the failures of the first.
async fn every_process_shares_the_count(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    for _ in 0..5 {
        assert_eq!(attempt(&s, Way::Api, &org.operator_email, "guess", "203.0.113.5").await, Outcome::WrongPassword);
    }
    let config = Config {
        database: frontdesk::config::DatabaseSettings {
            database_url: s.database_url().to_string(),
            database_max_connections: 4,
            audit_retention_days: 3650,
        },
        trusted_proxy_header: Some("x-forwarded-for".into()),
        ..Config::default()
    };
    let db = frontdesk::store::Db::connect(&config.database.database_url, 4).await.unwrap();
    let state = frontdesk::app::AppState::new(db.clone(), config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(frontdesk::router::serve(listener, state, async {
        let _ = stopped.await;
    }));
    let answer = reqwest::Client::new()
        .post(format!("{base}/api/auth/login"))
        .header("x-forwarded-for", "203.0.113.5")
        .json(&json!({"email": org.operator_email, "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 429);
    assert!(answer.headers().contains_key("retry-after"));
    let _ = stop.send(());
    let _ = task.await;
    db.close().await;
}

/// Each password check holds 19 MiB for its argon2id: a few hundred parallel sign-ins took a process to 1.1 GB.
/// Checks now run in turns, at most one per core at a time, however many sign-ins arrive at once (the memory this
/// keeps is measured by `cargo bench --bench sign_in_flood`).
async fn password_hashing_runs_in_turns(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let gate = secrets::PasswordHashing::global();
    let parallel = 3 * gate.limit() + 6;
    let s = std::sync::Arc::new(s);
    let mut calls = Vec::new();
    for n in 0..parallel {
        let s = s.clone();
        calls.push(tokio::spawn(async move {
            // Different accounts from different addresses: no count stops them before the check.
            attempt(&s, Way::Api, &format!("flood{n}@example.com"), "guess", &format!("198.18.0.{n}")).await
        }));
    }
    for call in calls {
        assert_eq!(call.await.unwrap(), Outcome::WrongPassword);
    }
    assert!(gate.peak() >= 1, "the checks ran through the gate");
    assert!(gate.peak() <= gate.limit(), "{} password checks ran at once; the limit is {}", gate.peak(), gate.limit());
}

/// Proxies append the address they saw to `X-Forwarded-For`; the first value is whatever the client sent. The
/// right-most is taken, so a client cannot pick a fresh address for each request.
async fn a_client_cannot_choose_its_address_behind_a_proxy(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| c.public_rate_limit_per_minute = 2).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let search = format!("{}/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", s.base, day(3), day(4));
    let mut statuses = Vec::new();
    for n in 0..4 {
        let spoofed = format!("10.9.8.{n}, 203.0.113.77");
        let res = s.client.get(&search).header("x-forwarded-for", spoofed).send().await.unwrap();
        statuses.push(res.status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 429, 429]);
    // Sign-in counts the same address.
    for n in 0..5 {
        let address = format!("10.1.1.{n}, 203.0.113.78");
        assert_eq!(attempt(&s, Way::Api, &org.operator_email, "guess", &address).await, Outcome::WrongPassword);
    }
    let address = "10.1.1.200, 203.0.113.78";
    assert!(matches!(attempt(&s, Way::Api, &org.operator_email, PASSWORD, address).await, Outcome::Wait(_)));
}
