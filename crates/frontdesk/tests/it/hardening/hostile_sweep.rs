//! A sweep of hostile requests over every operation of the REST document.

use crate::common::{day, Auth, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

use super::{fixture, paths, Fixture};

on_both_engines_configured!(hostile_requests_over_every_endpoint);

/// A body the operation accepts, for the sweep to spoil one field at a time.
fn valid_body(schema: &str, f: &Fixture) -> Value {
    match schema {
        "ApiKeyIn" => json!({"name": "k", "scopes": ["rooms:read"], "hotelId": f.hotel, "rateLimitPerMinute": 100}),
        "ApiKeyPatch" => json!({"name": "k2", "scopes": [], "rateLimitPerMinute": null}),
        "LoginIn" => json!({"email": "nobody@example.com", "password": "wrong password"}),
        "DailyRatesIn" => json!({"values": [{"ratePlanId": f.plan, "date": day(2), "price": 9000, "availability": 3,
            "stopSell": false, "closedToArrival": false, "closedToDeparture": false, "minStay": 1, "maxStay": 9}]}),
        "GuestIn" | "GuestPatch" => json!({"hotelId": f.hotel, "firstName": "Ana", "lastName": "Lima",
            "email": "ana@example.com", "phone": "+351 1", "country": "PT", "language": "pt-PT", "notes": "n"}),
        "HotelIn" | "HotelPatch" => json!({"name": "H", "timezone": "Europe/Lisbon", "currency": "EUR",
            "checkInTime": "15:00", "checkOutTime": "11:00", "addressLine1": "a", "city": "c", "country": "PT",
            "publicBooking": true}),
        "BookingIn" => json!({"offerId": "x.y", "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}}),
        "RatePlanIn" => json!({"hotelId": f.hotel, "roomTypeId": f.room_type, "name": "P", "code": "P1",
            "currency": "EUR", "active": true}),
        "RatePlanPatch" => json!({"roomTypeId": f.room_type, "name": "P", "currency": "EUR", "active": true}),
        "ReservationIn" => json!({"hotelId": f.hotel, "guestId": f.guest, "checkInDate": day(20),
            "checkOutDate": day(21), "adults": 2, "totalPrice": 100, "currency": "EUR", "source": "API",
            "rooms": [{"roomTypeId": f.room_type, "ratePlanId": f.plan, "adults": 1, "price": 100}]}),
        "ReservationPatch" => json!({"notes": "n", "adults": 2, "checkInDate": day(30), "checkOutDate": day(31)}),
        "RoomTypeIn" => json!({"hotelId": f.hotel, "name": "T", "maxOccupancy": 3, "maxAdults": 2, "maxChildren": 1}),
        "RoomTypePatch" => json!({"name": "T", "maxOccupancy": 3, "maxAdults": 2, "maxChildren": 1}),
        "RoomIn" => json!({"roomTypeId": f.room_type, "name": "900", "floor": 9, "housekeepingStatus": "CLEAN"}),
        "RoomPatch" => json!({"name": "901", "floor": 9, "housekeepingStatus": "DIRTY"}),
        "WebhookSubscriptionIn" => json!({"hotelId": f.hotel, "url": "http://127.0.0.1:9/h", "events": []}),
        "WebhookSubscriptionPatch" => json!({"url": "http://127.0.0.1:9/h", "events": [], "active": true}),
        "BillingPatch" => json!({"pricesIncludeVat": true, "vatRates": [
            {"category": "ACCOMMODATION", "rateBasisPoints": 700}, {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
            {"category": "OTHER", "rateBasisPoints": 1900}],
            "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300, "maxNights": 21},
            "extras": [{"code": "BREAKFAST", "name": "Breakfast", "unitPrice": 2000,
                        "parts": [{"category": "FOOD_AND_BEVERAGE", "shareBasisPoints": 10000}]}]}),
        "ChargeIn" => json!({"description": "Parking", "unitPrice": 1500, "category": "OTHER", "quantity": 1,
            "serviceDate": day(30)}),
        "AllowanceIn" => json!({"amount": 100, "reason": "Goodwill"}),
        "PaymentIn" => json!({"method": "CARD", "amount": 100, "currency": "EUR", "reference": "T-1"}),
        "RefundIn" => json!({"amount": 1, "reason": "r"}),
        "FeeIn" => json!({"kind": "NO_SHOW", "amount": 100, "category": "ACCOMMODATION", "reason": "r"}),
        "CityTaxExemptionIn" => json!({"reason": "Business travel"}),
        "InvoiceIn" => json!({"language": "de", "recipient": {"kind": "COMPANY", "name": "Acme", "street": "Rua 2",
            "postalCode": "1000-002", "city": "Lisboa", "country": "PT", "vatId": "PT999999990"}, "note": "PO 1"}),
        "CancellationIn" => json!({"reason": "Wrong recipient"}),
        "RoleIn" => json!({"role": "MANAGER", "hotelIds": [f.hotel]}),
        other => panic!("the sweep has no valid body for {other}"),
    }
}

/// Values no field expects.
fn hostile_values() -> Vec<Value> {
    let mut nested = json!(1);
    for _ in 0..100 {
        nested = json!([nested]);
    }
    vec![
        Value::Null,
        json!(""),
        json!(" "),
        json!("\u{0}"),
        json!("\u{202E}\u{FEFF}\u{1F600}e\u{301}"),
        json!("x".repeat(20_000)),
        json!(-1),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!(1e300),
        json!(true),
        json!([]),
        json!({"a": 1}),
        nested,
        json!("2026-02-30"),
        json!("../../etc/passwd"),
    ]
}

/// What is wrong with an answer, if anything: a server error, or an error that is not a problem document of its
/// status.
fn unsound(answer: &crate::common::Answer, what: &str) -> Option<String> {
    let status = answer.status.as_u16();
    let problem =
        answer.header("content-type") == Some("application/problem+json") && answer.body["status"] == json!(status);
    (status >= 500 || (status >= 400 && !problem)).then(|| format!("{what}: {status} {:.300}", answer.body.to_string()))
}

#[track_caller]
fn assert_sound(answer: &crate::common::Answer, what: &str) {
    if let Some(wrong) = unsound(answer, what) {
        panic!("{wrong}");
    }
}

/// Every operation of the REST document, fed a table of hostile inputs: path ids (another organization's, control
/// characters, long, odd), every query parameter, every body field (and whole bodies of the wrong shape). No answer
/// is a server error, and every error is a problem document.
async fn hostile_requests_over_every_endpoint(engine: frontdesk::store::Engine) {
    use futures::StreamExt;
    let Some(s) = TestServer::configured(engine, |c| c.rate_limits = false).await else { return };
    let org = s.org("Acme").await;
    let other = s.org("Other").await;
    let f = fixture(&s, &org, 2).await;
    let theirs = fixture(&s, &other, 1).await;
    let auth = org.auth();
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).expect("document");
    let ids = |name: &str, f: &Fixture| match name {
        "hotelId" => f.hotel.clone(),
        "roomTypeId" => f.room_type.clone(),
        "roomId" => f.rooms[0].clone(),
        "ratePlanId" => f.plan.clone(),
        "guestId" => f.guest.clone(),
        "reservationId" => f.reservation.clone(),
        "folioId" => f.folio.clone(),
        "lineId" => f.folio_line.clone(),
        "invoiceId" => f.invoice.clone(),
        _ => "01a20000-0000-7000-8000-000000000000".to_string(),
    };
    let long_id = "x".repeat(3000);
    let odd_ids = ["%00", "a%01b", "%FF%FE", long_id.as_str(), "..%2F..", "%F0%9F%98%80", "'%20OR%201=1", "%20"];

    let mut requests: Vec<(reqwest::Method, String, Option<Value>, String)> = Vec::new();
    for (template, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let method: reqwest::Method = method.to_uppercase().parse().unwrap();
            if template == "/api/auth/logout" {
                continue;
            }
            let params = operation["parameters"].as_array().cloned().unwrap_or_default();
            let path_params: Vec<String> =
                params.iter().filter(|p| p["in"] == "path").map(|p| p["name"].as_str().unwrap().to_string()).collect();
            let fill = |value: &dyn Fn(&str) -> String| {
                let mut path = template.clone();
                for name in &path_params {
                    path = path.replace(&format!("{{{name}}}"), &value(name));
                }
                path
            };
            let mine = fill(&|name| ids(name, &f));
            let schema = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                .as_str()
                .map(|r| r.rsplit('/').next().unwrap().to_string());
            let body = schema.as_deref().map(|name| valid_body(name, &f));
            // Path ids: another organization's, and ids no record can have. DELETE only ever gets these, so the
            // fixture survives the sweep.
            if !path_params.is_empty() {
                requests.push((method.clone(), fill(&|name| ids(name, &theirs)), body.clone(), "their id".into()));
                for odd in &odd_ids {
                    requests.push((method.clone(), fill(&|_| odd.to_string()), body.clone(), format!("id {odd:.20}")));
                }
            }
            if method == reqwest::Method::DELETE {
                continue;
            }
            // Query parameters, each spoiled alone (the others valid), and repeated.
            let query: Vec<(String, String)> = params
                .iter()
                .filter(|p| p["in"] == "query")
                .map(|p| {
                    let name = p["name"].as_str().unwrap().to_string();
                    let value = match name.as_str() {
                        "hotelId" => f.hotel.clone(),
                        "ratePlanId" => f.plan.clone(),
                        "checkInDate" | "dateFrom" => day(1),
                        "checkOutDate" | "dateTo" => day(3),
                        _ => String::new(),
                    };
                    (name, value)
                })
                .collect();
            for (i, (name, _)) in query.iter().enumerate() {
                for hostile in [
                    "%00",
                    "-1",
                    "99999999999999999999",
                    "9223372036854775807",
                    "1.5",
                    "",
                    "x%20y",
                    "%FF",
                    &"9".repeat(5000),
                    "0001-01-01",
                    "2026-02-30T25:61:00Z",
                    "true",
                    "[]",
                ] {
                    let mut pairs: Vec<String> = query
                        .iter()
                        .enumerate()
                        .filter(|(j, (_, v))| *j != i && !v.is_empty())
                        .map(|(_, (n, v))| format!("{n}={v}"))
                        .collect();
                    pairs.push(format!("{name}={hostile}"));
                    requests.push((
                        method.clone(),
                        format!("{mine}?{}", pairs.join("&")),
                        body.clone(),
                        format!("{name}={hostile:.20}"),
                    ));
                }
                requests.push((
                    method.clone(),
                    format!("{mine}?{name}=1&{name}=2"),
                    body.clone(),
                    format!("{name} twice"),
                ));
            }
            // Body fields, each spoiled alone, and bodies of the wrong shape.
            if let Some(body) = &body {
                let mut fields: Vec<(String, Vec<&str>)> = Vec::new();
                // Every property the document lists, also those the valid body leaves out.
                let listed = &doc["components"]["schemas"][schema.as_deref().unwrap()]["properties"];
                for name in listed.as_object().map(|p| p.keys().collect::<Vec<_>>()).unwrap_or_default() {
                    if body.get(name).is_none() {
                        fields.push((name.clone(), vec![name]));
                    }
                }
                for (name, value) in body.as_object().unwrap() {
                    fields.push((name.clone(), vec![name]));
                    if let Some(first) = value.as_array().and_then(|a| a.first()).and_then(|v| v.as_object()) {
                        for inner in first.keys() {
                            fields.push((format!("{name}[0].{inner}"), vec![name, "0", inner]));
                        }
                    }
                    if let Some(object) = value.as_object() {
                        for inner in object.keys() {
                            fields.push((format!("{name}.{inner}"), vec![name, inner]));
                        }
                    }
                }
                for (label, pointer) in fields {
                    for hostile in hostile_values() {
                        let mut spoiled = body.clone();
                        let mut target = &mut spoiled;
                        for key in &pointer {
                            target = match key.parse::<usize>() {
                                Ok(i) => &mut target[i],
                                Err(_) => &mut target[*key],
                            };
                        }
                        *target = hostile.clone();
                        let what = format!("{label}={:.30}", hostile.to_string());
                        requests.push((method.clone(), mine.clone(), Some(spoiled), what));
                    }
                }
                for whole in [json!([]), json!("x"), Value::Null, json!(7), json!({"unknown": 1})] {
                    requests.push((method.clone(), mine.clone(), Some(whole.clone()), format!("body {whole}")));
                }
            } else if method == reqwest::Method::GET {
                requests.push((method.clone(), mine.clone(), None, "as is".into()));
            }
        }
    }
    // As the operator, and as an API key with every scope pinned to the hotel (another path through tenancy).
    let pinned = Auth::Key(s.key(&org, &Scope::ALL, Some(&f.hotel)).await);
    let requests: Vec<_> = requests
        .into_iter()
        .enumerate()
        .map(|(i, (method, path, body, what))| {
            (if i % 2 == 0 { auth.clone() } else { pinned.clone() }, method, path, body, what)
        })
        .collect();
    let count = requests.len();
    let server = &s;
    let changes_before = committed_changes(&s).await;
    let written = std::sync::atomic::AtomicUsize::new(0);
    let written = &written;
    let wrong: Vec<String> = futures::stream::iter(requests)
        .map(|(auth, method, path, body, what)| async move {
            let answer = server.request(method.clone(), &path, &auth, body).await;
            if method != reqwest::Method::GET && answer.status.is_success() {
                written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            unsound(
                &answer,
                &format!(
                    "{method} {path:.120} ({what}, {})",
                    if matches!(auth, Auth::Key(_)) { "key" } else { "operator" }
                ),
            )
        })
        .buffer_unordered(4)
        .filter_map(|wrong| async move { wrong })
        .collect()
        .await;
    assert!(wrong.is_empty(), "{} of {count} answers are unsound:\n{}", wrong.len(), wrong.join("\n"));
    // Every write the sweep got through is one committed change in the audit log, and nothing refused is: as many
    // changes as successful writes (the sign-in requests fail, and reads write no entry).
    let written = written.load(std::sync::atomic::Ordering::Relaxed) as i64;
    assert!(written > 0, "the sweep's valid bodies write something");
    assert_eq!(committed_changes(&s).await - changes_before, written, "one audit change per successful write");

    // Bodies that are not JSON, or JSON no parser should have to walk.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for raw in ["{", "{\"name\": }", "\u{0}", "{\"name\":\"a\"}garbage", deep.as_str(), "{\"a\":\"\\ud800\"}"] {
        let answer = s
            .client
            .post(format!("{}/api/guests", s.base))
            .header("authorization", format!("Token {}", org.token))
            .header("content-type", "application/json")
            .body(raw.to_string())
            .send()
            .await
            .expect("sent");
        let answer = TestServer::answer(answer).await;
        assert_sound(&answer, &format!("raw body {raw:.30}"));
        assert_eq!(answer.status.as_u16(), 400, "raw body {raw:.30}: {}", answer.body);
    }
    assert!(count > 2000, "the sweep sent {count} requests");

    // Methods no route has, on every path; HEAD answers like GET without a body. (CONNECT is left out: its request
    // target is a host, not a path, so it never names an API path.)
    for (_, path) in paths(&s, |name| ids(name, &f)) {
        for method in ["PATCH", "OPTIONS", "TRACE", "PROPFIND"] {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let answer = s.request(method.clone(), &path, &auth, None).await;
            assert_sound(&answer, &format!("{method} {path}"));
        }
        let head = s.request(reqwest::Method::HEAD, &path, &auth, None).await;
        assert!(head.status.as_u16() < 500, "HEAD {path}: {}", head.status);
    }
    // Idempotency keys of every shape.
    let booking = json!({"offerId": "x.y", "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}});
    for key in ["", " ", "k".repeat(201).as_str(), "\u{e9}t\u{e9}", "a\tb", "\u{1F600}"] {
        let answer = s
            .client
            .post(format!("{}/api/hotels/{}/book-reservation", s.base, f.hotel))
            .header("idempotency-key", reqwest::header::HeaderValue::from_bytes(key.as_bytes()).unwrap())
            .json(&booking)
            .send()
            .await
            .expect("sent");
        let answer = TestServer::answer(answer).await;
        assert_sound(&answer, &format!("Idempotency-Key {key:?}"));
    }
    // Credentials of every shape.
    let long_basic = format!("Basic {}", "A".repeat(50_000));
    let long_token = format!("Token fdt_{}", "x".repeat(10_000));
    for value in [
        "Basic",
        "Basic =",
        &long_basic,
        "Token",
        "Token \u{7f}",
        "Bearer x",
        "basic ZmRrX3g=",
        "Digest username=x",
        &long_token,
    ] {
        if let Ok(header) = reqwest::header::HeaderValue::from_str(value) {
            let answer = s
                .client
                .get(format!("{}/api/hotels", s.base))
                .header("authorization", header)
                .send()
                .await
                .expect("sent");
            let answer = TestServer::answer(answer).await;
            assert_sound(&answer, &format!("Authorization {value:.30}"));
            assert_eq!(answer.status.as_u16(), 401, "Authorization {value:.30}");
        }
    }

    // The OAuth endpoints answer in their own formats, but never with a server error.
    let forms: Vec<Vec<(&str, String)>> = vec![
        vec![],
        vec![("grant_type", "authorization_code".into()), ("code", "x".repeat(10_000))],
        vec![("grant_type", "refresh_token".into()), ("refresh_token", "fdr_\u{1F600}".into())],
        vec![("grant_type", "\u{0}".into())],
        vec![("token", "fdo_x".into()), ("token_type_hint", "access_token".into())],
        vec![("grant_type", "password".into()), ("username", "a".into())],
    ];
    for path in ["/oauth/token", "/oauth/revoke", "/oauth/authorize", "/oauth/authorize/consent"] {
        for form in &forms {
            let answer = s.client.post(format!("{}{path}", s.base)).form(form).send().await.expect("sent");
            let status = answer.status().as_u16();
            assert!(status < 500, "POST {path} {form:?}: {status}");
        }
    }
    for query in [
        "",
        "client_id=%00",
        "response_type=code&client_id=x&redirect_uri=javascript:alert(1)",
        &format!("client_id={}", "x".repeat(20_000)),
        "client_id=a&client_id=b",
        "%FF=%FE",
    ] {
        for path in
            ["/oauth/authorize", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource"]
        {
            let answer = s.client.get(format!("{}{path}?{query}", s.base)).send().await.expect("sent");
            let status = answer.status().as_u16();
            assert!(status < 500, "GET {path}?{query:.40}: {status}");
        }
    }
    for body in [
        json!({}),
        json!([]),
        json!({"redirect_uris": "x"}),
        json!({"redirect_uris": ["http://\u{0}"]}),
        json!({"redirect_uris": ["https://a.b/c"], "client_name": "x".repeat(100_000)}),
        json!({"redirect_uris": vec!["https://a.b/c"; 1000]}),
        json!({"redirect_uris": [1, 2]}),
    ] {
        let answer = TestServer::answer(
            s.client.post(format!("{}/oauth/register", s.base)).json(&body).send().await.expect("sent"),
        )
        .await;
        assert!(answer.status.as_u16() < 500, "register {:.60}: {} {}", body.to_string(), answer.status, answer.body);
        if answer.status.is_client_error() {
            assert!(answer.body["error"].is_string(), "register {:.60}: {}", body.to_string(), answer.body);
        }
    }
    // /mcp without a token: the challenge, as a problem document.
    let answer = s.post("/mcp", &Auth::None, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_sound(&answer, "/mcp without a token");
}

/// The changes the audit log holds (each a committed write, with one entry per record it wrote).
async fn committed_changes(s: &TestServer) -> i64 {
    let mut conn = s.db.read().await.expect("connection");
    let row = frontdesk::store::query("SELECT COUNT(DISTINCT change_id) AS n FROM audit_entries")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    row.try_get("n").expect("n")
}
