//! What the penetration reviews of the public faces found, each closed and kept closed, on both engines:
//! password guessing on every way to sign in, sessions, the public booking page and API, input that slipped past the
//! checks, slow clients, headers, the assistant endpoint's consent, webhook URLs and booking-page embedding.

mod addresses_and_sign_in;
mod consent_webhooks_and_embedding;
mod input_and_headers;
mod password_guessing;
mod public_booking;
mod secrets_key;
mod sessions;
mod wordings_and_mail;

use crate::common::{day, Auth, Org, TestServer};
use frontdesk::config::Config;
use frontdesk::store::Engine;
use serde_json::{json, Value};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// A server that believes `X-Forwarded-For` (one proxy), so that tests can speak from several addresses.
async fn behind_a_proxy(engine: Engine, configure: impl FnOnce(&mut Config)) -> Option<TestServer> {
    TestServer::configured(engine, |c| {
        c.trusted_proxy_header = Some("x-forwarded-for".into());
        configure(c);
    })
    .await
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// Registers an assistant client: its id.
async fn register(s: &TestServer, name: &str, redirect: &str) -> String {
    let res = s
        .client
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"client_name": name, "redirect_uris": [redirect]}))
        .send()
        .await
        .unwrap();
    let answer = TestServer::answer(res).await;
    assert_eq!(answer.status.as_u16(), 201, "{}", answer.body);
    answer.body["client_id"].as_str().unwrap().to_string()
}

async fn login(s: &TestServer, email: &str, password: &str) -> crate::common::Answer {
    s.post("/api/auth/login", &Auth::None, json!({"email": email, "password": password})).await
}

/// Signs in to the dashboard: the session cookie (`name=value`).
async fn dashboard_session(s: &TestServer, email: &str, password: &str) -> String {
    let answer = no_redirects()
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", email), ("password", password), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 303);
    let cookie = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("fd_session="))
        .expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}

/// A hotel with `rooms` double rooms and a rate plan priced for 40 nights: (hotel, room type).
async fn bookable(s: &TestServer, org: &Org, name: &str, rooms: usize) -> (String, String) {
    let hotel = s.hotel(org, name).await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    for n in 0..rooms {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)}))
            .await
            .expect(200);
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..40).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 10000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type)
}

/// The first offer for nights `from`..`to`.
async fn offer(s: &TestServer, hotel: &str, from: u64, to: u64) -> String {
    let path = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(from), day(to));
    s.get(&path, &Auth::None).await.expect(200).body[0]["offerId"].as_str().expect("an offer").to_string()
}

/// The guest form of the booking page for `offer`: its idempotency key, as the page issued it.
async fn form_key(s: &TestServer, hotel: &str, offer: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("offer", offer).finish();
    let html = s.client.get(format!("{}/book/{hotel}/details?{query}", s.base)).send().await.unwrap();
    let html = html.text().await.unwrap();
    let marker = "name=\"key\" value=\"";
    let start = html.find(marker).expect("the guest form") + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}
