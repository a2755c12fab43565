//! Soak: minutes of mixed traffic on two `frontdesk serve` processes sharing one PostgreSQL database and one Redis,
//! as a hotel's integrations and guests would send it: public availability searches, booking requests and their
//! approval, ARI batches, reservation-list polling, MCP tool calls, with webhook deliveries to a local receiver.
//! Reports throughput and p50/p99 per kind, every answer that was not 2xx (expected: 409 when an approval or a
//! booking lost its room; 429 never, as the limits are raised), and each process's memory over time.
//!
//! Not run by CI. `cargo bench --bench soak` (`SOAK_SECS`, default 600; `SOAK_CLIENTS` per kind, default 2).
//! Needs PostgreSQL (FRONTDESK_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test) and Redis at
//! 127.0.0.1:6379 (FRONTDESK_BENCH_REDIS_URL).

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use frontdesk::domain::{identity, oauth};
use frontdesk::store::Engine;
use rand::Rng;
use serde_json::{json, Value};
use support::{ms, rss, BenchServer, ServeProcess, Stats};

const PUBLIC_URL: &str = "http://soak.frontdesk.test";

/// One serve process on the shared database and Redis, as the soak runs it.
async fn serve(database_url: &str, redis_url: &str) -> ServeProcess {
    ServeProcess::start(
        database_url,
        &[
            ("FRONTDESK_REDIS_URL", redis_url),
            ("FRONTDESK_PUBLIC_URL", PUBLIC_URL),
            ("FRONTDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true"),
            // Every client of this benchmark comes from one address: the per-address public limit would measure
            // itself.
            ("FRONTDESK_PUBLIC_RATE_LIMIT_PER_MINUTE", "10000000"),
            ("FRONTDESK_OPERATOR_RATE_LIMIT_PER_MINUTE", "10000000"),
            // The integration's key polls and pushes far faster than its default 600 a minute: this measures the
            // service, not the limiter (benches/rate_limits.rs does that).
            ("FRONTDESK_RATE_LIMIT_PER_MINUTE", "10000000"),
        ],
    )
    .await
}

/// Resident memory of a serve process, in KiB (0 when unknown).
fn rss_kib(process: &ServeProcess) -> u64 {
    rss(process.child.id()).map_or(0, |r| r.total)
}

/// Latencies and statuses of one kind of request.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    statuses: BTreeMap<u16, u64>,
    transport_errors: u64,
}

type Tallies = Arc<Mutex<BTreeMap<&'static str, Tally>>>;

fn note(tallies: &Tallies, kind: &'static str, started: Instant, status: Option<u16>) {
    let mut tallies = tallies.lock().unwrap();
    let tally = tallies.entry(kind).or_default();
    match status {
        Some(status) => {
            tally.latencies.push(started.elapsed());
            *tally.statuses.entry(status).or_default() += 1;
        }
        None => tally.transport_errors += 1,
    }
}

/// An OAuth access token for the assistant endpoint, through the same domain steps as the sign-in pages.
async fn assistant_token(server: &BenchServer, email: &str, password: &str) -> String {
    let settings = oauth::Settings::new(PUBLIC_URL, chrono::TimeDelta::hours(2), chrono::TimeDelta::days(1));
    let redirect = "http://127.0.0.1:9/callback".to_string();
    let client = oauth::register(
        &server.db,
        oauth::RegistrationIn {
            redirect_uris: vec![redirect.clone()],
            client_name: Some("soak".into()),
            token_endpoint_auth_method: Some("none".into()),
            grant_types: None,
            response_types: None,
            scope: None,
        },
    )
    .await
    .expect("register");
    let verifier = "soak-verifier-soak-verifier-soak-verifier-0123456789".to_string();
    let challenge = {
        use base64::Engine as _;
        use sha2::Digest;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    let authorize = oauth::check_authorize(
        &server.db,
        &settings,
        &oauth::AuthorizeParams {
            response_type: Some("code".into()),
            client_id: Some(client.client_id.clone()),
            redirect_uri: Some(redirect.clone()),
            code_challenge: Some(challenge),
            code_challenge_method: Some("S256".into()),
            state: None,
            scope: None,
            resource: None,
        },
    )
    .await
    .expect("authorize");
    let consent =
        oauth::sign_in(&server.db, authorize, email, password.to_string(), "127.0.0.1").await.expect("sign in");
    let callback = oauth::decide(&server.db, &settings, &consent.ticket, true).await.expect("decide").expect("code");
    let code = callback.params.iter().find(|(k, _)| *k == "code").expect("code").1.clone();
    let tokens = oauth::token(
        &server.db,
        &settings,
        oauth::TokenParams {
            grant_type: Some("authorization_code".into()),
            code: Some(code),
            redirect_uri: Some(redirect),
            client_id: Some(client.client_id),
            code_verifier: Some(verifier),
            refresh_token: None,
            resource: None,
            scope: None,
        },
    )
    .await
    .expect("token");
    tokens.access_token
}

/// The whole soak as one script (start two processes, load them, check, report), read top to bottom in the order it
/// happens; it runs past 100 lines on purpose, as the integration scenarios do (tests/it/main.rs).
#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("SOAK_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let clients: usize = std::env::var("SOAK_CLIENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let redis_url = std::env::var("FRONTDESK_BENCH_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let Some(server) = BenchServer::start(Engine::Postgres).await else { return };
    let url = server.database_url().expect("url");

    // An operator (for the setup, approvals and the assistant endpoint) and the hotel's catalogue, written through process A.
    let (email, password) = ("soak@frontdesk.test", "soak password");
    let operator = identity::create_operator(
        &server.db,
        identity::OperatorIn { organization_id: &server.org, email, name: "Soak", password },
    )
    .await
    .expect("operator");
    let session = identity::issue_token(&server.db, operator, chrono::TimeDelta::days(1)).await.expect("token");
    let a = serve(&url, &redis_url).await;
    let b = serve(&url, &redis_url).await;
    let http = reqwest::Client::builder().pool_max_idle_per_host(64).timeout(Duration::from_secs(30)).build().unwrap();
    let op = format!("Token {}", session.token);
    let post = |path: String, body: Value| {
        let (http, base, op) = (http.clone(), a.base.clone(), op.clone());
        async move {
            let answer =
                http.post(format!("{base}{path}")).header("authorization", op).json(&body).send().await.unwrap();
            assert!(answer.status().is_success(), "{path}: {}", answer.status());
            answer.json::<Value>().await.unwrap()
        }
    };
    let hotel = server.hotel.clone();
    http.put(format!("{}/api/hotels/{hotel}", a.base))
        .header("authorization", &op)
        .json(&json!({"publicBooking": true}))
        .send()
        .await
        .unwrap();
    let today = Utc::now().date_naive();
    let mut plans = Vec::new();
    for t in 0..3 {
        let room_type =
            post("/api/roomTypes".into(), json!({"hotelId": hotel, "name": format!("Type {t}"), "maxOccupancy": 3}))
                .await["id"]
                .as_str()
                .unwrap()
                .to_string();
        for r in 0..10 {
            post("/api/rooms".into(), json!({"roomTypeId": room_type, "name": format!("{t}{r:02}")})).await;
        }
        let plan = post(
            "/api/ratePlans".into(),
            json!({"hotelId": hotel, "roomTypeId": room_type, "name": format!("BAR {t}")}),
        )
        .await["id"]
            .as_str()
            .unwrap()
            .to_string();
        let values: Vec<Value> = (0..120)
            .map(
                |d| json!({"ratePlanId": plan, "date": (today + Days::new(d)).to_string(), "price": 10_000 + t * 1000}),
            )
            .collect();
        post("/api/dailyRates".into(), json!({"values": values})).await;
        plans.push(plan);
    }
    let delivered = Arc::new(AtomicU64::new(0));
    let receiver_url = {
        let delivered = delivered.clone();
        let app = axum::Router::new().fallback(move || {
            let delivered = delivered.clone();
            async move {
                delivered.fetch_add(1, Ordering::Relaxed);
                "ok"
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/hook")
    };
    post("/api/webhooksubscriptions".into(), json!({"hotelId": hotel, "url": receiver_url})).await;
    let mcp_token = assistant_token(&server, email, password).await;
    let key = server.basic();

    println!(
        "soak: {seconds} s, {clients} client(s) per kind, two serve processes on PostgreSQL + Redis, webhooks to a \
         local receiver"
    );
    let tallies: Tallies = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let bases = [a.base.clone(), b.base.clone()];
    let mut tasks = Vec::new();
    for client in 0..clients {
        // Searches, and bookings of what they find; each booking approved by the operator through the other process.
        for kind in ["search+book", "ari", "list", "mcp"] {
            let (http, bases, tallies, stop) = (http.clone(), bases.clone(), tallies.clone(), stop.clone());
            let (hotel, plans, key, op, mcp_token) =
                (hotel.clone(), plans.clone(), key.clone(), op.clone(), mcp_token.clone());
            tasks.push(tokio::spawn(async move {
                let mut n: u64 = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let base = &bases[(n as usize + client) % 2];
                    let other = &bases[(n as usize + client + 1) % 2];
                    let (offset, nights) = {
                        let mut rng = rand::thread_rng();
                        (rng.gen_range(1..90u64), rng.gen_range(1..5u64))
                    };
                    let check_in = today + Days::new(offset);
                    let check_out = check_in + Days::new(nights);
                    match kind {
                        "search+book" => {
                            let started = Instant::now();
                            let answer = http
                                .get(format!("{base}/api/hotels/{hotel}/availability?checkInDate={check_in}&checkOutDate={check_out}&adults=2"))
                                .send()
                                .await;
                            let Ok(answer) = answer else { note(&tallies, "search", started, None); continue };
                            let status = answer.status().as_u16();
                            let offers: Value = answer.json().await.unwrap_or_default();
                            note(&tallies, "search", started, Some(status));
                            // One search in four books its first offer.
                            let Some(offer) = offers.get(0).and_then(|o| o["offerId"].as_str()).filter(|_| n.is_multiple_of(4)) else {
                                continue;
                            };
                            let started = Instant::now();
                            let body = json!({"offerId": offer, "guest": {"firstName": "Soak", "lastName": format!("G{client}-{n}"), "email": format!("g{client}-{n}@soak.test")}});
                            let answer = http
                                .post(format!("{base}/api/hotels/{hotel}/book-reservation"))
                                .header("idempotency-key", format!("soak-{client}-{n}"))
                                .json(&body)
                                .send()
                                .await;
                            let Ok(answer) = answer else { note(&tallies, "book", started, None); continue };
                            let status = answer.status().as_u16();
                            let booked: Value = answer.json().await.unwrap_or_default();
                            note(&tallies, "book", started, Some(status));
                            let Some(id) = booked["reservationId"].as_str() else { continue };
                            let started = Instant::now();
                            let answer = http
                                .post(format!("{other}/api/reservations/{id}/approve"))
                                .header("authorization", &op)
                                .send()
                                .await;
                            note(&tallies, "approve", started, answer.ok().map(|a| a.status().as_u16()));
                        }
                        "ari" => {
                            let plan = &plans[n as usize % plans.len()];
                            let values: Vec<Value> = (0..30)
                                .map(|d| json!({"ratePlanId": plan, "date": (check_in + Days::new(d)).to_string(), "price": 9_000 + (n % 50) as i64 * 100}))
                                .collect();
                            let started = Instant::now();
                            let answer = http
                                .post(format!("{base}/api/dailyRates"))
                                .header("authorization", &key)
                                .json(&json!({"values": values}))
                                .send()
                                .await;
                            note(&tallies, "ari", started, answer.ok().map(|a| a.status().as_u16()));
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        "list" => {
                            let started = Instant::now();
                            let answer = http
                                .get(format!("{base}/api/reservations?hotelId={hotel}&stayDateFrom={today}&stayDateTo={}&limit=50&sortField=checkInDate", today + Days::new(30)))
                                .header("authorization", &key)
                                .send()
                                .await;
                            let status = match answer {
                                Ok(a) => {
                                    let s = a.status().as_u16();
                                    let _ = a.bytes().await;
                                    Some(s)
                                }
                                Err(_) => None,
                            };
                            note(&tallies, "list", started, status);
                        }
                        _ => {
                            let call = if n.is_multiple_of(2) {
                                json!({"name": "housekeeping_summary", "arguments": {"hotelId": hotel}})
                            } else {
                                json!({"name": "schedule_counts", "arguments": {"hotelId": hotel, "dateFrom": today.to_string(), "dateTo": (today + Days::new(30)).to_string()}})
                            };
                            let started = Instant::now();
                            let answer = http
                                .post(format!("{base}/mcp"))
                                .header("authorization", format!("Bearer {mcp_token}"))
                                .header("accept", "application/json, text/event-stream")
                                .json(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}))
                                .send()
                                .await;
                            let status = match answer {
                                Ok(a) => {
                                    let s = a.status().as_u16();
                                    let body: Value = a.json().await.unwrap_or_default();
                                    // A JSON-RPC error or a tool error counts as a failure of its own.
                                    if body.get("error").is_some() || body["result"]["isError"] == json!(true) {
                                        Some(599)
                                    } else {
                                        Some(s)
                                    }
                                }
                                Err(_) => None,
                            };
                            note(&tallies, "mcp", started, status);
                        }
                    }
                }
            }));
        }
    }

    // Memory of each process over time.
    let started = Instant::now();
    let mut memory = Vec::new();
    let sample_every = Duration::from_secs((seconds / 20).max(1));
    while started.elapsed() < Duration::from_secs(seconds) {
        memory.push((started.elapsed().as_secs(), rss_kib(&a), rss_kib(&b)));
        tokio::time::sleep(sample_every).await;
    }
    memory.push((started.elapsed().as_secs(), rss_kib(&a), rss_kib(&b)));
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = started.elapsed().as_secs_f64();

    println!("{:<8} {:>9} {:>8} {:>9} {:>9}  statuses", "kind", "requests", "req/s", "p50 ms", "p99 ms");
    for (kind, tally) in tallies.lock().unwrap().iter_mut() {
        let count = tally.latencies.len();
        let stats = Stats::new(std::mem::take(&mut tally.latencies));
        println!(
            "{kind:<8} {count:>9} {:>8.1} {:>9.2} {:>9.2}  {:?}{}",
            count as f64 / elapsed,
            ms(stats.percentile(50.0)),
            ms(stats.percentile(99.0)),
            tally.statuses,
            if tally.transport_errors > 0 {
                format!(" transport errors: {}", tally.transport_errors)
            } else {
                String::new()
            }
        );
    }
    // Deliveries still owed are sent within seconds of the load ending.
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!("webhook deliveries received: {}", delivered.load(Ordering::Relaxed));
    println!("memory (VmRSS, MiB) over time:  second  process A  process B");
    for (second, rss_a, rss_b) in memory {
        println!(
            "                                {second:>6} {:>10.1} {:>10.1}",
            rss_a as f64 / 1024.0,
            rss_b as f64 / 1024.0
        );
    }
}
