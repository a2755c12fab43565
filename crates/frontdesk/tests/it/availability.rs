//! Public availability, booking requests and approval, on both engines.

use crate::common::{day, Auth, Org, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    offers_follow_rooms_rates_and_restrictions,
    bad_searches_answer_400_and_unknown_hotels_404,
    booking_creates_a_request_that_staff_approve,
    offers_cannot_be_forged_edited_or_sold_twice,
    idempotent_retries_book_once,
    approvals_race_for_the_last_room,
    approval_rechecks_the_rate_plan,
    units_count_every_night_and_the_plan_allotment,
    searches_see_every_change_at_once,
    searches_from_memory_match_the_database,
    answers_are_reused_briefly_and_never_across_a_change,
);

/// A hotel with `rooms` double rooms and a rate plan priced for 60 nights: (hotel, room type, rate plan).
async fn bookable(s: &TestServer, org: &Org, rooms: usize) -> (String, String, String) {
    let hotel = s.hotel(org, "Sea").await;
    let room_type = s
        .create(
            "/api/roomTypes",
            &org.auth(),
            json!({"hotelId": hotel, "name": "Double", "description": "Sea view", "maxOccupancy": 2, "maxChildren": 1}),
        )
        .await;
    for n in 0..rooms {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)}))
            .await
            .expect(200);
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> =
        (0..60).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000 + 100 * d})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type, plan)
}

fn search(hotel: &str, from: u64, to: u64, extra: &str) -> String {
    format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}{extra}", day(from), day(to))
}

fn booking(offer: &Value) -> Value {
    json!({"offerId": offer["offerId"], "guest": {"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"}})
}

async fn offers_follow_rooms_rates_and_restrictions(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 2).await;
    let offers = s.get(&search(&hotel, 10, 13, ""), &Auth::None).await.expect(200);
    let offer = &offers.body[0];
    assert_eq!(offers.body.as_array().unwrap().len(), 1);
    assert_eq!(offer["roomTypeId"], json!(room_type));
    assert_eq!(offer["roomTypeName"], json!("Double"));
    assert_eq!(offer["ratePlanId"], json!(plan));
    assert_eq!(offer["nights"], json!(3));
    assert_eq!(offer["totalPrice"], json!(11000 + 11100 + 11200));
    assert_eq!(offer["nightly"][2], json!({"date": day(12), "price": 11200}));
    assert_eq!(offer["availableUnits"], json!(2));
    assert_eq!(offer["currency"], json!("EUR"));
    // The city tax is an extension beside the price (docs/money.md): none here, so the total is the price.
    assert_eq!((offer["cityTax"].clone(), offer["totalWithTaxes"].clone()), (Value::Null, offer["totalPrice"].clone()));
    let keys: Vec<&String> = offer.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 14, "only the offer fields: {keys:?}");
    // An API key is accepted too; a bad one is refused.
    let key = Auth::Key(s.key(&org, &[], None).await);
    s.get(&search(&hotel, 10, 13, ""), &key).await.expect(200);
    s.get(&search(&hotel, 10, 13, ""), &Auth::Key("fdk_wrong".into())).await.expect(401);

    // Confirmed stays take rooms; the allotment caps; restrictions close the offer.
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "checkInDate": day(11), "checkOutDate": day(12), "rooms": [{"roomTypeId": room_type, "price": 1}]}),
    )
    .await
    .expect(200);
    assert_eq!(s.get(&search(&hotel, 10, 13, ""), &Auth::None).await.body[0]["availableUnits"], json!(1));
    let push = |values: Value| {
        let s = &s;
        let auth = org.auth();
        async move { s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200) }
    };
    let closed = |extra: &'static str| {
        let s = &s;
        let hotel = hotel.clone();
        async move { s.get(&search(&hotel, 20, 23, extra), &Auth::None).await.expect(200).body }
    };
    assert_eq!(closed("").await.as_array().unwrap().len(), 1);
    push(json!([{"ratePlanId": plan, "date": day(21), "price": 1, "availability": 0}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "allotment 0");
    push(json!([{"ratePlanId": plan, "date": day(21), "price": 1, "availability": null, "stopSell": true}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "stop sell");
    push(json!([{"ratePlanId": plan, "date": day(21), "price": 1, "stopSell": false}, {"ratePlanId": plan, "date": day(20), "price": 1, "closedToArrival": true}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "closed to arrival");
    push(json!([{"ratePlanId": plan, "date": day(20), "price": 1, "closedToArrival": false, "minStay": 4}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "min stay");
    push(json!([{"ratePlanId": plan, "date": day(20), "price": 1, "minStay": null, "maxStay": 2}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "max stay");
    push(json!([{"ratePlanId": plan, "date": day(20), "price": 1, "maxStay": null}, {"ratePlanId": plan, "date": day(23), "price": 1, "closedToDeparture": true}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 0, "closed to departure");
    push(json!([{"ratePlanId": plan, "date": day(23), "price": 1, "closedToDeparture": false}])).await;
    assert_eq!(closed("").await.as_array().unwrap().len(), 1);
    // Occupancy must fit; infants do not count; a night without a price closes the offer.
    assert_eq!(closed("&adults=3").await.as_array().unwrap().len(), 0);
    assert_eq!(closed("&adults=1&children=2").await.as_array().unwrap().len(), 0);
    assert_eq!(closed("&adults=2&infants=2").await.as_array().unwrap().len(), 1);
    assert_eq!(s.get(&search(&hotel, 58, 62, ""), &Auth::None).await.expect(200).body, json!([]));
}

async fn bad_searches_answer_400_and_unknown_hotels_404(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 1).await;
    let base = format!("/api/hotels/{hotel}/availability");
    for query in [
        format!("checkInDate={}&checkOutDate={}", day(5), day(5)),
        format!("checkInDate={}&checkOutDate={}", day(5), day(4)),
        "checkInDate=2026-02-30&checkOutDate=2026-03-02".to_string(),
        format!("checkInDate={}&checkOutDate={}", day(1), day(40)),
        format!("checkInDate={}&checkOutDate={}", day(1200), day(1201)),
        format!("checkInDate={}&checkOutDate={}&adults=0", day(1), day(2)),
        format!("checkInDate={}&checkOutDate={}&adults=1000000", day(1), day(2)),
        format!("checkInDate={}&checkOutDate={}&children=-1", day(1), day(2)),
        format!("checkInDate={}&checkOutDate={}&adults=two", day(1), day(2)),
        format!("checkOutDate={}", day(2)),
    ] {
        s.get(&format!("{base}?{query}"), &Auth::None).await.expect(400);
    }
    s.get(&search("nope", 1, 2, ""), &Auth::None).await.expect(404);
    s.put(&format!("/api/hotels/{hotel}"), &org.auth(), json!({"publicBooking": false})).await.expect(200);
    s.get(&search(&hotel, 1, 2, ""), &Auth::None).await.expect(404);
}

async fn booking_creates_a_request_that_staff_approve(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 1).await;
    let offer = s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.expect(200).body[0].clone();
    let mut body = booking(&offer);
    body["notes"] = json!("Late arrival");
    let booked = s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, body).await.expect(201);
    assert_eq!(booked.body.as_object().unwrap().len(), 2, "only reservationId and status: {}", booked.body);
    assert_eq!(booked.body["status"], json!("REQUESTED"));
    let id = booked.body["reservationId"].as_str().unwrap();

    let r = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    assert_eq!(r.body["status"], json!("REQUESTED"));
    assert_eq!(r.body["source"], json!("BOOKING_PAGE"));
    assert_eq!(r.body["totalPrice"], offer["totalPrice"]);
    assert_eq!(r.body["notes"], json!("Late arrival"));
    let rooms = r.body["rooms"].as_array().unwrap();
    assert_eq!(rooms.len(), 1);
    assert_eq!(rooms[0]["status"], json!("PENDING"));
    assert_eq!(rooms[0]["roomId"], Value::Null);
    assert_eq!(rooms[0]["roomTypeId"], json!(room_type));
    assert_eq!(rooms[0]["ratePlanId"], json!(plan));
    let guest_id = r.body["guestId"].as_str().unwrap().to_string();
    let guest = s.get(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(200);
    assert_eq!(guest.body["email"], json!("ana@example.com"));
    // A request holds nothing: the room is still offered.
    assert_eq!(s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.body[0]["availableUnits"], json!(1));

    // The same request again (same e-mail, dates and room type) while the first waits: the first answers.
    let mut repeat = booking(&offer);
    repeat["guest"]["email"] = json!("ANA@example.com");
    let repeated = s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, repeat).await.expect(201);
    assert_eq!(repeated.body["reservationId"], json!(id));
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1));
    // Another guest asks for the same room: a request of their own, with a guest of their own.
    let mut rival = booking(&offer);
    rival["guest"]["email"] = json!("rita@example.com");
    let again = s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, rival).await.expect(201);
    let again_id = again.body["reservationId"].as_str().unwrap();
    let second = s.get(&format!("/api/reservations/{again_id}"), &org.auth()).await.expect(200);
    assert_ne!(second.body["guestId"], json!(guest_id));
    assert_eq!(s.count("guests").await, 2);

    let approved = s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(200);
    assert_eq!(approved.body["status"], json!("CONFIRMED"));
    assert_eq!(approved.body["rooms"][0]["status"], json!("CONFIRMED"));
    assert_eq!(approved.body["folio"]["total"], offer["totalPrice"]);
    // The only room is taken now: no more offers, and the second request cannot be approved.
    assert_eq!(s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.body, json!([]));
    s.post(&format!("/api/reservations/{again_id}/approve"), &org.auth(), json!({})).await.expect(409);
    assert_eq!(s.get(&format!("/api/reservations/{again_id}"), &org.auth()).await.body["status"], json!("REQUESTED"));
    s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(409);
}

async fn offers_cannot_be_forged_edited_or_sold_twice(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 1).await;
    let other_hotel = s.hotel(&org, "Mountain").await;
    let offer = s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.expect(200).body[0].clone();
    let url = format!("/api/hotels/{hotel}/book-reservation");
    let offer_id = offer["offerId"].as_str().unwrap();
    let (payload, signature) = offer_id.split_once('.').unwrap();
    for bad in [
        json!({"offerId": "nonsense", "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}}),
        json!({"offerId": format!("{payload}x.{signature}"), "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}}),
        json!({"offerId": format!("{payload}.{}", &signature[2..]), "guest": {"firstName": "A", "lastName": "B", "email": "a@b.co"}}),
        json!({"offerId": offer_id, "guest": {"firstName": "A", "lastName": "B", "email": "not-an-email"}}),
        json!({"offerId": offer_id, "guest": {"firstName": "", "lastName": "B", "email": "a@b.co"}}),
        json!({"offerId": offer_id}),
    ] {
        s.post(&url, &Auth::None, bad).await.expect(400);
    }
    s.post(&format!("/api/hotels/{other_hotel}/book-reservation"), &Auth::None, booking(&offer)).await.expect(400);
    assert_eq!(s.count("reservations").await, 0);
    assert_eq!(s.count("guests").await, 0);

    // A price change after the search: 409, nothing written.
    s.post("/api/dailyRates", &org.auth(), json!({"values": [{"ratePlanId": plan, "date": day(6), "price": 99999}]}))
        .await
        .expect(200);
    let answer = s.post(&url, &Auth::None, booking(&offer)).await.expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains("price"));
    // Sold out after the search: 409.
    let fresh = s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.expect(200).body[0].clone();
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "checkInDate": day(6), "checkOutDate": day(7), "rooms": [{"roomTypeId": room_type, "price": 1}]}),
    )
    .await
    .expect(200);
    s.post(&url, &Auth::None, booking(&fresh)).await.expect(409);
    assert_eq!(s.count("reservations").await, 1);
    assert_eq!(s.count("guests").await, 0);
}

async fn idempotent_retries_book_once(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 1).await;
    let offer = s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.expect(200).body[0].clone();
    let url = format!("{}/api/hotels/{hotel}/book-reservation", s.base);
    let server = std::sync::Arc::new(s);
    let mut calls = Vec::new();
    for _ in 0..20 {
        let (s, url, body) = (server.clone(), url.clone(), booking(&offer));
        calls.push(tokio::spawn(async move {
            let res = s.client.post(&url).header("idempotency-key", "retry-42").json(&body).send().await.unwrap();
            TestServer::answer(res).await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for call in calls {
        let answer = call.await.unwrap().expect(201);
        ids.insert(answer.body["reservationId"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "every retry answers the first reservation");
    assert_eq!(server.count("reservations").await, 1);
    assert_eq!(server.count("guests").await, 1);
    // The same key with another request is refused.
    let mut other = booking(&offer);
    other["guest"]["email"] = json!("someone@else.com");
    let res = server.client.post(&url).header("idempotency-key", "retry-42").json(&other).send().await.unwrap();
    TestServer::answer(res).await.expect(409);
}

async fn approvals_race_for_the_last_room(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 1).await;
    let offer = s.get(&search(&hotel, 5, 6, ""), &Auth::None).await.expect(200).body[0].clone();
    let mut ids = Vec::new();
    for n in 0..50 {
        let mut body = booking(&offer);
        body["guest"]["email"] = json!(format!("guest{n}@example.com"));
        let booked = s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, body).await.expect(201);
        ids.push(booked.body["reservationId"].as_str().unwrap().to_string());
    }
    let writer = Auth::Key(s.key(&org, &[Scope::ReservationsWrite], None).await);
    let server = std::sync::Arc::new(s);
    let mut calls = Vec::new();
    for id in ids {
        let (s, auth) = (server.clone(), writer.clone());
        calls.push(tokio::spawn(async move {
            s.post(&format!("/api/reservations/{id}/approve"), &auth, json!({})).await.status
        }));
    }
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(call.await.unwrap().as_u16());
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 49, "{statuses:?}");
    let mut conn = server.db.read().await.unwrap();
    let held: i64 = frontdesk::store::query("SELECT COUNT(*) AS n FROM reservation_rooms WHERE holds_inventory = TRUE")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .try_get("n")
        .unwrap();
    assert_eq!(held, 1);
}

async fn approval_rechecks_the_rate_plan(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 3).await;
    let offer = s.get(&search(&hotel, 5, 7, ""), &Auth::None).await.expect(200).body[0].clone();
    let url = format!("/api/hotels/{hotel}/book-reservation");
    let first = s.post(&url, &Auth::None, booking(&offer)).await.expect(201).body["reservationId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut other_guest = booking(&offer);
    other_guest["guest"]["email"] = json!("rita@example.com");
    let second =
        s.post(&url, &Auth::None, other_guest).await.expect(201).body["reservationId"].as_str().unwrap().to_string();
    // The channel manager caps the plan at one room on the second night, after the requests came in.
    s.post(
        "/api/dailyRates",
        &org.auth(),
        json!({"values": [{"ratePlanId": plan, "date": day(6), "price": 10600, "availability": 1}]}),
    )
    .await
    .expect(200);
    s.post(&format!("/api/reservations/{first}/approve"), &org.auth(), json!({})).await.expect(200);
    let refused = s.post(&format!("/api/reservations/{second}/approve"), &org.auth(), json!({})).await.expect(409);
    assert!(refused.body["detail"].as_str().unwrap().contains("allotment"), "{}", refused.body);
    s.post("/api/dailyRates", &org.auth(), json!({"values": [{"ratePlanId": plan, "date": day(6), "price": 10600, "availability": null, "stopSell": true}]}))
        .await
        .expect(200);
    s.post(&format!("/api/reservations/{second}/approve"), &org.auth(), json!({})).await.expect(409);
}

async fn units_count_every_night_and_the_plan_allotment(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 4).await;
    let stay = |from: u64, to: u64, plan: Option<&str>| {
        json!({"hotelId": hotel, "checkInDate": day(from), "checkOutDate": day(to),
               "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "price": 1}]})
    };
    // Nights 10 and 11 under the plan, nights 11 to 13 without one.
    s.post("/api/reservations", &org.auth(), stay(10, 12, Some(&plan))).await.expect(200);
    s.post("/api/reservations", &org.auth(), stay(11, 14, None)).await.expect(200);
    let units = |from: u64, to: u64| {
        let s = &s;
        let hotel = hotel.clone();
        async move {
            let offers = s.get(&search(&hotel, from, to, ""), &Auth::None).await.expect(200).body;
            offers.as_array().unwrap().first().map(|o| o["availableUnits"].as_i64().unwrap())
        }
    };
    // Free rooms: 3, 2 and 3 on nights 10 to 12; the fullest night counts.
    assert_eq!(units(10, 13).await, Some(2));
    assert_eq!(units(12, 14).await, Some(3));
    let allot = |date: u64, availability: i64| {
        let s = &s;
        let auth = org.auth();
        let values =
            json!([{"ratePlanId": plan, "date": day(date), "price": 10000 + 100 * date, "availability": availability}]);
        async move { s.post("/api/dailyRates", &auth, json!({"values": values})).await.expect(200) }
    };
    // An allotment of 2 on night 10, one of which the stay under the plan holds.
    allot(10, 2).await;
    assert_eq!(units(10, 13).await, Some(1));
    allot(10, 1).await;
    assert_eq!(units(10, 13).await, None);
    // The stay under the plan leaves on the morning of night 12: it does not count against that night's allotment.
    allot(12, 1).await;
    assert_eq!(units(12, 14).await, Some(1));
    // A stay that started long before the searched nights still holds them.
    assert_eq!(units(30, 32).await, Some(4));
    s.post("/api/reservations", &org.auth(), stay(1, 41, None)).await.expect(200);
    assert_eq!(units(30, 32).await, Some(3));
}

/// Searches are answered from this process's copy of the hotel's rates and inventory: every kind of change, through
/// the API or straight in the database, shows in the very next search.
async fn searches_see_every_change_at_once(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 2).await;
    let find = || {
        let s = &s;
        let hotel = hotel.clone();
        async move { s.get(&search(&hotel, 10, 12, ""), &Auth::None).await.expect(200).body }
    };
    let first = find().await;
    assert_eq!(first[0]["availableUnits"], json!(2));
    assert_eq!(first[0]["totalPrice"], json!(11000 + 11100));

    // Rates.
    let values = json!({"values": [{"ratePlanId": plan, "date": day(10), "price": 5000}]});
    s.post("/api/dailyRates", &org.auth(), values).await.expect(200);
    assert_eq!(find().await[0]["totalPrice"], json!(5000 + 11100), "a new price");
    // Rooms: one out of order, then back; one more room; a room removed.
    let rooms = s.get(&format!("/api/rooms?hotelId={hotel}"), &org.auth()).await.expect(200).body;
    let room = rooms["items"][0]["id"].as_str().or(rooms[0]["id"].as_str()).unwrap().to_string();
    s.put(&format!("/api/rooms/{room}"), &org.auth(), json!({"housekeepingStatus": "OUT_OF_ORDER"})).await.expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(1), "a room out of order");
    s.put(&format!("/api/rooms/{room}"), &org.auth(), json!({"housekeepingStatus": "DIRTY"})).await.expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(2), "back in order");
    let extra = s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "301"})).await;
    assert_eq!(find().await[0]["availableUnits"], json!(3), "a room added");
    s.delete(&format!("/api/rooms/{extra}"), &org.auth()).await.expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(2), "a room removed");
    // Room type and rate plan.
    s.put(&format!("/api/roomTypes/{room_type}"), &org.auth(), json!({"name": "Twin"})).await.expect(200);
    assert_eq!(find().await[0]["roomTypeName"], json!("Twin"), "a renamed room type");
    s.put(&format!("/api/ratePlans/{plan}"), &org.auth(), json!({"name": "Saver"})).await.expect(200);
    assert_eq!(find().await[0]["ratePlanName"], json!("Saver"), "a renamed rate plan");
    s.put(&format!("/api/ratePlans/{plan}"), &org.auth(), json!({"active": false})).await.expect(200);
    assert_eq!(find().await, json!([]), "an inactive plan");
    s.put(&format!("/api/ratePlans/{plan}"), &org.auth(), json!({"active": true})).await.expect(200);
    // Reservations: a confirmed stay takes a room, moving it releases the nights, cancelling releases it.
    let stay = s
        .create(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "checkInDate": day(11), "checkOutDate": day(12),
                   "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "price": 1}]}),
        )
        .await;
    assert_eq!(find().await[0]["availableUnits"], json!(1), "a confirmed stay");
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"checkInDate": day(30), "checkOutDate": day(31)}))
        .await
        .expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(2), "the stay moved to other nights");
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"checkInDate": day(10), "checkOutDate": day(11)}))
        .await
        .expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(1), "and back");
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    assert_eq!(find().await[0]["availableUnits"], json!(2), "a cancelled stay");
    // A write that no API path made (a script, a future feature) is seen as well: the database keeps the version.
    let mut tx = s.db.begin_write().await.unwrap();
    frontdesk::store::query("UPDATE daily_rates SET price = 7000 WHERE rate_plan_id = $1")
        .bind(&plan)
        .execute(tx.conn())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(find().await[0]["totalPrice"], json!(14000), "a price changed in the database");
}

/// The copy answers exactly what the database answers, over stays of every length across its 32-day pages, with
/// restrictions, allotments and reservations sprinkled over the calendar.
async fn searches_from_memory_match_the_database(s: TestServer) {
    use frontdesk::domain::availability::{self, Stay};
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 3).await;
    let second_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Family", "maxOccupancy": 4})).await;
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": second_type, "name": "401"})).await.expect(200);
    let open_plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "Any room"})).await;
    let mut values = Vec::new();
    for d in 0..60u64 {
        values.push(json!({"ratePlanId": open_plan, "date": day(d), "price": 9000 + 37 * d,
            "availability": if d % 7 == 3 { json!(1) } else { json!(null) },
            "stopSell": d % 11 == 5, "closedToArrival": d % 9 == 2, "closedToDeparture": d % 13 == 4,
            "minStay": if d % 5 == 1 { json!(2) } else { json!(null) },
            "maxStay": if d % 6 == 0 { json!(4) } else { json!(null) }}));
    }
    values.push(json!({"ratePlanId": plan, "date": day(17), "price": 1, "closedToArrival": true}));
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    for (n, (from, to)) in [(3u64, 6u64), (8, 9), (15, 40), (31, 33), (33, 35), (44, 45)].into_iter().enumerate() {
        let room = if n % 2 == 0 { &room_type } else { &second_type };
        let rate = if n % 3 == 0 { json!(open_plan) } else { json!(null) };
        s.post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "checkInDate": day(from), "checkOutDate": day(to),
                   "rooms": [{"roomTypeId": room, "ratePlanId": rate, "price": 1}]}),
        )
        .await
        .expect(200);
    }
    let (_, hotel_record, _) = {
        let mut conn = s.db.read().await.unwrap();
        frontdesk::store::hotels::get_public(&mut conn, &hotel).await.unwrap().unwrap()
    };
    let mut compared = 0;
    for from in (0..58u64).step_by(3) {
        for nights in [1u64, 2, 3, 5, 9, 30] {
            for adults in [1, 3] {
                let found =
                    s.get(&search(&hotel, from, from + nights, &format!("&adults={adults}")), &Auth::None).await;
                if from + nights > 60 {
                    continue;
                }
                let found = found.expect(200).body;
                let stay = Stay {
                    check_in: chrono::NaiveDate::parse_from_str(&day(from), "%Y-%m-%d").unwrap(),
                    check_out: chrono::NaiveDate::parse_from_str(&day(from + nights), "%Y-%m-%d").unwrap(),
                    adults,
                    children: 0,
                    infants: 0,
                };
                let mut conn = s.db.read().await.unwrap();
                let priced = availability::price(&mut conn, &org.id, &hotel_record, &stay, None, None).await.unwrap();
                let from_database: Vec<Value> = priced
                    .iter()
                    .map(|p| json!([p.room_type.id, p.plan.id, p.total, p.units, p.nightly.len()]))
                    .collect();
                let from_memory: Vec<Value> = found
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| {
                        json!([o["roomTypeId"], o["ratePlanId"], o["totalPrice"], o["availableUnits"], o["nights"]])
                    })
                    .collect();
                assert_eq!(from_memory, from_database, "{} + {nights} nights, {adults} adults", day(from));
                compared += from_database.len();
            }
        }
    }
    assert!(compared > 100, "the stays compared had offers to compare: {compared}");
}

/// Searches are answered from reused reads and answers (the rules are unit-tested in `copies.rs` and `recent.rs`): a
/// change made outside any write of the service (here by hand in SQL) is seen within `recent::MAX_AGE`, one made
/// through the service at once, and an answer is not reused past `ANSWER_MAX_AGE`.
async fn answers_are_reused_briefly_and_never_across_a_change(s: TestServer) {
    use frontdesk::domain::availability::ANSWER_MAX_AGE;
    use frontdesk::store::recent::MAX_AGE;
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 2).await;
    let find = || {
        let (s, hotel) = (&s, hotel.clone());
        async move { s.get(&search(&hotel, 10, 12, ""), &Auth::None).await.expect(200).body }
    };
    assert_eq!(find().await[0]["totalPrice"], json!(11000 + 11100));
    // By hand: no write of the service tells the process; the version the triggers bumped does, once re-read.
    let mut conn = s.db.read().await.unwrap();
    frontdesk::store::query("UPDATE daily_rates SET price = 7000 WHERE rate_plan_id = $1")
        .bind(&plan)
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    tokio::time::sleep(MAX_AGE).await;
    let by_hand = find().await;
    assert_eq!(by_hand[0]["totalPrice"], json!(14000), "a price changed by hand, seen within MAX_AGE");
    // Through the service: at once.
    let values = json!({"values": [{"ratePlanId": plan, "date": day(10), "price": 5000}]});
    s.post("/api/dailyRates", &org.auth(), values).await.expect(200);
    let changed = find().await;
    assert_eq!(changed[0]["totalPrice"], json!(5000 + 7000), "a price set through the service, at once");
    // Nothing changed, but the answer is older than ANSWER_MAX_AGE: computed again, with offers that expire later.
    tokio::time::sleep(ANSWER_MAX_AGE + std::time::Duration::from_millis(100)).await;
    let later = find().await;
    assert_eq!(later[0]["totalPrice"], changed[0]["totalPrice"]);
    assert_ne!(later[0]["offerId"], changed[0]["offerId"], "a fresh offer");
}
