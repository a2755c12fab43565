//! A hotel's tax and billing settings (`/api/hotels/{hotelId}/billing`), on both engines.

use crate::common::{Auth, TestServer};
use frontdesk::domain::Scope;
use serde_json::{json, Value};

on_both_engines!(
    billing_settings_default_then_save_and_keep_left_out_fields,
    billing_settings_refuse_bad_input_whole_and_write_nothing,
    billing_settings_are_the_hotels_and_an_operators_to_change,
);

fn breakfast() -> Value {
    json!({"code": "BREAKFAST", "name": "Breakfast", "unitPrice": 2000, "parts": [
        {"category": "FOOD_AND_BEVERAGE", "shareBasisPoints": 7000},
        {"category": "DRINKS", "shareBasisPoints": 3000},
    ]})
}

fn berlin() -> Value {
    json!({"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300, "maxNights": 21, "childrenExempt": true})
}

async fn billing_settings_default_then_save_and_keep_left_out_fields(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let path = format!("/api/hotels/{hotel}/billing");
    let fresh = s.get(&path, &org.auth()).await.expect(200).body;
    assert_eq!(fresh["hotelId"], json!(hotel));
    assert_eq!(fresh["currency"], json!("EUR"));
    assert_eq!(fresh["pricesIncludeVat"], json!(true), "European prices are shown with VAT");
    assert_eq!(
        fresh["vatRates"],
        json!([{"category": "ACCOMMODATION", "rateBasisPoints": 0},
               {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 0},
               {"category": "OTHER", "rateBasisPoints": 0}])
    );
    assert_eq!(
        (fresh["cityTax"].clone(), fresh["extras"].clone(), fresh["updatedAt"].clone()),
        (Value::Null, json!([]), Value::Null)
    );

    let rates = json!([{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                       {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                       {"category": "DRINKS", "rateBasisPoints": 1900},
                       {"category": "OTHER", "rateBasisPoints": 1900}]);
    let saved = s
        .put(&path, &org.auth(), json!({"vatRates": rates, "cityTax": berlin(), "extras": [breakfast()]}))
        .await
        .expect(200)
        .body;
    assert_eq!(saved["vatRates"], rates);
    assert_eq!(saved["cityTax"]["maxNights"], json!(21));
    assert_eq!(saved["cityTax"]["vatRateBasisPoints"], json!(0), "no VAT on the city tax by default");
    assert_eq!(saved["extras"][0]["parts"][1]["category"], json!("DRINKS"));
    assert!(saved["updatedAt"].is_string());
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body, saved, "read back as saved");

    // Left out keeps; null removes the city tax; a list replaces the list.
    let changed = s.put(&path, &org.auth(), json!({"pricesIncludeVat": false, "cityTax": null})).await.expect(200).body;
    assert_eq!((changed["pricesIncludeVat"].clone(), changed["cityTax"].clone()), (json!(false), Value::Null));
    assert_eq!((changed["vatRates"].clone(), changed["extras"].clone()), (rates, saved["extras"].clone()));
    let emptied = s.put(&path, &org.auth(), json!({"extras": []})).await.expect(200).body;
    assert_eq!(emptied["extras"], json!([]));
    // An API key reads them (any credential that sees the hotel).
    let key = Auth::Key(s.key(&org, &[Scope::RatesRead], None).await);
    assert_eq!(s.get(&path, &key).await.expect(200).body, emptied);
}

async fn billing_settings_refuse_bad_input_whole_and_write_nothing(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let path = format!("/api/hotels/{hotel}/billing");
    let bad = json!({
        "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 10001},
                     {"category": "ACCOMMODATION", "rateBasisPoints": 700},
                     {"category": "food", "rateBasisPoints": -1}],
        "cityTax": {"name": " ", "basis": "PERCENT_OF_NET", "maxNights": 0, "vatRateBasisPoints": 20000},
        "extras": [
            {"code": "BREAKFAST", "name": "Breakfast", "unitPrice": -5, "parts": [
                {"category": "FOOD_AND_BEVERAGE", "shareBasisPoints": 7000},
                {"category": "NOPE", "shareBasisPoints": 2000}]},
            {"code": "BREAKFAST", "name": "Again", "unitPrice": 1000000000001_i64, "parts": []},
        ],
    });
    let refused = s.put(&path, &org.auth(), bad).await.expect(400).body;
    assert_eq!(refused["status"], json!(400));
    let fields: Vec<&str> = refused["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
    for field in [
        "vatRates[0].rateBasisPoints",
        "vatRates[1].category",
        "vatRates[2].category",
        "vatRates[2].rateBasisPoints",
        "vatRates",
        "cityTax.name",
        "cityTax.rateBasisPoints",
        "cityTax.maxNights",
        "cityTax.vatRateBasisPoints",
        "extras[0].unitPrice",
        "extras[0].parts[1].category",
        "extras[0].parts",
        "extras[1].code",
        "extras[1].unitPrice",
        "extras[1].parts",
    ] {
        assert!(fields.contains(&field), "{field} is named: {refused}");
    }
    assert_eq!(s.count("hotel_billing_settings").await, 0, "nothing written");
    // Shapes the JSON cannot hold: wrong types, unknown fields, an unknown basis.
    for body in [
        json!({"pricesIncludeVat": "yes"}),
        json!({"vatRates": null}),
        json!({"taxes": []}),
        json!({"cityTax": {"name": "Tax", "basis": "PER_STAY", "amount": 100}}),
        json!({"vatRates": [{"category": "OTHER", "rateBasisPoints": 1.5}]}),
    ] {
        let answer = s.put(&path, &org.auth(), body.clone()).await.expect(400);
        assert_eq!(answer.body["status"], json!(400), "{body}");
    }
    assert_eq!(s.count("hotel_billing_settings").await, 0, "nothing written");
}

async fn billing_settings_are_the_hotels_and_an_operators_to_change(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let path = format!("/api/hotels/{hotel}/billing");
    let writer = Auth::Key(s.key(&org, &Scope::ALL, None).await);
    s.put(&path, &writer, json!({"pricesIncludeVat": false})).await.expect(403);
    let rival = s.org("Rival").await;
    s.get(&path, &rival.auth()).await.expect(404);
    s.put(&path, &rival.auth(), json!({"pricesIncludeVat": false})).await.expect(404);
    let other = s.hotel(&org, "Mountain").await;
    let pinned = Auth::Key(s.key(&org, &[], Some(&other)).await);
    s.get(&path, &pinned).await.expect(404);
    assert_eq!(s.count("hotel_billing_settings").await, 0);
    assert_eq!(s.get(&path, &org.auth()).await.expect(200).body["pricesIncludeVat"], json!(true));
}
