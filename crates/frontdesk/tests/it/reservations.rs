//! Guests and reservations: CRUD, filters, projection, paging, the state machine, inventory and folios, on both
//! engines.

use crate::common::{day, Auth, Org, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    guests_crud_filters_and_events,
    guests_with_reservations_cannot_be_deleted,
    confirmed_reservations_get_rooms_and_a_folio,
    reservation_list_filters_sort_page_and_project,
    the_state_machine_allows_only_its_moves,
    inventory_is_never_oversold_and_rooms_never_double_assigned,
    deleting_a_reservation_cascades,
    bad_reservation_input_writes_nothing,
    requested_reservations_are_approved_once,
    unlimited_lists_stream_every_match,
    reservations_are_invisible_across_organizations_and_pins,
    racing_writers_never_take_the_last_room_twice,
    pages_agree_with_the_whole_list,
    a_change_writes_only_the_rooms_it_touches,
);

/// A hotel with a room type of `rooms` physical rooms: (hotel, room type, room ids).
async fn hotel_with_rooms(s: &TestServer, org: &Org, rooms: usize) -> (String, String, Vec<String>) {
    let hotel = s.hotel(org, "Sea").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    let mut ids = Vec::new();
    for n in 0..rooms {
        let room =
            s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await;
        ids.push(room.expect(200).body["id"].as_str().unwrap().to_string());
    }
    (hotel, room_type, ids)
}

fn reservation(hotel: &str, room_type: &str, from: u64, to: u64) -> Value {
    json!({"hotelId": hotel, "checkInDate": day(from), "checkOutDate": day(to),
           "rooms": [{"roomTypeId": room_type, "price": 30000}]})
}

async fn guests_crud_filters_and_events(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let reader = Auth::Key(s.key(&org, &[Scope::GuestsRead], None).await);
    let writer = Auth::Key(s.key(&org, &[Scope::GuestsRead, Scope::GuestsWrite], None).await);
    s.post("/api/guests", &reader, json!({"firstName": "Ana", "lastName": "Silva"})).await.expect(403);
    let ana = s
        .post(
            "/api/guests",
            &writer,
            json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva", "email": "Ana.Silva@Example.com", "country": "PT", "language": "pt-PT"}),
        )
        .await
        .expect(200);
    let ana_id = ana.body["id"].as_str().unwrap().to_string();
    let bob = s.post("/api/guests", &writer, json!({"firstName": "Bob", "lastName": "Stone"})).await.expect(200);
    let bob_id = bob.body["id"].as_str().unwrap().to_string();
    for bad in [
        json!({"firstName": "X", "lastName": "Y", "email": "not-an-email"}),
        json!({"firstName": "", "lastName": "Y"}),
        json!({"firstName": "X", "lastName": "Y", "country": "Portugal"}),
        json!({"firstName": "X"}),
    ] {
        s.post("/api/guests", &writer, bad).await.expect(400);
    }
    assert_eq!(s.count("guests").await, 2);

    let by_email = s.get("/api/guests?email=ana.silva@EXAMPLE.com", &reader).await.expect(200);
    assert_eq!(by_email.body.as_array().unwrap().len(), 1);
    assert_eq!(by_email.header("x-total-count"), Some("1"));
    let by_hotel = s.get(&format!("/api/guests?hotelId={hotel}"), &reader).await.expect(200);
    assert_eq!(by_hotel.body[0]["id"], json!(ana_id));
    let by_ids =
        s.get(&format!("/api/guests?_ids={bob_id},{ana_id}&sortField=lastName&sortDirection=desc"), &reader).await;
    let by_ids = by_ids.expect(200);
    assert_eq!(by_ids.body[0]["lastName"], json!("Stone"));
    assert_eq!(by_ids.body[1]["lastName"], json!("Silva"));
    let projected = s.get("/api/guests?fields=id,email&sortField=firstName", &reader).await.expect(200);
    assert_eq!(projected.body[0], json!({"id": ana_id, "email": "Ana.Silva@Example.com"}));
    s.get("/api/guests?fields=id,passport", &reader).await.expect(400);
    s.get("/api/guests?sortField=password", &reader).await.expect(400);

    let updated = s
        .put(&format!("/api/guests/{bob_id}"), &writer, json!({"email": "bob@example.com", "hotelId": hotel}))
        .await
        .expect(200);
    assert_eq!(updated.body["email"], json!("bob@example.com"));
    assert_eq!(updated.body["firstName"], json!("Bob"));
    let read = s.get(&format!("/api/guests/{bob_id}"), &reader).await.expect(200);
    assert_eq!(read.body, updated.body);
    let deleted = s.delete(&format!("/api/guests/{bob_id}"), &writer).await.expect(200);
    assert_eq!(deleted.body["id"], json!(bob_id));
    s.get(&format!("/api/guests/{bob_id}"), &reader).await.expect(404);

    // Each write recorded its event in the outbox, in the same transaction.
    assert_eq!(s.count("outbox_events").await, 4);
    let other = s.org("Other").await;
    s.get(&format!("/api/guests/{ana_id}"), &other.auth()).await.expect(404);
    s.put(&format!("/api/guests/{ana_id}"), &other.auth(), json!({"notes": "mine"})).await.expect(404);
    s.delete(&format!("/api/guests/{ana_id}"), &other.auth()).await.expect(404);
    assert_eq!(s.get("/api/guests", &other.auth()).await.expect(200).body, json!([]));
}

async fn guests_with_reservations_cannot_be_deleted(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let guest = s.post("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await.expect(200);
    let guest_id = guest.body["id"].as_str().unwrap();
    let mut body = reservation(&hotel, &room_type, 1, 3);
    body["guestId"] = json!(guest_id);
    s.post("/api/reservations", &org.auth(), body).await.expect(200);
    s.delete(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(409);
    s.get(&format!("/api/guests/{guest_id}"), &org.auth()).await.expect(200);
}

async fn confirmed_reservations_get_rooms_and_a_folio(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 2).await;
    let created = s
        .post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "checkInDate": day(10), "checkOutDate": day(13), "source": "CHANNEL",
                   "channelReference": "BK-1", "rooms": [
                       {"roomTypeId": room_type, "price": 30001, "adults": 2},
                       {"roomTypeId": room_type, "price": 9000, "adults": 1, "children": 1}]}),
        )
        .await
        .expect(200);
    let r = &created.body;
    assert_eq!(r["status"], json!("CONFIRMED"));
    assert_eq!(r["totalPrice"], json!(39001));
    assert_eq!(r["adults"], json!(3));
    assert_eq!(r["currency"], json!("EUR"));
    assert_eq!(r["rooms"].as_array().unwrap().len(), 2);
    assert_eq!(r["rooms"][0]["status"], json!("CONFIRMED"));
    assert_eq!(r["rooms"][0]["roomId"], Value::Null);
    // Check-in at 15:00 in Lisbon: an RFC 3339 UTC instant on the check-in date.
    assert!(r["startTime"].as_str().unwrap().starts_with(&day(10)), "{}", r["startTime"]);
    let folio = &r["folio"];
    let charges = folio["charges"].as_array().unwrap();
    assert_eq!(charges.len(), 6, "one charge per room and night");
    let amounts: Vec<i64> = charges.iter().map(|c| c["amount"].as_i64().unwrap()).collect();
    assert_eq!(amounts, vec![10001, 10000, 10000, 3000, 3000, 3000]);
    assert_eq!(folio["total"], json!(39001));
    assert_eq!(charges[1]["date"], json!(day(11)));

    let id = r["id"].as_str().unwrap();
    let read = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    assert_eq!(read.body, created.body);
    let listed = s.get("/api/reservations", &org.auth()).await.expect(200);
    assert!(listed.body[0].get("rooms").is_none(), "lists leave the rooms out");
    assert_eq!(listed.body[0]["channelReference"], json!("BK-1"));

    // Price from the rate plan's daily prices when none is given.
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let values: Vec<Value> = (20..23).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 100 * d})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let priced = s
        .post(
            "/api/reservations",
            &org.auth(),
            json!({"hotelId": hotel, "checkInDate": day(20), "checkOutDate": day(23), "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
        )
        .await
        .expect(200);
    assert_eq!(priced.body["totalPrice"], json!(2000 + 2100 + 2200));
    s.post(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "checkInDate": day(22), "checkOutDate": day(25), "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
    )
    .await
    .expect(400);
}

async fn reservation_list_filters_sort_page_and_project(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 10).await;
    let (other_hotel, other_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let guest = s.post("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await.expect(200);
    let guest_id = guest.body["id"].as_str().unwrap().to_string();
    // Stays: [1,3) [3,5) [5,8) [10,11) at the hotel, [3,5) elsewhere.
    let mut ids = Vec::new();
    for (from, to) in [(1, 3), (3, 5), (5, 8), (10, 11)] {
        let mut body = reservation(&hotel, &room_type, from, to);
        if from == 5 {
            body["guestId"] = json!(guest_id);
        }
        ids.push(
            s.post("/api/reservations", &org.auth(), body).await.expect(200).body["id"].as_str().unwrap().to_string(),
        );
    }
    s.post("/api/reservations", &org.auth(), reservation(&other_hotel, &other_type, 3, 5)).await.expect(200);
    let get = |query: String| {
        let s = &s;
        let auth = org.auth();
        async move { s.get(&format!("/api/reservations?{query}"), &auth).await.expect(200) }
    };
    let ids_of = |answer: &crate::common::Answer| -> Vec<String> {
        answer.body.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };

    let all = get(format!("hotelId={hotel}")).await;
    assert_eq!(all.header("x-total-count"), Some("4"));
    // stayDateFrom keeps stays that check out after it; stayDateTo keeps stays that check in on or before it.
    let window =
        get(format!("hotelId={hotel}&stayDateFrom={}&stayDateTo={}&sortField=checkInDate", day(3), day(5))).await;
    assert_eq!(ids_of(&window), vec![ids[1].clone(), ids[2].clone()]);
    let window = get(format!("hotelId={hotel}&stayDateFrom={}", day(2))).await;
    assert_eq!(window.header("x-total-count"), Some("4"));
    let window = get(format!("hotelId={hotel}&stayDateTo={}", day(1))).await;
    assert_eq!(ids_of(&window), vec![ids[0].clone()]);
    let by_guest = get(format!("guestId={guest_id}")).await;
    assert_eq!(ids_of(&by_guest), vec![ids[2].clone()]);

    // Legacy window on the instants.
    // The stay [5, 8) ends at 11:00 Lisbon time on day 8, before noon UTC.
    let start = format!("{}T12:00:00Z", day(8));
    let legacy = get(format!("hotelId={hotel}&startTime={start}")).await;
    assert_eq!(ids_of(&legacy), vec![ids[3].clone()]);

    // Sort, direction, paging, projection, ids.
    let desc = get(format!("hotelId={hotel}&sortField=checkInDate&sortDirection=DESC&limit=2")).await;
    assert_eq!(ids_of(&desc), vec![ids[3].clone(), ids[2].clone()]);
    assert_eq!(desc.header("x-total-count"), Some("4"), "the total ignores paging");
    let page = get(format!("hotelId={hotel}&sortField=checkInDate&limit=2&skip=2")).await;
    assert_eq!(ids_of(&page), vec![ids[2].clone(), ids[3].clone()]);
    let skipped = get(format!("hotelId={hotel}&sortField=checkInDate&skip=3")).await;
    assert_eq!(ids_of(&skipped), vec![ids[3].clone()]);
    let projected = get(format!("hotelId={hotel}&fields=id,status&limit=1&sortField=checkInDate")).await;
    assert_eq!(projected.body, json!([{"id": ids[0], "status": "CONFIRMED"}]));
    let chosen = get(format!("_ids={},{}", ids[3], ids[0])).await;
    assert_eq!(chosen.header("x-total-count"), Some("2"));

    for bad in [
        "sortField=nights",
        "sortField=rooms",
        "sortDirection=UP",
        "limit=-1",
        "skip=-5",
        "limit=ten",
        "stayDateFrom=2026-02-30",
        "stayDateTo=tomorrow",
        "startTime=yesterday",
        "fields=id,secret",
    ] {
        s.get(&format!("/api/reservations?{bad}"), &org.auth()).await.expect(400);
    }
}

async fn the_state_machine_allows_only_its_moves(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, rooms) = hotel_with_rooms(&s, &org, 3).await;
    let create = |status: &str| {
        let mut body = reservation(&hotel, &room_type, 1, 3);
        body["status"] = json!(status);
        body
    };
    let put_status = |id: String, status: &'static str| {
        let s = &s;
        let auth = org.auth();
        // A check-out leaves the balance on account (the money's rules are tests/it/money.rs's).
        let mut body = json!({"status": status});
        if status == "CHECKED_OUT" {
            body["onAccountReason"] = json!("Settled outside this test");
        }
        async move { s.put(&format!("/api/reservations/{id}"), &auth, body).await }
    };
    let requested = s.post("/api/reservations", &org.auth(), create("REQUESTED")).await.expect(200);
    assert_eq!(requested.body["rooms"][0]["status"], json!("PENDING"));
    assert!(requested.body.get("folio").is_none(), "no folio before confirmation");
    let id = requested.body["id"].as_str().unwrap().to_string();
    for bad in ["CHECKED_IN", "CHECKED_OUT", "NO_SHOW"] {
        put_status(id.clone(), bad).await.expect(409);
    }
    let declined = put_status(id.clone(), "CANCELLED").await.expect(200);
    assert_eq!(declined.body["rooms"][0]["status"], json!("CANCELLED"));
    for bad in ["CONFIRMED", "REQUESTED", "CHECKED_IN"] {
        put_status(id.clone(), bad).await.expect(409);
    }

    // A stay that starts today, so that it can be checked in (the front desk's rules: tests/it/front_desk/stays.rs).
    let mut arriving = create("CONFIRMED");
    arriving["checkInDate"] = json!(day(0));
    let confirmed = s.post("/api/reservations", &org.auth(), arriving).await.expect(200);
    let id = confirmed.body["id"].as_str().unwrap().to_string();
    let room_id = confirmed.body["rooms"][0]["id"].as_str().unwrap().to_string();
    put_status(id.clone(), "REQUESTED").await.expect(409);
    let answer = put_status(id.clone(), "CHECKED_IN").await.expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains("assigned"));
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"rooms": [{"id": room_id, "roomId": rooms[0]}]}))
        .await
        .expect(200);
    let checked_in = put_status(id.clone(), "CHECKED_IN").await.expect(200);
    assert_eq!(checked_in.body["rooms"][0]["roomId"], json!(rooms[0]));
    put_status(id.clone(), "CANCELLED").await.expect(409);
    put_status(id.clone(), "CHECKED_OUT").await.expect(200);
    // Undoing a check-out the same day is the one move back.
    put_status(id.clone(), "CHECKED_IN").await.expect(200);
    put_status(id.clone(), "CHECKED_OUT").await.expect(200);
    for bad in ["CONFIRMED", "REQUESTED", "CANCELLED", "NO_SHOW"] {
        put_status(id.clone(), bad).await.expect(409);
    }
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"checkOutDate": day(5)})).await.expect(409);

    let no_show = s.post("/api/reservations", &org.auth(), create("CONFIRMED")).await.expect(200);
    let id = no_show.body["id"].as_str().unwrap().to_string();
    put_status(id.clone(), "NO_SHOW").await.expect(200);
    s.post("/api/reservations", &org.auth(), create("CHECKED_IN")).await.expect(400);
    // A PUT that changes the hotel is refused.
    let other_hotel = s.hotel(&org, "Mountain").await;
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"hotelId": other_hotel})).await.expect(409);
}

async fn inventory_is_never_oversold_and_rooms_never_double_assigned(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, rooms) = hotel_with_rooms(&s, &org, 1).await;
    let first = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 5, 8)).await.expect(200);
    let first_id = first.body["id"].as_str().unwrap().to_string();
    let answer = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 7, 9)).await.expect(409);
    assert!(answer.body["detail"].as_str().unwrap().contains(&day(7)));
    // Back to back is fine: check-out day is free.
    let next = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 8, 9)).await.expect(200);
    // A request holds nothing, until approved.
    let mut requested = reservation(&hotel, &room_type, 6, 7);
    requested["status"] = json!("REQUESTED");
    let requested = s.post("/api/reservations", &org.auth(), requested).await.expect(200);
    let requested_id = requested.body["id"].as_str().unwrap().to_string();
    s.post(&format!("/api/reservations/{requested_id}/approve"), &org.auth(), json!({})).await.expect(409);
    assert_eq!(
        s.get(&format!("/api/reservations/{requested_id}"), &org.auth()).await.body["status"],
        json!("REQUESTED")
    );
    // Moving dates onto a full night is refused; cancelling frees the nights.
    let next_id = next.body["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/reservations/{next_id}"), &org.auth(), json!({"checkInDate": day(7)})).await.expect(409);
    s.put(&format!("/api/reservations/{first_id}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    s.post(&format!("/api/reservations/{requested_id}/approve"), &org.auth(), json!({})).await.expect(200);

    // Out-of-order rooms are not sellable, and the only room of confirmed stays cannot go out of order.
    let out_of_order = json!({"housekeepingStatus": "OUT_OF_ORDER"});
    let refused = s.put(&format!("/api/rooms/{}", rooms[0]), &org.auth(), out_of_order.clone()).await.expect(409);
    assert!(refused.body["detail"].as_str().unwrap().contains(&day(6)), "{}", refused.body);
    let second_room =
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "999"})).await.expect(200);
    s.put(&format!("/api/rooms/{}", rooms[0]), &org.auth(), out_of_order).await.expect(200);
    let one = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 20, 21)).await.expect(200);
    s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 20, 21)).await.expect(409);
    s.put(&format!("/api/rooms/{}", rooms[0]), &org.auth(), json!({"housekeepingStatus": "CLEAN"})).await.expect(200);
    s.delete(&format!("/api/reservations/{}", one.body["id"].as_str().unwrap()), &org.auth()).await.expect(200);

    // One physical room, two rooms of a type with two rooms: assigning it to both on overlapping nights is refused.
    let a = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 30, 33)).await.expect(200);
    let b = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 31, 32)).await.expect(200);
    let assign = |r: &Value, room: &str| json!({"rooms": [{"id": r["rooms"][0]["id"], "roomId": room}]});
    let a_id = a.body["id"].as_str().unwrap();
    let b_id = b.body["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{a_id}"), &org.auth(), assign(&a.body, &rooms[0])).await.expect(200);
    s.put(&format!("/api/reservations/{b_id}"), &org.auth(), assign(&b.body, &rooms[0])).await.expect(409);
    let second = second_room.body["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{b_id}"), &org.auth(), assign(&b.body, second)).await.expect(200);
    let mut taken = reservation(&hotel, &room_type, 40, 41);
    taken["rooms"][0]["roomId"] = json!(rooms[0]);
    s.post("/api/reservations", &org.auth(), taken.clone()).await.expect(200);
    taken["checkInDate"] = json!(day(39));
    taken["rooms"][0]["roomId"] = json!(rooms[0]);
    s.post("/api/reservations", &org.auth(), taken).await.expect(409);
}

async fn deleting_a_reservation_cascades(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let created = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 1, 4)).await.expect(200);
    let id = created.body["id"].as_str().unwrap();
    assert_eq!([s.count("reservation_rooms").await, s.count("folios").await, s.count("folio_lines").await], [1, 1, 3]);
    let deleted = s.delete(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    assert_eq!(deleted.body, created.body, "answers the reservation as it was");
    assert_eq!(
        [
            s.count("reservations").await,
            s.count("reservation_rooms").await,
            s.count("folios").await,
            s.count("folio_lines").await
        ],
        [0, 0, 0, 0]
    );
    s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(404);
    // The nights are free again.
    s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 1, 4)).await.expect(200);
}

async fn bad_reservation_input_writes_nothing(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let (_, other_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let base = reservation(&hotel, &room_type, 1, 3);
    let with = |field: &str, value: Value| {
        let mut body = base.clone();
        body[field] = value;
        body
    };
    let cases = [
        (with("checkInDate", json!("2026-02-30")), 400),
        (with("checkOutDate", json!(day(1))), 400),
        (with("checkOutDate", json!(day(0))), 400),
        (with("checkOutDate", json!(day(500))), 400),
        (with("rooms", json!([])), 400),
        (with("rooms", json!([{"roomTypeId": other_type, "price": 1}])), 400),
        (with("rooms", json!([{"roomTypeId": "nope", "price": 1}])), 400),
        (with("rooms", json!([{"roomTypeId": room_type, "price": -1}])), 400),
        (with("rooms", json!([{"roomTypeId": room_type, "price": 1, "adults": 3}])), 400),
        (with("rooms", json!([{"roomTypeId": room_type}])), 400),
        (with("status", json!("CHECKED_OUT")), 400),
        (with("source", json!("FAX")), 400),
        (with("adults", json!("two")), 400),
        (with("nights", json!(2)), 400),
        (with("guestId", json!("nope")), 404),
        (with("hotelId", json!("nope")), 404),
    ];
    for (body, status) in cases {
        s.post("/api/reservations", &org.auth(), body.clone()).await.expect(status);
    }
    assert_eq!(
        [s.count("reservations").await, s.count("reservation_rooms").await, s.count("outbox_events").await],
        [0, 0, 0]
    );
    let read_only = Auth::Key(s.key(&org, &[Scope::ReservationsRead], None).await);
    s.post("/api/reservations", &read_only, base).await.expect(403);
    s.get("/api/reservations", &Auth::Key(s.key(&org, &[Scope::GuestsRead], None).await)).await.expect(403);
    assert_eq!(s.count("reservations").await, 0);
}

async fn requested_reservations_are_approved_once(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let mut body = reservation(&hotel, &room_type, 1, 3);
    body["status"] = json!("REQUESTED");
    let requested = s.post("/api/reservations", &org.auth(), body).await.expect(200);
    let id = requested.body["id"].as_str().unwrap();
    let read_only = Auth::Key(s.key(&org, &[Scope::ReservationsRead], None).await);
    s.post(&format!("/api/reservations/{id}/approve"), &read_only, json!({})).await.expect(403);
    let approved = s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(200);
    assert_eq!(approved.body["status"], json!("CONFIRMED"));
    assert_eq!(approved.body["rooms"][0]["status"], json!("CONFIRMED"));
    assert_eq!(approved.body["folio"]["charges"].as_array().unwrap().len(), 2);
    let again = s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(409);
    assert!(again.body["detail"].as_str().unwrap().contains("CONFIRMED"));
    s.post("/api/reservations/nope/approve", &org.auth(), json!({})).await.expect(404);
    assert_eq!(s.count("folios").await, 1);
}

async fn unlimited_lists_stream_every_match(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let mut body = reservation(&hotel, &room_type, 1, 2);
    body["status"] = json!("REQUESTED");
    for _ in 0..120 {
        s.post("/api/reservations", &org.auth(), body.clone()).await.expect(200);
    }
    let all = s.get("/api/reservations?limit=0", &org.auth()).await.expect(200);
    assert_eq!(all.body.as_array().unwrap().len(), 120);
    assert_eq!(all.header("x-total-count"), Some("120"));
    let none = s.get("/api/reservations?guestId=nobody", &org.auth()).await.expect(200);
    assert_eq!(none.body, json!([]));
    assert_eq!(none.header("x-total-count"), Some("0"));
}

async fn reservations_are_invisible_across_organizations_and_pins(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let (other_hotel, other_type, _) = hotel_with_rooms(&s, &org, 1).await;
    let mine = s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 1, 2)).await.expect(200);
    let elsewhere =
        s.post("/api/reservations", &org.auth(), reservation(&other_hotel, &other_type, 1, 2)).await.expect(200);
    let id = mine.body["id"].as_str().unwrap();
    let other_id = elsewhere.body["id"].as_str().unwrap();
    let stranger = s.org("Other").await;
    s.get(&format!("/api/reservations/{id}"), &stranger.auth()).await.expect(404);
    s.put(&format!("/api/reservations/{id}"), &stranger.auth(), json!({"notes": "x"})).await.expect(404);
    s.delete(&format!("/api/reservations/{id}"), &stranger.auth()).await.expect(404);
    s.post(&format!("/api/reservations/{id}/approve"), &stranger.auth(), json!({})).await.expect(404);
    assert_eq!(s.get("/api/reservations", &stranger.auth()).await.expect(200).body, json!([]));

    let pinned = Auth::Key(s.key(&org, &Scope::ALL, Some(&hotel)).await);
    s.get(&format!("/api/reservations/{other_id}"), &pinned).await.expect(404);
    s.get(&format!("/api/reservations?hotelId={other_hotel}"), &pinned).await.expect(403);
    let listed = s.get("/api/reservations", &pinned).await.expect(200);
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_eq!(listed.body[0]["id"], json!(id));
    s.post("/api/reservations", &pinned, reservation(&other_hotel, &other_type, 3, 4)).await.expect(403);
}

async fn racing_writers_never_take_the_last_room_twice(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 1).await;
    // 20 requests waiting for approval, and 20 direct confirmed bookings, all for the same night, all at once.
    let mut requested = reservation(&hotel, &room_type, 3, 4);
    requested["status"] = json!("REQUESTED");
    let mut ids = Vec::new();
    for _ in 0..20 {
        ids.push(
            s.post("/api/reservations", &org.auth(), requested.clone()).await.expect(200).body["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let server = std::sync::Arc::new(s);
    let mut racers = Vec::new();
    for id in ids {
        let (s, auth) = (server.clone(), org.auth());
        racers.push(tokio::spawn(async move {
            s.post(&format!("/api/reservations/{id}/approve"), &auth, json!({})).await.status
        }));
        let (s, auth, body) = (server.clone(), org.auth(), reservation(&hotel, &room_type, 3, 4));
        racers.push(tokio::spawn(async move { s.post("/api/reservations", &auth, body).await.status }));
    }
    let mut won = 0;
    for racer in racers {
        match racer.await.unwrap().as_u16() {
            200 => won += 1,
            409 => {}
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(won, 1, "exactly one writer gets the last room");
    let mut conn = server.db.read().await.unwrap();
    let held: i64 = frontdesk::store::query("SELECT COUNT(*) AS n FROM reservation_rooms WHERE holds_inventory = TRUE")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .try_get("n")
        .unwrap();
    assert_eq!(held, 1, "one room is held, never more than the hotel has");
}

/// A page and its total are read in one statement, with the longest-stay bound inside it; the whole list (`limit=0`)
/// is streamed after a count of its own. Both must agree for every window, hotel or none, sort, page size and skip,
/// including long stays that start well before a window, and pages past the end.
async fn pages_agree_with_the_whole_list(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, _) = hotel_with_rooms(&s, &org, 40).await;
    let (other_hotel, other_type, _) = hotel_with_rooms(&s, &org, 40).await;
    // 30 stays of 1 to 4 nights, and two long ones: 20 nights at the hotel, 27 at the other one.
    for n in 0..30u64 {
        let (h, t) = if n % 3 == 0 { (&other_hotel, &other_type) } else { (&hotel, &room_type) };
        s.post("/api/reservations", &org.auth(), reservation(h, t, 1 + n % 23, 2 + n % 23 + n % 4)).await.expect(200);
    }
    s.post("/api/reservations", &org.auth(), reservation(&hotel, &room_type, 2, 22)).await.expect(200);
    s.post("/api/reservations", &org.auth(), reservation(&other_hotel, &other_type, 1, 28)).await.expect(200);
    let get = |query: String| {
        let (s, auth) = (&s, org.auth());
        async move { s.get(&format!("/api/reservations?{query}"), &auth).await.expect(200) }
    };
    let ids_of = |answer: &crate::common::Answer| -> Vec<String> {
        answer.body.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };
    let mut compared = 0;
    for scope in [format!("hotelId={hotel}&"), String::new()] {
        for (from, to) in [(0, 40), (5, 6), (21, 24), (25, 26), (27, 30), (40, 50)] {
            for sort in ["sortField=checkInDate", "sortField=id&sortDirection=DESC", "sortField=totalPrice"] {
                let window = format!("{scope}stayDateFrom={}&stayDateTo={}&{sort}", day(from), day(to));
                let whole = get(window.clone()).await;
                let all = ids_of(&whole);
                assert_eq!(whole.header("x-total-count"), Some(all.len().to_string().as_str()));
                for (limit, skip) in [(1, 0), (2, 1), (5, 3), (50, 0), (3, 40)] {
                    let page = get(format!("{window}&limit={limit}&skip={skip}")).await;
                    let expected: Vec<String> = all.iter().skip(skip).take(limit).cloned().collect();
                    assert_eq!(ids_of(&page), expected, "{window} limit={limit} skip={skip}");
                    assert_eq!(page.header("x-total-count"), whole.header("x-total-count"), "{window}");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 180);
    // The long stays are found from windows that start long after they did (short stays check in from day 1 on).
    let starts = |answer: &crate::common::Answer| -> Vec<Value> {
        answer.body.as_array().unwrap().iter().map(|r| r["checkInDate"].clone()).collect()
    };
    let late = get(format!("hotelId={hotel}&stayDateFrom={}&stayDateTo={}&limit=50", day(21), day(21))).await;
    assert!(starts(&late).contains(&json!(day(2))), "{:?}", starts(&late));
    let late = get(format!("stayDateFrom={}&stayDateTo={}&limit=50", day(27), day(27))).await;
    assert!(starts(&late).contains(&json!(day(1))), "{:?}", starts(&late));
    // An empty page still tells an unknown hotel from a hotel with nothing in the window.
    let other = s.org("Other").await;
    let foreign = s.hotel(&other, "Elsewhere").await;
    s.get(&format!("/api/reservations?hotelId={foreign}&limit=10"), &org.auth()).await.expect(404);
    let empty = get(format!("hotelId={hotel}&stayDateFrom={}&limit=10", day(300))).await;
    assert_eq!((empty.body.clone(), empty.header("x-total-count")), (json!([]), Some("0")));
}

/// Room rows written by changes since the counter was installed: a trigger on each engine counts them.
async fn count_room_writes(s: &TestServer) {
    let mut tx = s.db.begin_write().await.expect("a write");
    let statements: &[&str] = match s.db.engine() {
        frontdesk::store::Engine::Sqlite => &[
            "CREATE TABLE room_writes (n INTEGER)",
            "CREATE TRIGGER room_updated AFTER UPDATE ON reservation_rooms BEGIN INSERT INTO room_writes VALUES (1); END",
            "CREATE TRIGGER room_inserted AFTER INSERT ON reservation_rooms BEGIN INSERT INTO room_writes VALUES (1); END",
        ],
        frontdesk::store::Engine::Postgres => &[
            "CREATE TABLE room_writes (n INTEGER)",
            "CREATE FUNCTION room_written() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN INSERT INTO room_writes VALUES (1); RETURN NULL; END $$",
            "CREATE TRIGGER room_written AFTER INSERT OR UPDATE ON reservation_rooms \
             FOR EACH ROW EXECUTE FUNCTION room_written()",
        ],
    };
    for statement in statements {
        frontdesk::store::query(statement).execute(tx.conn()).await.expect(statement);
    }
    tx.commit().await.expect("commit");
}

/// A change writes the room rows it alters, and no other: a note or a price rewrites none, an assignment the one
/// room, new dates every room (each row carries them), a check-in none (the rooms hold the same nights).
async fn a_change_writes_only_the_rooms_it_touches(s: TestServer) {
    let org = s.org("Acme").await;
    let (hotel, room_type, rooms) = hotel_with_rooms(&s, &org, 2).await;
    let both = json!({"hotelId": hotel, "checkInDate": day(0), "checkOutDate": day(2), "rooms": [
        {"roomTypeId": room_type, "price": 20000}, {"roomTypeId": room_type, "price": 20000}]});
    let created = s.post("/api/reservations", &org.auth(), both).await.expect(200).body;
    let id = created["id"].as_str().unwrap();
    let path = format!("/api/reservations/{id}");
    count_room_writes(&s).await;
    let writes = || s.count("room_writes");

    let noted = s.put(&path, &org.auth(), json!({"notes": "late arrival", "totalPrice": 39000})).await.expect(200);
    assert_eq!(noted.body["notes"], json!("late arrival"));
    assert_eq!(writes().await, 0, "a note and a price rewrite no room");
    let first = created["rooms"][0]["id"].clone();
    s.put(&path, &org.auth(), json!({"rooms": [{"id": first, "roomId": rooms[0]}]})).await.expect(200);
    assert_eq!(writes().await, 1, "an assignment writes its room");
    let moved = s.put(&path, &org.auth(), json!({"checkOutDate": day(3)})).await.expect(200);
    assert_eq!(moved.body["checkOutDate"], json!(day(3)));
    assert_eq!(writes().await, 3, "new dates write every room");
    let second = created["rooms"][1]["id"].clone();
    s.put(&path, &org.auth(), json!({"rooms": [{"id": second, "roomId": rooms[1]}]})).await.expect(200);
    assert_eq!(writes().await, 4, "the other assignment writes its room");
    let checked_in = s.put(&path, &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    assert_eq!(checked_in.body["status"], json!("CHECKED_IN"));
    assert_eq!(writes().await, 4, "a check-in leaves the rooms' rows as they were: they hold the same nights");
    // What was not written is still right: the stored rooms read back as the answers said.
    let read = s.get(&path, &org.auth()).await.expect(200);
    assert_eq!(read.body["rooms"], checked_in.body["rooms"]);
    assert_eq!(read.body["notes"], json!("late arrival"));
}
