//! The OAuth rules one by one: authorization requests and codes, only OAuth access tokens open `/mcp`, expired access
//! tokens are refused, and the metadata names the public URL.

use crate::common::{Auth, TestServer};
use frontdesk::store::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{
    authorize_url, browser, code_for, connect, count_matching, pkce, query_of, register, sign_in_and_consent, ticket,
    token_request, tokens_for, REDIRECT,
};

on_both_engines!(authorization_rules, only_oauth_access_tokens_open_mcp,);

on_both_engines_configured!(expired_access_tokens_are_refused, metadata_names_the_public_url,);

async fn authorization_rules(s: TestServer) {
    let org = s.org("Acme").await;

    // A redirect URI that was not registered is never redirected to; nor is an unknown client.
    let client_id = register(&s, REDIRECT).await;
    let (verifier, challenge) = pkce();
    for url in [
        authorize_url(&s, &client_id, "http://127.0.0.1:9/other", &challenge, "s"),
        authorize_url(&s, &client_id, "http://127.0.0.1:9/callback/", &challenge, "s"),
        authorize_url(&s, "no-such-client", REDIRECT, &challenge, "s"),
    ] {
        let answer = browser().get(&url).send().await.expect("authorize");
        assert_eq!(answer.status().as_u16(), 400, "{url}");
        assert!(answer.headers().get("location").is_none());
    }
    // Registration refuses what it cannot honour.
    for body in [
        json!({"redirect_uris": []}),
        json!({"redirect_uris": ["http://evil.example/cb"]}),
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}),
    ] {
        let res = s.client.post(format!("{}/oauth/register", s.base)).json(&body).send().await.expect("register");
        let answer = TestServer::answer(res).await;
        assert_eq!(answer.status.as_u16(), 400, "{body}");
        assert!(answer.body["error"].as_str().is_some_and(|e| e.starts_with("invalid_")), "{}", answer.body);
    }

    // PKCE plain and a missing challenge are refused back to the client, with its state.
    let plain = authorize_url(&s, &client_id, REDIRECT, &challenge, "st").replace("S256", "plain");
    let answer = browser().get(&plain).send().await.expect("authorize");
    assert_eq!(answer.status().as_u16(), 303);
    let q = query_of(answer.headers()["location"].to_str().expect("location"));
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("invalid_request", "st"));
    // Another resource than the assistant endpoint.
    let other = authorize_url(&s, &client_id, REDIRECT, &challenge, "st")
        .replace("resource=", "resource=https%3A%2F%2Fother.example%2Fmcp&x=");
    let answer = browser().get(&other).send().await.expect("authorize");
    assert_eq!(query_of(answer.headers()["location"].to_str().expect("location"))["error"], "invalid_target");

    // A wrong password shows the form again, with no ticket.
    let url = authorize_url(&s, &client_id, REDIRECT, &challenge, "st");
    let mut fields: Vec<(String, String)> =
        url::Url::parse(&url).expect("url").query_pairs().map(|(k, v)| (k.into(), v.into())).collect();
    fields.push(("email".into(), org.operator_email.clone()));
    fields.push(("password".into(), "wrong password".into()));
    let html = browser()
        .post(format!("{}/oauth/authorize", s.base))
        .form(&fields)
        .send()
        .await
        .expect("sign in")
        .text()
        .await
        .expect("html");
    assert!(html.contains("Invalid e-mail or password") && ticket(&html).is_none(), "{html}");

    // Declining answers access_denied to the client.
    let location = sign_in_and_consent(&s, &url, &org.operator_email, "deny").await;
    let q = query_of(&location);
    assert_eq!((q["error"].as_str(), q["state"].as_str()), ("access_denied", "st"));
    assert!(!q.contains_key("code"));

    // A wrong verifier is refused; the right one works once; the code cannot be used again, and its reuse
    // revokes what it gave.
    let location = sign_in_and_consent(&s, &url, &org.operator_email, "allow").await;
    let code = query_of(&location)["code"].clone();
    let exchange = |verifier: String, redirect: &'static str| {
        let (code, client_id) = (code.clone(), client_id.clone());
        let s = &s;
        async move {
            token_request(
                s,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", redirect),
                    ("client_id", &client_id),
                    ("code_verifier", &verifier),
                ],
            )
            .await
        }
    };
    let (wrong, _) = pkce();
    let answer = exchange(wrong, REDIRECT).await;
    assert_eq!((answer.status.as_u16(), answer.body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(answer.header("content-type"), Some("application/json"), "OAuth's JSON, not a problem document");
    let answer = exchange(challenge.clone(), REDIRECT).await;
    assert_eq!(answer.body["error"], json!("invalid_grant"), "the challenge itself is no verifier (plain)");
    let answer = exchange(verifier.clone(), "http://127.0.0.1:9/other").await;
    assert_eq!(answer.body["error"], json!("invalid_grant"), "redirect_uri must match");
    let answer = exchange(verifier.clone(), REDIRECT).await;
    assert_eq!(answer.status.as_u16(), 200, "{}", answer.body);
    assert_eq!(answer.body["token_type"], json!("Bearer"));
    assert_eq!(answer.body["expires_in"], json!(3600));
    assert_eq!(answer.body["scope"], json!("service:read"));
    let access = answer.body["access_token"].as_str().expect("access").to_string();
    let refresh = answer.body["refresh_token"].as_str().expect("refresh").to_string();
    connect(&s, &access).await.cancel().await.expect("close");
    let answer = exchange(verifier.clone(), REDIRECT).await;
    assert_eq!((answer.status.as_u16(), answer.body["error"].as_str()), (400, Some("invalid_grant")));
    let mcp = format!("{}/mcp", s.base);
    let answer = s.client.post(&mcp).bearer_auth(&access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401, "a reused code revokes the tokens it gave");
    let answer =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(answer.body["error"], json!("invalid_grant"));
    assert_eq!(count_matching(&s, "oauth_grants", "code_hash", &code).await, 0, "codes are stored hashed");

    // Refresh tokens rotate; presenting a spent one revokes the family.
    let (client_id, _, refresh) = tokens_for(&s, &org).await;
    let first =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(first.status.as_u16(), 200, "{}", first.body);
    let newer = first.body["refresh_token"].as_str().expect("refresh").to_string();
    let newer_access = first.body["access_token"].as_str().expect("access").to_string();
    let reused =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(reused.body["error"], json!("invalid_grant"));
    let after =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &newer), ("client_id", &client_id)])
            .await;
    assert_eq!(after.body["error"], json!("invalid_grant"), "the whole family is revoked");
    let answer = s.client.post(&mcp).bearer_auth(&newer_access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401);
    // Another client cannot use the refresh token.
    let (_, _, refresh) = tokens_for(&s, &org).await;
    let other = register(&s, REDIRECT).await;
    let answer =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &other)]).await;
    assert_eq!(answer.body["error"], json!("invalid_grant"));
    let answer = token_request(&s, &[("grant_type", "password"), ("client_id", &other)]).await;
    assert_eq!(answer.body["error"], json!("unsupported_grant_type"));
}

async fn only_oauth_access_tokens_open_mcp(s: TestServer) {
    let org = s.org("Acme").await;
    let key = s.key(&org, &[], None).await;
    let (_, _, refresh) = tokens_for(&s, &org).await;
    let mcp = format!("{}/mcp", s.base);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    for auth in [
        Auth::None,
        Auth::Key(key.clone()),
        Auth::Token(org.token.clone()),
        Auth::Raw(format!("Bearer {key}")),
        Auth::Raw(format!("Bearer {}", org.token)),
        Auth::Raw(format!("Bearer {refresh}")),
        Auth::Raw("Bearer fdo_forged".into()),
    ] {
        let answer = s.post("/mcp", &auth, initialize.clone()).await;
        assert_eq!(answer.status.as_u16(), 401, "{auth:?}");
        let challenge = answer.header("www-authenticate").expect("challenge");
        assert!(
            challenge
                .starts_with(&format!(r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource""#, s.base)),
            "{challenge}"
        );
    }
    // And the assistant endpoint's tokens open nothing of the REST API.
    let (_, access, _) = tokens_for(&s, &org).await;
    s.get("/api/hotels", &Auth::Raw(format!("Bearer {access}"))).await.expect(401);
    s.get("/api/hotels", &Auth::Token(access.clone())).await.expect(401);
    let answer = s
        .client
        .post(&mcp)
        .bearer_auth(&access)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .expect("initialize");
    assert_eq!(answer.status().as_u16(), 200);
    let body: Value = answer.json().await.expect("json");
    assert_eq!(body["result"]["protocolVersion"], json!("2025-06-18"));
    assert!(body["result"]["capabilities"]["tools"].is_object());
}

async fn expired_access_tokens_are_refused(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.oauth_access_token_ttl_secs = 1).await else { return };
    let org = s.org("Acme").await;
    let (client_id, access, refresh) = tokens_for(&s, &org).await;
    connect(&s, &access).await.cancel().await.expect("close");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let answer =
        s.client.post(format!("{}/mcp", s.base)).bearer_auth(&access).json(&json!({})).send().await.expect("post");
    assert_eq!(answer.status().as_u16(), 401);
    let challenge = answer.headers()["www-authenticate"].to_str().expect("header");
    assert!(challenge.contains(r#"error="invalid_token""#) && challenge.contains("expired"), "{challenge}");
    // The refresh token still gives a fresh one.
    let refreshed =
        token_request(&s, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)])
            .await;
    assert_eq!(refreshed.status.as_u16(), 200, "{}", refreshed.body);
    assert_eq!(refreshed.body["expires_in"], json!(1));
    // Long-expired tokens are deleted at a later sign-in.
    let digest = hex::encode(Sha256::digest(access.as_bytes()));
    {
        let mut tx = s.db.begin_write().await.expect("tx");
        frontdesk::store::query("UPDATE oauth_tokens SET expires_at = $1 WHERE token_hash = $2")
            .bind("2000-01-01T00:00:00.000000Z")
            .bind(&digest)
            .execute(tx.conn())
            .await
            .expect("update");
        tx.commit().await.expect("commit");
    }
    assert_eq!(count_matching(&s, "oauth_tokens", "token_hash", &digest).await, 1);
    code_for(&s, &org).await;
    assert_eq!(count_matching(&s, "oauth_tokens", "token_hash", &digest).await, 0);
    s.stop().await;
}

async fn metadata_names_the_public_url(engine: Engine) {
    let public = "https://frontdesk.example.com";
    let Some(s) = TestServer::configured(engine, |c| c.public_url = Some(format!("{public}/"))).await else { return };
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let prm = s.get(path, &Auth::None).await;
        assert_eq!(prm.status.as_u16(), 200);
        assert_eq!(prm.body["resource"], json!(format!("{public}/mcp")));
        assert_eq!(prm.body["authorization_servers"], json!([public]));
        assert_eq!(prm.body["scopes_supported"], json!(["service:read"]));
    }
    let asm = s.get("/.well-known/oauth-authorization-server", &Auth::None).await;
    assert_eq!(asm.body["issuer"], json!(public));
    assert_eq!(asm.body["authorization_endpoint"], json!(format!("{public}/oauth/authorize")));
    assert_eq!(asm.body["token_endpoint"], json!(format!("{public}/oauth/token")));
    assert_eq!(asm.body["registration_endpoint"], json!(format!("{public}/oauth/register")));
    assert_eq!(asm.body["revocation_endpoint"], json!(format!("{public}/oauth/revoke")));
    assert_eq!(asm.body["code_challenge_methods_supported"], json!(["S256"]));
    let answer = s.post("/mcp", &Auth::None, json!({})).await;
    assert_eq!(answer.status.as_u16(), 401);
    assert!(answer.header("www-authenticate").is_some_and(
        |h| h.starts_with(&format!(r#"Bearer resource_metadata="{public}/.well-known/oauth-protected-resource""#))
    ));
    // Browser-based clients may fetch the metadata, the token endpoint and /mcp (preflight included).
    let preflight = s
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/mcp", s.base))
        .header("origin", "https://inspector.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, mcp-protocol-version")
        .send()
        .await
        .expect("preflight");
    assert!(preflight.status().is_success());
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    for path in ["/.well-known/oauth-authorization-server", "/mcp"] {
        let res = s
            .client
            .request(
                if path == "/mcp" { reqwest::Method::POST } else { reqwest::Method::GET },
                format!("{}{path}", s.base),
            )
            .header("origin", "https://inspector.example")
            .send()
            .await
            .expect("cors");
        assert_eq!(res.headers()["access-control-allow-origin"], "*", "{path}");
    }
    // Not part of the REST API's document.
    let doc = s.get("/api/openapi.json", &Auth::None).await;
    assert!(doc.body["paths"].as_object().is_some_and(|p| !p.keys().any(|k| k.contains("oauth") || k == "/mcp")));
    s.stop().await;
}
