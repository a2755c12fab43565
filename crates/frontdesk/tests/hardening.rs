//! Hostile and careless input, on both engines: control characters, overbooking through room moves, money
//! bounds, pinned keys on the public endpoints, long folios, nulls in partial updates, missing parameters, field
//! relations and date ranges, and a sweep of hostile requests over every endpoint.

mod common;

use common::{day, Auth, Org, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    control_characters_are_refused_where_input_enters,
    missing_body_fields_are_named,
    query_parameters_answer_in_one_shape,
    null_is_refused_for_fields_that_cannot_be_cleared,
    pinned_keys_cannot_use_another_hotels_public_endpoints,
    long_folios_keep_their_order,
);

/// A hotel open to public booking with everything a request can name: (hotel, room type, room, rate plan, guest,
/// reservation). The room type has `rooms` rooms; the plan is priced for the next 40 nights.
pub struct Fixture {
    pub hotel: String,
    pub room_type: String,
    pub rooms: Vec<String>,
    pub plan: String,
    pub guest: String,
    pub reservation: String,
}

async fn fixture(s: &TestServer, org: &Org, rooms: usize) -> Fixture {
    let hotel = s
        .post(
            "/api/hotels",
            &org.auth(),
            json!({"name": "Sea", "timezone": "Europe/Lisbon", "currency": "EUR", "publicBooking": true}),
        )
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .expect("hotel id")
        .to_string();
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut room_ids = Vec::new();
    for n in 0..rooms {
        room_ids.push(
            s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await,
        );
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let values: Vec<Value> = (0..40).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Lima"})).await;
    let reservation = s
        .create(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(30), "checkOutDate": day(31),
                   "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
        )
        .await;
    Fixture { hotel, room_type, rooms: room_ids, plan, guest, reservation }
}

/// Every path of the REST document with its parameters filled in by `fill` (parameter name -> value).
fn paths(s: &TestServer, fill: impl Fn(&str) -> String) -> Vec<(reqwest::Method, String)> {
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).expect("document");
    let _ = s;
    let mut out = Vec::new();
    for (path, operations) in doc["paths"].as_object().expect("paths") {
        for method in operations.as_object().expect("operations").keys() {
            let mut filled = path.clone();
            while let Some(start) = filled.find('{') {
                let end = filled[start..].find('}').expect("closing brace") + start;
                let name = filled[start + 1..end].to_string();
                filled.replace_range(start..=end, &fill(&name));
            }
            out.push((method.to_uppercase().parse().expect("method"), filled));
        }
    }
    out
}

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

    let _ = Scope::ALL;
}

async fn missing_body_fields_are_named(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 1).await;
    let auth = org.auth();
    for (path, body, field) in [
        ("/api/apiKeys".to_string(), json!({}), "name"),
        ("/api/hotels".to_string(), json!({"name": "Sea", "currency": "EUR"}), "timezone"),
        ("/api/guests".to_string(), json!({"firstName": "Ana"}), "lastName"),
        ("/api/auth/login".to_string(), json!({"email": "a@b.co"}), "password"),
        ("/api/dailyRates".to_string(), json!({"values": [{"ratePlanId": f.plan, "date": day(1)}]}), "values[0].price"),
        (
            "/api/reservations".to_string(),
            json!({"hotelId": f.hotel, "checkInDate": day(1), "checkOutDate": day(2), "rooms": [{"price": 1}]}),
            "rooms[0].roomTypeId",
        ),
        (
            format!("/api/hotels/{}/book-reservation", f.hotel),
            json!({"offerId": "x", "guest": {"firstName": "A", "lastName": "B"}}),
            "guest.email",
        ),
    ] {
        let answer = s.post(&path, &auth, body).await.expect(400);
        assert_eq!(answer.body["type"], json!("urn:frontdesk:problem:validation"), "{path}");
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{path}: {}", answer.body);
        assert_eq!(answer.body["errors"][0]["message"], json!("is required"), "{path}: {}", answer.body);
    }
    // A name given twice in one object is refused (serde_json alone would keep the last silently).
    let raw = s
        .client
        .post(format!("{}/api/apiKeys", s.base))
        .header("authorization", format!("Token {}", org.token))
        .header("content-type", "application/json")
        .body(r#"{"name": "a", "name": "b"}"#)
        .send()
        .await
        .expect("sent");
    let raw = TestServer::answer(raw).await.expect(400);
    assert_eq!(raw.body["errors"][0]["field"], json!("name"), "{}", raw.body);
    assert_eq!(s.count("api_keys").await, 0);
}

async fn query_parameters_answer_in_one_shape(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 1).await;
    let auth = org.auth();
    let rates = |q: &str| format!("/api/dailyRates?{q}");
    let search = |q: &str| format!("/api/hotels/{}/availability?{q}", f.hotel);
    for (path, field, message) in [
        (rates(&format!("ratePlanId={}&dateFrom={}&dateTo={}", f.plan, day(1), day(2))), "hotelId", "required"),
        (rates(&format!("hotelId={}&dateFrom={}&dateTo={}", f.hotel, day(1), day(2))), "ratePlanId", "is required"),
        (rates(&format!("hotelId={}&ratePlanId={}&dateTo={}", f.hotel, f.plan, day(2))), "dateFrom", "is required"),
        (rates(&format!("hotelId={}&ratePlanId={}&dateFrom={}", f.hotel, f.plan, day(2))), "dateTo", "is required"),
        (search(&format!("checkOutDate={}", day(2))), "checkInDate", "is required"),
        (search(&format!("checkInDate={}&checkOutDate={}&adults=two", day(1), day(2))), "adults", "invalid digit"),
        (
            search(&format!("checkInDate={}&checkOutDate={}&adults=1&adults=2", day(1), day(2))),
            "adults",
            "more than once",
        ),
        (search(&format!("checkInDate={}&checkOutDate={}&children=1.5", day(1), day(2))), "children", "invalid digit"),
        (
            search(&format!("checkInDate={}&checkOutDate={}&infants=99999999999999999999", day(1), day(2))),
            "infants",
            "too large",
        ),
        ("/api/guests?limit=ten".to_string(), "limit", "invalid digit"),
        ("/api/reservations?skip=-".to_string(), "skip", "invalid digit"),
        ("/api/reservations?startTime=yesterday".to_string(), "startTime", "input"),
        (format!("/api/webhooksubscriptions/{}/deliveries?limit=x", f.hotel), "limit", "invalid digit"),
    ] {
        let answer = s.get(&path, &auth).await.expect(400);
        assert_eq!(answer.body["type"], json!("urn:frontdesk:problem:validation"), "{path}: {}", answer.body);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{path}: {}", answer.body);
        let said = answer.body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(said.contains(message), "{path}: {}", answer.body);
    }
}

/// Whether an OpenAPI property schema admits `null`.
fn admits_null(schema: &Value) -> bool {
    let typed = |t: &Value| t == "null" || t.as_array().is_some_and(|types| types.iter().any(|t| t == "null"));
    typed(&schema["type"])
        || ["oneOf", "anyOf"]
            .iter()
            .any(|k| schema[k].as_array().is_some_and(|alts| alts.iter().any(|a| typed(&a["type"]))))
}

/// A record as `GET path` answers it, or as its collection lists it where it has no read of its own (API keys).
async fn read(s: &TestServer, path: &str, auth: &Auth) -> Value {
    let answer = s.get(path, auth).await;
    if answer.status.as_u16() != 405 {
        return answer.expect(200).body;
    }
    let (collection, id) = path.rsplit_once('/').expect("an id");
    let list = s.get(collection, auth).await.expect(200).body;
    list.as_array().expect("list").iter().find(|r| r["id"] == json!(id)).cloned().expect("listed")
}

async fn null_is_refused_for_fields_that_cannot_be_cleared(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 1).await;
    let auth = org.auth();
    let key =
        s.post("/api/apiKeys", &auth, json!({"name": "k"})).await.expect(200).body["id"].as_str().unwrap().to_string();
    let hook = s
        .post("/api/webhooksubscriptions", &auth, json!({"hotelId": f.hotel, "url": "http://127.0.0.1:9/hook"}))
        .await
        .expect(200)
        .body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = serde_json::to_value(frontdesk::http::openapi_document()).expect("document");
    let mut checked = 0;
    // Every PUT of every resource, every field of its body, as the document describes it: a field the document
    // says may be null clears with null; any other answers 400 naming the field and changes nothing.
    for (method, path) in paths(&s, |name| match name {
        "hotelId" => f.hotel.clone(),
        "roomTypeId" => f.room_type.clone(),
        "roomId" => f.rooms[0].clone(),
        "ratePlanId" => f.plan.clone(),
        "guestId" => f.guest.clone(),
        "reservationId" => f.reservation.clone(),
        "apiKeyId" => key.clone(),
        "webhookSubscriptionId" => hook.clone(),
        other => panic!("no fixture for {other}"),
    }) {
        if method != reqwest::Method::PUT {
            continue;
        }
        let template = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(p, _)| {
                let prefix = p.split('{').next().unwrap();
                path.starts_with(prefix) && p.matches('/').count() == path.matches('/').count()
            })
            .map(|(_, ops)| ops["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].clone())
            .expect("operation");
        let name = template.as_str().unwrap().rsplit('/').next().unwrap();
        let properties = doc["components"]["schemas"][name]["properties"].as_object().expect("properties").clone();
        // A field the create body requires can never be cleared.
        let collection = format!("/{}", path.trim_start_matches('/').rsplit_once('/').unwrap().0);
        let create = doc["paths"][&collection]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .expect("create body")
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        for required in doc["components"]["schemas"][&create]["required"].as_array().expect("required") {
            if let Some(schema) = properties.get(required.as_str().unwrap()) {
                assert!(!admits_null(schema), "{name}.{required} is required by {create} but may be null");
            }
        }
        for (field, schema) in properties {
            let before = read(&s, &path, &auth).await;
            let answer = s.put(&path, &auth, json!({ field.clone(): null })).await;
            if admits_null(&schema) {
                assert_eq!(answer.status.as_u16(), 200, "PUT {path} {{{field}: null}}: {}", answer.body);
            } else {
                let answer = answer.expect(400);
                assert_eq!(answer.body["errors"][0]["field"], json!(field), "PUT {path}: {}", answer.body);
                let after = read(&s, &path, &auth).await;
                assert_eq!(after, before, "PUT {path} {{{field}: null}} changed the record");
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "every PUT field was tried ({checked})");
    // The same for the fields of a daily-rate entry that keep their stored value when left out.
    for field in ["stopSell", "closedToArrival", "closedToDeparture"] {
        let entry = json!({"ratePlanId": f.plan, "date": day(1), "price": 1, field: null});
        let answer = s.post("/api/dailyRates", &auth, json!({"values": [entry]})).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(format!("values[0].{field}")), "{}", answer.body);
    }
}

async fn pinned_keys_cannot_use_another_hotels_public_endpoints(s: TestServer) {
    let org = s.org("Acme").await;
    let a = fixture(&s, &org, 1).await;
    let b = fixture(&s, &org, 1).await;
    let pinned = Auth::Key(s.key(&org, &[Scope::ReservationsRead], Some(&a.hotel)).await);
    let search =
        |hotel: &str| format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(2), day(3));
    let offers = s.get(&search(&a.hotel), &pinned).await.expect(200);
    let offer = offers.body[0]["offerId"].as_str().expect("an offer").to_string();
    let refused = s.get(&search(&b.hotel), &pinned).await.expect(403);
    assert!(refused.body["detail"].as_str().unwrap().contains("pinned"), "{}", refused.body);
    // The same search without credentials, or with an unpinned key, is public.
    let other_offers = s.get(&search(&b.hotel), &Auth::None).await.expect(200);
    let other_offer = other_offers.body[0]["offerId"].as_str().expect("an offer").to_string();
    s.get(&search(&b.hotel), &Auth::Key(s.key(&org, &[], None).await)).await.expect(200);

    let reservations = s.count("reservations").await;
    let booking =
        |offer: &str| json!({"offerId": offer, "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}});
    s.post(&format!("/api/hotels/{}/book-reservation", b.hotel), &pinned, booking(&other_offer)).await.expect(403);
    assert_eq!(s.count("reservations").await, reservations, "nothing booked");
    s.post(&format!("/api/hotels/{}/book-reservation", a.hotel), &pinned, booking(&offer)).await.expect(201);
}

async fn long_folios_keep_their_order(s: TestServer) {
    let org = s.org("Acme").await;
    let f = fixture(&s, &org, 8).await;
    // 8 rooms x 30 nights = 240 charges: more than one insert chunk (200 rows).
    let rooms: Vec<Value> = (0..8).map(|n| json!({"roomTypeId": f.room_type, "price": 30_000 + n})).collect();
    let created = s
        .post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": f.hotel, "checkInDate": day(32), "checkOutDate": day(62), "rooms": rooms}),
        )
        .await
        .expect(200);
    let id = created.body["id"].as_str().unwrap();
    let read = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    let charges = read.body["folio"]["charges"].as_array().expect("charges").clone();
    assert_eq!(charges.len(), 240);
    assert!(read.body["folio"]["charges"] == created.body["folio"]["charges"], "read back in the order written");
    for (i, charge) in charges.iter().enumerate() {
        let (room, night) = (i / 30 + 1, i % 30);
        let date = (chrono::Utc::now().date_naive() + chrono::Days::new(32 + night as u64)).to_string();
        assert_eq!(charge["description"], json!(format!("Room {room} of 8, night of {date}")), "charge {i}");
    }
    assert_eq!(read.body["folio"]["total"], json!((0..8).map(|n| 30_000 + n).sum::<i64>()));
}
