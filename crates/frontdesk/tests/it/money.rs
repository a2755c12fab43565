//! The folio as a ledger (docs/money.md): VAT and city tax on the stay's lines, charges, allowances, payments,
//! refunds and fees, check-out against the balance, deleting only without money, its events; on both engines.

use std::time::Duration;

use crate::common::browser::{Browser, PHONE};
use crate::common::receiver::Receiver;
use crate::common::{basic, day, delivering, Auth, Org, TestServer, PASSWORD, WAIT};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use serde_json::{json, Value};

on_both_engines!(
    a_stay_is_charged_with_vat_and_city_tax_to_the_cent,
    each_night_is_charged_its_own_rate_and_the_offer_is_the_folio_to_the_cent,
    extras_payments_refunds_and_allowances_change_the_balance_exactly,
    check_out_asks_for_a_zero_balance_or_a_reason,
    money_is_kept_and_reservations_with_it_are_not_deleted,
    who_may_charge_and_who_may_take_money,
    hostile_amounts_are_refused_whole,
    the_end_of_day_posts_the_passed_nights_and_marks_no_shows,
    a_missed_end_of_day_runs_once_even_with_two_processes,
    a_stay_exempt_from_city_tax_pays_none_and_says_why,
    the_revenue_report_sums_posted_lines_by_day_and_payments_by_method,
);
on_both_engines_configured!(
    payments_are_delivered_to_subscriptions_that_name_them,
    the_desk_charges_takes_payment_corrects_and_refunds_in_the_folio,
    taxes_and_billing_are_set_up_in_the_dashboard,
    the_desk_exempts_refunds_at_check_out_prints_and_reports,
);

/// A hotel with 7 % on rooms and food, 19 % on drinks and other, Berlin's city tax (3.00 a person a night, at most
/// 21 nights, children exempt) and a breakfast split 70/30; a room type with four rooms and a plan: (hotel, room
/// type, plan, rooms).
async fn berlin_hotel(s: &TestServer, org: &Org, country: &str) -> (String, String, String, Vec<String>) {
    let hotel = s.hotel(org, "Spree").await;
    s.put(&format!("/api/hotels/{hotel}"), &org.auth(), json!({"country": country})).await.expect(200);
    s.put(
        &format!("/api/hotels/{hotel}/billing"),
        &org.auth(),
        json!({
            "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                         {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                         {"category": "DRINKS", "rateBasisPoints": 1900},
                         {"category": "OTHER", "rateBasisPoints": 1900}],
            "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300, "maxNights": 21,
                        "childrenExempt": true},
            "extras": [{"code": "BREAKFAST", "name": "Breakfast", "unitPrice": 2000, "parts": [
                {"category": "FOOD_AND_BEVERAGE", "shareBasisPoints": 7000},
                {"category": "DRINKS", "shareBasisPoints": 3000}]}],
        }),
    )
    .await
    .expect(200);
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 3})).await;
    let mut rooms = Vec::new();
    for n in 0..4 {
        let body = json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)});
        rooms.push(s.create("/api/rooms", &org.auth(), body).await);
    }
    let plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "BAR"})).await;
    (hotel, room_type, plan, rooms)
}

/// A confirmed stay from `from` for `nights` at 100.00 a night: (reservation, folio id).
async fn stay(
    s: &TestServer,
    org: &Org,
    h: &(String, String, String, Vec<String>),
    from: u64,
    nights: u64,
    party: Value,
) -> (Value, String) {
    let mut room = json!({"roomTypeId": h.1, "ratePlanId": h.2, "price": 10_000 * nights as i64});
    for (k, v) in party.as_object().unwrap() {
        room[k] = v.clone();
    }
    let body = json!({"hotelId": h.0, "checkInDate": day(from), "checkOutDate": day(from + nights), "rooms": [room]});
    let r = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let folio = r["folio"]["id"].as_str().expect("a confirmed stay has a folio").to_string();
    (r, folio)
}

fn lines_of<'a>(folio: &'a Value, source: &str) -> Vec<&'a Value> {
    folio["lines"].as_array().unwrap().iter().filter(|l| l["source"] == json!(source)).collect()
}

async fn a_stay_is_charged_with_vat_and_city_tax_to_the_cent(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "DE").await;
    let (r, folio_id) = stay(&s, &org, &h, 2, 3, json!({"adults": 2})).await;
    let folio = s.get(&format!("/api/folios/{folio_id}"), &org.auth()).await.expect(200).body;
    let nights = lines_of(&folio, "ROOM_NIGHT");
    assert_eq!(nights.len(), 3);
    for night in &nights {
        assert_eq!((&night["gross"], &night["net"], &night["vat"]), (&json!(10_000), &json!(9_346), &json!(654)));
        assert_eq!((&night["vatRateBasisPoints"], &night["category"]), (&json!(700), &json!("ACCOMMODATION")));
        assert_eq!(night["postedAt"], Value::Null, "a night to come follows the stay");
    }
    let taxes = lines_of(&folio, "CITY_TAX");
    assert_eq!(taxes.iter().map(|l| l["gross"].clone()).collect::<Vec<_>>(), vec![json!(600); 3]);
    assert_eq!(taxes[0]["vat"], json!(0));
    assert_eq!((folio["charges"].clone(), folio["balance"].clone()), (json!(31_800), json!(31_800)));
    assert_eq!(
        folio["vatTotals"],
        json!([{"vatRateBasisPoints": 0, "net": 1800, "vat": 0, "gross": 1800},
               {"vatRateBasisPoints": 700, "net": 28_038, "vat": 1962, "gross": 30_000}])
    );
    // The reservation carries its folio's id and balance; the contract's charges are the folio's charges.
    let read = s.get(&format!("/api/reservations/{}", r["id"].as_str().unwrap()), &org.auth()).await.expect(200).body;
    assert_eq!((read["folio"]["balance"].clone(), read["folio"]["total"].clone()), (json!(31_800), json!(31_800)));
    assert_eq!(read["folio"]["charges"].as_array().unwrap().len(), 6);

    // The public offer states the city tax beside the price, and its total is the folio's to the cent.
    s.put(&format!("/api/hotels/{}", h.0), &org.auth(), json!({"publicBooking": true})).await.expect(200);
    s.put(&format!("/api/ratePlans/{}", h.2), &org.auth(), json!({"roomTypeId": h.1})).await.expect(200);
    let prices: Vec<Value> = (10..13).map(|d| json!({"ratePlanId": h.2, "date": day(d), "price": 10_000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": prices})).await.expect(200);
    let search = format!("checkInDate={}&checkOutDate={}&adults=2", day(10), day(13));
    let offers = s.get(&format!("/api/hotels/{}/availability?{search}", h.0), &Auth::None).await.expect(200).body;
    let offer = offers["offers"].as_array().and_then(|o| o.first()).cloned().unwrap_or_else(|| offers[0].clone());
    assert_eq!(offer["totalPrice"], json!(30_000), "{offers}");
    assert_eq!(offer["cityTax"], json!({"name": "City tax", "amount": 1800}));
    assert_eq!(offer["totalWithTaxes"], json!(31_800));
    let page = s.client.get(format!("{}/book/{}?{search}", s.base, h.0)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("plus EUR 18.00 city tax, EUR 318.00 in all"), "the booking page says it");

    // 25 nights pay 21 nights of city tax; a child pays none where children are exempt.
    let (_, long) = stay(&s, &org, &h, 40, 25, json!({"adults": 1})).await;
    let long = s.get(&format!("/api/folios/{long}"), &org.auth()).await.expect(200).body;
    assert_eq!((lines_of(&long, "ROOM_NIGHT").len(), lines_of(&long, "CITY_TAX").len()), (25, 21));
    let (_, family) = stay(&s, &org, &h, 70, 1, json!({"adults": 2, "children": 1})).await;
    let family = s.get(&format!("/api/folios/{family}"), &org.auth()).await.expect(200).body;
    assert_eq!(lines_of(&family, "CITY_TAX")[0]["gross"], json!(600));

    // A date change remakes the unposted nights and their tax.
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"checkOutDate": day(4)})).await.expect(200);
    let shorter = s.get(&format!("/api/folios/{folio_id}"), &org.auth()).await.expect(200).body;
    assert_eq!(shorter["id"], json!(folio_id), "the folio keeps its id");
    assert_eq!((lines_of(&shorter, "ROOM_NIGHT").len(), lines_of(&shorter, "CITY_TAX").len()), (2, 2));
}

/// Nights priced by a rate plan whose prices vary are charged each at its own price, not an average: a city tax in
/// percent, rounded night by night, then comes to what the offer said, to the cent (an average would round
/// differently). Through the booking page's request (approved) and through the API alike.
async fn each_night_is_charged_its_own_rate_and_the_offer_is_the_folio_to_the_cent(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "AT").await;
    s.put(
        &format!("/api/hotels/{}/billing", h.0),
        &org.auth(),
        json!({"vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 1000},
                            {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 1000},
                            {"category": "DRINKS", "rateBasisPoints": 2000},
                            {"category": "OTHER", "rateBasisPoints": 2000}],
               "cityTax": {"name": "Ortstaxe", "basis": "PERCENT_OF_GROSS", "rateBasisPoints": 325, "maxNights": 30,
                           "childrenExempt": false}}),
    )
    .await
    .expect(200);
    s.put(&format!("/api/hotels/{}", h.0), &org.auth(), json!({"publicBooking": true})).await.expect(200);
    s.put(&format!("/api/ratePlans/{}", h.2), &org.auth(), json!({"roomTypeId": h.1})).await.expect(200);
    let prices = [10_020, 12_020, 15_020, 10_020];
    let values: Vec<Value> = prices
        .iter()
        .enumerate()
        .map(|(n, p)| json!({"ratePlanId": h.2, "date": day(10 + n as u64), "price": p}))
        .collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    let search = format!("checkInDate={}&checkOutDate={}&adults=2", day(10), day(14));
    let offers = s.get(&format!("/api/hotels/{}/availability?{search}", h.0), &Auth::None).await.expect(200).body;
    let offer = offers["offers"].as_array().and_then(|o| o.first()).cloned().unwrap_or_else(|| offers[0].clone());
    assert_eq!(offer["totalPrice"], json!(47_080), "{offers}");
    // 3.25 % of each night, rounded half up night by night: 3.26, 3.91, 4.88, 3.26 (four average nights of
    // 117.70 would make 3.83 each, 15.32 in all).
    assert_eq!(offer["cityTax"]["amount"], json!(1_531), "{offer}");
    let nightly_tax = [326, 391, 488, 326];
    assert_eq!(nightly_tax.iter().sum::<i64>(), 1_531);

    let requested = s
        .post(
            &format!("/api/hotels/{}/book-reservation", h.0),
            &Auth::None,
            json!({"offerId": offer["offerId"], "guest": {"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"}}),
        )
        .await
        .expect(201)
        .body;
    let id = requested["reservationId"].as_str().unwrap();
    let approved = s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(200).body;
    let by_api = json!({"hotelId": h.0, "checkInDate": day(10), "checkOutDate": day(14),
                        "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2, "adults": 2}]});
    let by_api = s.post("/api/reservations", &org.auth(), by_api).await.expect(200).body;
    for r in [approved, by_api] {
        let folio = r["folio"]["id"].as_str().expect("a folio");
        let folio = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
        let amounts =
            |source: &str| lines_of(&folio, source).iter().map(|l| l["gross"].as_i64().unwrap()).collect::<Vec<_>>();
        assert_eq!(amounts("ROOM_NIGHT"), prices, "each night at its own price");
        assert_eq!(amounts("CITY_TAX"), nightly_tax);
        assert_eq!(folio["charges"], offer["totalWithTaxes"], "the offer's total is the folio's, to the cent");
    }
}

/// Sends a folio write with an idempotency key.
async fn post_once(s: &TestServer, auth: &Auth, path: &str, key: &str, body: Value) -> (u16, Option<String>, Value) {
    let request = s.client.post(format!("{}{path}", s.base)).json(&body).header("idempotency-key", key);
    let request = match auth {
        Auth::Key(secret) => request.header("authorization", basic(secret)),
        Auth::Token(token) => request.header("authorization", format!("Token {token}")),
        _ => request,
    };
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    let replayed = answer.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap().to_string());
    (status, replayed, answer.json().await.unwrap())
}

async fn extras_payments_refunds_and_allowances_change_the_balance_exactly(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "AT").await;
    let (_, folio) = stay(&s, &org, &h, 2, 3, json!({"adults": 2})).await;
    let path = |tail: &str| format!("/api/folios/{folio}{tail}");
    // A breakfast of 20.00 split 70/30: 14.00 at 7 % (VAT 0.92) and 6.00 at 19 % (VAT 0.96), posted at once.
    let after = s.post(&path("/charges"), &org.auth(), json!({"extraCode": "BREAKFAST"})).await.expect(200).body;
    let extras = lines_of(&after, "EXTRA");
    assert_eq!(extras.len(), 2);
    assert_eq!(
        (&extras[0]["gross"], &extras[0]["vat"], &extras[0]["category"]),
        (&json!(1400), &json!(92), &json!("FOOD_AND_BEVERAGE"))
    );
    assert_eq!(
        (&extras[1]["gross"], &extras[1]["vat"], &extras[1]["category"]),
        (&json!(600), &json!(96), &json!("DRINKS"))
    );
    assert!(extras[0]["postedAt"].is_string());
    assert_eq!(after["balance"], json!(33_800));
    // A described charge, two of them.
    let after = s
        .post(
            &path("/charges"),
            &org.auth(),
            json!({"description": "Minibar", "unitPrice": 450, "quantity": 2, "category": "DRINKS"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(after["balance"], json!(34_700));
    let minibar = lines_of(&after, "EXTRA").into_iter().find(|l| l["description"] == json!("Minibar")).unwrap().clone();
    assert_eq!((&minibar["quantity"], &minibar["gross"], &minibar["vat"]), (&json!(2), &json!(900), &json!(144)));

    // Two partial payments and a refund.
    let (status, replayed, first) = post_once(
        &s,
        &org.auth(),
        &path("/payments"),
        "pay-1",
        json!({"method": "CARD", "amount": 20_000, "reference": "T-1"}),
    )
    .await;
    assert_eq!((status, replayed), (200, None));
    assert_eq!(first["balance"], json!(14_700));
    // Sent again with the same key: stored once.
    let (status, replayed, again) = post_once(
        &s,
        &org.auth(),
        &path("/payments"),
        "pay-1",
        json!({"method": "CARD", "amount": 20_000, "reference": "T-1"}),
    )
    .await;
    assert_eq!((status, replayed.as_deref()), (200, Some("true")));
    assert_eq!(again["balance"], json!(14_700));
    assert_eq!(again["lines"].as_array().unwrap().iter().filter(|l| l["kind"] == json!("PAYMENT")).count(), 1);
    // A till asks for the short answer: the sums and the line it added, also when it sends the request again.
    let short = |key: &'static str| {
        let request = s
            .client
            .post(format!("{}{}", s.base, path("/payments")))
            .header("authorization", format!("Token {}", org.token))
            .header("idempotency-key", key)
            .header("prefer", "return=minimal")
            .json(&json!({"method": "VOUCHER", "amount": 500}));
        async move {
            let answer = request.send().await.unwrap();
            assert_eq!(answer.headers()["preference-applied"], "return=minimal");
            answer.json::<Value>().await.unwrap()
        }
    };
    let voucher = short("pay-2").await;
    assert_eq!((voucher["balance"].clone(), voucher["lines"].clone()), (json!(14_200), Value::Null), "{voucher}");
    let added = voucher["addedLines"].as_array().unwrap();
    assert_eq!((added.len(), added[0]["method"].clone()), (1, json!("VOUCHER")));
    let voucher_again = short("pay-2").await;
    assert_eq!(voucher_again["addedLines"][0]["id"], added[0]["id"], "the first request's line, not a new one");
    assert_eq!(voucher_again["balance"], json!(14_200));
    let refund = format!("/payments/{}/refunds", added[0]["id"].as_str().unwrap());
    assert_eq!(
        s.post(&path(&refund), &org.auth(), json!({"amount": 500})).await.expect(200).body["balance"],
        json!(14_700)
    );
    let (status, _, _) =
        post_once(&s, &org.auth(), &path("/payments"), "pay-1", json!({"method": "CARD", "amount": 1})).await;
    assert_eq!(status, 409, "the same key for another request");
    let paid = s
        .post(&path("/payments"), &org.auth(), json!({"method": "BANK_TRANSFER", "amount": 14_700, "currency": "EUR"}))
        .await
        .expect(200)
        .body;
    assert_eq!((paid["payments"].clone(), paid["balance"].clone()), (json!(35_200), json!(0)), "with the voucher");
    let card = paid["lines"].as_array().unwrap().iter().find(|l| l["method"] == json!("CARD")).unwrap().clone();
    let refunded = s
        .post(
            &path(&format!("/payments/{}/refunds", card["id"].as_str().unwrap())),
            &org.auth(),
            json!({"amount": 500, "reason": "Goodwill"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!((refunded["refunds"].clone(), refunded["balance"].clone()), (json!(1000), json!(500)), "two refunds");
    // More than is left of the payment is refused.
    let refund_path = path(&format!("/payments/{}/refunds", card["id"].as_str().unwrap()));
    s.post(&refund_path, &org.auth(), json!({"amount": 19_501})).await.expect(400);

    // An allowance corrects the minibar: all of it takes its VAT exactly; more is refused.
    let allowance = path(&format!("/charges/{}/allowances", minibar["id"].as_str().unwrap()));
    s.post(&allowance, &org.auth(), json!({"amount": 901, "reason": "Not taken"})).await.expect(400);
    let corrected =
        s.post(&allowance, &org.auth(), json!({"amount": 900, "reason": "Not taken"})).await.expect(200).body;
    let line = corrected["lines"].as_array().unwrap().iter().find(|l| l["kind"] == json!("ALLOWANCE")).unwrap().clone();
    assert_eq!((&line["gross"], &line["vat"], &line["correctsLineId"]), (&json!(900), &json!(144), &minibar["id"]));
    assert_eq!(corrected["balance"], json!(-400), "the hotel owes 4.00 now");
    s.post(&allowance, &org.auth(), json!({"amount": 1, "reason": "Again"})).await.expect(400);
}

async fn check_out_asks_for_a_zero_balance_or_a_reason(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    let (r, folio) = stay(&s, &org, &h, 0, 2, json!({"adults": 1, "roomId": h.3[0]})).await;
    let id = r["id"].as_str().unwrap();
    let status = |to: &str| json!({"status": to});
    s.put(&format!("/api/reservations/{id}"), &org.auth(), status("CHECKED_IN")).await.expect(200);
    // Leaving on the day of arrival: the first night is charged (with its city tax), the second goes; with a
    // breakfast, 123.00. Paid 122.99: 0.01 open.
    s.post(&format!("/api/folios/{folio}/charges"), &org.auth(), json!({"extraCode": "BREAKFAST"})).await.expect(200);
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "CARD", "amount": 12_299}))
        .await
        .expect(200);
    let refused = s.put(&format!("/api/reservations/{id}"), &org.auth(), status("CHECKED_OUT")).await.expect(409).body;
    assert!(refused["detail"].as_str().unwrap().contains("EUR 0.01"), "{refused}");
    let still = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(still["status"], json!("CHECKED_IN"), "nothing half-written");
    assert_eq!(lines_of(&s.get(&format!("/api/folios/{folio}"), &org.auth()).await.body, "ROOM_NIGHT").len(), 2);
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "CARD", "amount": 1}))
        .await
        .expect(200);
    let out = s.put(&format!("/api/reservations/{id}"), &org.auth(), status("CHECKED_OUT")).await.expect(200).body;
    assert_eq!((out["status"].clone(), out["folio"]["balance"].clone()), (json!("CHECKED_OUT"), json!(0)));
    let settled = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert!(settled["lines"].as_array().unwrap().iter().all(|l| l["postedAt"].is_string()), "all posted at check-out");
    assert_eq!(lines_of(&settled, "ROOM_NIGHT").len(), 1, "an early departure removes the nights not stayed");
    assert_eq!(lines_of(&settled, "CITY_TAX").len(), 1);

    // On account, with a reason: recorded and shown.
    let (r, folio) = stay(&s, &org, &h, 0, 1, json!({"adults": 1, "roomId": h.3[1]})).await;
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), status("CHECKED_IN")).await.expect(200);
    s.post(&format!("/api/folios/{folio}/charges"), &org.auth(), json!({"extraCode": "BREAKFAST"})).await.expect(200);
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_OUT", "onAccountReason": " "}))
        .await
        .expect(409);
    s.put(
        &format!("/api/reservations/{id}"),
        &org.auth(),
        json!({"status": "CHECKED_OUT", "onAccountReason": "Billed to Acme GmbH"}),
    )
    .await
    .expect(200);
    let open = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(
        (open["balance"].clone(), open["onAccountReason"].clone()),
        (json!(12_300), json!("Billed to Acme GmbH"))
    );
}

async fn money_is_kept_and_reservations_with_it_are_not_deleted(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    // Without money, DELETE cascades as the contract says.
    let (r, _) = stay(&s, &org, &h, 5, 2, json!({"adults": 1})).await;
    s.delete(&format!("/api/reservations/{}", r["id"].as_str().unwrap()), &org.auth()).await.expect(200);
    // With a payment: 409, and nothing goes.
    let (r, folio) = stay(&s, &org, &h, 5, 2, json!({"adults": 1})).await;
    let id = r["id"].as_str().unwrap();
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "VOUCHER", "amount": 5000}))
        .await
        .expect(200);
    let refused = s.delete(&format!("/api/reservations/{id}"), &org.auth()).await.expect(409).body;
    assert!(refused["detail"].as_str().unwrap().contains("cancel"), "{refused}");
    s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200);
    // Cancelling is the way; its money stays.
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    let kept = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(kept["payments"], json!(5000));
    // A fee for the cancellation, at the accommodation rate.
    let charged = s
        .post(&format!("/api/folios/{folio}/fees"), &org.auth(), json!({"kind": "CANCELLATION", "amount": 5000}))
        .await
        .expect(200)
        .body;
    let fee = lines_of(&charged, "FEE")[0].clone();
    assert_eq!(
        (&fee["description"], &fee["vat"], &charged["balance"]),
        (&json!("Cancellation fee"), &json!(327), &json!(0))
    );
}

async fn who_may_charge_and_who_may_take_money(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "DE").await;
    let (_, folio) = stay(&s, &org, &h, 3, 1, json!({"adults": 1})).await;
    let pos = Auth::Key(s.key(&org, &[Scope::FoliosWrite], None).await);
    let reader = Auth::Key(s.key(&org, &[Scope::FoliosRead], None).await);
    let contract = Auth::Key(s.key(&org, &[Scope::ReservationsRead, Scope::ReservationsWrite], None).await);
    let till = Auth::Key(s.key(&org, &[Scope::PaymentsWrite], None).await);
    let path = format!("/api/folios/{folio}");
    s.get(&path, &contract).await.expect(403);
    s.get(&path, &pos).await.expect(403);
    s.get(&path, &reader).await.expect(200);
    // A point-of-sale key charges, and cannot take or refund money.
    s.post(&format!("{path}/charges"), &pos, json!({"extraCode": "BREAKFAST"})).await.expect(200);
    s.post(&format!("{path}/payments"), &pos, json!({"method": "CARD", "amount": 100})).await.expect(403);
    s.post(&format!("{path}/charges"), &till, json!({"extraCode": "BREAKFAST"})).await.expect(403);
    s.post(&format!("{path}/payments"), &till, json!({"method": "CARD", "amount": 100})).await.expect(200);
    // Cash at a hotel in Germany: 409, with the reason.
    let cash =
        s.post(&format!("{path}/payments"), &till, json!({"method": "CASH", "amount": 100})).await.expect(409).body;
    assert!(cash["detail"].as_str().unwrap().contains("KassenSichV"), "{cash}");
    // Another organization's folio, and a pinned key's other hotel: not found.
    let rival = s.org("Rival").await;
    s.get(&path, &rival.auth()).await.expect(404);
    s.post(&format!("{path}/payments"), &rival.auth(), json!({"method": "CARD", "amount": 100})).await.expect(404);
    let other = s.hotel(&org, "Elsewhere").await;
    let pinned = Auth::Key(s.key(&org, &[Scope::FoliosRead], Some(&other)).await);
    s.get(&path, &pinned).await.expect(404);
    let lines = s.get(&path, &org.auth()).await.body["lines"].as_array().unwrap().len();
    assert_eq!(lines, 1 + 1 + 2 + 1, "a night, its city tax, a breakfast in two parts, one payment");
}

async fn hostile_amounts_are_refused_whole(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    let (_, folio) = stay(&s, &org, &h, 3, 1, json!({"adults": 1})).await;
    let path = |tail: &str| format!("/api/folios/{folio}{tail}");
    let before = s.get(&path(""), &org.auth()).await.body;
    for (tail, body, field) in [
        ("/charges", json!({"description": "x", "unitPrice": 1_000_000_000_000_i64, "quantity": 2}), "quantity"),
        ("/charges", json!({"description": "x", "unitPrice": 100, "quantity": -1}), "quantity"),
        ("/charges", json!({"description": "x", "unitPrice": -100}), "unitPrice"),
        ("/charges", json!({"description": "x", "unitPrice": 100, "category": "CAVIAR"}), "category"),
        ("/charges", json!({"extraCode": "LOBSTER"}), "extraCode"),
        ("/charges", json!({"extraCode": "BREAKFAST", "unitPrice": 1}), "unitPrice"),
        ("/charges", json!({"unitPrice": 100}), "description"),
        ("/charges", json!({"description": "x", "unitPrice": 100, "serviceDate": "2026-02-30"}), "serviceDate"),
        ("/payments", json!({"method": "CARD", "amount": 100, "currency": "USD"}), "currency"),
        ("/payments", json!({"method": "CARD", "amount": 0}), "amount"),
        ("/payments", json!({"method": "CARD", "amount": 1_000_000_000_001_i64}), "amount"),
        ("/fees", json!({"kind": "NO_SHOW", "amount": -5}), "amount"),
    ] {
        let answer = s.post(&path(tail), &org.auth(), body.clone()).await.expect(400).body;
        let fields: Vec<&str> =
            answer["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
        assert!(fields.contains(&field), "{body} names {field}: {answer}");
    }
    // What JSON cannot say: fractions of a minor unit, unknown methods, unknown fields.
    for (tail, body) in [
        ("/payments", json!({"method": "CARD", "amount": 10.5})),
        ("/payments", json!({"method": "BITCOIN", "amount": 100})),
        ("/payments", json!({"method": "CARD", "amount": 100, "cardNumber": "4111111111111111"})),
        ("/charges", json!({"description": "x", "unitPrice": 1.5})),
    ] {
        let answer = s.post(&path(tail), &org.auth(), body.clone()).await.expect(400).body;
        assert_eq!(answer["status"], json!(400), "{body}");
    }
    // Lines of unknown ids, and a refund against a charge: not found.
    s.post(&path("/payments/nope/refunds"), &org.auth(), json!({"amount": 1})).await.expect(404);
    let night = lines_of(&before, "ROOM_NIGHT")[0]["id"].as_str().unwrap().to_string();
    s.post(&path(&format!("/payments/{night}/refunds")), &org.auth(), json!({"amount": 1})).await.expect(404);
    s.post("/api/folios/nope/payments", &org.auth(), json!({"method": "CARD", "amount": 1})).await.expect(404);
    assert_eq!(s.get(&path(""), &org.auth()).await.body, before, "nothing half-written");
}

async fn payments_are_delivered_to_subscriptions_that_name_them(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    let named = Receiver::start().await;
    let contract = Receiver::start().await;
    for (receiver, events) in [(&named, json!(["payment.created", "folio.updated"])), (&contract, json!([]))] {
        s.post(
            "/api/webhooksubscriptions",
            &org.auth(),
            json!({"hotelId": h.0, "url": receiver.url, "events": events}),
        )
        .await
        .expect(200);
    }
    let (_, folio) = stay(&s, &org, &h, 3, 1, json!({"adults": 1})).await;
    s.post(
        &format!("/api/folios/{folio}/payments"),
        &org.auth(),
        json!({"method": "CARD", "amount": 2500, "reference": "R-9"}),
    )
    .await
    .expect(200);
    let deadline = tokio::time::Instant::now() + WAIT;
    let events = |r: &Receiver| r.received().iter().map(|d| d.json()).collect::<Vec<Value>>();
    while events(&named).len() < 2 || events(&contract).is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "deliveries: {:?} / {:?}", events(&named), events(&contract));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let payment = events(&named).into_iter().find(|e| e["event"] == json!("payment.created")).expect("payment.created");
    assert_eq!((&payment["data"]["gross"], &payment["data"]["reference"]), (&json!(2500), &json!("R-9")));
    assert_eq!(payment["data"]["folioId"], json!(folio));
    assert!(events(&named)
        .iter()
        .any(|e| e["event"] == json!("folio.updated") && e["data"]["payments"] == json!(2500)));
    // The stay's own remaking of its nights is a folio change too: a second night (the room's price spread over
    // both) and its city tax make one more folio.updated.
    let (r, _) = stay(&s, &org, &h, 10, 1, json!({"adults": 1})).await;
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"checkOutDate": day(12)})).await.expect(200);
    let longer = |e: &Value| {
        e["event"] == json!("folio.updated")
            && e["data"]["reservationId"] == json!(id)
            && e["data"]["charges"] == json!(10_600)
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while !events(&named).iter().any(longer) {
        assert!(tokio::time::Instant::now() < deadline, "no folio.updated for the longer stay: {:?}", events(&named));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The subscription without a list keeps getting the contract's kinds only.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let kinds: Vec<Value> = events(&contract).iter().map(|e| e["event"].clone()).collect();
    assert_eq!(
        kinds,
        vec![json!("reservation.created"), json!("reservation.created"), json!("reservation.updated")],
        "{kinds:?}"
    );
}

async fn the_desk_charges_takes_payment_corrects_and_refunds_in_the_folio(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "AT").await;
    let (r, folio) = stay(&s, &org, &h, 2, 2, json!({"adults": 2})).await;
    let page = format!("/hotels/{}/reservations/{}", h.0, r["id"].as_str().unwrap());
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&page).await;
    b.wait_for_text("Add a charge").await;
    let text = b.page_text().await;
    assert!(text.contains("City tax, night of"), "{text}");
    assert!(text.contains("EUR 212.00"), "two nights and their city tax: {text}");
    // A breakfast from the hotel's list: two lines, at 7 % and 19 %.
    b.select("#charge-extra", "BREAKFAST").await;
    b.click_text("button", "Add the charge").await;
    b.wait_for_text("Charged BREAKFAST.").await;
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((lines_of(&ledger, "EXTRA").len(), ledger["balance"].clone()), (2, json!(23_200)));
    // A described charge, with a price as people type it.
    b.fill("#charge-what", "Late check-out").await;
    b.fill("#charge-price", "15").await;
    b.click_text("button", "Add the charge").await;
    b.wait_for_text("Charged Late check-out.").await;
    // A price the currency cannot hold is refused, and nothing is written.
    b.fill("#charge-what", "Parking").await;
    b.fill("#charge-price", "1.234").await;
    b.click_text("button", "Add the charge").await;
    b.wait_for_text("EUR has at most 2 decimals").await;
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(ledger["balance"], json!(24_700));
    // The payment field starts at what is owed.
    assert_eq!(b.find("#pay-amount").await.prop("value").await.unwrap().as_deref(), Some("247.00"));
    b.fill("#pay-reference", "T-77").await;
    b.click_text("button", "Record the payment").await;
    b.wait_for_text("Recorded a payment of EUR 247.00.").await;
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(ledger["balance"], json!(0));
    let late =
        lines_of(&ledger, "EXTRA").into_iter().find(|l| l["description"] == json!("Late check-out")).unwrap().clone();
    let payment = ledger["lines"].as_array().unwrap().iter().find(|l| l["kind"] == json!("PAYMENT")).unwrap().clone();
    // Correct the late check-out (waived), and refund what it cost.
    b.click(&format!("details:has(input[value='{}']) summary", late["id"].as_str().unwrap())).await;
    b.fill(&format!("#off-{}", late["id"].as_str().unwrap()), "15.00").await;
    b.fill(&format!("#why-{}", late["id"].as_str().unwrap()), "Waived").await;
    b.click_text("button", "Correct the charge").await;
    b.wait_for_text("Corrected a charge by EUR 15.00.").await;
    b.click(&format!("details:has(input[value='{}']) summary", payment["id"].as_str().unwrap())).await;
    b.fill(&format!("#back-{}", payment["id"].as_str().unwrap()), "15").await;
    b.click_text("button", "Refund").await;
    b.wait_for_text("Refunded EUR 15.00.").await;
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(
        (ledger["allowances"].clone(), ledger["refunds"].clone(), ledger["balance"].clone()),
        (json!(1500), json!(1500), json!(0))
    );
    b.assert_page_ok("the reservation with its folio").await;
    if engine == Engine::Sqlite {
        b.screenshot("folio").await;
    }
    b.close().await;
    // On a phone: nothing scrolls sideways, and the folio reads.
    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    phone.goto(&format!("{page}#folio-title")).await;
    phone.wait_for_text("Take a payment").await;
    phone.assert_page_ok("the folio on a phone").await;
    if engine == Engine::Sqlite {
        phone.screenshot("folio-phone").await;
    }
    phone.close().await;
}

/// 04:00 UTC (and in Lisbon, in winter) `offset` days from today: after the end of day of the day before.
fn early_morning(offset: u64) -> chrono::DateTime<chrono::Utc> {
    let date = chrono::Utc::now().date_naive() + chrono::Days::new(offset);
    date.and_hms_opt(4, 0, 0).unwrap().and_utc()
}

async fn the_end_of_day_posts_the_passed_nights_and_marks_no_shows(s: TestServer) {
    use frontdesk::domain::finance::end_of_day;
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    let billing = format!("/api/hotels/{}/billing", h.0);
    s.put(&billing, &org.auth(), json!({"noShowFee": {"basis": "FIRST_NIGHT"}})).await.expect(200);
    // Ana is in the house for three nights; Bob was due today and never came.
    let (ana, ana_folio) = stay(&s, &org, &h, 0, 3, json!({"adults": 1, "roomId": h.3[0]})).await;
    let ana_id = ana["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{ana_id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    let (bob, bob_folio) = stay(&s, &org, &h, 0, 2, json!({"adults": 1})).await;
    let bob_id = bob["id"].as_str().unwrap();
    // Cleo was due today too, and never came either.
    let (cleo, _) = stay(&s, &org, &h, 0, 1, json!({"adults": 1})).await;
    // Before the day ends, nothing is closed.
    assert!(end_of_day::run_due(&s.db, early_morning(0)).await.unwrap().is_empty());
    let closed = end_of_day::run_due(&s.db, early_morning(1)).await.unwrap();
    assert_eq!(closed.len(), 1, "{closed:?}");
    let mut no_shows = closed[0].no_shows.clone();
    no_shows.sort();
    let mut expected: Vec<String> =
        [&bob, &cleo].iter().map(|r| r["reference"].as_str().unwrap().to_string()).collect();
    expected.sort();
    assert_eq!((closed[0].closed.to_string(), no_shows), (day(0), expected));
    // Each no-show is a change of its own by the end-of-day job (the close holds the writer for one at a time).
    let mut changes = Vec::new();
    for r in [&bob, &cleo] {
        let log = s.get(&format!("/api/auditLog?recordId={}", r["id"].as_str().unwrap()), &org.auth()).await;
        let entries = log.expect(200).body;
        let no_show = entries
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["fields"].as_array().unwrap().iter().any(|f| f["after"] == json!("NO_SHOW")))
            .unwrap_or_else(|| panic!("no NO_SHOW entry: {entries}"))
            .clone();
        assert_eq!(no_show["actor"]["kind"], json!("job"), "{no_show}");
        changes.push(no_show["changeId"].clone());
    }
    assert_ne!(changes[0], changes[1], "two no-shows, two changes");
    // Run again: the day is closed once.
    assert!(end_of_day::run_due(&s.db, early_morning(1)).await.unwrap().is_empty());
    // Ana's first night and its city tax are posted; the nights to come are not.
    let folio = s.get(&format!("/api/folios/{ana_folio}"), &org.auth()).await.expect(200).body;
    let posted: Vec<(String, bool)> = folio["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["serviceDate"].as_str().unwrap().to_string(), l["postedAt"].is_string()))
        .collect();
    assert!(posted.iter().all(|(date, p)| *p == (*date == day(0))), "{posted:?}");
    // A posted night cannot go: not by a date change, not by DELETE.
    let moved = s.put(&format!("/api/reservations/{ana_id}"), &org.auth(), json!({"checkInDate": day(1)})).await;
    assert_eq!(moved.status.as_u16(), 409, "{}", moved.body);
    s.delete(&format!("/api/reservations/{ana_id}"), &org.auth()).await.expect(409);
    // Bob is a no-show: his nights are released and the first night is his fee.
    let bob_now = s.get(&format!("/api/reservations/{bob_id}"), &org.auth()).await.expect(200).body;
    assert_eq!(bob_now["status"], json!("NO_SHOW"));
    let fee = s.get(&format!("/api/folios/{bob_folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((lines_of(&fee, "ROOM_NIGHT").len(), lines_of(&fee, "FEE")[0]["gross"].clone()), (0, json!(10_000)));
    assert_eq!(fee["balance"], json!(10_000));
    // An allowance corrects a posted night.
    let night = lines_of(&folio, "ROOM_NIGHT").into_iter().find(|l| l["postedAt"].is_string()).unwrap().clone();
    let corrected = s
        .post(
            &format!("/api/folios/{ana_folio}/charges/{}/allowances", night["id"].as_str().unwrap()),
            &org.auth(),
            json!({"amount": 2000, "reason": "Noisy room"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(corrected["balance"], json!(30_900 - 2000));
}

async fn a_missed_end_of_day_runs_once_even_with_two_processes(s: TestServer) {
    use frontdesk::domain::finance::end_of_day;
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    let (r, folio) = stay(&s, &org, &h, 0, 4, json!({"adults": 1, "roomId": h.3[0]})).await;
    s.put(&format!("/api/reservations/{}", r["id"].as_str().unwrap()), &org.auth(), json!({"status": "CHECKED_IN"}))
        .await
        .expect(200);
    // The service was down for three days: two processes come back at once, each with its own connections.
    let other = frontdesk::store::Db::connect(s.database_url(), 4).await.expect("a second process's pool");
    let at = early_morning(3);
    let (a, b) = tokio::join!(end_of_day::run_due(&s.db, at), end_of_day::run_due(&other, at));
    let mut closed: Vec<String> = a.unwrap().into_iter().chain(b.unwrap()).map(|d| d.closed.to_string()).collect();
    closed.sort();
    assert_eq!(closed, vec![day(0), day(1), day(2)], "each missed day closed once");
    let lines = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    let posted = lines_of(&lines, "ROOM_NIGHT").iter().filter(|l| l["postedAt"].is_string()).count();
    assert_eq!(posted, 3, "three nights passed, the fourth is to come");
    other.close().await;
}

async fn taxes_and_billing_are_set_up_in_the_dashboard(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Spree").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/setup/hotels/{hotel}")).await;
    b.click_text("a", "Taxes and billing").await;
    b.wait_for_text("Prices include VAT").await;
    b.fill("#rate-ACCOMMODATION", "7").await;
    b.fill("#rate-FOOD_AND_BEVERAGE", "7").await;
    b.fill("#rate-OTHER", "19").await;
    b.click("#cityTax").await;
    b.fill("#cityTaxAmount", "3").await;
    b.fill("#cityTaxMaxNights", "21").await;
    b.click("#cityTaxChildrenExempt").await;
    b.set_value("#endOfDay", "04:00").await;
    b.select("#noShowFee", "FIRST_NIGHT").await;
    b.fill("#newExtraName", "Parking").await;
    b.fill("#newExtraPrice", "12").await;
    b.click_text("button", "Save taxes and billing").await;
    b.wait_for_text("Saved the taxes and billing of Spree.").await;
    let saved = s.get(&format!("/api/hotels/{hotel}/billing"), &org.auth()).await.expect(200).body;
    assert_eq!(saved["vatRates"][0], json!({"category": "ACCOMMODATION", "rateBasisPoints": 700}));
    assert_eq!(saved["vatRates"][2], json!({"category": "OTHER", "rateBasisPoints": 1900}));
    assert_eq!(
        saved["cityTax"],
        json!({"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300, "rateBasisPoints": null,
               "maxNights": 21, "childrenExempt": true, "vatRateBasisPoints": 0})
    );
    assert_eq!(
        (saved["endOfDay"].clone(), saved["noShowFee"]["basis"].clone()),
        (json!("04:00"), json!("FIRST_NIGHT"))
    );
    assert_eq!(saved["extras"][0]["code"], json!("PARKING"));
    assert_eq!(saved["extras"][0]["unitPrice"], json!(1200));
    // A percentage that is not one is refused, and nothing is saved.
    b.fill("#rate-OTHER", "nineteen").await;
    b.click_text("button", "Save taxes and billing").await;
    b.wait_for_text("Nothing was saved").await;
    assert_eq!(s.get(&format!("/api/hotels/{hotel}/billing"), &org.auth()).await.body, saved);
    b.assert_page_ok("the taxes and billing page").await;
    b.close().await;
    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    phone.goto(&format!("/setup/hotels/{hotel}/billing")).await;
    phone.wait_for_text("Taxes and billing").await;
    phone.assert_page_ok("the taxes and billing page on a phone").await;
    if engine == Engine::Sqlite {
        phone.screenshot("setup-billing-phone").await;
    }
    phone.close().await;
}

async fn a_stay_exempt_from_city_tax_pays_none_and_says_why(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "DE").await;
    let (r, folio) = stay(&s, &org, &h, 2, 3, json!({"adults": 2})).await;
    let exemption = format!("/api/folios/{folio}/cityTaxExemption");
    // A reason is required, and a line of text.
    for bad in [json!({"reason": ""}), json!({"reason": "a\u{7}b"}), json!({"reason": "x".repeat(501)}), json!({})] {
        s.put(&exemption, &org.auth(), bad).await.expect(400);
    }
    assert_eq!(lines_of(&s.get(&format!("/api/folios/{folio}"), &org.auth()).await.body, "CITY_TAX").len(), 3);
    let exempt =
        s.put(&exemption, &org.auth(), json!({"reason": "Business travel (Acme GmbH)"})).await.expect(200).body;
    assert_eq!(exempt["cityTaxExemptReason"], json!("Business travel (Acme GmbH)"));
    assert_eq!((lines_of(&exempt, "CITY_TAX").len(), exempt["balance"].clone()), (0, json!(30_000)));
    // A date change keeps the exemption: the nights are made anew without city tax.
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"checkOutDate": day(6)})).await.expect(200);
    let longer = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((lines_of(&longer, "ROOM_NIGHT").len(), lines_of(&longer, "CITY_TAX").len()), (4, 0));
    // Lifted: the city tax of every night is made again.
    let lifted = s.delete(&exemption, &org.auth()).await.expect(200).body;
    assert_eq!((lifted["cityTaxExemptReason"].clone(), lines_of(&lifted, "CITY_TAX").len()), (Value::Null, 4));
    // Who may: folios:write; another organization sees no folio.
    let reader = Auth::Key(s.key(&org, &[Scope::FoliosRead], None).await);
    s.put(&exemption, &reader, json!({"reason": "Business"})).await.expect(403);
    let rival = s.org("Rival").await;
    s.put(&exemption, &rival.auth(), json!({"reason": "Business"})).await.expect(404);
    // A cancelled stay's lines no longer follow it.
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    let refused = s.put(&exemption, &org.auth(), json!({"reason": "Business"})).await.expect(409).body;
    assert!(refused["detail"].as_str().unwrap().contains("CANCELLED"), "{refused}");
}

async fn the_revenue_report_sums_posted_lines_by_day_and_payments_by_method(s: TestServer) {
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "PT").await;
    // One night stayed and checked out (every line posted): the room, its city tax and a breakfast; paid by card.
    let (r, folio) = stay(&s, &org, &h, 0, 1, json!({"adults": 1, "roomId": h.3[0]})).await;
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    s.post(&format!("/api/folios/{folio}/charges"), &org.auth(), json!({"extraCode": "BREAKFAST"})).await.expect(200);
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "CARD", "amount": 12_700}))
        .await
        .expect(200);
    let paid = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.body;
    let card = paid["lines"].as_array().unwrap().iter().find(|l| l["kind"] == json!("PAYMENT")).unwrap().clone();
    s.post(
        &format!("/api/folios/{folio}/payments/{}/refunds", card["id"].as_str().unwrap()),
        &org.auth(),
        json!({"amount": 400}),
    )
    .await
    .expect(200);
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_OUT"})).await.expect(200);
    // A stay to come: its nights are not posted, so not revenue yet.
    stay(&s, &org, &h, 1, 2, json!({"adults": 2})).await;

    let query = format!("/api/reports/revenue?hotelId={}&dateFrom={}&dateTo={}", h.0, day(0), day(5));
    let report = s.get(&query, &org.auth()).await.expect(200).body;
    let rows: Vec<(String, i64, i64, i64, i64)> = report["revenue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["date"], json!(day(0)), "{report}");
            let n = |k: &str| r[k].as_i64().unwrap();
            (r["category"].as_str().unwrap().to_string(), n("vatRateBasisPoints"), n("net"), n("vat"), n("gross"))
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("ACCOMMODATION".into(), 700, 9_346, 654, 10_000),
            ("DRINKS".into(), 1900, 504, 96, 600),
            ("FOOD_AND_BEVERAGE".into(), 700, 1_308, 92, 1_400),
            ("OTHER".into(), 0, 300, 0, 300),
        ],
        "{report}"
    );
    assert_eq!(
        report["payments"],
        json!([{"method": "CARD", "currency": "EUR", "received": 12_700, "refunded": 400, "net": 12_300}])
    );
    let totals = &report["totals"][0];
    assert_eq!((&totals["gross"], &totals["vat"], &totals["received"]), (&json!(12_300), &json!(842), &json!(12_700)));

    // The same as CSV, for an accountant's import.
    let csv = s
        .client
        .get(format!("{}{query}", s.base))
        .header("authorization", format!("Token {}", org.token))
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status().as_u16(), 200);
    assert!(csv.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    assert!(csv.headers()["content-disposition"].to_str().unwrap().contains(".csv"));
    let csv = csv.text().await.unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("section,date,category,vat_rate_percent,payment_method,currency,net,vat,gross,received,refunded")
    );
    assert!(csv.contains(&format!("revenue,{},ACCOMMODATION,7,,EUR,93.46,6.54,100.00,,\n", day(0))), "{csv}");
    assert!(csv.contains("payments,,,,CARD,EUR,,,,127.00,4.00\n"), "{csv}");

    // Bad periods, other organizations, keys without the scope.
    let hotel = &h.0;
    for bad in [
        format!("hotelId={hotel}&dateFrom={}", day(0)),
        format!("hotelId={hotel}&dateFrom={}&dateTo={}", day(3), day(1)),
        format!("hotelId={hotel}&dateFrom={}&dateTo={}", day(0), day(366)),
        format!("hotelId={hotel}&dateFrom=2026-02-30&dateTo={}", day(1)),
    ] {
        let answer = s.get(&format!("/api/reports/revenue?{bad}"), &org.auth()).await.expect(400);
        assert_eq!(answer.body["status"], json!(400), "a problem JSON: {}", answer.body);
    }
    s.get(&format!("/api/reports/revenue?hotelId={hotel}&dateFrom={}&dateTo={}", day(0), day(365)), &org.auth())
        .await
        .expect(200);
    let rival = s.org("Rival").await;
    s.get(&query, &rival.auth()).await.expect(404);
    let contract = Auth::Key(s.key(&org, &[Scope::ReservationsRead], None).await);
    s.get(&query, &contract).await.expect(403);
    let reader = Auth::Key(s.key(&org, &[Scope::FoliosRead], None).await);
    s.get(&query, &reader).await.expect(200);
    let other = s.hotel(&org, "Elsewhere").await;
    let pinned = Auth::Key(s.key(&org, &[Scope::FoliosRead], Some(&other)).await);
    s.get(&query, &pinned).await.expect(403);
    // Money kept in euros stays in euros: the hotel's currency cannot change any more (a hotel without any can).
    let refused = s.put(&format!("/api/hotels/{hotel}"), &org.auth(), json!({"currency": "CHF"})).await.expect(409);
    assert!(refused.body["detail"].as_str().unwrap().contains("EUR"), "{}", refused.body);
    s.put(&format!("/api/hotels/{other}"), &org.auth(), json!({"currency": "CHF"})).await.expect(200);
}

async fn the_desk_exempts_refunds_at_check_out_prints_and_reports(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = berlin_hotel(&s, &org, "AT").await;
    let (r, folio) = stay(&s, &org, &h, 0, 1, json!({"adults": 2, "roomId": h.3[0]})).await;
    let id = r["id"].as_str().unwrap();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    let page = format!("/hotels/{}/reservations/{id}", h.0);
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&page).await;
    b.wait_for_text("Add a charge").await;
    // A business traveller: exempt from the city tax, with the reason shown.
    b.click(".city-tax summary").await;
    b.fill("#city-tax-reason", "Business travel").await;
    b.click_text("button", "Exempt the stay").await;
    b.wait_for_text("The stay is exempt from the city tax.").await;
    assert!(b.page_text().await.contains("this stay is exempt (Business travel)"));
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((lines_of(&ledger, "CITY_TAX").len(), ledger["balance"].clone()), (0, json!(10_000)));
    // The guest paid 120.00 in advance: the hotel owes 20.00 back.
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "BANK_TRANSFER", "amount": 12_000}))
        .await
        .expect(200);
    // The printable folio: the hotel, the guest's lines, the balance.
    b.goto(&format!("{page}/folio/print")).await;
    b.wait_for_text("A statement of the stay's account").await;
    let text = b.page_text().await;
    assert!(
        text.contains("Spree") && text.contains("EUR -20.00") && text.contains(r["reference"].as_str().unwrap()),
        "{text}"
    );
    b.assert_page_ok("the printable folio").await;
    if engine == Engine::Sqlite {
        b.screenshot("folio-print").await;
    }
    // Check-out offers the refund, back to the transfer.
    b.goto(&format!("{page}/check-out")).await;
    b.wait_for_text("The hotel owes the guest EUR 20.00").await;
    assert_eq!(b.find("#settle-refund").await.prop("value").await.unwrap().as_deref(), Some("20.00"));
    b.assert_page_ok("check-out with money to give back").await;
    if engine == Engine::Sqlite {
        b.screenshot("check-out-refund").await;
    }
    b.click_text("button", "Yes, check out").await;
    b.wait_for_text("Checked out").await;
    let out = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!((out["refunds"].clone(), out["balance"].clone()), (json!(2000), json!(0)));
    let stay_now = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(stay_now["status"], json!("CHECKED_OUT"));
    // The revenue of the day, and its CSV.
    b.goto(&format!("/hotels/{}/reports?from={}&to={}", h.0, day(0), day(0))).await;
    b.wait_for_text("Revenue by day").await;
    let text = b.page_text().await;
    assert!(text.contains("EUR 100.00") && text.contains("Bank transfer"), "{text}");
    let href = b.find("a[download]").await.attr("href").await.unwrap().unwrap();
    assert!(href.contains("revenue.csv"), "{href}");
    b.assert_page_ok("the revenue report").await;
    if engine == Engine::Sqlite {
        b.screenshot("revenue").await;
    }
    // A period the report cannot cover says why, beside the field.
    b.goto(&format!("/hotels/{}/reports?from={}&to={}", h.0, day(5), day(0))).await;
    b.wait_for_text("must not be before dateFrom").await;
    b.close().await;
    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    phone.goto(&format!("/hotels/{}/reports?from={}&to={}", h.0, day(0), day(0))).await;
    phone.wait_for_text("Revenue by day").await;
    phone.assert_page_ok("the revenue report on a phone").await;
    phone.close().await;
}
