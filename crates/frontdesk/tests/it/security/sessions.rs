//! Sessions: they end after idle hours, a new password or a removal ends every one of them (tokens and assistant grants
//! too), and their cookies are host-prefixed over https.

use std::time::Duration;

use crate::common::{Auth, TestServer, PASSWORD};
use frontdesk::domain::secrets;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{dashboard_session, login, no_redirects, register, REDIRECT};

on_both_engines_configured!(
    sessions_end_after_idle_hours,
    a_new_password_or_removal_ends_every_session,
    session_cookies_are_host_prefixed_over_https,
);

/// Moves the recorded uses of a token `hours` into the past.
async fn age_token(s: &TestServer, token: &str, hours: i64) {
    let past = frontdesk::store::format_ts(chrono::Utc::now() - chrono::TimeDelta::hours(hours));
    let mut tx = s.db.begin_write().await.unwrap();
    frontdesk::store::query("UPDATE access_tokens SET created_at = $1, last_used_at = $1 WHERE token_hash = $2")
        .bind(&past)
        .bind(secrets::digest(token))
        .execute(tx.conn())
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Whether the token's last use, recorded in the background, is within the last hour (waiting for it up to 2.5 s).
async fn used_lately(s: &TestServer, token: &str) -> bool {
    for _ in 0..50 {
        let mut conn = s.db.read().await.unwrap();
        let last: Option<String> =
            frontdesk::store::query("SELECT last_used_at FROM access_tokens WHERE token_hash = $1")
                .bind(secrets::digest(token))
                .fetch_one(&mut conn)
                .await
                .unwrap()
                .try_get("last_used_at")
                .unwrap();
        if last
            .is_some_and(|t| frontdesk::store::parse_ts(&t).unwrap() > chrono::Utc::now() - chrono::TimeDelta::hours(1))
        {
            return true;
        }
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
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
    // The first use is recorded in the background: aged only once it is, or its record would land after the ageing
    // and undo it (and the next use, seen as recent, would then not be recorded).
    assert!(used_lately(&s, &token).await, "the first use is recorded");
    age_token(&s, &token, 11).await;
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(200);
    // That use was recorded, so the clock starts again from it.
    assert!(used_lately(&s, &token).await, "a use an hour after the last is recorded");
    age_token(&s, &token, 13).await;
    let ended = s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(401);
    assert!(ended.body["detail"].as_str().unwrap().contains("not used for too long"), "{}", ended.body);

    // The dashboard's session too: back to the sign-in page, cookie cleared.
    let cookie = dashboard_session(&s, &org.operator_email, PASSWORD).await;
    assert!(signed_in(&s, &cookie).await);
    // Its first use is recorded as it happens (in the background): aged only after, or the record would undo it.
    assert!(used_lately(&s, cookie.trim_start_matches("fd_session=")).await, "the first use is recorded");
    age_token(&s, cookie.trim_start_matches("fd_session="), 13).await;
    assert!(!signed_in(&s, &cookie).await);

    // A script's token (`org.token`, as `admin create-token` issues) keeps working however long it rests.
    age_token(&s, &org.token, 24 * 10).await;
    s.get("/api/auth/me", &org.auth()).await.expect(200);
}

/// An assistant client, access token and refresh token of an operator, through the HTTP flow an assistant goes
/// through.
async fn assistant_tokens(s: &TestServer, email: &str, password: &str) -> (String, String, String) {
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

/// Whether the assistant endpoint takes `access` (its answer to `initialize`).
async fn assistant_status(s: &TestServer, access: &str) -> u16 {
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

/// A password change or the removal of an operator left their sessions, tokens and assistant grants working. Now
/// both end every one of them (here through the commands an administrator runs).
async fn a_new_password_or_removal_ends_every_session(engine: Engine) {
    const NEW: &str = "a new long password";
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let email = org.operator_email.clone();
    let api = login(&s, &email, PASSWORD).await.expect(200).body["token"].as_str().unwrap().to_string();
    let cookie = dashboard_session(&s, &email, PASSWORD).await;
    let (client_id, access, refresh) = assistant_tokens(&s, &email, PASSWORD).await;
    assert_eq!(assistant_status(&s, &access).await, 200);

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
    assert_eq!(assistant_status(&s, &access).await, 401);
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
    let (_, access, _) = assistant_tokens(&s, &email, NEW).await;
    assert_eq!(assistant_status(&s, &access).await, 200);
    let out = crate::common::process::json_output(crate::common::process::command(s.database_url()).args([
        "admin",
        "remove-operator",
        "--email",
        &email,
    ]));
    assert_eq!(out["removed"]["email"], json!(email));
    s.get("/api/auth/me", &Auth::Token(fresh)).await.expect(401);
    assert!(!signed_in(&s, &cookie).await);
    assert_eq!(assistant_status(&s, &access).await, 401);
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
