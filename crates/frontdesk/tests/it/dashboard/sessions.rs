//! Signing in and out: mistakes are shown, then the front office; signing out ends the session; attempts are limited
//! per e-mail; an expired session returns to the page after signing in; forged cross-site posts are refused.

use crate::common::browser::Browser;
use crate::common::{delivering, Auth, PASSWORD};
use frontdesk::store::Engine;
use serde_json::json;

use super::{guest, hotel, no_redirects, stay};

on_both_engines_configured!(
    signing_in_shows_mistakes_then_the_front_office,
    forged_cross_site_posts_are_refused,
    signing_out_ends_the_session,
    sign_in_attempts_are_limited_per_email,
    an_expired_session_returns_to_the_page_after_sign_in,
);

async fn signing_in_shows_mistakes_then_the_front_office(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    stay(&s, &org, &h, &ana, 0, 2, Some(&h.rooms[0])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // A page asked for first: the sign-in page, which then leads back to it.
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    assert!(b.path().await.starts_with("/sign-in?next="), "{}", b.path().await);
    b.fill("#email", &org.operator_email).await;
    b.fill("#password", "not the password").await;
    b.click("button[type=submit]").await;
    b.wait_for_text("The e-mail or password is not right.").await;
    assert_eq!(b.find("#password").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the sign-in page").await;
    b.fill("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_for_text("Arrivals").await;
    assert_eq!(b.path().await, format!("/hotels/{}/today", h.id));
    let text = b.page_text().await;
    assert!(text.contains("Seaside Inn") && text.contains("Ana Silva"), "{text}");
    b.assert_page_ok("the Today page").await;
    b.close().await;
    // The session cookie is HttpOnly, SameSite=Lax.
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let answer = no_redirects
        .post(format!("{}/sign-in", s.base))
        .form(&[("email", org.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "x")])
        .header("cookie", "fd_signin=x")
        .send()
        .await
        .unwrap();
    let cookie = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("fd_session="))
        .unwrap_or_default()
        .to_string();
    assert!(
        cookie.starts_with("fd_session=fdt_") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
}

async fn forged_cross_site_posts_are_refused(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    let id = stay(&s, &org, &h, &ana, 2, 4, None).await;
    // Another site with a form that posts to the dashboard as soon as it loads.
    let target = format!("{}/hotels/{}/reservations/{id}/status", s.base, h.id);
    let html = format!(
        "<!doctype html><html><body><form id=f method=post action=\"{target}\">\
         <input name=to value=CANCELLED><input name=confirmed value=yes><input name=_csrf value=guess></form>\
         <script>document.getElementById('f').submit()</script></body></html>"
    );
    let evil = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let evil_url = format!("http://{}/", listener.local_addr().unwrap());
    let evil_task = tokio::spawn(async move { axum::serve(listener, evil).await });
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.client.goto(&evil_url).await.unwrap();
    b.wait_for_text("sent from another site").await;
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CONFIRMED"));
    // Without the origin headers a browser sends, the form's token still decides.
    let cookie = b.client.get_named_cookie("fd_session").await.unwrap();
    let cookie = format!("fd_session={}", cookie.value());
    for token in ["", "guess", "0123456789abcdef0123456789abcdef"] {
        let answer = s
            .client
            .post(&target)
            .header("cookie", &cookie)
            .form(&[("to", "CANCELLED"), ("confirmed", "yes"), ("_csrf", token)])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 403, "token {token:?}");
    }
    // Another origin, even with the right cookie, is refused before the token is looked at.
    let answer = s
        .client
        .post(&target)
        .header("cookie", &cookie)
        .header("origin", "http://evil.example")
        .form(&[("to", "CANCELLED"), ("confirmed", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
    assert_eq!(s.get(&format!("/api/reservations/{id}"), &org.auth()).await.body["status"], json!("CONFIRMED"));
    // The pages may not be framed by other sites.
    let page = s.client.get(format!("{}/sign-in", s.base)).send().await.unwrap();
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    evil_task.abort();
    b.close().await;
}

async fn signing_out_ends_the_session(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    let token = b.client.get_named_cookie("fd_session").await.unwrap().value().to_string();
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(200);
    b.click_text("button", "Sign out").await;
    b.wait_for_text("You are signed out.").await;
    // The token is revoked, not just forgotten by the browser.
    s.get("/api/auth/me", &Auth::Token(token.clone())).await.expect(401);
    let reused = s
        .client
        .get(format!("{}/hotels/{}/today", s.base, h.id))
        .header("cookie", format!("fd_session={token}"))
        .send()
        .await
        .unwrap();
    assert!(reused.url().path().starts_with("/sign-in"), "{}", reused.url());
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    assert!(b.path().await.starts_with("/sign-in"), "{}", b.path().await);
    b.close().await;
}

async fn sign_in_attempts_are_limited_per_email(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let client = no_redirects();
    let attempt = |password: &'static str| {
        client
            .post(format!("{}/sign-in", s.base))
            .header("cookie", "fd_signin=t0k3n")
            .form(&[("email", org.operator_email.as_str()), ("password", password), ("_csrf", "t0k3n")])
            .send()
    };
    for _ in 0..5 {
        assert_eq!(attempt("wrong password").await.unwrap().status().as_u16(), 401);
    }
    // The sixth from this address is refused before the password is looked at, even the right one, until the wait
    // it is told is over (tests/it/security/password_guessing.rs has the rest of the rules).
    let refused = attempt(PASSWORD).await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert!(refused.text().await.unwrap().contains("Too many failed sign-ins. Wait 1 second"));
    // Another operator's e-mail from the same address is not affected by that limit.
    let other = s.org("Other").await;
    let answer = client
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", other.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    // A sign-in form without its doubled token is refused.
    let answer = client
        .post(format!("{}/sign-in", s.base))
        .form(&[("email", other.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 403);
}

async fn an_expired_session_returns_to_the_page_after_sign_in(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let operator = frontdesk::domain::identity::find_operator_by_email(&s.db, &org.operator_email).await.unwrap();
    let expired =
        frontdesk::domain::identity::issue_token(&s.db, operator, chrono::TimeDelta::seconds(-1)).await.unwrap();
    let page = format!("/hotels/{}/rack?days=30", h.id);
    let answer = no_redirects()
        .get(format!("{}{page}", s.base))
        .header("cookie", format!("fd_session={}", expired.token))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let location = answer.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        location,
        format!("/sign-in?next={}", url::form_urlencoded::byte_serialize(page.as_bytes()).collect::<String>())
    );
    let cookies: Vec<&str> = answer.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(cookies.iter().any(|c| c.starts_with("fd_session=;") && c.contains("Max-Age=0")), "{cookies:?}");
    // Signing in from there lands on the page asked for.
    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&location).await;
    b.fill("#email", &org.operator_email).await;
    b.fill("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_for_text("Room rack").await;
    assert_eq!(b.path().await, page);
    b.close().await;
}
