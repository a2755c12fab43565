//! The rules of fields and parameters: missing body fields are named, query parameters answer in one shape, `null` only
//! where a field can be cleared, money within bounds, related fields and date ranges, and pinned keys on another
//! hotel's public endpoints.

use crate::common::{day, Auth, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

use super::{fixture, paths};

on_both_engines!(
    missing_body_fields_are_named,
    query_parameters_answer_in_one_shape,
    null_is_refused_for_fields_that_cannot_be_cleared,
    pinned_keys_cannot_use_another_hotels_public_endpoints,
    money_is_bounded_and_never_wraps,
    related_fields_and_dates_are_checked,
);

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
        // A misspelt filter would otherwise widen the list to every hotel, silently: refused like an unknown field.
        (format!("/api/reservations?hotelID={}", f.hotel), "hotelID", "is not a parameter of this operation"),
        ("/api/guests?limit=1&=".to_string(), "", "is not a parameter of this operation"),
        (format!("/api/hotels/{}?limit=1", f.hotel), "limit", "which takes none"),
    ] {
        let answer = s.get(&path, &auth).await.expect(400);
        assert_eq!(answer.body["type"], json!("urn:frontdesk:problem:validation"), "{path}: {}", answer.body);
        assert_eq!(answer.body["errors"][0]["field"], json!(field), "{path}: {}", answer.body);
        let said = answer.body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(said.contains(message), "{path}: {}", answer.body);
    }
    // Refused before the handler runs: a write with an undeclared parameter writes nothing.
    let guests = s.count("guests").await;
    let answer = s.post("/api/guests?dryRun=true", &auth, json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let answer = answer.expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("dryRun"), "{}", answer.body);
    assert_eq!(s.count("guests").await, guests);
}

/// Whether an OpenAPI property schema admits `null`.
fn admits_null(schema: &Value) -> bool {
    let typed = |t: &Value| t == "null" || t.as_array().is_some_and(|types| types.iter().any(|t| t == "null"));
    typed(&schema["type"])
        || ["oneOf", "anyOf"]
            .iter()
            .any(|k| schema[k].as_array().is_some_and(|alts| alts.iter().any(|a| typed(&a["type"]))))
}

/// A record as `GET path` answers it; where it has no read of its own, as its collection lists it (API keys) or as
/// the record it belongs to shows it (a folio's city-tax exemption, on the folio).
async fn read(s: &TestServer, path: &str, auth: &Auth) -> Value {
    let answer = s.get(path, auth).await;
    if answer.status.as_u16() != 405 {
        return answer.expect(200).body;
    }
    let (collection, id) = path.rsplit_once('/').expect("an id");
    let above = s.get(collection, auth).await.expect(200).body;
    match above.as_array() {
        Some(list) => list.iter().find(|r| r["id"] == json!(id)).cloned().expect("listed"),
        None => above,
    }
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
        "folioId" => f.folio.clone(),
        "lineId" => f.folio_line.clone(),
        "invoiceId" => f.invoice.clone(),
        "operatorId" => String::new(),
        other => panic!("no fixture for {other}"),
    }) {
        // An operator's role is given whole (the role with its hotels), not field by field: roles.rs tests it.
        if method != reqwest::Method::PUT || path.ends_with("/role") {
            continue;
        }
        let template = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(p, ops)| {
                // The template whose segments are the path's (a `{parameter}` stands for any), with a PUT.
                let (template, concrete): (Vec<&str>, Vec<&str>) = (p.split('/').collect(), path.split('/').collect());
                template.len() == concrete.len()
                    && template.iter().zip(&concrete).all(|(t, c)| t.starts_with('{') || t == c)
                    && ops.get("put").is_some()
            })
            .map(|(_, ops)| ops["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].clone())
            .expect("operation");
        let name = template.as_str().unwrap().rsplit('/').next().unwrap();
        let properties = doc["components"]["schemas"][name]["properties"].as_object().expect("properties").clone();
        // A field the create body requires can never be cleared.
        let collection = format!("/{}", path.trim_start_matches('/').rsplit_once('/').unwrap().0);
        // (A record made with its owner, such as a hotel's billing settings, has no create body.)
        let create = doc["paths"][&collection]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .map(|r| r.rsplit('/').next().unwrap().to_string());
        let required = create.as_ref().map(|c| doc["components"]["schemas"][c]["required"].clone());
        for required in required.as_ref().and_then(Value::as_array).into_iter().flatten() {
            let create = create.as_deref().unwrap_or_default();
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
    frontdesk::store::query("UPDATE daily_rates SET price = $1 WHERE rate_plan_id = $2")
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
