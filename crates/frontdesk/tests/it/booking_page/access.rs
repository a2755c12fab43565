//! Who may use the page: a hotel without public booking answers 404 and nothing leaks, only the hotel's own sites may
//! frame it, and visitors are rate limited per address like the public API.

use std::time::Duration;

use crate::common::browser::Browser;
use crate::common::{day, delivering, Auth, TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{hotel, requests, search_path, shot};

on_both_engines_configured!(
    a_hotel_without_public_booking_answers_404_and_nothing_leaks,
    only_the_hotels_own_sites_may_frame_the_booking_page,
    visitors_are_rate_limited_per_address_like_the_public_api,
);

async fn a_hotel_without_public_booking_answers_404_and_nothing_leaks(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let rival = s.org("Rival").await;
    let rival_hotel = hotel(&s, &rival).await;
    // A request at the rival hotel.
    let path = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", rival_hotel.id, day(2), day(3));
    let offers = s.get(&path, &Auth::None).await.expect(200).body;
    let booking = json!({"offerId": offers[0]["offerId"],
                         "guest": {"firstName": "Eve", "lastName": "Spy", "email": "eve@example.com"}});
    let booked = s.post(&format!("/api/hotels/{}/book-reservation", rival_hotel.id), &Auth::None, booking).await;
    let rival_reservation = booked.expect(201).body["reservationId"].as_str().unwrap().to_string();

    let Some(b) = Browser::start(&s.base).await else { return };
    b.goto(&search_path(&h, 2, 3, 2)).await;
    b.wait_for_text("offers for 2 adults").await;
    assert!(!b.page_text().await.contains("Eve"));
    for path in [
        // Another hotel's request under our hotel, without its token, with a forged one; an unknown hotel.
        format!("/book/{}/requests/{rival_reservation}", h.id),
        format!("/book/{}/requests/{rival_reservation}", rival_hotel.id),
        format!("/book/{}/requests/{rival_reservation}?token=AAAAAAAAAAAAAAAAAAAAAA", rival_hotel.id),
        "/book/00000000-0000-0000-0000-000000000000".to_string(),
    ] {
        let answer = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
        let html = answer.text().await.unwrap();
        assert!(html.contains("Page not found") && !html.contains("Eve"), "{path}: {html}");
    }
    // A forged offer is refused, not booked.
    let forged = s
        .client
        .post(format!("{}/book/{}/request", s.base, h.id))
        .form(&[
            ("offer", "eyJ4Ijo5fQ.c2lnbmF0dXJl"),
            ("firstName", "A"),
            ("lastName", "B"),
            ("email", "a@example.com"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 400);
    assert_eq!(requests(&s, &org, &h).await.len(), 0);
    // Public booking turned off in the dashboard's settings: every page of the hotel's booking page answers 404.
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto(&format!("/hotels/{}/settings", h.id)).await;
    b.wait_for_text("Guests can book online").await;
    b.click("#publicBooking").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("Saved the booking page settings.").await;
    assert!(b.page_text().await.contains("The booking page is turned off"));
    let hotel = s.get(&format!("/api/hotels/{}", h.id), &org.auth()).await.expect(200).body;
    assert_eq!(hotel["publicBooking"], json!(false));
    b.goto(&search_path(&h, 2, 3, 2)).await;
    b.wait_for_text("Page not found").await;
    b.assert_page_ok("the booking page's 404 page").await;
    for path in [format!("/book/{}", h.id), format!("/book/{}/details?offer=x", h.id)] {
        let answer = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
    }
    b.close().await;
}

/// A page of another site (another port of this machine) that frames `target`: its origin and its server.
async fn site_framing(target: String) -> (String, tokio::task::JoinHandle<()>) {
    let html = format!(
        "<!doctype html><html><head><title>Our hotel</title></head><body><h1>Welcome to our hotel</h1>\
         <iframe src=\"{target}\" title=\"Book\" style=\"width:100%;height:600px\"></iframe></body></html>"
    );
    let app = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (origin, task)
}

/// The text shown in the frame of `site`'s page (empty when the browser refused to show the framed page).
async fn framed_text(b: &Browser, site: &str) -> String {
    b.client.goto(&format!("{site}/")).await.unwrap();
    b.wait_for_text("Welcome to our hotel").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    b.client.enter_frame(0).await.unwrap();
    let text = match b.client.execute("return document.body ? document.body.innerText : '';", vec![]).await {
        Ok(Value::String(text)) => text,
        _ => String::new(),
    };
    b.client.enter_parent_frame().await.unwrap();
    text
}

async fn only_the_hotels_own_sites_may_frame_the_booking_page(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let booking = format!("{}/book/{}", s.base, h.id);
    let (own_site, own_task) = site_framing(booking.clone()).await;
    let (other_site, other_task) = site_framing(booking.clone()).await;
    let (dashboard_site, dashboard_task) = site_framing(format!("{}/hotels/{}/settings", s.base, h.id)).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    // No site may frame it until the hotel names its own.
    assert!(!framed_text(&b, &own_site).await.contains("Book your stay"));
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.click_text("nav a", "Booking page").await;
    b.wait_for_text("Embedding code").await;
    assert!(b
        .find("#snippet")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap()
        .contains(&format!("<iframe src=\"{booking}\"")));
    b.fill("#embedOrigins", "https://www.seaside-inn.example/booking").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("is not an origin").await;
    assert_eq!(b.find("#embedOrigins").await.attr("aria-invalid").await.unwrap().as_deref(), Some("true"));
    b.assert_page_ok("the settings with a mistake").await;
    b.fill("#embedOrigins", &format!("{own_site}/\nhttps://www.seaside-inn.example")).await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("Saved the booking page settings.").await;
    b.assert_page_ok("the booking page settings").await;
    shot(&s, &b, "booking-settings").await;
    let hotel = s.get(&format!("/api/hotels/{}", h.id), &org.auth()).await.expect(200).body;
    assert_eq!(hotel["bookingEmbedOrigins"], json!([own_site, "https://www.seaside-inn.example"]));
    // The named site shows it; another site does not; no site shows the dashboard.
    let framed = framed_text(&b, &own_site).await;
    assert!(framed.contains("Book your stay") && framed.contains("Seaside Inn"), "{framed}");
    assert!(!framed_text(&b, &other_site).await.contains("Book your stay"));
    assert!(!framed_text(&b, &dashboard_site).await.contains("Embedding code"));
    // The headers behind it.
    let page = s.client.get(&booking).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.ends_with(&format!("frame-ancestors {own_site} https://www.seaside-inn.example")), "{csp}");
    assert!(page.headers().get("x-frame-options").is_none());
    for path in ["/sign-in".to_string(), format!("/hotels/{}/settings", h.id)] {
        let page = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_eq!(page.headers()["x-frame-options"], "DENY", "{path}");
        assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    }
    for task in [own_task, other_task, dashboard_task] {
        task.abort();
    }
    b.close().await;
}

async fn visitors_are_rate_limited_per_address_like_the_public_api(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.public_rate_limit_per_minute = 5).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    for _ in 0..5 {
        let page = s.client.get(format!("{}/book/{}", s.base, h.id)).send().await.unwrap();
        assert_eq!(page.status().as_u16(), 200);
    }
    let refused = s.client.get(format!("{}{}", s.base, search_path(&h, 2, 3, 2))).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(refused.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(refused.text().await.unwrap().contains("Too many requests"));
    // One bucket per address, shared with the public API.
    let path = format!("/api/hotels/{}/availability?checkInDate={}&checkOutDate={}", h.id, day(2), day(3));
    assert_eq!(s.get(&path, &Auth::None).await.status.as_u16(), 429);
    let posted = s.client.post(format!("{}/book/{}/request", s.base, h.id)).form(&[("offer", "x")]).send().await;
    assert_eq!(posted.unwrap().status().as_u16(), 429);
}
