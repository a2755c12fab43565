//! No room is ever sold twice: room moves, random sequences of writes, concurrent and racing writers, and one room
//! assigned twice in one reservation, each checked against the stored records.

use crate::common::{day, Auth, Org, TestServer};
use serde_json::{json, Value};

use super::fixture;

on_both_engines!(
    room_moves_never_oversell,
    no_sequence_of_writes_oversells,
    concurrent_random_writes_never_fail_or_oversell,
    racing_room_moves_and_bookings_never_oversell,
    one_room_is_never_assigned_twice_in_one_reservation,
);

/// Checks, from the stored records alone (not from the `holds_inventory` projection), that in `hotel`: on every
/// night each room type's held rooms (confirmed rooms of confirmed or checked-in stays) fit its sellable rooms, and
/// every assigned held room is a sellable room of the reserved type, assigned to one stay a night.
async fn assert_never_oversold(s: &TestServer, hotel: &str) {
    use std::collections::HashMap;
    let date = |row: &frontdesk::store::Row, column: &str| -> chrono::NaiveDate {
        row.try_get::<String, _>(column).unwrap().parse().unwrap()
    };
    let mut conn = s.db.read().await.expect("connection");
    let rooms: HashMap<String, (String, bool)> =
        frontdesk::store::query("SELECT id, room_type_id, housekeeping_status FROM rooms WHERE hotel_id = $1")
            .bind(hotel)
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|row| {
                let status: String = row.try_get("housekeeping_status").unwrap();
                (row.try_get("id").unwrap(), (row.try_get("room_type_id").unwrap(), status != "OUT_OF_ORDER"))
            })
            .collect();
    let held = frontdesk::store::query(
        "SELECT rr.room_type_id, rr.room_id, rr.check_in_date, rr.check_out_date FROM reservation_rooms rr \
         JOIN reservations r ON r.id = rr.reservation_id WHERE r.hotel_id = $1 \
         AND r.status IN ('CONFIRMED', 'CHECKED_IN') AND rr.status = 'CONFIRMED'",
    )
    .bind(hotel)
    .fetch_all(&mut conn)
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
