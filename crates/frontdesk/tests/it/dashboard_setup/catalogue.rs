//! Hotels, room types, rooms and rate plans set up in the browser: they are the API's records, a room type with rooms
//! is not deleted, and invalid input is shown beside its field.

use crate::common::browser::Browser;
use crate::common::PASSWORD;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{catalogue, message_beside, server};

on_both_engines_configured!(
    a_hotel_set_up_in_the_browser_is_the_apis,
    deleting_a_room_type_that_has_rooms_is_refused,
    invalid_input_is_shown_beside_its_field,
);

/// The one record of a list answer.
fn only(list: &Value) -> &Value {
    let items = list.as_array().expect("a list");
    assert_eq!(items.len(), 1, "{list}");
    &items[0]
}

async fn a_hotel_set_up_in_the_browser_is_the_apis(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let auth = org.auth();
    let Some(b) = Browser::start(&s.base).await else { return };
    // An organization without a hotel lands on setup.
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.wait_for_text("No hotel yet").await;
    assert_eq!(b.path().await, "/setup/hotels");
    b.click_text("a", "New hotel").await;
    b.wait_for_text("Time zone").await;
    b.fill("#name", "Harbour View").await;
    b.fill("#timezone", "Europe/Lisbon").await;
    b.fill("#currency", "eur").await;
    b.set_value("#checkInTime", "14:00").await;
    b.set_value("#checkOutTime", "10:30").await;
    b.fill("#addressLine1", "Rua do Cais 12").await;
    b.fill("#city", "Porto").await;
    b.fill("#postalCode", "4050-001").await;
    b.fill("#country", "pt").await;
    b.click_text("button", "Create hotel").await;
    b.wait_for_text("Created Harbour View.").await;
    let hotel = only(&s.get("/api/hotels", &auth).await.expect(200).body).clone();
    let id = hotel["id"].as_str().unwrap().to_string();
    assert_eq!(b.path().await, format!("/setup/hotels/{id}"));
    for (field, value) in [
        ("name", json!("Harbour View")),
        ("timezone", json!("Europe/Lisbon")),
        ("currency", json!("EUR")),
        ("checkInTime", json!("14:00")),
        ("checkOutTime", json!("10:30")),
        ("addressLine1", json!("Rua do Cais 12")),
        ("city", json!("Porto")),
        ("postalCode", json!("4050-001")),
        ("country", json!("PT")),
        ("publicBooking", json!(true)),
    ] {
        assert_eq!(hotel[field], value, "{field}: {hotel}");
    }
    // The booking page's link, and its settings page.
    assert!(b.page_text().await.contains(&format!("/book/{id}")));

    // A room type.
    b.click_text("a", "Add a room type").await;
    b.wait_for_text("New room type").await;
    b.fill("#name", "Family Room").await;
    b.fill("#maxOccupancy", "4").await;
    b.fill("#maxAdults", "3").await;
    b.fill("#maxChildren", "2").await;
    b.fill("#description", "Two rooms, one door.").await;
    b.click_text("button", "Add the room type").await;
    b.wait_for_text("Added the room type Family Room.").await;
    let types = s.get(&format!("/api/roomTypes?hotelId={id}"), &auth).await.expect(200).body;
    let room_type = only(&types).clone();
    let type_id = room_type["id"].as_str().unwrap().to_string();
    assert_eq!(
        (&room_type["name"], &room_type["maxOccupancy"], &room_type["maxAdults"], &room_type["maxChildren"]),
        (&json!("Family Room"), &json!(4), &json!(3), &json!(2))
    );
    assert_eq!(room_type["description"], json!("Two rooms, one door."));

    // Two rooms, one of them out of order.
    for (name, floor, status) in [("201", "2", "CLEAN"), ("202", "2", "OUT_OF_ORDER")] {
        b.click("a[href$='/rooms/new']").await;
        b.wait_for_text("New room").await;
        b.fill("#name", name).await;
        b.select("#roomTypeId", &type_id).await;
        b.fill("#floor", floor).await;
        b.select("#housekeepingStatus", status).await;
        b.click_text("button", "Add the room").await;
        b.wait_for_text(&format!("Added room {name}.")).await;
    }
    let rooms = s.get(&format!("/api/rooms?hotelId={id}"), &auth).await.expect(200).body;
    let mut seen: Vec<(String, i64, String, String)> = rooms
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["floor"].as_i64().unwrap(),
                r["housekeepingStatus"].as_str().unwrap().to_string(),
                r["roomTypeId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("201".to_string(), 2, "CLEAN".to_string(), type_id.clone()),
            ("202".to_string(), 2, "OUT_OF_ORDER".to_string(), type_id.clone())
        ]
    );

    // A rate plan for the room type.
    b.click_text("a", "Add a rate plan").await;
    b.wait_for_text("New rate plan").await;
    assert_eq!(b.find("#currency").await.prop("value").await.unwrap().as_deref(), Some("EUR"));
    b.fill("#name", "Best Available Rate").await;
    b.fill("#code", "BAR").await;
    b.select("#roomTypeId", &type_id).await;
    b.click_text("button", "Add the rate plan").await;
    b.wait_for_text("Added the rate plan Best Available Rate.").await;
    let plans = s.get(&format!("/api/ratePlans?hotelId={id}"), &auth).await.expect(200).body;
    let plan = only(&plans).clone();
    assert_eq!(
        (&plan["name"], &plan["code"], &plan["roomTypeId"], &plan["currency"], &plan["active"]),
        (&json!("Best Available Rate"), &json!("BAR"), &json!(type_id), &json!("EUR"), &json!(true))
    );
    b.assert_page_ok("a hotel's setup page").await;

    // Edits: the hotel's check-in time and booking, a room type's name, a plan made inactive for every type.
    b.set_value("#checkInTime", "16:00").await;
    b.click("#publicBooking").await;
    b.click_text("button", "Save details").await;
    b.wait_for_text("Saved the details of Harbour View.").await;
    let hotel = s.get(&format!("/api/hotels/{id}"), &auth).await.expect(200).body;
    assert_eq!((&hotel["checkInTime"], &hotel["publicBooking"]), (&json!("16:00"), &json!(false)));
    assert_eq!(hotel["city"], json!("Porto"), "fields not changed keep their values");
    b.goto(&format!("/setup/hotels/{id}/room-types/{type_id}")).await;
    b.fill("#name", "Family Suite").await;
    b.click_text("button", "Save the room type").await;
    b.wait_for_text("Saved the room type Family Suite.").await;
    let room_type = s.get(&format!("/api/roomTypes/{type_id}"), &auth).await.expect(200).body;
    assert_eq!((&room_type["name"], &room_type["maxOccupancy"]), (&json!("Family Suite"), &json!(4)));
    let plan_id = plan["id"].as_str().unwrap();
    b.goto(&format!("/setup/hotels/{id}/rate-plans/{plan_id}")).await;
    b.select("#roomTypeId", "").await;
    b.click("#active").await;
    b.click_text("button", "Save the rate plan").await;
    b.wait_for_text("Saved the rate plan Best Available Rate.").await;
    let plan = s.get(&format!("/api/ratePlans/{plan_id}"), &auth).await.expect(200).body;
    assert_eq!((&plan["roomTypeId"], &plan["active"], &plan["code"]), (&Value::Null, &json!(false), &json!("BAR")));
    // The front desk links to setup, and setup back to the front desk.
    b.goto(&format!("/hotels/{id}/today")).await;
    b.click_text("a", "Setup").await;
    b.wait_for_text("Rate plans").await;
    assert_eq!(b.path().await, format!("/setup/hotels/{id}"));
    b.close().await;
}

async fn deleting_a_room_type_that_has_rooms_is_refused(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
    b.wait_for_text("Room types").await;
    b.click_text("button", "Delete").await;
    b.accept_dialog().await;
    b.wait_for_text("The room type Standard Double was not deleted: the room type still has rooms").await;
    b.assert_page_ok("the refused delete").await;
    s.get(&format!("/api/roomTypes/{}", c.room_type), &org.auth()).await.expect(200);
    assert_eq!((s.count("room_types").await, s.count("rooms").await, s.count("rate_plans").await), (1, 2, 1));
    // Without the rooms (and with the plan gone, which priced every type) it goes.
    for room in &c.rooms {
        b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
        b.wait_for_text("Rooms").await;
        let form = format!("form[action$='/rooms/{room}/delete'] button");
        b.click(&form).await;
        b.accept_dialog().await;
        b.wait_for_text("Deleted room").await;
    }
    // Without JavaScript, the browser asks nothing: the dashboard's one confirmation page asks, in setup's too.
    let Some(plain) = Browser::start_without_javascript(&s.base).await else { return };
    plain.sign_in(&org.operator_email, PASSWORD).await;
    plain.goto(&format!("/setup/hotels/{}", c.hotel)).await;
    plain.click(&format!("form[action$='/rate-plans/{}/delete'] button", c.plan)).await;
    plain.wait_for_text("Delete the rate plan Best Available Rate?").await;
    plain.assert_fits("the confirmation page").await;
    s.get(&format!("/api/ratePlans/{}", c.plan), &org.auth()).await.expect(200);
    plain.click_text("button", "Yes, delete").await;
    plain.wait_for_text("Deleted the rate plan Best Available Rate.").await;
    plain.close().await;
    b.goto(&format!("/setup/hotels/{}", c.hotel)).await;
    b.wait_for_text("Room types").await;
    b.click(&format!("form[action$='/room-types/{}/delete'] button", c.room_type)).await;
    b.accept_dialog().await;
    b.wait_for_text("Deleted the room type Standard Double.").await;
    assert_eq!((s.count("room_types").await, s.count("rooms").await, s.count("rate_plans").await), (0, 0, 0));
    b.close().await;
}

async fn invalid_input_is_shown_beside_its_field(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    // A room type whose adults exceed what it sleeps: the domain's rule, beside the field.
    b.goto(&format!("/setup/hotels/{}/room-types/new", c.hotel)).await;
    b.fill("#name", "Tiny").await;
    b.fill("#maxOccupancy", "2").await;
    b.fill("#maxAdults", "5").await;
    b.click_text("button", "Add the room type").await;
    b.wait_for_text("must not exceed maxOccupancy").await;
    assert!(message_beside(&b, "maxAdults").await.contains("must not exceed maxOccupancy (2)"));
    assert_eq!(b.find("#name").await.prop("value").await.unwrap().as_deref(), Some("Tiny"), "what was typed stays");
    b.assert_page_ok("the room type form with errors").await;
    assert_eq!(s.count("room_types").await, 1);
    // A hotel with a time zone and a currency that do not exist.
    b.goto("/setup/hotels/new").await;
    b.fill("#name", "Nowhere").await;
    b.fill("#timezone", "Mars/Olympus").await;
    b.fill("#currency", "XYZ").await;
    b.click_text("button", "Create hotel").await;
    b.wait_for_text("must be an IANA time zone").await;
    assert!(message_beside(&b, "timezone").await.contains("IANA time zone"));
    assert!(message_beside(&b, "currency").await.contains("ISO 4217"));
    b.assert_page_ok("the hotel form with errors").await;
    assert_eq!(s.count("hotels").await, 1);
    // A room with a name the hotel has already: the 409 at the top of the form; and an edit that empties a name.
    b.goto(&format!("/setup/hotels/{}/rooms/new", c.hotel)).await;
    b.fill("#name", "101").await;
    b.click_text("button", "Add the room").await;
    b.wait_for_text("already has a room with this name").await;
    assert_eq!(s.count("rooms").await, 2);
    b.goto(&format!("/setup/hotels/{}/rate-plans/{}", c.hotel, c.plan)).await;
    b.fill("#name", " ").await;
    b.fill("#code", "B A R").await;
    b.click_text("button", "Save the rate plan").await;
    b.wait_for_text("without spaces").await;
    assert!(!message_beside(&b, "name").await.is_empty());
    assert!(message_beside(&b, "code").await.contains("without spaces"));
    let plan = s.get(&format!("/api/ratePlans/{}", c.plan), &org.auth()).await.expect(200).body;
    assert_eq!((&plan["name"], &plan["code"]), (&json!("Best Available Rate"), &json!("BAR")));
    b.close().await;
}
