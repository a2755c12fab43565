//! What a review of sign-in, invitations and the rates calendar found, each closed and kept closed on both
//! engines: IPv6 addresses counted one by one, invitations hashed before their token was checked, sign-ins without a
//! request limit, an invite form that told whose address an e-mail is, a browser's earlier session outliving a new
//! sign-in, a token's first use not recorded, and a bulk edit that took any number of made-up plan ids.

use std::time::Duration;

use crate::common::{day, Auth, Dashboard, TestServer, PASSWORD, WAIT};
use chrono::TimeDelta;
use frontdesk::domain::identity;
use frontdesk::store::Engine;
use serde_json::json;

use super::{behind_a_proxy, bookable, no_redirects, offer};

on_both_engines_configured!(
    ipv6_addresses_count_by_their_64,
    sign_ins_are_limited_per_address_before_anything_is_written,
    an_invitation_is_checked_before_its_password_is_hashed,
    the_invite_form_says_nothing_of_other_organizations,
    signing_in_again_ends_the_browsers_earlier_session,
    an_operator_tokens_first_use_is_recorded_at_once,
    a_bulk_edit_names_only_the_hotels_plans,
);

/// `POST /api/auth/login` from `address`: the status.
async fn login_from(s: &TestServer, email: &str, password: &str, address: &str) -> u16 {
    let answer = s
        .client
        .post(format!("{}/api/auth/login", s.base))
        .header("x-forwarded-for", address)
        .json(&json!({"email": email, "password": password}))
        .send()
        .await
        .expect("login");
    answer.status().as_u16()
}

/// The dashboard's sign-in form from `address`, with more cookies: (status, set-cookie values).
async fn dashboard_sign_in(
    s: &TestServer,
    email: &str,
    password: &str,
    address: &str,
    cookies: &str,
) -> (u16, Vec<String>) {
    let answer = no_redirects()
        .post(format!("{}/sign-in", s.base))
        .header("cookie", format!("fd_signin=t0k3n; {cookies}"))
        .header("x-forwarded-for", address)
        .form(&[("email", email), ("password", password), ("_csrf", "t0k3n")])
        .send()
        .await
        .expect("sign in");
    let cookies = answer.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap_or("").to_string()).collect();
    (answer.status().as_u16(), cookies)
}

/// Invites `email` from the dashboard of `token`: (status, page).
async fn invite(s: &TestServer, token: &str, email: &str) -> (u16, String) {
    let d = Dashboard::new(s, token);
    let (status, _, page) =
        d.post("/setup/operators", &[("mode", "invite"), ("name", "New Colleague"), ("email", email)]).await;
    (status, page)
}

/// The invitation token a link page shows.
fn invitation_token(page: &str) -> String {
    let start = page.find("invitation?token=").expect("an invitation link") + "invitation?token=".len();
    page[start..].split(['"', '<', '&']).next().expect("a token").to_string()
}

/// Accepts an invitation with `password` from `address`: (status, page).
async fn accept(s: &TestServer, token: &str, password: &str, address: &str) -> (u16, String) {
    let answer = no_redirects()
        .post(format!("{}/invitation", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .header("x-forwarded-for", address)
        .form(&[("_csrf", "t0k3n"), ("token", token), ("password", password)])
        .send()
        .await
        .expect("accept");
    (answer.status().as_u16(), answer.text().await.expect("page"))
}

/// 40 wrong passwords from 40 addresses of one /64 answered 40 × 401: each address was counted alone, and one with
/// no failures of its own never asked the account's count. Now an IPv6 address counts by its /64, for sign-in and
/// for the booking page's limits.
async fn ipv6_addresses_count_by_their_64(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| c.booking_requests_per_address_per_hour = 2).await else { return };
    let org = s.org("Acme").await;
    let email = org.operator_email.as_str();
    for n in 1..=5 {
        assert_eq!(login_from(&s, email, "guess", &format!("2001:db8:7:7::{n:x}")).await, 401);
    }
    assert_eq!(login_from(&s, email, PASSWORD, "2001:db8:7:7:abcd::99").await, 429, "the /64 waits");
    assert_eq!(login_from(&s, email, PASSWORD, "2001:db8:7:8::1").await, 200, "another /64 does not");

    let (hotel, _) = bookable(&s, &org, "Sea", 10).await;
    let book = |from: u64, address: &'static str| {
        let s = &s;
        let hotel = hotel.clone();
        async move {
            let offer = offer(s, &hotel, from, from + 1).await;
            let body = json!({"offerId": offer, "guest": {"firstName": "Ana", "lastName": "Doe",
                              "email": format!("guest{from}@example.com")}});
            let answer = s
                .client
                .post(format!("{}/api/hotels/{hotel}/book-reservation", s.base))
                .header("x-forwarded-for", address)
                .json(&body)
                .send()
                .await
                .expect("book");
            answer.status().as_u16()
        }
    };
    assert_eq!(book(3, "2001:db8:9:9::1").await, 201);
    assert_eq!(book(4, "2001:db8:9:9::2").await, 201);
    assert_eq!(book(5, "2001:db8:9:9:ffff::3").await, 429, "the booking limit counts the /64");
    assert_eq!(book(6, "2001:db8:9:a::1").await, 201);
    s.stop().await;
}

/// Refused sign-ins had no request limit, and each took the database's write lock: 1,500 of them slowed another
/// organization's writes from 1 ms to 43 ms. Now every way to sign in is limited per address by the request
/// limiter, before any password is checked or anything written.
async fn sign_ins_are_limited_per_address_before_anything_is_written(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |c| c.sign_in_rate_limit_per_minute = 3).await else { return };
    let org = s.org("Acme").await;
    for n in 0..3 {
        assert_eq!(login_from(&s, &format!("someone{n}@example.com"), "guess", "203.0.113.90").await, 401);
    }
    let before = s.count("attempt_counts").await;
    assert_eq!(login_from(&s, &org.operator_email, PASSWORD, "203.0.113.90").await, 429);
    let (status, _) = dashboard_sign_in(&s, &org.operator_email, PASSWORD, "203.0.113.90", "").await;
    assert_eq!(status, 429, "the dashboard's sign-in shares the limit");
    let (status, _) = accept(&s, "fdi_made-up", "a long password", "203.0.113.90").await;
    assert_eq!(status, 429, "so does accepting an invitation");
    assert_eq!(s.count("attempt_counts").await, before, "refused requests wrote nothing");
    assert_eq!(login_from(&s, &org.operator_email, PASSWORD, "203.0.113.91").await, 200, "another address signs in");
    s.stop().await;
}

/// 400 made-up invitation accepts cost 9.8 s of CPU: the password was hashed before the token was looked at. Now a
/// made-up link is refused after one read (before the password is even checked), and a real one is counted with
/// the invited operator's sign-ins.
async fn an_invitation_is_checked_before_its_password_is_hashed(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (status, page) = accept(&s, "fdi_made-up", "x", "203.0.113.100").await;
    assert_eq!(status, 404, "{page:.500}");
    // The page answers 404 for a refused password too; the domain says which was checked first.
    let limits = identity::SessionLimits { ttl: TimeDelta::days(1), idle: None };
    match identity::accept_invitation(&s.db, "fdi_made-up", "x", "203.0.113.100", limits, None).await {
        Err(frontdesk::domain::Error::NotFound(_)) => {}
        Err(other) => panic!("the token is checked before the password: {other:?}"),
        Ok(_) => panic!("a made-up link was accepted"),
    }
    let email = format!("invited-{}@example.com", uuid::Uuid::now_v7().simple());
    let (status, page) = invite(&s, &org.token, &email).await;
    assert_eq!(status, 200, "{page:.2000}");
    let token = invitation_token(&page);
    // Five failed sign-ins of the invited address from one address: its accept waits like a sign-in would.
    for _ in 0..5 {
        assert_eq!(login_from(&s, &email, "guess", "203.0.113.101").await, 401);
    }
    let (status, _) = accept(&s, &token, "a long password", "203.0.113.101").await;
    assert_eq!(status, 429);
    let (status, page) = accept(&s, &token, "a long password", "203.0.113.102").await;
    assert_eq!(status, 303, "{page:.500}");
    assert_eq!(login_from(&s, &email, "a long password", "203.0.113.103").await, 200);
    s.stop().await;
}

/// Inviting an address told whether it was an operator's in any organization. Now the invitation is made alike for
/// a taken and a free address; accepting one for a taken address says why it cannot be used.
async fn the_invite_form_says_nothing_of_other_organizations(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let other = s.org("Other").await;
    let org = s.org("Acme").await;
    let free = format!("free-{}@example.com", uuid::Uuid::now_v7().simple());
    let (taken_status, taken_page) = invite(&s, &org.token, &other.operator_email.to_uppercase()).await;
    let (free_status, free_page) = invite(&s, &org.token, &free).await;
    assert_eq!((taken_status, free_status), (200, 200), "{taken_page:.2000}");
    let shape = |page: &str, email: &str| page.replace(email, "E").replace(&invitation_token(page), "T");
    assert_eq!(
        shape(&taken_page, &other.operator_email.to_uppercase()),
        shape(&free_page, &free),
        "the two answers differ only in the address and the link"
    );
    let (status, page) = accept(&s, &invitation_token(&taken_page), "a long password", "203.0.113.110").await;
    assert_eq!(status, 409);
    assert!(page.contains("one address can sign in to one organization only"), "{page:.3000}");
    // The other organization's operator signs in as before, to their own organization.
    let signed_in =
        s.post("/api/auth/login", &Auth::None, json!({"email": other.operator_email, "password": PASSWORD}));
    let me = signed_in.await.expect(200).body["token"].as_str().expect("token").to_string();
    assert_eq!(s.get("/api/auth/me", &Auth::Token(me)).await.expect(200).body["organization"]["id"], json!(other.id));
    let (status, _) = accept(&s, &invitation_token(&free_page), "a long password", "203.0.113.111").await;
    assert_eq!(status, 303);
    // The organization's own operators are its own to see.
    let (status, page) = invite(&s, &org.token, &org.operator_email).await;
    assert_eq!(status, 422);
    assert!(page.contains("an operator of your organization has this e-mail already"), "{page:.3000}");
    s.stop().await;
}

/// Signing in again from a browser left its previous session valid. Now the session the browser sent is ended.
async fn signing_in_again_ends_the_browsers_earlier_session(engine: Engine) {
    let Some(s) = behind_a_proxy(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let other = s.org("Other").await;
    let earlier = org.token.clone();
    s.get("/api/auth/me", &org.auth()).await.expect(200);
    let (status, cookies) =
        dashboard_sign_in(&s, &other.operator_email, PASSWORD, "203.0.113.120", &format!("fd_session={earlier}")).await;
    assert_eq!(status, 303);
    assert!(cookies.iter().any(|c| c.starts_with("fd_session=") && !c.contains(&earlier)), "{cookies:?}");
    s.get("/api/auth/me", &Auth::Token(earlier)).await.expect(401);
    s.get("/api/auth/me", &other.auth()).await.expect(200);
    s.stop().await;
}

/// An operator token's last use was recorded only when it was more than a minute newer than its creation: a token
/// used once right after it was made read "not yet" forever. Now the first use is recorded at once.
async fn an_operator_tokens_first_use_is_recorded_at_once(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let operator = identity::find_operator_by_email(&s.db, &org.operator_email).await.expect("operator");
    let fresh = identity::issue_token(&s.db, operator, TimeDelta::days(1)).await.expect("token");
    s.get("/api/hotels", &Auth::Token(fresh.token.clone())).await.expect(200);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut conn = s.db.read().await.expect("connection");
        let used: Option<String> = frontdesk::store::query(
            "SELECT CAST(last_used_at AS TEXT) AS used FROM access_tokens WHERE token_hash = $1",
        )
        .bind(frontdesk::domain::secrets::digest(&fresh.token))
        .fetch_one(&mut conn)
        .await
        .expect("the token")
        .get("used");
        drop(conn);
        if used.is_some() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the first use was not recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.stop().await;
}

/// A bulk rate edit with 40,000 made-up plan ids answered 500 ("too many SQL variables"), and its preview ran
/// 40,000 queries. Now a form names at most 100 plans, all the hotel's, or is refused beside the field.
async fn a_bulk_edit_names_only_the_hotels_plans(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 1).await;
    let (other_hotel, _) = bookable(&s, &org, "Mountain", 1).await;
    let plans = |hotel: &str| {
        let s = &s;
        let path = format!("/api/ratePlans?hotelId={hotel}");
        let auth = org.auth();
        async move { s.get(&path, &auth).await.expect(200).body[0]["id"].as_str().expect("plan").to_string() }
    };
    let (own, foreign) = (plans(&hotel).await, plans(&other_hotel).await);
    let d = Dashboard::new(&s, &org.token);
    let bulk = |ids: Vec<String>, step: &'static str| {
        let d = &d;
        let path = format!("/hotels/{hotel}/rates/bulk");
        async move {
            let (from, to) = (day(1), day(2));
            let mut form: Vec<(&str, &str)> =
                vec![("from", &from), ("to", &to), ("priceAction", "set"), ("price", "150.00"), ("step", step)];
            for weekday in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] {
                form.push(("weekdays", weekday));
            }
            for id in &ids {
                form.push(("ratePlanIds", id));
            }
            let (status, _, page) = d.post(&path, &form).await;
            (status, page)
        }
    };
    let made_up: Vec<String> = (0..40_000).map(|n| format!("x{n}")).collect();
    for step in ["preview", "apply"] {
        let (status, page) = bulk(made_up.clone(), step).await;
        assert_eq!(status, 422, "{step}: {page:.500}");
        assert!(page.contains("Choose at most 100 rate plans"), "{step}: {page:.3000}");
        let (status, page) = bulk(vec![own.clone(), foreign.clone()], step).await;
        assert_eq!(status, 422, "{step}: {page:.500}");
        assert!(page.contains("Choose rate plans of this hotel."), "{step}: {page:.3000}");
    }
    let path =
        format!("/api/dailyRates?hotelId={other_hotel}&ratePlanId={foreign}&dateFrom={}&dateTo={}", day(1), day(2));
    let before = s.get(&path, &org.auth()).await;
    assert_eq!(before.expect(200).body[0]["price"], json!(10000), "the other hotel's plan is unchanged");
    let (status, page) = bulk(vec![own], "apply").await;
    assert!(status == 200 || status == 303, "{status}: {page:.500}");
    s.stop().await;
}
