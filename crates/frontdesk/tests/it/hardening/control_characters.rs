//! Control characters are refused where input enters: the API's paths, queries and bodies, and the dashboard's paths,
//! queries and forms.

use crate::common::{day, Auth, TestServer};
use serde_json::json;

use super::{fixture, paths};

on_both_engines!(control_characters_are_refused_where_input_enters, the_dashboard_refuses_control_characters_too,);

async fn control_characters_are_refused_where_input_enters(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 2).await;
    let auth = org.auth();
    let hotels = s.count("hotels").await;

    // Bodies: 400 naming the field (nested and in arrays too), whatever the engine; nothing is written.
    let login = s
        .post("/api/auth/login", &Auth::None, json!({"email": "x\u{0}@y.z", "password": "whatever1"}))
        .await
        .expect(400);
    assert_eq!(login.body["type"], json!("urn:frontdesk:problem:validation"));
    assert_eq!(login.body["errors"][0]["field"], json!("email"), "{}", login.body);
    for (path, body, field) in [
        ("/api/hotels", json!({"name": "Sea\u{0}", "timezone": "UTC", "currency": "EUR"}), "name"),
        ("/api/roomTypes", json!({"hotelId": f.hotel, "name": "A\u{0}B", "maxOccupancy": 2}), "name"),
        ("/api/rooms", json!({"roomTypeId": f.room_type, "name": "1\u{0}1"}), "name"),
        ("/api/ratePlans", json!({"hotelId": f.hotel, "name": "\u{0}"}), "name"),
        ("/api/guests", json!({"firstName": "A\u{0}", "lastName": "B"}), "firstName"),
        ("/api/apiKeys", json!({"name": "k\u{0}"}), "name"),
        ("/api/guests", json!({"firstName": "A", "lastName": "B", "notes": "bell \u{7}"}), "notes"),
        ("/api/guests", json!({"firstName": "A", "lastName": "B", "phone": "\u{85}"}), "phone"),
        (
            "/api/dailyRates",
            json!({"values": [{"ratePlanId": "x\u{0}", "date": day(1), "price": 1}]}),
            "values[0].ratePlanId",
        ),
        (
            "/api/reservations",
            json!({"hotelId": f.hotel, "checkInDate": day(1), "checkOutDate": day(2),
                   "rooms": [{"roomTypeId": f.room_type, "price": 1, "roomId": "\u{0}"}]}),
            "rooms[0].roomId",
        ),
        (
            &format!("/api/hotels/{}/book-reservation", f.hotel),
            json!({"offerId": "x", "guest": {"firstName": "A", "lastName": "B\u{0}", "email": "a@b.co"}}),
            "guest.lastName",
        ),
    ] {
        let answer = s.post(path, &auth, body).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{path}: {}", answer.body);
    }
    let put = s.put(&format!("/api/guests/{}", f.guest), &auth, json!({"lastName": "\u{0}"})).await.expect(400);
    assert_eq!(put.body["errors"][0]["field"], json!("lastName"));
    assert_eq!(s.count("hotels").await, hotels);
    assert_eq!(s.count("api_keys").await, 0);
    // Tab, line feed and carriage return are text.
    s.post("/api/guests", &auth, json!({"firstName": "A", "lastName": "B", "notes": "one\ttwo\r\nthree"}))
        .await
        .expect(200);

    // Path ids: 404 (no id holds a control character), on every path with a parameter, with or without
    // credentials.
    for (method, path) in paths(&s, |_| "a%00b".to_string()) {
        if !path.contains("a%00b") {
            continue;
        }
        let body = matches!(method, reqwest::Method::POST | reqwest::Method::PUT).then(|| json!({}));
        let answer = s.request(method.clone(), &path, &auth, body).await.expect(404);
        assert!(answer.body["detail"].is_string(), "{method} {path}");
    }
    s.get(&format!("/api/hotels/%00/availability?checkInDate={}&checkOutDate={}", day(1), day(2)), &Auth::None)
        .await
        .expect(404);

    // Query parameters: 400 naming the parameter.
    for (path, parameter) in [
        ("/api/guests?email=a%00@b.co".to_string(), "email"),
        ("/api/guests?_ids=%00".to_string(), "_ids"),
        ("/api/guests?hotelId=%01".to_string(), "hotelId"),
        ("/api/reservations?guestId=x%00".to_string(), "guestId"),
        ("/api/reservations?_ids=a,%00".to_string(), "_ids"),
        (format!("/api/rooms?hotelId={}&roomTypeId=%00", f.hotel), "roomTypeId"),
        (format!("/api/ratePlans?hotelId={}&roomTypeId=%00", f.hotel), "roomTypeId"),
        (
            format!("/api/dailyRates?hotelId={}&ratePlanId=%00&dateFrom={}&dateTo={}", f.hotel, day(1), day(2)),
            "ratePlanId",
        ),
        (
            format!("/api/hotels/{}/availability?checkInDate={}%00&checkOutDate={}", f.hotel, day(1), day(2)),
            "checkInDate",
        ),
    ] {
        let answer = s.get(&path, &auth).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(parameter), "{path}: {}", answer.body);
    }

    // Credentials holding one are malformed, not looked up.
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode("fdk_\u{0}x");
    s.get("/api/hotels", &Auth::Raw(format!("Basic {basic}"))).await.expect(401);

    // The OAuth endpoints refuse them in their own format.
    let token = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[("grant_type", "authorization_code"), ("code", "fdc_\u{0}"), ("client_id", "x")])
        .send()
        .await
        .expect("token");
    let token = TestServer::answer(token).await;
    assert_eq!(token.status.as_u16(), 400);
    assert_eq!(token.body["error"], json!("invalid_request"), "{}", token.body);
    let register = s
        .client
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"client_name": "A\u{0}", "redirect_uris": ["https://example.com/cb"]}))
        .send()
        .await
        .expect("register");
    let register = TestServer::answer(register).await;
    assert_eq!(register.status.as_u16(), 400);
    assert_eq!(register.body["error"], json!("invalid_client_metadata"), "{}", register.body);
    assert_eq!(s.count("oauth_clients").await, 0);
    let authorize = s
        .client
        .get(format!("{}/oauth/authorize?client_id=%00&response_type=code", s.base))
        .send()
        .await
        .expect("authorize");
    assert_eq!(authorize.status().as_u16(), 400);
    let sign_in = s
        .client
        .post(format!("{}/oauth/authorize", s.base))
        .form(&[("email", "a\u{0}@b.co"), ("password", "x")])
        .send()
        .await
        .expect("sign in");
    assert_eq!(sign_in.status().as_u16(), 400);
}

/// The value of `name`'s cookie among an answer's `Set-Cookie` headers.
fn set_cookie(answer: &reqwest::Response, name: &str) -> Option<String> {
    answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|cookie| cookie.split(';').next()?.trim().strip_prefix(&format!("{name}=")).map(str::to_string))
}

/// The value of the hidden `_csrf` field of a page.
fn csrf_field(html: &str) -> String {
    let start = html.find("name=\"_csrf\" value=\"").expect("a CSRF field") + "name=\"_csrf\" value=\"".len();
    html[start..].split('"').next().unwrap().to_string()
}

/// The dashboard applies the same rule to its paths, queries and forms, before any page reads them.
async fn the_dashboard_refuses_control_characters_too(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 1).await;
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let url = |path: &str| format!("{}{path}", s.base);
    assert_eq!(browser.get(url("/hotels/%00/today")).send().await.unwrap().status().as_u16(), 404);
    assert_eq!(browser.get(url("/sign-in?next=%2F%00")).send().await.unwrap().status().as_u16(), 400);

    // Signing in with a control character in the e-mail: refused, not looked up.
    let form = browser.get(url("/sign-in")).send().await.unwrap();
    let token = set_cookie(&form, "fd_signin").expect("sign-in token");
    let post = |body: String, cookie: String| {
        browser
            .post(url("/sign-in"))
            .header("cookie", cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let refused =
        post(format!("_csrf={token}&email=a%00%40b.co&password=x"), format!("fd_signin={token}")).await.unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    let email = org.operator_email.replace('@', "%40");
    let signed_in =
        post(format!("_csrf={token}&email={email}&password=correct+horse+battery"), format!("fd_signin={token}"))
            .await
            .unwrap();
    assert_eq!(signed_in.status().as_u16(), 303);
    let session = format!("fd_session={}", set_cookie(&signed_in, "fd_session").expect("a session"));

    // A signed-in form: a guest's name with a control character is refused and nothing changes.
    let edit = browser.get(url(&format!("/hotels/{}/guests/{}/edit", f.hotel, f.guest))).header("cookie", &session);
    let html = edit.send().await.unwrap().text().await.unwrap();
    let csrf = csrf_field(&html);
    let answer = browser
        .post(url(&format!("/hotels/{}/guests/{}", f.hotel, f.guest)))
        .header("cookie", &session)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("_csrf={csrf}&firstName=A%01na&lastName=Lima"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    let guest = s.get(&format!("/api/guests/{}", f.guest), &org.auth()).await.expect(200);
    assert_eq!(guest.body["firstName"], json!("Ana"));

    // A sweep of the dashboard's pages and forms with odd input: pages of their own, but never a server error.
    let other = s.org("Other").await;
    let theirs = fixture(&s, &other, 1).await;
    let h = &f.hotel;
    let mut pages: Vec<String> = Vec::new();
    for odd in
        ["", "x", "-1", "0001-01-01", "2026-02-30", "99999999999999999999", "%FF", "%E2%80%AE", &"9".repeat(3000)]
    {
        pages.extend([
            format!("/hotels/{h}/today?date={odd}"),
            format!("/hotels/{h}/rack?from={odd}&days={odd}"),
            format!("/hotels/{h}/requests?page={odd}"),
            format!("/hotels/{h}/reservations?status={odd}&from={odd}&to={odd}&guest={odd}&source={odd}&sort={odd}&dir={odd}"),
            format!("/hotels/{h}/reservations/new?guest={odd}&checkIn={odd}&roomTypeId={odd}"),
            format!("/hotels/{h}/reservations/quote?checkInDate={odd}&checkOutDate={odd}&adults={odd}&roomTypeId={odd}&ratePlanId={odd}&price={odd}"),
            format!("/hotels/{h}/guests?q={odd}"),
            format!("/switch-hotel?hotel={odd}&section={odd}"),
            format!("/hotels/{odd}/today"),
            format!("/hotels/{h}/reservations/{odd}"),
            format!("/hotels/{h}/guests/{odd}/edit"),
        ]);
    }
    pages.extend([
        format!("/hotels/{}/today", theirs.hotel),
        format!("/hotels/{h}/reservations/{}", theirs.reservation),
        format!("/hotels/{h}/guests/{}", theirs.guest),
    ]);
    for page in &pages {
        let answer = browser.get(url(page)).header("cookie", &session).send().await.unwrap();
        assert!(answer.status().as_u16() < 500, "GET {page:.150}: {}", answer.status());
    }
    let forms = [
        (format!("/hotels/{h}/guests"), "firstName=A&lastName="),
        (format!("/hotels/{h}/guests/{}", f.guest), "firstName=&lastName=%E2%80%AE&email=x&country=zz&language=1"),
        (format!("/hotels/{h}/reservations"), "guestMode=new&firstName=A&lastName=B&roomTypeId=x&checkInDate=0001-01-01&checkOutDate=9999-12-31&adults=-1&price=1e9"),
        (format!("/hotels/{h}/reservations"), "guestMode=existing&guestId=nope&price=99999999999999999999.99"),
        (format!("/hotels/{h}/reservations/{}/status", f.reservation), "status=NOPE"),
        (format!("/hotels/{h}/reservations/{}/dates", f.reservation), "checkInDate=2026-02-30&checkOutDate="),
        (format!("/hotels/{h}/reservations/{}/rooms", f.reservation), "reservationRoomId=x&roomId=y"),
        (format!("/hotels/{h}/reservations/{}/approve", theirs.reservation), ""),
        (format!("/hotels/{h}/guests/{}/delete", theirs.guest), ""),
    ];
    for (path, fields) in &forms {
        let answer = browser
            .post(url(path))
            .header("cookie", &session)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("_csrf={csrf}&{fields}"))
            .send()
            .await
            .unwrap();
        assert!(answer.status().as_u16() < 500, "POST {path} {fields}: {}", answer.status());
    }
}
