//! One reservation however often it is sent: a retried create through the API, and the new-reservation form.

use crate::common::{day, Auth, TestServer};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{hotel, signed_in};

on_both_engines!(a_retried_create_makes_one_reservation);

on_both_engines_configured!(the_new_reservation_form_makes_one_reservation_however_often_it_is_sent);

async fn a_retried_create_makes_one_reservation(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    let key = Auth::Key(
        s.key(&org, &[frontdesk::domain::Scope::ReservationsRead, frontdesk::domain::Scope::ReservationsWrite], None)
            .await,
    );
    let body = |nights: u64| {
        json!({"hotelId": h.0, "checkInDate": day(2), "checkOutDate": day(2 + nights),
               "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}]})
    };
    let post = |auth: &Auth, idempotency_key: &str, body: Value| {
        let request = s
            .client
            .post(format!("{}/api/reservations", s.base))
            .json(&body)
            .header("idempotency-key", idempotency_key);
        let request = match auth {
            Auth::Key(secret) => request.header("authorization", crate::common::basic(secret)),
            Auth::Token(token) => request.header("authorization", format!("Token {token}")),
            Auth::Raw(value) => request.header("authorization", value.as_str()),
            Auth::None => request,
        };
        async move { request.send().await.unwrap() }
    };
    let first = post(&key, "retry-1", body(2)).await;
    assert_eq!(first.status().as_u16(), 200);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    let again = post(&key, "retry-1", body(2)).await;
    assert_eq!(again.status().as_u16(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(s.count("reservations").await, 1);
    // The same key with another body is refused, and writes nothing.
    let changed = post(&key, "retry-1", body(3)).await;
    assert_eq!(changed.status().as_u16(), 409);
    assert_eq!(s.count("reservations").await, 1);
    // Sent five times at once: one reservation, every answer the same.
    let answers = futures::future::join_all((0..5).map(|_| post(&key, "retry-2", body(1)))).await;
    let mut ids = std::collections::HashSet::new();
    for answer in answers {
        assert_eq!(answer.status().as_u16(), 200);
        ids.insert(answer.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string());
    }
    assert_eq!((ids.len(), s.count("reservations").await), (1, 2));
    // Keys are the caller's own: an operator's "retry-1" is another key.
    let operator = post(&org.auth(), "retry-1", body(2)).await;
    assert_eq!(operator.status().as_u16(), 200);
    let operator: Value = operator.json().await.unwrap();
    assert_ne!(operator["id"], first["id"]);
    // A key is 1 to 200 visible characters; a create that is refused leaves its key unused.
    let long = "k".repeat(201);
    let refused = post(&key, &long, body(1)).await;
    assert_eq!(refused.status().as_u16(), 400);
    let full = json!({"hotelId": h.0, "checkInDate": day(2), "checkOutDate": day(3),
                      "rooms": [{"roomTypeId": h.1, "ratePlanId": h.2}, {"roomTypeId": h.1, "ratePlanId": h.2}]});
    assert_eq!(post(&key, "retry-3", full.clone()).await.status().as_u16(), 409, "the type has no two rooms left");
    for made in [&first, &operator] {
        s.delete(&format!("/api/reservations/{}", made["id"].as_str().unwrap()), &org.auth()).await.expect(200);
    }
    assert_eq!(post(&key, "retry-3", full).await.status().as_u16(), 200, "the refused create did not use the key");
    // A retry of a create whose reservation was deleted since says so.
    let gone = post(&key, "retry-1", body(2)).await;
    assert_eq!(gone.status().as_u16(), 409);
}

async fn the_new_reservation_form_makes_one_reservation_however_often_it_is_sent(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 3).await;
    let Some(b) = signed_in(&s, &org, crate::common::browser::DESKTOP).await else { return };
    b.goto(&format!("/hotels/{}/reservations/new", h.0)).await;
    b.fill("#firstName", "Yuki").await;
    b.fill("#lastName", "Tanaka").await;
    b.fill("#email", "yuki@example.com").await;
    b.set_value("#checkInDate", &day(3)).await;
    b.set_value("#checkOutDate", &day(5)).await;
    b.select("#roomTypeId", &h.1).await;
    b.select("#ratePlanId", &h.2).await;
    // A double click, two tabs, a reload: the same form sent three times at once, as the browser sends it.
    let statuses = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const form = document.querySelector('input[name=formToken]').form;
             const data = new URLSearchParams(new FormData(form));
             data.set('intent', 'create');
             const send = () => fetch(form.action, {method: 'POST', body: data, redirect: 'manual'})
                 .then(r => r.type === 'opaqueredirect' ? r.type : r.text().then(t => r.status + ' ' + t.slice(0, 3000)));
             Promise.all([send(), send(), send()]).then(done, e => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        statuses,
        json!(["opaqueredirect", "opaqueredirect", "opaqueredirect"]),
        "each answered with a redirect"
    );
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1), "one reservation, one guest");
    // And the form clicked once more, as a person would: the reservation it made, said so.
    b.click_text("button", "Create reservation").await;
    b.wait_for_text("This form was sent before").await;
    assert_eq!((s.count("reservations").await, s.count("guests").await), (1, 1));
    b.close().await;
}
