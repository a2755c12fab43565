//! Catalogue and ARI: room types, rooms, rate plans and daily rates, on both engines.

use crate::common::{day, Auth, Org, TestServer};
use chrono::{Days, Utc};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    room_types_crud_scopes_and_dependants,
    rooms_validate_their_room_type_and_names,
    pinned_keys_stay_in_their_hotel,
    rate_plans_create_or_update,
    daily_rates_round_trip_and_keep_left_out_fields,
    daily_rate_batches_are_all_or_nothing,
    daily_rate_reads_are_bounded,
    deleting_a_rate_plan_takes_its_daily_rates,
);

/// A hotel with one room type (two adults) and one rate plan for it: (hotel, room type, rate plan).
async fn catalogue(s: &TestServer, org: &Org) -> (String, String, String) {
    let hotel = s.hotel(org, "Sea").await;
    let room_type = s
        .post("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2}))
        .await
        .expect(200);
    let room_type = room_type.body["id"].as_str().unwrap().to_string();
    let plan = s
        .post("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await
        .expect(200);
    (hotel, room_type, plan.body["id"].as_str().unwrap().to_string())
}

async fn room_types_crud_scopes_and_dependants(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let no_scope = Auth::Key(s.key(&org, &[Scope::RatesRead], None).await);
    let read_only = Auth::Key(s.key(&org, &[Scope::RoomsRead], None).await);
    let writer = Auth::Key(s.key(&org, &[Scope::RoomsRead, Scope::RoomsWrite], None).await);
    s.get("/api/roomTypes", &no_scope).await.expect(403);
    let body = json!({"hotelId": hotel, "name": "Family", "maxOccupancy": 4, "description": "Two rooms"});
    s.post("/api/roomTypes", &read_only, body.clone()).await.expect(403);
    assert_eq!(s.count("room_types").await, 0);

    let created = s.post("/api/roomTypes", &writer, body).await.expect(200);
    assert_eq!(created.body["maxAdults"], json!(4), "defaults to maxOccupancy");
    assert_eq!(created.body["maxChildren"], json!(3), "defaults to maxOccupancy - 1");
    let id = created.body["id"].as_str().unwrap();
    let read = s.get(&format!("/api/roomTypes/{id}"), &read_only).await.expect(200);
    assert_eq!(read.body, created.body);
    let updated = s
        .put(&format!("/api/roomTypes/{id}"), &writer, json!({"name": "Family Suite", "description": null}))
        .await
        .expect(200);
    assert_eq!(updated.body["name"], json!("Family Suite"));
    assert_eq!(updated.body["description"], Value::Null);
    assert_eq!(updated.body["maxOccupancy"], json!(4));
    s.put(&format!("/api/roomTypes/{id}"), &writer, json!({"maxOccupancy": 0})).await.expect(400);
    s.put(&format!("/api/roomTypes/{id}"), &writer, json!({"maxOccupancy": 2.5})).await.expect(400);
    // JSON Schema counts 4.0 as an integer, and so does the API.
    let same = s.put(&format!("/api/roomTypes/{id}"), &writer, json!({"maxOccupancy": 4.0})).await.expect(200);
    assert_eq!(same.body["maxOccupancy"], json!(4));
    s.put(&format!("/api/roomTypes/{id}"), &writer, json!({"hotelId": hotel})).await.expect(400);

    let listed = s.get(&format!("/api/roomTypes?hotelId={hotel}"), &read_only).await.expect(200);
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    s.get("/api/roomTypes?hotelId=nope", &read_only).await.expect(404);

    // A room uses it: delete refuses, and nothing is deleted.
    let room = s.post("/api/rooms", &writer, json!({"roomTypeId": id, "name": "101"})).await.expect(200);
    let answer = s.delete(&format!("/api/roomTypes/{id}"), &writer).await.expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains("rooms"));
    assert_eq!(s.count("room_types").await, 1);
    let room_id = room.body["id"].as_str().unwrap();
    s.delete(&format!("/api/rooms/{room_id}"), &writer).await.expect(200);
    let deleted = s.delete(&format!("/api/roomTypes/{id}"), &writer).await.expect(200);
    assert_eq!(deleted.body["id"], json!(id));
    s.get(&format!("/api/roomTypes/{id}"), &writer).await.expect(404);

    // Another organization sees none of it.
    let other = s.org("Other").await;
    s.get(&format!("/api/roomTypes?hotelId={hotel}"), &other.auth()).await.expect(404);
}

async fn rooms_validate_their_room_type_and_names(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = catalogue(&s, &org).await;
    let other_hotel = s.hotel(&org, "Mountain").await;
    let other_type = s
        .create("/api/roomTypes", &org.auth(), json!({"hotelId": other_hotel, "name": "Single", "maxOccupancy": 1}))
        .await;

    let room = s
        .post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101", "floor": 1}))
        .await
        .expect(200);
    assert_eq!(room.body["hotelId"], json!(hotel));
    assert_eq!(room.body["housekeepingStatus"], json!("CLEAN"));
    let id = room.body["id"].as_str().unwrap();

    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await.expect(409);
    s.post("/api/rooms", &org.auth(), json!({"hotelId": hotel, "roomTypeId": other_type, "name": "102"}))
        .await
        .expect(404);
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": "nope", "name": "102"})).await.expect(404);
    s.post(
        "/api/rooms",
        &org.auth(),
        json!({"roomTypeId": room_type, "name": "102", "housekeepingStatus": "SPARKLING"}),
    )
    .await
    .expect(400);
    assert_eq!(s.count("rooms").await, 1);

    s.put(&format!("/api/rooms/{id}"), &org.auth(), json!({"roomTypeId": other_type})).await.expect(404);
    let updated = s
        .put(&format!("/api/rooms/{id}"), &org.auth(), json!({"housekeepingStatus": "OUT_OF_ORDER", "floor": null}))
        .await
        .expect(200);
    assert_eq!(updated.body["housekeepingStatus"], json!("OUT_OF_ORDER"));
    assert_eq!(updated.body["floor"], Value::Null);
    assert_eq!(updated.body["roomTypeId"], json!(room_type));

    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": other_type, "name": "101"})).await.expect(200);
    let by_type = s.get(&format!("/api/rooms?roomTypeId={room_type}"), &org.auth()).await.expect(200);
    assert_eq!(by_type.body.as_array().unwrap().len(), 1);
    let by_hotel = s.get(&format!("/api/rooms?hotelId={other_hotel}"), &org.auth()).await.expect(200);
    assert_eq!(by_hotel.body[0]["roomTypeId"], json!(other_type));
    let all = s.get("/api/rooms", &org.auth()).await.expect(200);
    assert_eq!(all.body.as_array().unwrap().len(), 2);
}

async fn pinned_keys_stay_in_their_hotel(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org).await;
    let (other_hotel, other_type, other_plan) = catalogue(&s, &org).await;
    let all_scopes = Scope::ALL;
    let pinned = Auth::Key(s.key(&org, &all_scopes, Some(&hotel)).await);

    // Naming another hotel: 403. Its records: 404. Leaving the hotel out: the pin.
    s.get(&format!("/api/rooms?hotelId={other_hotel}"), &pinned).await.expect(403);
    s.get(&format!("/api/ratePlans?hotelId={other_hotel}"), &pinned).await.expect(403);
    s.post("/api/roomTypes", &pinned, json!({"hotelId": other_hotel, "name": "X", "maxOccupancy": 1}))
        .await
        .expect(403);
    s.get(&format!("/api/roomTypes/{other_type}"), &pinned).await.expect(404);
    s.get(&format!("/api/ratePlans/{other_plan}"), &pinned).await.expect(404);
    s.post("/api/rooms", &pinned, json!({"roomTypeId": other_type, "name": "9"})).await.expect(404);
    let types = s.get("/api/roomTypes", &pinned).await.expect(200);
    assert_eq!(types.body.as_array().unwrap().len(), 1);
    assert_eq!(types.body[0]["id"], json!(room_type));
    let plans = s.get("/api/ratePlans", &pinned).await.expect(200);
    assert_eq!(plans.body[0]["id"], json!(plan));
    let created = s.post("/api/roomTypes", &pinned, json!({"name": "Pinned", "maxOccupancy": 1})).await.expect(200);
    assert_eq!(created.body["hotelId"], json!(hotel));

    // Daily rates of a plan outside the pin are refused per entry, and nothing is written.
    let answer = s
        .post(
            "/api/dailyRates",
            &pinned,
            json!({"values": [
                {"ratePlanId": plan, "date": day(1), "price": 100},
                {"ratePlanId": other_plan, "date": day(1), "price": 100},
            ]}),
        )
        .await
        .expect(400);
    assert_eq!(answer.body["errors"][0]["index"], json!(1));
    assert_eq!(s.count("daily_rates").await, 0);
    s.get(&format!("/api/dailyRates?ratePlanId={other_plan}&dateFrom={}&dateTo={}", day(0), day(3)), &pinned)
        .await
        .expect(404);
}

async fn rate_plans_create_or_update(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = catalogue(&s, &org).await;
    let other_hotel = s.hotel(&org, "Mountain").await;
    let created = s.get(&format!("/api/ratePlans/{plan}"), &org.auth()).await.expect(200);
    assert_eq!(created.body["currency"], json!("EUR"), "defaults to the hotel's currency");
    assert_eq!(created.body["active"], json!(true));

    // POST with the id of an existing plan updates it.
    let updated = s
        .post(
            "/api/ratePlans",
            &org.auth(),
            json!({"id": plan, "hotelId": hotel, "name": "Flexible", "code": "FLEX", "currency": "USD", "roomTypeId": null}),
        )
        .await
        .expect(200);
    assert_eq!(updated.body["id"], json!(plan));
    assert_eq!(updated.body["name"], json!("Flexible"));
    assert_eq!(updated.body["currency"], json!("USD"));
    assert_eq!(updated.body["roomTypeId"], Value::Null);
    assert_eq!(updated.body["createdAt"], created.body["createdAt"]);
    let plans = s.get(&format!("/api/ratePlans?hotelId={hotel}"), &org.auth()).await.expect(200);
    assert_eq!(plans.body.as_array().unwrap().len(), 1, "no second plan");

    s.post("/api/ratePlans", &org.auth(), json!({"id": "nope", "hotelId": hotel, "name": "X"})).await.expect(404);
    s.post("/api/ratePlans", &org.auth(), json!({"id": plan, "hotelId": other_hotel, "name": "X"})).await.expect(400);
    s.post("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "Dup", "code": "FLEX"})).await.expect(409);
    s.post("/api/ratePlans", &org.auth(), json!({"hotelId": other_hotel, "roomTypeId": room_type, "name": "X"}))
        .await
        .expect(404);
    s.post("/api/ratePlans", &org.auth(), json!({"name": "No hotel"})).await.expect(400);
    s.post("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "X", "currency": "XXXX"})).await.expect(400);
    assert_eq!(s.count("rate_plans").await, 1);

    s.get("/api/ratePlans", &org.auth()).await.expect(400);
    let by_type = s.get(&format!("/api/ratePlans?roomTypeId={room_type}"), &org.auth()).await.expect(200);
    assert_eq!(by_type.body, json!([]), "the room type names its hotel");
    let filtered = s.get(&format!("/api/ratePlans?hotelId={hotel}&roomTypeId={room_type}"), &org.auth()).await;
    assert_eq!(filtered.expect(200).body, json!([]));
    let put = s.put(&format!("/api/ratePlans/{plan}"), &org.auth(), json!({"active": false})).await.expect(200);
    assert_eq!(put.body["active"], json!(false));
    assert_eq!(put.body["code"], json!("FLEX"));

    let other = s.org("Other").await;
    s.get(&format!("/api/ratePlans?hotelId={hotel}"), &other.auth()).await.expect(404);
    s.post("/api/ratePlans", &other.auth(), json!({"id": plan, "hotelId": hotel, "name": "Mine"})).await.expect(404);
}

async fn daily_rates_round_trip_and_keep_left_out_fields(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, plan) = catalogue(&s, &org).await;
    let channel = Auth::Key(s.key(&org, &[Scope::RatesRead, Scope::RatesWrite], None).await);
    let written = s
        .post(
            "/api/dailyRates",
            &channel,
            json!({"values": [
                {"ratePlanId": plan, "date": day(3), "price": 13000, "availability": 4, "stopSell": true,
                 "closedToArrival": true, "minStay": 2, "maxStay": 7},
                {"ratePlanId": plan, "date": day(1), "price": 12000},
                {"ratePlanId": plan, "date": day(2), "price": 12500, "closedToDeparture": true},
            ]}),
        )
        .await
        .expect(200);
    assert_eq!(written.body.as_array().unwrap().len(), 3);
    assert_eq!(written.body[0]["date"], json!(day(3)), "answers in the order sent");
    assert_eq!(written.body[1]["availability"], Value::Null, "defaults on insert");
    assert_eq!(written.body[1]["stopSell"], json!(false));
    assert_eq!(written.body[1]["currency"], json!("EUR"));

    let range = format!("/api/dailyRates?hotelId={hotel}&ratePlanId={plan}&dateFrom={}&dateTo={}", day(0), day(10));
    let read = s.get(&range, &channel).await.expect(200);
    let dates: Vec<&str> = read.body.as_array().unwrap().iter().map(|r| r["date"].as_str().unwrap()).collect();
    assert_eq!(dates, vec![day(1), day(2), day(3)], "ordered by date");
    assert_eq!(read.body[2]["minStay"], json!(2));

    // A price-only push keeps the restrictions; null clears one.
    s.post(
        "/api/dailyRates",
        &channel,
        json!({"values": [{"ratePlanId": plan, "date": day(3), "price": 14000, "maxStay": null}]}),
    )
    .await
    .expect(200);
    let read = s.get(&range, &channel).await.expect(200);
    let record = &read.body[2];
    assert_eq!(record["price"], json!(14000));
    assert_eq!(record["availability"], json!(4));
    assert_eq!(record["stopSell"], json!(true));
    assert_eq!(record["closedToArrival"], json!(true));
    assert_eq!(record["minStay"], json!(2));
    assert_eq!(record["maxStay"], Value::Null);
    assert_eq!(s.count("daily_rates").await, 3);

    let read_only = Auth::Key(s.key(&org, &[Scope::RatesRead], None).await);
    s.post("/api/dailyRates", &read_only, json!({"values": [{"ratePlanId": plan, "date": day(1), "price": 1}]}))
        .await
        .expect(403);
    let rooms_only = Auth::Key(s.key(&org, &[Scope::RoomsRead], None).await);
    s.get(&range, &rooms_only).await.expect(403);
}

async fn daily_rate_batches_are_all_or_nothing(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, plan) = catalogue(&s, &org).await;
    let other = s.org("Other").await;
    let (_, _, foreign_plan) = catalogue(&s, &other).await;
    s.post(
        "/api/dailyRates",
        &org.auth(),
        json!({"values": [{"ratePlanId": plan, "date": day(5), "price": 100, "maxStay": 3}]}),
    )
    .await
    .expect(200);
    let range = format!("/api/dailyRates?hotelId={hotel}&ratePlanId={plan}&dateFrom={}&dateTo={}", day(0), day(40));
    let before = s.get(&range, &org.auth()).await.expect(200).body;
    let good = |offset: u64| json!({"ratePlanId": plan, "date": day(offset), "price": 9999});

    // Each bad entry among good ones: 400 naming its index, and nothing written.
    let bad_entries = [
        (json!({"ratePlanId": "nope", "date": day(1), "price": 1}), "ratePlanId"),
        (json!({"ratePlanId": foreign_plan, "date": day(1), "price": 1}), "ratePlanId"),
        (json!({"ratePlanId": plan, "date": "2026-02-30", "price": 1}), "date"),
        (json!({"ratePlanId": plan, "date": "2026-2-3", "price": 1}), "date"),
        (json!({"ratePlanId": plan, "date": day(5000), "price": 1}), "date"),
        (json!({"ratePlanId": plan, "date": day(1), "price": -1}), "price"),
        (json!({"ratePlanId": plan, "date": day(1), "price": 1, "availability": -1}), "availability"),
        (json!({"ratePlanId": plan, "date": day(1), "price": 1, "minStay": 5, "maxStay": 2}), "minStay"),
        (json!({"ratePlanId": plan, "date": day(5), "price": 1, "minStay": 4}), "minStay"),
        (json!({"ratePlanId": plan, "date": day(1), "price": 1, "minStay": 0}), "minStay"),
        (json!({"ratePlanId": plan, "date": day(2), "price": 1}), "date"),
    ];
    for (bad, field) in bad_entries {
        let answer = s
            .post("/api/dailyRates", &org.auth(), json!({"values": [good(2), good(3), bad.clone()]}))
            .await
            .expect(400);
        let errors = answer.body["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{bad}: {}", answer.body);
        assert_eq!(errors[0]["index"], json!(2), "{bad}");
        assert_eq!(errors[0]["field"], json!(field), "{bad}");
        assert_eq!(s.get(&range, &org.auth()).await.body, before, "{bad} changed nothing");
    }

    // Several bad entries: every one is listed.
    let answer = s
        .post(
            "/api/dailyRates",
            &org.auth(),
            json!({"values": [{"ratePlanId": "x", "date": day(1), "price": 1}, good(2), {"ratePlanId": plan, "date": "soon", "price": -5}]}),
        )
        .await
        .expect(400);
    let indexes: Vec<i64> =
        answer.body["errors"].as_array().unwrap().iter().map(|e| e["index"].as_i64().unwrap()).collect();
    assert_eq!(indexes, vec![0, 2, 2]);

    // Shape errors: wrong types, empty, too many, unknown fields.
    let shapes = [
        json!({"values": [{"ratePlanId": plan, "date": day(1), "price": 10.5}]}),
        json!({"values": [{"ratePlanId": plan, "date": day(1), "price": "10"}]}),
        json!({"values": [{"ratePlanId": plan, "date": day(1)}]}),
        json!({"values": [{"ratePlanId": plan, "date": day(1), "price": 1, "stopSell": "yes"}]}),
        json!({"values": [{"ratePlanId": plan, "date": day(1), "price": 1, "prize": 2}]}),
        json!({"values": []}),
        json!({"values": (0..501).map(|i| good(1 + i % 30)).collect::<Vec<_>>()}),
        json!({"value": [good(1)]}),
        json!({}),
    ];
    for body in shapes {
        let answer = s.post("/api/dailyRates", &org.auth(), body.clone()).await.expect(400);
        assert!(answer.body["detail"].is_string(), "{body}");
    }
    let answer = s
        .post(
            "/api/dailyRates",
            &org.auth(),
            json!({"values": [good(1), {"ratePlanId": plan, "date": day(2), "price": 1.5}]}),
        )
        .await
        .expect(400);
    assert_eq!(answer.body["errors"][0]["field"], json!("values[1].price"), "{}", answer.body);
    assert_eq!(s.get(&range, &org.auth()).await.body, before);
    assert_eq!(s.count("daily_rates").await, 1);

    // 500 entries is the limit, and it is accepted.
    let full: Vec<Value> = (0..500)
        .map(|i| json!({"ratePlanId": plan, "date": (Utc::now().date_naive() + Days::new(i)).to_string(), "price": 100 + i}))
        .collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": full})).await.expect(200);
    assert_eq!(s.count("daily_rates").await, 500);
}

async fn daily_rate_reads_are_bounded(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, plan) = catalogue(&s, &org).await;
    let other_hotel = s.hotel(&org, "Mountain").await;
    let url = |hotel: &str, from: &str, to: &str| {
        format!("/api/dailyRates?hotelId={hotel}&ratePlanId={plan}&dateFrom={from}&dateTo={to}")
    };
    s.get(&url(&hotel, "2026-01-01", "2026-12-31"), &org.auth()).await.expect(200);
    s.get(&url(&hotel, "2026-02-30", "2026-03-31"), &org.auth()).await.expect(400);
    s.get(&url(&hotel, "2026-03-02", "2026-03-01"), &org.auth()).await.expect(400);
    s.get(&url(&hotel, "2026-01-01", "2030-01-01"), &org.auth()).await.expect(400);
    s.get(&url(&other_hotel, "2026-01-01", "2026-01-31"), &org.auth()).await.expect(404);
    s.get(&format!("/api/dailyRates?hotelId={hotel}&ratePlanId={plan}&dateFrom=2026-01-01"), &org.auth())
        .await
        .expect(400);
}

async fn deleting_a_rate_plan_takes_its_daily_rates(s: TestServer) {
    let org = s.org("Acme").await;
    let (_, _, plan) = catalogue(&s, &org).await;
    s.post("/api/dailyRates", &org.auth(), json!({"values": [{"ratePlanId": plan, "date": day(1), "price": 1}]}))
        .await
        .expect(200);
    assert_eq!(s.count("daily_rates").await, 1);
    s.delete(&format!("/api/ratePlans/{plan}"), &org.auth()).await.expect(200);
    assert_eq!(s.count("daily_rates").await, 0);
    s.get(&format!("/api/ratePlans/{plan}"), &org.auth()).await.expect(404);
}
