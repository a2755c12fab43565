//! What a penetration test of the public faces found (issue 26), each closed and kept closed, on both engines:
//! password guessing on every way to sign in, sessions, the public booking page and API, input that slipped past the
//! checks, slow clients, headers, the connector's consent, webhook URLs and booking-page embedding.

use std::time::Duration;

use crate::common::{day, Auth, Org, TestServer, PASSWORD};
use frontdesk::config::Config;
use frontdesk::domain::{identity, secrets, Scope};
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines_configured!(
    guessing_is_cut_off_on_every_way_to_sign_in,
    a_guesser_cannot_lock_the_operator_out,
    every_process_shares_the_count,
    password_hashing_runs_in_turns,
    a_client_cannot_choose_its_address_behind_a_proxy,
    sessions_end_after_idle_hours,
    a_new_password_or_removal_ends_every_session,
    session_cookies_are_host_prefixed_over_https,
    public_requests_keep_the_guest_as_typed,
    booking_form_keys_are_the_pages_own,
    booking_floods_are_limited,
    exact_repeats_sent_at_once_make_one_request,
    pages_take_only_forms,
    names_are_single_lines,
    slow_request_heads_are_cut_off,
    answers_carry_security_headers,
    consent_names_where_the_answer_goes,
    webhook_urls_cannot_reach_inside,
    only_https_sites_may_embed_the_booking_page,
);

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// A server that believes `X-Forwarded-For` (one proxy), so that tests can speak from several addresses.
async fn behind_a_proxy(engine: Engine, configure: impl FnOnce(&mut Config)) -> Option<TestServer> {
    TestServer::configured(engine, |c| {
        c.trusted_proxy_header = Some("x-forwarded-for".into());
        configure(c);
    })
    .await
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A way to sign in.
#[derive(Clone, Copy, Debug)]
enum Way<'a> {
    Api,
    Dashboard,
    /// The connector's sign-in, for the registered client with this id.
    Connector(&'a str),
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
        Way::Connector(client_id) => client.post(format!("{}/oauth/authorize", s.base)).form(&[
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
        (Way::Connector(_), 200) if body.contains("name=\"ticket\"") => Outcome::SignedIn,
        (Way::Connector(_), 200) if body.contains("Invalid e-mail or password") => Outcome::WrongPassword,
        _ => panic!("unexpected answer through {way:?}: {status} {body:.300}"),
    }
}

/// Registers a connector client: its id.
async fn register(s: &TestServer, name: &str, redirect: &str) -> String {
    let res = s
        .client
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"client_name": name, "redirect_uris": [redirect]}))
        .send()
        .await
        .unwrap();
    let answer = TestServer::answer(res).await;
    assert_eq!(answer.status.as_u16(), 201, "{}", answer.body);
    answer.body["client_id"].as_str().unwrap().to_string()
}

// ---------------------------------------------------------------------------------------------------------------
// Sign-in

/// `POST /api/auth/login` took hundreds of wrong passwords without a 429, and the connector's sign-in limited only
/// per address. Now all three ways count into one limit: after five failures of one account from one address, the
/// next attempt (whichever way, even with the right password) waits, and is told how long.
async fn guessing_is_cut_off_on_every_way_to_sign_in(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let client = register(&s, "Assistant", REDIRECT).await;
    let email = org.operator_email.as_str();
    let ways = [Way::Api, Way::Dashboard, Way::Connector(&client)];
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
    use sqlx::Row;
    let buckets: Vec<String> = sqlx::query("SELECT bucket FROM attempt_counts")
        .fetch_all(&mut *conn)
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

// ---------------------------------------------------------------------------------------------------------------
// Sessions

/// Moves the recorded uses of a token `hours` into the past.
async fn age_token(s: &TestServer, token: &str, hours: i64) {
    let past = frontdesk::store::format_ts(chrono::Utc::now() - chrono::TimeDelta::hours(hours));
    let mut tx = s.db.begin_write().await.unwrap();
    sqlx::query("UPDATE access_tokens SET created_at = $1, last_used_at = $1 WHERE token_hash = $2")
        .bind(&past)
        .bind(secrets::digest(token))
        .execute(tx.conn())
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

async fn login(s: &TestServer, email: &str, password: &str) -> crate::common::Answer {
    s.post("/api/auth/login", &Auth::None, json!({"email": email, "password": password})).await
}

/// Signs in to the dashboard: the session cookie (`name=value`).
async fn dashboard_session(s: &TestServer, email: &str, password: &str) -> String {
    let answer = no_redirects()
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", email), ("password", password), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let cookie = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("fd_session="))
        .expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}

/// Whether the dashboard takes the session `cookie` (else it sends the browser to the sign-in page).
async fn signed_in(s: &TestServer, cookie: &str) -> bool {
    let answer = no_redirects().get(format!("{}/", s.base)).header("cookie", cookie).send().await.unwrap();
    let location = answer.headers().get("location").map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
    assert!(answer.status().as_u16() < 400, "{answer:?}");
    !location.starts_with("/sign-in")
}

/// Sessions lived 14 days however long they lay unused. Now a session not used for the idle limit (12 hours by
/// default) ends; tokens made for scripts (`admin create-token`) have no idle limit.
async fn sessions_end_after_idle_hours(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.sessions.session_idle_timeout_hours = 12).await else {
        return;
    };
    let org = s.org("Acme").await;
    let token = login(&s, &org.operator_email, PASSWORD).await.expect(200).body["token"].as_str().unwrap().to_string();
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(200);
    age_token(&s, &token, 11).await;
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(200);
    // That use was recorded, so the clock starts again from it.
    let mut recorded = false;
    for _ in 0..50 {
        let mut conn = s.db.read().await.unwrap();
        use sqlx::Row;
        let last: Option<String> = sqlx::query("SELECT last_used_at FROM access_tokens WHERE token_hash = $1")
            .bind(secrets::digest(&token))
            .fetch_one(&mut *conn)
            .await
            .unwrap()
            .try_get("last_used_at")
            .unwrap();
        if last
            .is_some_and(|t| frontdesk::store::parse_ts(&t).unwrap() > chrono::Utc::now() - chrono::TimeDelta::hours(1))
        {
            recorded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(recorded, "a use an hour after the last is recorded");
    age_token(&s, &token, 13).await;
    let ended = s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(401);
    assert!(ended.body["detail"].as_str().unwrap().contains("not used for too long"), "{}", ended.body);

    // The dashboard's session too: back to the sign-in page, cookie cleared.
    let cookie = dashboard_session(&s, &org.operator_email, PASSWORD).await;
    assert!(signed_in(&s, &cookie).await);
    age_token(&s, cookie.trim_start_matches("fd_session="), 13).await;
    assert!(!signed_in(&s, &cookie).await);

    // A script's token (`org.token`, as `admin create-token` issues) keeps working however long it rests.
    age_token(&s, &org.token, 24 * 10).await;
    s.get("/api/auth/me", &org.auth()).await.expect(200);
}

/// A connector client, access token and refresh token of an operator, through the HTTP flow an assistant goes
/// through.
async fn connector_tokens(s: &TestServer, email: &str, password: &str) -> (String, String, String) {
    use base64::Engine as _;
    use sha2::Digest as _;
    let client_id = register(s, "Assistant", REDIRECT).await;
    let verifier = format!("{}{}", uuid::Uuid::now_v7().simple(), uuid::Uuid::now_v7().simple());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    let b = no_redirects();
    let consent = b
        .post(format!("{}/oauth/authorize", s.base))
        .form(&[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("email", email),
            ("password", password),
        ])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let start = consent.find("name=\"ticket\" value=\"").expect("consent page") + "name=\"ticket\" value=\"".len();
    let ticket = consent[start..].split('"').next().unwrap();
    let answer = b
        .post(format!("{}/oauth/authorize/consent", s.base))
        .form(&[("ticket", ticket), ("decision", "allow")])
        .send()
        .await
        .unwrap();
    let location = answer.headers()["location"].to_str().unwrap().to_string();
    let code = url::Url::parse(&location).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let tokens = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ])
        .send()
        .await
        .unwrap();
    let tokens: Value = tokens.json().await.unwrap();
    (
        client_id,
        tokens["access_token"].as_str().expect("access token").to_string(),
        tokens["refresh_token"].as_str().expect("refresh token").to_string(),
    )
}

/// Whether the connector takes `access` (its answer to `initialize`).
async fn connector_status(s: &TestServer, access: &str) -> u16 {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let answer = s
        .client
        .post(format!("{}/mcp", s.base))
        .bearer_auth(access)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    answer.status().as_u16()
}

/// A password change or the removal of an operator left their sessions, tokens and connector grants working. Now
/// both end every one of them (here through the commands an administrator runs).
async fn a_new_password_or_removal_ends_every_session(engine: Engine) {
    const NEW: &str = "a new long password";
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let email = org.operator_email.clone();
    let api = login(&s, &email, PASSWORD).await.expect(200).body["token"].as_str().unwrap().to_string();
    let cookie = dashboard_session(&s, &email, PASSWORD).await;
    let (client_id, access, refresh) = connector_tokens(&s, &email, PASSWORD).await;
    assert_eq!(connector_status(&s, &access).await, 200);

    let out = crate::common::process::json_output(
        crate::common::process::command(s.database_url())
            .args(["admin", "set-password", "--email", &email])
            .env("FRONTDESK_OPERATOR_PASSWORD", NEW),
    );
    assert_eq!(out["passwordChanged"]["email"], json!(email));
    for token in [&api, &org.token] {
        s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(401);
    }
    assert!(!signed_in(&s, &cookie).await);
    assert_eq!(connector_status(&s, &access).await, 401);
    let refreshed = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status().as_u16(), 400);
    login(&s, &email, PASSWORD).await.expect(401);

    // Removed: nothing of theirs works, and they cannot sign in.
    let fresh = login(&s, &email, NEW).await.expect(200).body["token"].as_str().unwrap().to_string();
    let cookie = dashboard_session(&s, &email, NEW).await;
    let (_, access, _) = connector_tokens(&s, &email, NEW).await;
    assert_eq!(connector_status(&s, &access).await, 200);
    let out = crate::common::process::json_output(crate::common::process::command(s.database_url()).args([
        "admin",
        "remove-operator",
        "--email",
        &email,
    ]));
    assert_eq!(out["removed"]["email"], json!(email));
    s.get("/api/auth/me", &Auth::Token(fresh)).await.expect(401);
    assert!(!signed_in(&s, &cookie).await);
    assert_eq!(connector_status(&s, &access).await, 401);
    login(&s, &email, NEW).await.expect(401);
    assert_eq!((s.count("oauth_grants").await, s.count("oauth_tokens").await), (0, 0));
}

/// Over https the dashboard's cookies carry the `__Host-` prefix (and `Secure`): no sibling subdomain or plain-http
/// answer can plant or replace them.
async fn session_cookies_are_host_prefixed_over_https(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.public_url = Some("https://frontdesk.example".into())).await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let client = no_redirects();
    let form = client.get(format!("{}/sign-in", s.base)).send().await.unwrap();
    let cookies: Vec<String> =
        form.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string()).collect();
    let csrf = cookies.iter().find(|c| c.starts_with("__Host-fd_signin=")).expect("a prefixed sign-in cookie");
    assert!(csrf.contains("; Path=/;") && csrf.ends_with("; Secure") && !csrf.contains("Domain"), "{csrf}");
    let token = csrf.split(';').next().unwrap().trim_start_matches("__Host-fd_signin=").to_string();
    let answer = client
        .post(format!("{}/sign-in", s.base))
        .header("cookie", format!("__Host-fd_signin={token}"))
        .form(&[("email", org.operator_email.as_str()), ("password", PASSWORD), ("_csrf", &token)])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let session = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("__Host-fd_session="))
        .expect("a prefixed session cookie");
    assert!(session.contains("; Path=/;") && session.contains("HttpOnly") && session.ends_with("; Secure"));
    let value = session.split(';').next().unwrap().to_string();
    assert!(signed_in(&s, &value).await);
    // The bare name is not read over https.
    assert!(!signed_in(&s, &value.replace("__Host-fd_session=", "fd_session=")).await);
}

// ---------------------------------------------------------------------------------------------------------------
// Public booking

/// A hotel with `rooms` double rooms and a rate plan priced for 40 nights: (hotel, room type).
async fn bookable(s: &TestServer, org: &Org, name: &str, rooms: usize) -> (String, String) {
    let hotel = s.hotel(org, name).await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    for n in 0..rooms {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)}))
            .await
            .expect(200);
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..40).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type)
}

/// The first offer for nights `from`..`to`.
async fn offer(s: &TestServer, hotel: &str, from: u64, to: u64) -> String {
    let path = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(from), day(to));
    s.get(&path, &Auth::None).await.expect(200).body[0]["offerId"].as_str().expect("an offer").to_string()
}

fn booking(offer: &str, first: &str, email: &str) -> Value {
    json!({"offerId": offer, "guest": {"firstName": first, "lastName": "Doe", "email": email}})
}

/// A booking request through the API from `address`: the answer.
async fn book_api(s: &TestServer, hotel: &str, body: &Value, address: &str, auth: &Auth) -> crate::common::Answer {
    let mut request = s.client.post(format!("{}/api/hotels/{hotel}/book-reservation", s.base)).json(body);
    request = request.header("x-forwarded-for", address);
    if let Auth::Key(secret) = auth {
        request = request.header("authorization", crate::common::basic(secret));
    }
    TestServer::answer(request.send().await.unwrap()).await
}

/// The guest form of the booking page for `offer`: its idempotency key, as the page issued it.
async fn form_key(s: &TestServer, hotel: &str, offer: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("offer", offer).finish();
    let html = s.client.get(format!("{}/book/{hotel}/details?{query}", s.base)).send().await.unwrap();
    let html = html.text().await.unwrap();
    let marker = "name=\"key\" value=\"";
    let start = html.find(marker).expect("the guest form") + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

/// Posts the booking page's guest form: (status, Location, page text).
async fn send_form(s: &TestServer, hotel: &str, fields: &[(&str, &str)], address: &str) -> (u16, String, String) {
    let answer = no_redirects()
        .post(format!("{}/book/{hotel}/request", s.base))
        .header("x-forwarded-for", address)
        .form(fields)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let location = answer.headers().get("location").map(|l| l.to_str().unwrap().to_string()).unwrap_or_default();
    (status, location, answer.text().await.unwrap())
}

/// Booking with someone else's e-mail attached the request to their guest record, and the receipt greeted the
/// booker with the stored first name, across the organization's hotels. Now the request keeps what was typed, the
/// receipt shows it, and staff see a hint of the hotel's guests with the same e-mail, never another hotel's.
async fn public_requests_keep_the_guest_as_typed(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 2).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 1).await;
    let ana = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima", "email": "ana@example.com"}),
        )
        .await;
    let elsewhere = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": other_hotel, "firstName": "Anabela", "lastName": "Costa", "email": "ana@example.com"}),
        )
        .await;

    // On the page: the receipt greets whoever typed, not the stored guest.
    let offer_id = offer(&s, &hotel, 3, 5).await;
    let key = form_key(&s, &hotel, &offer_id).await;
    let fields = [
        ("offer", offer_id.as_str()),
        ("key", key.as_str()),
        ("firstName", "Mallory"),
        ("lastName", "Evil"),
        ("email", "ANA@example.com"),
    ];
    let (status, receipt, _) = send_form(&s, &hotel, &fields, "203.0.113.20").await;
    assert_eq!(status, 303);
    let receipt_page = s.client.get(format!("{}{receipt}", s.base)).send().await.unwrap().text().await.unwrap();
    assert!(receipt_page.contains("Thank you, Mallory"), "{receipt_page}");
    assert!(!receipt_page.contains("Ana") && !receipt_page.contains("Lima"), "{receipt_page}");

    // Through the API as well: each request has a guest of its own, of the hotel, as typed.
    let api_offer = offer(&s, &hotel, 6, 7).await;
    let booked = book_api(&s, &hotel, &booking(&api_offer, "Eve", "ana@example.com"), "203.0.113.21", &Auth::None)
        .await
        .expect(201);
    let requests = s.get(&format!("/api/reservations?hotelId={hotel}"), &org.auth()).await.expect(200).body;
    assert_eq!(requests.as_array().unwrap().len(), 2);
    for request in requests.as_array().unwrap() {
        let guest_id = request["guestId"].as_str().unwrap();
        assert!(guest_id != ana && guest_id != elsewhere);
        let guest = s.get(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(200).body;
        assert_eq!(guest["hotelId"], json!(hotel));
        assert!(["Mallory", "Eve"].contains(&guest["firstName"].as_str().unwrap()), "{guest}");
    }
    let stored = s.get(&format!("/api/guests/{ana}"), &org.auth()).await.expect(200).body;
    assert_eq!((stored["firstName"].as_str(), stored["lastName"].as_str()), (Some("Ana"), Some("Lima")));

    // Staff see the hotel's guests with the same e-mail beside the request; not the other hotel's.
    let cookie = dashboard_session(&s, &org.operator_email, PASSWORD).await;
    let id = booked.body["reservationId"].as_str().unwrap();
    let page = no_redirects()
        .get(format!("{}/hotels/{hotel}/reservations/{id}", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"same-email\""), "{page}");
    assert!(page.contains(&format!("guests/{ana}")) && page.contains("Ana Lima"));
    assert!(!page.contains(&elsewhere) && !page.contains("Anabela"));
}

/// The booking form's `key` was the client's to choose and shared the API's `Idempotency-Key` namespace: posting
/// another booking's key redirected to that booking's receipt. Now the page takes only keys it issued, in a
/// namespace of its own, and answers a key with the first request only when the request is the same.
async fn booking_form_keys_are_the_pages_own(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 3).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 1).await;

    // Someone books through the API with a key...
    let api_offer = offer(&s, &hotel, 3, 4).await;
    let res = s
        .client
        .post(format!("{}/api/hotels/{hotel}/book-reservation", s.base))
        .header("idempotency-key", "retry-42")
        .json(&booking(&api_offer, "Victim", "victim@example.com"))
        .send()
        .await
        .unwrap();
    TestServer::answer(res).await.expect(201);
    // ...and the form posted with that key (or any key the page did not give out) books nothing and shows nothing.
    let page_offer = offer(&s, &hotel, 3, 4).await;
    let issued = form_key(&s, &hotel, &page_offer).await;
    let other_hotels_key = form_key(&s, &other_hotel, &offer(&s, &other_hotel, 3, 4).await).await;
    for key in ["retry-42", "bp_made-up", "", other_hotels_key.as_str()] {
        let fields =
            [("offer", page_offer.as_str()), ("key", key), ("firstName", "M"), ("lastName", "X"), ("email", "m@x.co")];
        let (status, location, page) = send_form(&s, &hotel, &fields, "203.0.113.30").await;
        assert_eq!((status, location.as_str()), (400, ""), "{key}");
        assert!(!page.contains("Victim") && !page.contains("victim@"), "{page}");
    }
    assert_eq!(s.count("reservations").await, 1);

    // The page's own key: the same form twice is one request; changed, it is refused without a trace of the first.
    let mut fields = vec![
        ("offer", page_offer.as_str()),
        ("key", issued.as_str()),
        ("firstName", "Ana"),
        ("lastName", "Silva"),
        ("email", "ana@example.com"),
    ];
    let first = send_form(&s, &hotel, &fields, "203.0.113.31").await;
    let second = send_form(&s, &hotel, &fields, "203.0.113.31").await;
    assert_eq!((first.0, second.0), (303, 303));
    assert_eq!(first.1, second.1);
    fields[2] = ("firstName", "Mallory");
    let (status, location, page) = send_form(&s, &hotel, &fields, "203.0.113.32").await;
    assert_eq!((status, location.as_str()), (409, ""));
    assert!(page.contains("This form was already sent"));
    assert!(!page.contains("Silva") && !page.contains("ana@example.com") && !page.contains("/requests/"), "{page}");
    assert_eq!(s.count("reservations").await, 2);

    // The page's key sent to the API is a key of the API's own namespace: it books anew.
    let res = s
        .client
        .post(format!("{}/api/hotels/{hotel}/book-reservation", s.base))
        .header("idempotency-key", &issued)
        .json(&booking(&offer(&s, &hotel, 5, 6).await, "Ana", "ana@example.com"))
        .send()
        .await
        .unwrap();
    let answer = TestServer::answer(res).await.expect(201);
    assert!(!first.1.contains(answer.body["reservationId"].as_str().unwrap()));
    assert_eq!(s.count("reservations").await, 3);
}

/// One address sent dozens of booking requests to a hotel in seconds. Now requests without an API key that may
/// write reservations are limited per address and per guest e-mail for each hotel, an exact repeat answers the
/// first request, and the page's form has a trap robots fill in.
async fn booking_floods_are_limited(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| {
        c.booking_requests_per_address_per_hour = 3;
        c.booking_requests_per_email_per_hour = 2;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 10).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 10).await;
    let book = |body: Value, address: &'static str| {
        let s = &s;
        let hotel = hotel.clone();
        async move { book_api(s, &hotel, &body, address, &Auth::None).await }
    };
    let first_offer = offer(&s, &hotel, 3, 4).await;
    let first = book(booking(&first_offer, "A", "a@example.com"), "203.0.113.40").await.expect(201);
    book(booking(&offer(&s, &hotel, 4, 5).await, "B", "b@example.com"), "203.0.113.40").await.expect(201);
    book(booking(&offer(&s, &hotel, 5, 6).await, "C", "c@example.com"), "203.0.113.40").await.expect(201);
    let refused = book(booking(&offer(&s, &hotel, 6, 7).await, "D", "d@example.com"), "203.0.113.40").await.expect(429);
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&retry), "until the hour is over: {retry}");
    // An exact repeat of a waiting request answers it, limits or not.
    let repeat = book(booking(&first_offer, "A", "A@example.com"), "203.0.113.40").await.expect(201);
    assert_eq!(repeat.body["reservationId"], first.body["reservationId"]);
    // The page counts with the API.
    let page_offer = offer(&s, &hotel, 7, 8).await;
    let key = form_key(&s, &hotel, &page_offer).await;
    let fields = [
        ("offer", page_offer.as_str()),
        ("key", key.as_str()),
        ("firstName", "E"),
        ("lastName", "F"),
        ("email", "e@example.com"),
    ];
    let (status, _, page) = send_form(&s, &hotel, &fields, "203.0.113.40").await;
    assert_eq!(status, 429);
    assert!(page.contains("Too many booking requests"), "{page}");
    // Another hotel counts apart.
    book_api(
        &s,
        &other_hotel,
        &booking(&offer(&s, &other_hotel, 3, 4).await, "G", "g@example.com"),
        "203.0.113.40",
        &Auth::None,
    )
    .await
    .expect(201);
    // Per e-mail, whatever the address.
    book(booking(&offer(&s, &hotel, 8, 9).await, "A", "a@example.com"), "203.0.113.41").await.expect(201);
    book(booking(&offer(&s, &hotel, 9, 10).await, "A", "a@example.com"), "203.0.113.42").await.expect(429);
    // An integration that may write reservations is not the public.
    let writer = Auth::Key(s.key(&org, &[Scope::ReservationsWrite], None).await);
    for n in 0..4 {
        let body = booking(&offer(&s, &hotel, 10 + n, 11 + n).await, "A", "a@example.com");
        book_api(&s, &hotel, &body, "203.0.113.40", &writer).await.expect(201);
    }
    let before = s.count("reservations").await;
    // The trap: a form that fills in the field people never see books nothing.
    let trap_offer = offer(&s, &hotel, 20, 21).await;
    let key = form_key(&s, &hotel, &trap_offer).await;
    let fields = [
        ("offer", trap_offer.as_str()),
        ("key", key.as_str()),
        ("website", "http://spam.example"),
        ("firstName", "Bot"),
        ("lastName", "Bot"),
        ("email", "bot@example.com"),
    ];
    assert_eq!(send_form(&s, &hotel, &fields, "203.0.113.43").await.0, 400);
    assert_eq!(s.count("reservations").await, before);
}

/// Repeats of one public request sent at once (a flood of the same request) make one request, on PostgreSQL too:
/// the request's counts are locked before the repeat is looked for, so each repeat waits for the first to commit.
async fn exact_repeats_sent_at_once_make_one_request(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| {
        c.booking_requests_per_address_per_hour = 100;
        c.booking_requests_per_email_per_hour = 100;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 3).await;
    let body = booking(&offer(&s, &hotel, 3, 5).await, "Ana", "ana@example.com");
    let s = std::sync::Arc::new(s);
    let mut calls = Vec::new();
    for n in 0..12 {
        let (s, hotel, body) = (s.clone(), hotel.clone(), body.clone());
        calls.push(tokio::spawn(async move {
            let address = format!("203.0.113.{}", 100 + n % 3);
            book_api(&s, &hotel, &body, &address, &Auth::None).await.expect(201).body["reservationId"].clone()
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for call in calls {
        ids.insert(call.await.unwrap().as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1));
}

// ---------------------------------------------------------------------------------------------------------------
// Input

/// The control-character check ran only on `application/x-www-form-urlencoded`, but the pages read any body as a
/// form: a `text/plain` post stored ESC and NUL (a 500 on PostgreSQL). Pages now take forms only.
async fn pages_take_only_forms(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 1).await;
    let offer_id = offer(&s, &hotel, 3, 4).await;
    let key = form_key(&s, &hotel, &offer_id).await;
    let body = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("offer", &offer_id)
        .append_pair("key", &key)
        .append_pair("firstName", "A\u{1b}[31mna\u{0}")
        .append_pair("lastName", "Silva")
        .append_pair("email", "ana@example.com")
        .finish();
    for content_type in
        ["text/plain", "application/json", "multipart/form-data; boundary=x", "application/x-www-form-urlencodedx"]
    {
        let answer = s
            .client
            .post(format!("{}/book/{hotel}/request", s.base))
            .header("content-type", content_type)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 415, "{content_type}");
    }
    let bare = s.client.post(format!("{}/book/{hotel}/request", s.base)).body(body.clone()).send().await.unwrap();
    assert_eq!(bare.status().as_u16(), 415, "no content type at all");
    assert_eq!(s.count("reservations").await, 0);
    assert_eq!(s.count("guests").await, 0);
    // As a form, the same fields are refused for what they hold.
    let answer = s
        .client
        .post(format!("{}/book/{hotel}/request", s.base))
        .header("content-type", "application/x-www-form-urlencoded; charset=UTF-8")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);

    // The dashboard's forms alike.
    let cookie = dashboard_session(&s, &org.operator_email, PASSWORD).await;
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima"})).await;
    let token = cookie.trim_start_matches("fd_session=");
    let csrf = frontdesk::web::session::csrf_for(token);
    let answer = s
        .client
        .post(format!("{}/hotels/{hotel}/guests/{guest}", s.base))
        .header("cookie", &cookie)
        .header("content-type", "text/plain")
        .body(format!("_csrf={csrf}&firstName=A%1Bna&lastName=Lima"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 415);
    assert_eq!(s.get(&format!("/api/guests/{guest}"), &org.auth()).await.body["firstName"], json!("Ana"));
}

/// Names took line breaks, right-to-left overrides and zero-width characters: header injection once names reach
/// e-mails, look-alike names on consent pages and guest lists. Single-line fields refuse them now.
async fn names_are_single_lines(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    for bad in
        ["Ana\r\nBcc: all@example.com", "Ana\nLima", "\u{202E}anA", "An\u{200B}a", "Ana\tLima", "Ana\u{2028}Lima"]
    {
        let answer = s
            .post("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": bad, "lastName": "Lima"}))
            .await
            .expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!("firstName"), "{bad:?}: {}", answer.body);
        s.post("/api/hotels", &org.auth(), json!({"name": bad, "timezone": "UTC", "currency": "EUR"}))
            .await
            .expect(400);
        s.put(&format!("/api/hotels/{hotel}"), &org.auth(), json!({"name": bad})).await.expect(400);
        s.post("/api/apiKeys", &org.auth(), json!({"name": bad})).await.expect(400);
        let res = s
            .client
            .post(format!("{}/oauth/register", s.base))
            .json(&json!({"client_name": format!("Claude{bad}"), "redirect_uris": [REDIRECT]}))
            .send()
            .await
            .unwrap();
        let answer = TestServer::answer(res).await;
        assert_eq!(answer.status.as_u16(), 400, "{bad:?}");
        assert_eq!(answer.body["error"], json!("invalid_client_metadata"));
    }
    // What people's names need stays: accents, apostrophes, other scripts, the joiners of Persian and Indic names.
    for good in ["José Álvarez-Núñez", "O'Brien", "محمد\u{200C}رضا", "李小龙"] {
        s.post("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": good, "lastName": "X"}))
            .await
            .expect(200);
    }
    // Notes keep their lines.
    s.post(
        "/api/guests",
        &org.auth(),
        json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima", "notes": "Line one\nLine two"}),
    )
    .await
    .expect(200);
    let err = identity::create_operator(
        &s.db,
        identity::OperatorIn {
            organization_id: &org.id,
            email: "x@example.com",
            name: "Op\u{202E}",
            password: PASSWORD,
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(err, frontdesk::domain::Error::Validation(_)), "{err:?}");
}

// ---------------------------------------------------------------------------------------------------------------
// Transport

/// A connection that sent half a request head stayed open for ever: the request timeout starts after the head.
async fn slow_request_heads_are_cut_off(engine: Engine) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(s) = TestServer::configured(engine, |c| c.header_read_timeout_secs = 1).await else { return };
    // `serve_router` (the tests' server) keeps the default; this one serves as `frontdesk serve` does.
    let config = Config {
        database: frontdesk::config::DatabaseSettings {
            database_url: s.database_url().to_string(),
            database_max_connections: 2,
        },
        header_read_timeout_secs: 1,
        ..Config::default()
    };
    let state = frontdesk::app::AppState::new(s.db.clone(), config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(frontdesk::router::serve(listener, state, async {
        let _ = stopped.await;
    }));
    for sent in ["GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", ""] {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream.write_all(sent.as_bytes()).await.unwrap();
        let mut buffer = [0u8; 256];
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await;
        match read {
            Ok(Ok(n)) => {
                assert!(n == 0 || String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 408"), "{sent:?}")
            }
            Ok(Err(_)) => {} // reset: closed as well
            Err(_) => panic!("a connection that sent {sent:?} was still open after 10 s"),
        }
    }
    // A whole request is answered as ever.
    let res = reqwest::get(format!("http://{address}/healthz")).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let _ = stop.send(());
    let _ = task.await;
}

/// API answers (guest lists, login tokens) could be cached, and nothing asked browsers to keep to https.
async fn answers_carry_security_headers(engine: Engine) {
    for https in [false, true] {
        let Some(s) = TestServer::configured(engine, |c| {
            c.public_url = https.then(|| "https://frontdesk.example".to_string());
        })
        .await
        else {
            return;
        };
        let org = s.org("Acme").await;
        let hotel = s.hotel(&org, "Sea").await;
        let availability = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(3), day(4));
        let answers = [
            s.get("/api/guests", &org.auth()).await,
            login(&s, &org.operator_email, PASSWORD).await,
            s.get(&availability, &Auth::None).await,
            s.get("/api/no-such-thing", &Auth::None).await,
            s.get("/api/openapi.json", &Auth::None).await,
        ];
        for answer in &answers {
            assert_eq!(answer.header("cache-control"), Some("no-store"), "{answer:?}");
            assert_eq!(answer.header("x-content-type-options"), Some("nosniff"), "{answer:?}");
            assert_eq!(answer.header("strict-transport-security").is_some(), https, "{answer:?}");
        }
        let page = s.client.get(format!("{}/sign-in", s.base)).send().await.unwrap();
        assert_eq!(page.headers().get("strict-transport-security").is_some(), https);
        // Static assets keep their own caching.
        let html = page.text().await.unwrap();
        let start = html.find("/assets/app.css").unwrap();
        let asset = &html[start..start + html[start..].find('"').unwrap()];
        let css = s.client.get(format!("{}{asset}", s.base)).send().await.unwrap();
        assert_ne!(css.headers()["cache-control"], "no-store");
        assert_eq!(css.headers()["x-content-type-options"], "nosniff");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The connector

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
    sqlx::query("UPDATE oauth_clients SET created_at = $1").bind(&two_days_ago).execute(tx.conn()).await.unwrap();
    tx.commit().await.unwrap();
    register(&s, "Newcomer", REDIRECT).await;
    let ids: Vec<String> = {
        use sqlx::Row;
        let mut conn = s.db.read().await.unwrap();
        sqlx::query("SELECT id FROM oauth_clients")
            .fetch_all(&mut *conn)
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
