//! Hostile and careless input, on both engines: control characters, overbooking through room moves, money
//! bounds, pinned keys on the public endpoints, long folios, nulls in partial updates, missing parameters, field
//! relations and date ranges, and a sweep of hostile requests over every endpoint.

use crate::common::{day, Auth, Org, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    control_characters_are_refused_where_input_enters,
    missing_body_fields_are_named,
    query_parameters_answer_in_one_shape,
    null_is_refused_for_fields_that_cannot_be_cleared,
    pinned_keys_cannot_use_another_hotels_public_endpoints,
    long_folios_keep_their_order,
    room_moves_never_oversell,
    no_sequence_of_writes_oversells,
    concurrent_random_writes_never_fail_or_oversell,
    inventory_locks_do_not_block_references,
    a_write_racing_a_delete_is_a_conflict,
    the_dashboard_refuses_control_characters_too,
    racing_room_moves_and_bookings_never_oversell,
    money_is_bounded_and_never_wraps,
    related_fields_and_dates_are_checked,
    oversized_request_heads_answer_before_the_service,
    one_room_is_never_assigned_twice_in_one_reservation,
    kept_alive_connections_are_closed_only_when_announced,
);

on_both_engines_configured!(hostile_requests_over_every_endpoint);

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

/// Checks, from the stored records alone (not from the `holds_inventory` projection), that in `hotel`: on every
/// night each room type's held rooms (confirmed rooms of confirmed or checked-in stays) fit its sellable rooms, and
/// every assigned held room is a sellable room of the reserved type, assigned to one stay a night.
async fn assert_never_oversold(s: &TestServer, hotel: &str) {
    use sqlx::Row;
    use std::collections::HashMap;
    let date = |row: &sqlx::any::AnyRow, column: &str| -> chrono::NaiveDate {
        row.try_get::<String, _>(column).unwrap().parse().unwrap()
    };
    let mut conn = s.db.read().await.expect("connection");
    let rooms: HashMap<String, (String, bool)> =
        sqlx::query("SELECT id, room_type_id, housekeeping_status FROM rooms WHERE hotel_id = $1")
            .bind(hotel)
            .fetch_all(&mut *conn)
            .await
            .unwrap()
            .iter()
            .map(|row| {
                let status: String = row.try_get("housekeeping_status").unwrap();
                (row.try_get("id").unwrap(), (row.try_get("room_type_id").unwrap(), status != "OUT_OF_ORDER"))
            })
            .collect();
    let held = sqlx::query(
        "SELECT rr.room_type_id, rr.room_id, rr.check_in_date, rr.check_out_date FROM reservation_rooms rr \
         JOIN reservations r ON r.id = rr.reservation_id WHERE r.hotel_id = $1 \
         AND r.status IN ('CONFIRMED', 'CHECKED_IN') AND rr.status = 'CONFIRMED'",
    )
    .bind(hotel)
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    let mut nights: HashMap<(String, chrono::NaiveDate), i64> = HashMap::new();
    let mut assigned: HashMap<(String, chrono::NaiveDate), i64> = HashMap::new();
    for row in &held {
        let room_type: String = row.try_get("room_type_id").unwrap();
        let room: Option<String> = row.try_get("room_id").unwrap();
        let (from, to) = (date(row, "check_in_date"), date(row, "check_out_date"));
        if let Some(room) = &room {
            let (its_type, sellable) = rooms.get(room).expect("assigned room exists");
            assert_eq!(its_type, &room_type, "assigned room {room} is of another type than the stay's");
            assert!(sellable, "assigned room {room} of a held stay is out of order");
        }
        for night in from.iter_days().take_while(|d| *d < to) {
            *nights.entry((room_type.clone(), night)).or_default() += 1;
            if let Some(room) = &room {
                let n = assigned.entry((room.clone(), night)).or_default();
                *n += 1;
                assert_eq!(*n, 1, "room {room} is assigned twice on {night}");
            }
        }
    }
    for ((room_type, night), count) in nights {
        let sellable = rooms.values().filter(|(t, sellable)| *t == room_type && *sellable).count() as i64;
        assert!(count <= sellable, "room type {room_type}: {count} rooms held on {night}, {sellable} sellable");
    }
}

async fn room_moves_never_oversell(s: TestServer) {
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 3).await;
    let (a, rooms) = (f.room_type.clone(), f.rooms.clone());
    let b = s.create("/api/roomTypes", &auth, json!({"hotelId": f.hotel, "name": "Single", "maxOccupancy": 2})).await;
    s.create("/api/rooms", &auth, json!({"roomTypeId": b, "name": "201"})).await;
    let every_type =
        s.create("/api/ratePlans", &auth, json!({"hotelId": f.hotel, "name": "Any room", "code": "ANY"})).await;
    let values: Vec<Value> =
        (0..12).map(|d| json!({"ratePlanId": every_type, "date": day(d), "price": 5000})).collect();
    s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200);
    let stay = |from: u64, to: u64, room: Option<&str>| {
        let mut room_in = json!({"roomTypeId": a, "price": 100});
        if let Some(room) = room {
            room_in["roomId"] = json!(room);
        }
        json!({"hotelId": f.hotel, "checkInDate": day(from), "checkOutDate": day(to), "rooms": [room_in]})
    };
    let id = |answer: crate::common::Answer| answer.body["id"].as_str().unwrap().to_string();
    let room = |n: usize| format!("/api/rooms/{}", rooms[n]);

    // A room assigned to a confirmed stay keeps its type, stays sellable and stays.
    let s1 = s.post("/api/reservations", &auth, stay(3, 5, Some(&rooms[0]))).await.expect(200);
    // Messages name the stay by its reference, as people know it.
    let s1_reference = s1.body["reference"].as_str().unwrap().to_string();
    for (answer, what) in [
        (s.put(&room(0), &auth, json!({"roomTypeId": b})).await, "change room type"),
        (s.put(&room(0), &auth, json!({"housekeepingStatus": "OUT_OF_ORDER"})).await, "go out of order"),
        (s.delete(&room(0), &auth).await, "be deleted"),
    ] {
        let answer = answer.expect(409);
        let detail = answer.body["detail"].as_str().unwrap();
        assert!(detail.contains(what) && detail.contains(&s1_reference), "{detail}");
    }
    s.put(&room(0), &auth, json!({"name": "101A", "housekeepingStatus": "DIRTY"})).await.expect(200);

    // Night 3 holds s1 and s2, night 4 s1 and s3: two of the three rooms of A are needed, the third is free.
    let s2 = id(s.post("/api/reservations", &auth, stay(3, 4, None)).await.expect(200));
    let s3 = id(s.post("/api/reservations", &auth, stay(4, 6, None)).await.expect(200));
    s.put(&room(1), &auth, json!({"roomTypeId": b})).await.expect(200);
    for answer in [
        s.put(&room(2), &auth, json!({"roomTypeId": b})).await,
        s.put(&room(2), &auth, json!({"housekeepingStatus": "OUT_OF_ORDER"})).await,
        s.delete(&room(2), &auth).await,
    ] {
        let answer = answer.expect(409);
        assert!(answer.body["detail"].as_str().unwrap().contains(&day(3)), "{}", answer.body);
    }
    assert_never_oversold(&s, &f.hotel).await;
    // What is left to sell agrees: nothing of A on night 3, both rooms of B.
    let offers = s
        .get(
            &format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", f.hotel, day(3), day(4)),
            &Auth::None,
        )
        .await
        .expect(200);
    let units: Vec<(Value, Value)> = offers
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["roomTypeId"].clone(), o["availableUnits"].clone()))
        .collect();
    assert!(units.iter().all(|(t, _)| *t != json!(a)), "{units:?}");
    assert!(units.contains(&(json!(b), json!(2))), "{units:?}");
    s.post("/api/reservations", &auth, stay(3, 4, None)).await.expect(409);

    // Freed nights free the room.
    let cancel = json!({"status": "CANCELLED"});
    s.put(&format!("/api/reservations/{s3}"), &auth, cancel.clone()).await.expect(200);
    s.put(&room(2), &auth, json!({"roomTypeId": b})).await.expect(409);
    s.put(&format!("/api/reservations/{s2}"), &auth, cancel).await.expect(200);
    s.put(&room(2), &auth, json!({"roomTypeId": b})).await.expect(200);
    assert_never_oversold(&s, &f.hotel).await;

    // A request holds nothing, so its assigned room may move; approving it then finds the room gone from its type.
    let mut request = stay(8, 9, Some(&rooms[2]));
    request["rooms"][0]["roomTypeId"] = json!(b);
    request["status"] = json!("REQUESTED");
    let request = id(s.post("/api/reservations", &auth, request).await.expect(200));
    s.put(&room(2), &auth, json!({"roomTypeId": a})).await.expect(200);
    let refused = s.post(&format!("/api/reservations/{request}/approve"), &auth, json!({})).await.expect(409);
    assert!(
        refused.body["detail"].as_str().unwrap().contains("no longer of the reserved room type"),
        "{}",
        refused.body
    );
    assert_never_oversold(&s, &f.hotel).await;
}

/// A writer of random inventory-changing requests against one hotel: every kind of write that can change what is
/// held or what is sellable (bookings of one or two rooms, assigned or not, requests, approvals, moves of state and
/// dates, assignments, room moves, housekeeping states, room creation and deletion).
struct RandomWriter {
    hotel: String,
    types: Vec<String>,
    rooms: Vec<String>,
    reservations: Vec<String>,
    rng: rand::rngs::StdRng,
    name: String,
}

impl RandomWriter {
    async fn new(s: &TestServer, org: &Org, rooms: usize, seed: u64) -> RandomWriter {
        use rand::SeedableRng;
        let auth = org.auth();
        let f = fixture(s, org, rooms).await;
        let b =
            s.create("/api/roomTypes", &auth, json!({"hotelId": f.hotel, "name": "Single", "maxOccupancy": 2})).await;
        let mut all_rooms = f.rooms.clone();
        all_rooms.push(s.create("/api/rooms", &auth, json!({"roomTypeId": b, "name": "201"})).await);
        RandomWriter {
            hotel: f.hotel,
            types: vec![f.room_type, b],
            rooms: all_rooms,
            reservations: vec![f.reservation],
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            name: format!("w{seed}"),
        }
    }

    /// Another writer of the same hotel (its own random stream).
    fn fork(&self, seed: u64) -> RandomWriter {
        use rand::SeedableRng;
        RandomWriter {
            hotel: self.hotel.clone(),
            types: self.types.clone(),
            rooms: self.rooms.clone(),
            reservations: self.reservations.clone(),
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            name: format!("w{seed}"),
        }
    }

    fn pick(&mut self, items: &[String]) -> String {
        use rand::Rng;
        items[self.rng.gen_range(0..items.len())].clone()
    }

    async fn write(&mut self, s: &TestServer, auth: &Auth, step: usize) -> crate::common::Answer {
        use rand::Rng;
        let statuses = ["CLEAN", "DIRTY", "OUT_OF_ORDER", "INSPECTED"];
        let (types, rooms, reservations) = (self.types.clone(), self.rooms.clone(), self.reservations.clone());
        let from = self.rng.gen_range(0..8u64);
        let to = from + self.rng.gen_range(1..4u64);
        match self.rng.gen_range(0..9) {
            0 | 1 => {
                let mut stay_rooms = Vec::new();
                for _ in 0..self.rng.gen_range(1..3) {
                    let mut room = json!({"roomTypeId": self.pick(&types), "price": 100});
                    if self.rng.gen_bool(0.4) {
                        room["roomId"] = json!(self.pick(&rooms));
                    }
                    stay_rooms.push(room);
                }
                let status = if self.rng.gen_bool(0.3) { "REQUESTED" } else { "CONFIRMED" };
                let body = json!({"hotelId": self.hotel, "checkInDate": day(from), "checkOutDate": day(to),
                                  "status": status, "rooms": stay_rooms});
                let answer = s.post("/api/reservations", auth, body).await;
                if answer.status.as_u16() == 200 {
                    self.reservations.push(answer.body["id"].as_str().unwrap().to_string());
                }
                answer
            }
            2 => s.post(&format!("/api/reservations/{}/approve", self.pick(&reservations)), auth, json!({})).await,
            3 => {
                let status = ["CANCELLED", "CHECKED_IN", "CHECKED_OUT", "NO_SHOW"][self.rng.gen_range(0..4)];
                s.put(&format!("/api/reservations/{}", self.pick(&reservations)), auth, json!({"status": status})).await
            }
            4 => {
                let body = json!({"checkInDate": day(from), "checkOutDate": day(to)});
                s.put(&format!("/api/reservations/{}", self.pick(&reservations)), auth, body).await
            }
            5 => {
                let id = self.pick(&reservations);
                let read = s.get(&format!("/api/reservations/{id}"), auth).await.expect(200);
                let mut assignments = Vec::new();
                for reservation_room in read.body["rooms"].as_array().unwrap() {
                    if self.rng.gen_bool(0.7) {
                        let room_id = if self.rng.gen_bool(0.2) { Value::Null } else { json!(self.pick(&rooms)) };
                        assignments.push(json!({"id": reservation_room["id"], "roomId": room_id}));
                    }
                }
                s.put(&format!("/api/reservations/{id}"), auth, json!({"rooms": assignments})).await
            }
            6 => {
                let body = json!({"roomTypeId": self.pick(&types)});
                s.put(&format!("/api/rooms/{}", self.pick(&rooms)), auth, body).await
            }
            7 => {
                let body = json!({"housekeepingStatus": statuses[self.rng.gen_range(0..4)]});
                s.put(&format!("/api/rooms/{}", self.pick(&rooms)), auth, body).await
            }
            _ if self.rng.gen_bool(0.5) && rooms.len() > 2 => {
                let room = self.pick(&rooms);
                let answer = s.delete(&format!("/api/rooms/{room}"), auth).await;
                if answer.status.as_u16() == 200 {
                    self.rooms.retain(|r| *r != room);
                }
                answer
            }
            _ => {
                let body = json!({"roomTypeId": self.pick(&types), "name": format!("{}-{step}", self.name)});
                let answer = s.post("/api/rooms", auth, body).await;
                if let Some(id) = answer.body["id"].as_str() {
                    self.rooms.push(id.to_string());
                }
                answer
            }
        }
    }
}

async fn no_sequence_of_writes_oversells(s: TestServer) {
    let org = s.org("Acme").await;
    let auth = org.auth();
    // A fixed seed: a failure is reproducible. Whatever each write answers, the invariant holds after it.
    let mut writer = RandomWriter::new(&s, &org, 3, 17).await;
    for step in 0..160 {
        let answer = writer.write(&s, &auth, step).await;
        let status = answer.status.as_u16();
        assert!(matches!(status, 200 | 400 | 409), "step {step}: {status} {}", answer.body);
        assert_never_oversold(&s, &writer.hotel).await;
    }
}

async fn concurrent_random_writes_never_fail_or_oversell(s: TestServer) {
    let org = s.org("Acme").await;
    let first = RandomWriter::new(&s, &org, 4, 1).await;
    let hotel = first.hotel.clone();
    let server = std::sync::Arc::new(s);
    // Six writers at once on one hotel: whatever interleaving the engine allows, no request fails with a server
    // error (no deadlock, no lock timeout, no constraint surfacing as 500), and nothing is oversold.
    let mut tasks = Vec::new();
    for seed in 0..6 {
        let mut writer = first.fork(100 + seed);
        let (s, auth) = (server.clone(), org.auth());
        tasks.push(tokio::spawn(async move {
            let mut wrong = Vec::new();
            for step in 0..40 {
                let answer = writer.write(&s, &auth, step).await;
                let status = answer.status.as_u16();
                if !matches!(status, 200 | 400 | 404 | 409) {
                    wrong.push(format!("writer {seed} step {step}: {status} {}", answer.body));
                }
            }
            wrong
        }));
    }
    let mut wrong = Vec::new();
    for task in tasks {
        wrong.extend(task.await.unwrap());
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_never_oversold(&server, &hotel).await;
}

async fn racing_room_moves_and_bookings_never_oversell(s: TestServer) {
    let org = s.org("Acme").await;
    let server = std::sync::Arc::new(s);
    for round in 0..4 {
        let s = &server;
        let auth = org.auth();
        let f = fixture(s, &org, 4).await;
        let b =
            s.create("/api/roomTypes", &auth, json!({"hotelId": f.hotel, "name": "Single", "maxOccupancy": 2})).await;
        // Four rooms, and at once: four bookings of one night, four moves to another type and two rooms going out of
        // order. Whatever order they are served in, the night never holds more rooms than remain sellable.
        let mut racers = Vec::new();
        for n in 0..4 {
            let (s, auth) = (server.clone(), auth.clone());
            let body = json!({"hotelId": f.hotel, "checkInDate": day(5), "checkOutDate": day(6),
                              "rooms": [{"roomTypeId": f.room_type, "price": 100}]});
            racers.push(tokio::spawn(async move { s.post("/api/reservations", &auth, body).await.status }));
            let (s, auth, path) = (server.clone(), org.auth(), format!("/api/rooms/{}", f.rooms[n]));
            let body = json!({"roomTypeId": b});
            racers.push(tokio::spawn(async move { s.put(&path, &auth, body).await.status }));
            if n < 2 {
                let (s, auth, path) = (server.clone(), org.auth(), format!("/api/rooms/{}", f.rooms[3 - n]));
                let body = json!({"housekeepingStatus": "OUT_OF_ORDER"});
                racers.push(tokio::spawn(async move { s.put(&path, &auth, body).await.status }));
            }
        }
        for racer in racers {
            let status = racer.await.unwrap().as_u16();
            assert!(matches!(status, 200 | 409), "round {round}: {status}");
        }
        assert_never_oversold(s, &f.hotel).await;
    }
}

async fn money_is_bounded_and_never_wraps(s: TestServer) {
    const MAX: i64 = 1_000_000_000_000;
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 2).await;
    let rate = |d: u64, price: Value| json!({"values": [{"ratePlanId": f.plan, "date": day(d), "price": price}]});
    for price in [json!(i64::MAX), json!(MAX + 1), json!(-1), json!(u64::MAX), json!(1e300)] {
        let answer = s.post("/api/dailyRates", &auth, rate(1, price.clone())).await.expect(400);
        assert!(answer.body["errors"][0]["field"].as_str().unwrap().contains("price"), "{price}: {}", answer.body);
    }
    s.post("/api/dailyRates", &auth, rate(1, json!(MAX))).await.expect(200);
    s.post("/api/dailyRates", &auth, rate(2, json!(MAX))).await.expect(200);
    let search = |from: u64, to: u64| {
        format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", f.hotel, day(from), day(to))
    };
    let one = s.get(&search(1, 2), &Auth::None).await.expect(200);
    assert_eq!(one.body[0]["totalPrice"], json!(MAX));
    // Two nights at the maximum add up beyond it: not offered (and never a wrapped, negative total).
    assert_eq!(s.get(&search(1, 3), &Auth::None).await.expect(200).body, json!([]));
    // Prices stored before the bound existed are summed without wrapping too.
    // Through a write transaction of the server's process, so that its next search is sure to see it (a change by
    // hand outside the process would be seen within `store::recent::MAX_AGE`).
    let mut tx = s.db.begin_write().await.unwrap();
    sqlx::query("UPDATE daily_rates SET price = $1 WHERE rate_plan_id = $2")
        .bind(i64::MAX)
        .bind(&f.plan)
        .execute(tx.conn())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(s.get(&search(3, 5), &Auth::None).await.expect(200).body, json!([]));
    let priced = json!({"hotelId": f.hotel, "checkInDate": day(3), "checkOutDate": day(5),
                        "rooms": [{"roomTypeId": f.room_type, "ratePlanId": f.plan}]});
    let answer = s.post("/api/reservations", &auth, priced).await.expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("rooms[0].price"), "{}", answer.body);

    let reservations = s.count("reservations").await;
    let stay =
        |rooms: Value| json!({"hotelId": f.hotel, "checkInDate": day(10), "checkOutDate": day(13), "rooms": rooms});
    let room = |price: i64| json!({"roomTypeId": f.room_type, "price": price});
    for (body, field) in [
        (stay(json!([room(MAX + 1)])), "rooms[0].price"),
        (stay(json!([room(-5)])), "rooms[0].price"),
        (stay(json!([room(MAX), room(1)])), "rooms"),
        (
            {
                let mut b = stay(json!([room(1)]));
                b["totalPrice"] = json!(MAX + 1);
                b
            },
            "totalPrice",
        ),
    ] {
        let answer = s.post("/api/reservations", &auth, body).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{}", answer.body);
    }
    assert_eq!(s.count("reservations").await, reservations, "nothing written");
    let at_max = s.post("/api/reservations", &auth, stay(json!([room(MAX)]))).await.expect(200);
    assert_eq!(at_max.body["totalPrice"], json!(MAX));
    assert_eq!(at_max.body["folio"]["total"], json!(MAX));
    let charges: i64 =
        at_max.body["folio"]["charges"].as_array().unwrap().iter().map(|c| c["amount"].as_i64().unwrap()).sum();
    assert_eq!(charges, MAX);
    let id = at_max.body["id"].as_str().unwrap();
    let answer = s.put(&format!("/api/reservations/{id}"), &auth, json!({"totalPrice": MAX + 1})).await.expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("totalPrice"));
}

async fn related_fields_and_dates_are_checked(s: TestServer) {
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 1).await;
    let types = s.count("room_types").await;
    for (body, field) in [
        (json!({"hotelId": f.hotel, "name": "X", "maxOccupancy": 2, "maxAdults": 5}), "maxAdults"),
        (json!({"hotelId": f.hotel, "name": "X", "maxOccupancy": 2, "maxChildren": 2}), "maxChildren"),
        (json!({"hotelId": f.hotel, "name": "X", "maxOccupancy": 1, "maxChildren": 1}), "maxChildren"),
    ] {
        let answer = s.post("/api/roomTypes", &auth, body).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{}", answer.body);
    }
    assert_eq!(s.count("room_types").await, types);
    // Partial updates are checked against the stored values (the fixture's type: occupancy 2, adults 2, children 1).
    let path = format!("/api/roomTypes/{}", f.room_type);
    for (body, field) in [
        (json!({"maxOccupancy": 1}), "maxOccupancy"),
        (json!({"maxAdults": 3}), "maxAdults"),
        (json!({"maxChildren": 2}), "maxChildren"),
        (json!({"maxOccupancy": 3, "maxAdults": 4}), "maxAdults"),
    ] {
        let answer = s.put(&path, &auth, body.clone()).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{body}: {}", answer.body);
    }
    let widened = s.put(&path, &auth, json!({"maxOccupancy": 4, "maxAdults": 3, "maxChildren": 3})).await.expect(200);
    assert_eq!(widened.body["maxOccupancy"], json!(4));

    // Dates: from 2000-01-01 to ten years ahead, everywhere.
    let today = chrono::Utc::now().date_naive();
    let beyond = (today + chrono::Months::new(120) + chrono::Days::new(1)).to_string();
    let last = (today + chrono::Months::new(120)).to_string();
    let stay = |from: &str, to: &str| {
        json!({"hotelId": f.hotel, "checkInDate": from, "checkOutDate": to,
               "rooms": [{"roomTypeId": f.room_type, "price": 100}]})
    };
    let reservations = s.count("reservations").await;
    for (body, field) in [
        (stay("0001-01-01", "0001-01-02"), "checkInDate"),
        (stay("1999-12-31", "2000-01-01"), "checkInDate"),
        (stay(&day(1), &beyond), "checkOutDate"),
        (
            {
                let mut b = stay(&day(1), &day(2));
                b["startTime"] = json!("0001-01-01T00:00:00Z");
                b
            },
            "startTime",
        ),
        (
            {
                let mut b = stay(&day(1), &day(2));
                b["endTime"] = json!("9999-12-31T23:59:59Z");
                b
            },
            "endTime",
        ),
    ] {
        let answer = s.post("/api/reservations", &auth, body).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{}", answer.body);
    }
    assert_eq!(s.count("reservations").await, reservations, "nothing written");
    s.post("/api/reservations", &auth, stay("2000-01-01", "2000-01-02")).await.expect(200);
    let until_last = (today + chrono::Months::new(120) - chrono::Days::new(1)).to_string();
    s.post("/api/reservations", &auth, stay(&until_last, &last)).await.expect(200);
    let answer = s
        .put(&format!("/api/reservations/{}", f.reservation), &auth, json!({"checkOutDate": beyond}))
        .await
        .expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("checkOutDate"));
    for (path, field) in [
        ("/api/reservations?stayDateFrom=1900-01-01".to_string(), "stayDateFrom"),
        (format!("/api/reservations?stayDateTo={beyond}"), "stayDateTo"),
        ("/api/reservations?startTime=0001-01-01T00:00:00Z".to_string(), "startTime"),
        (
            format!("/api/dailyRates?hotelId={}&ratePlanId={}&dateFrom=1999-12-01&dateTo=2000-01-02", f.hotel, f.plan),
            "dateFrom",
        ),
        (format!("/api/hotels/{}/availability?checkInDate=0001-01-01&checkOutDate=0001-01-02", f.hotel), "checkInDate"),
    ] {
        let answer = s.get(&path, &auth).await.expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{path}: {}", answer.body);
    }
}

/// Sends raw bytes on a fresh connection and answers everything the server sends back before closing it.
async fn raw_exchange(s: &TestServer, request: Vec<u8>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(s.base.trim_start_matches("http://")).await.expect("connect");
    // The server may answer and close before it has read everything: a failed write is part of the answer.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Pins where the HTTP parser's own answers start (docs/conventions.md, "Answers the HTTP parser gives"): requests
/// within the limits reach the service and get problem documents; beyond them hyper answers 414 or 431 itself, with
/// no body, and closes the connection.
async fn oversized_request_heads_answer_before_the_service(s: TestServer) {
    let get = |target: &str, headers: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n").into_bytes()
    };
    let within = raw_exchange(&s, get(&format!("/api/hotels?x={}", "a".repeat(60_000)), "")).await;
    assert!(within.starts_with("HTTP/1.1 401"), "{within}");
    assert!(within.contains("application/problem+json"), "{within}");

    let long_url = raw_exchange(&s, get(&format!("/api/hotels?x={}", "a".repeat(70_000)), "")).await;
    assert!(long_url.starts_with("HTTP/1.1 414"), "{long_url}");
    assert!(long_url.ends_with("\r\n\r\n") && long_url.contains("content-length: 0"), "no body: {long_url}");

    // Over hyper's read buffer: 431, from hyper (no body) or, when the whole head arrived in one read, from the service.
    let big_header = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(500_000)))).await;
    assert!(big_header.starts_with("HTTP/1.1 431"), "{big_header}");
    // Over the service's limit of header bytes but within hyper's buffer: always the service's 431, with a problem.
    let over = frontdesk::http::head_limit::MAX_HEADER_BYTES;
    let large_header = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(over)))).await;
    assert!(large_header.starts_with("HTTP/1.1 431"), "{large_header}");
    assert!(large_header.contains("application/problem+json"), "{large_header}");
    let within_headers = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(over - 100)))).await;
    assert!(within_headers.starts_with("HTTP/1.1 200"), "{within_headers}");
    let many: String = (0..120).map(|i| format!("X-H{i}: 1\r\n")).collect();
    let many_headers = raw_exchange(&s, get("/healthz", &many)).await;
    assert!(many_headers.starts_with("HTTP/1.1 431"), "{many_headers}");

    // The service keeps serving.
    s.get("/healthz", &Auth::None).await.expect(200);
}

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
    let wrong: Vec<String> = futures::stream::iter(requests)
        .map(|(auth, method, path, body, what)| async move {
            let answer = server.request(method.clone(), &path, &auth, body).await;
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

async fn one_room_is_never_assigned_twice_in_one_reservation(s: TestServer) {
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 3).await;
    let room = |room_id: &str| json!({"roomTypeId": f.room_type, "price": 100, "roomId": room_id});
    let stay = |rooms: Value, status: &str| json!({"hotelId": f.hotel, "checkInDate": day(5), "checkOutDate": day(7), "status": status, "rooms": rooms});
    for status in ["CONFIRMED", "REQUESTED"] {
        let answer = s
            .post("/api/reservations", &auth, stay(json!([room(&f.rooms[0]), room(&f.rooms[0])]), status))
            .await
            .expect(400);
        assert_eq!(answer.body["errors"][0]["field"], json!("rooms[1].roomId"), "{}", answer.body);
    }
    let created = s
        .post("/api/reservations", &auth, stay(json!([room(&f.rooms[0]), room(&f.rooms[1])]), "CONFIRMED"))
        .await
        .expect(200);
    let id = created.body["id"].as_str().unwrap();
    let second = created.body["rooms"][1]["id"].clone();
    let answer = s
        .put(&format!("/api/reservations/{id}"), &auth, json!({"rooms": [{"id": second, "roomId": f.rooms[0]}]}))
        .await
        .expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("rooms[0].roomId"), "{}", answer.body);
    // Swapping the two rooms in one request is fine.
    let first = created.body["rooms"][0]["id"].clone();
    s.put(
        &format!("/api/reservations/{id}"),
        &auth,
        json!({"rooms": [{"id": first, "roomId": f.rooms[1]}, {"id": second, "roomId": f.rooms[0]}]}),
    )
    .await
    .expect(200);
    assert_never_oversold(&s, &f.hotel).await;
}

/// The inventory locks order writers of the same room types and rooms, but do not block writes that merely point at
/// a locked row (PostgreSQL `FOR NO KEY UPDATE`, not `FOR UPDATE`): a booking holding room type B must not make a
/// room move into B wait, or the two can wait on each other (the move holds A and points a room at B, the booking
/// holds B and wants A) until PostgreSQL fails one with "deadlock detected". SQLite serializes write transactions
/// whole, so there is no such cycle to test there.
async fn inventory_locks_do_not_block_references(s: TestServer) {
    if s.engine != frontdesk::store::Engine::Postgres {
        return;
    }
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 2).await;
    let b = s.create("/api/roomTypes", &auth, json!({"hotelId": f.hotel, "name": "Single", "maxOccupancy": 2})).await;
    // Another writer holds room type B the way a booking of B does, and keeps it.
    let mut booking = s.db.begin_write().await.expect("transaction");
    frontdesk::store::reservations::lock_room_types(booking.conn(), s.engine, std::slice::from_ref(&b))
        .await
        .expect("lock");
    let moved = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        s.put(&format!("/api/rooms/{}", f.rooms[0]), &auth, json!({"roomTypeId": b})),
    )
    .await
    .expect("the move does not wait for the booking's lock on its new room type");
    moved.expect(200);
    drop(booking);
}

/// A write that names a record another request deletes while it runs fails its foreign key: that is a conflict the
/// caller can retry (409), not a failure of the service. (PostgreSQL; SQLite's exclusive write transactions cannot
/// interleave so.)
async fn a_write_racing_a_delete_is_a_conflict(s: TestServer) {
    if s.engine != frontdesk::store::Engine::Postgres {
        return;
    }
    let org = s.org("Acme").await;
    let auth = org.auth();
    let f = fixture(&s, &org, 2).await;
    // Another request deletes the room, and has not committed yet.
    let mut deleting = s.db.begin_write().await.expect("transaction");
    sqlx::query("DELETE FROM rooms WHERE id = $1").bind(&f.rooms[1]).execute(deleting.conn()).await.expect("delete");
    let request = json!({"hotelId": f.hotel, "checkInDate": day(3), "checkOutDate": day(4), "status": "REQUESTED",
                         "rooms": [{"roomTypeId": f.room_type, "price": 100, "roomId": f.rooms[1]}]});
    let (s, auth) = (std::sync::Arc::new(s), auth);
    let booking = {
        let (s, auth) = (s.clone(), auth.clone());
        tokio::spawn(async move { s.post("/api/reservations", &auth, request).await })
    };
    // The booking has seen the room and waits on the delete's lock to insert its reference; then the delete commits.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    deleting.commit().await.expect("commit");
    let answer = booking.await.unwrap().expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains("try again"), "{}", answer.body);
    assert_eq!(s.get("/api/reservations", &auth).await.body.as_array().unwrap().len(), 1, "nothing half-written");
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

/// Reads one answer (head and a `content-length` body) from a kept-alive connection: (head, body), or `None` when
/// the server closed the connection without answering.
async fn read_answer(stream: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    use tokio::io::AsyncReadExt;
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let timeout = std::time::Duration::from_secs(10);
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buffer.len() < end + 4 + length {
                let n = tokio::time::timeout(timeout, stream.read(&mut chunk)).await.ok()?.ok()?;
                if n == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            return Some((head, String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned()));
        }
        let n = tokio::time::timeout(timeout, stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// An answer given before the request body was read (401 before the body is needed, 404, …) ends the connection,
/// because hyper cannot find where the next request starts; the answer must say so (`Connection: close`), or the
/// client sends its next request into a closed connection. An answer after the whole body was read keeps the
/// connection open, and the next request on it is answered.
async fn kept_alive_connections_are_closed_only_when_announced(s: TestServer) {
    use tokio::io::AsyncWriteExt;
    let address = s.base.trim_start_matches("http://").to_string();
    let body = r#"{"email":"nobody@example.com","password":"wrong password"}"#;
    for path in ["/api/guests", "/mcp", "/api/no-such-thing", "/reservations/new"] {
        let mut stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
        // The head alone: the answer comes before the body has been sent.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, \
             text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("write");
        let (head, _) = read_answer(&mut stream).await.expect("an answer");
        assert!(head.contains("\r\nconnection: close"), "{path} answered before its body: {head}");
    }

    // Read to the end: the connection stays open and serves the next request.
    let mut stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
    for round in 0..3 {
        let request = format!(
            "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let (head, answer) = read_answer(&mut stream).await.unwrap_or_else(|| panic!("round {round} was answered"));
        assert!(head.starts_with("http/1.1 401"), "{head}\n{answer}");
        assert!(!head.contains("connection: close"), "the body was read, the connection is kept: {head}");
    }
}
