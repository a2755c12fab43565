//! Input that slipped past the checks, slow clients and headers: pages take only forms, names are single lines, slow
//! request heads are cut off, and answers carry the security headers.

use std::time::Duration;

use crate::common::{day, Auth, TestServer, PASSWORD};
use frontdesk::config::Config;
use frontdesk::domain::identity;
use frontdesk::store::Engine;
use serde_json::json;

use super::{bookable, dashboard_session, form_key, login, offer, REDIRECT};

on_both_engines_configured!(
    pages_take_only_forms,
    names_are_single_lines,
    slow_request_heads_are_cut_off,
    answers_carry_security_headers,
);

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
            audit_retention_days: 3650,
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
