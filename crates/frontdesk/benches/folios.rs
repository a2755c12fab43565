//! The folio as a ledger, on SQLite and PostgreSQL: reading a folio of 200 lines (`GET /api/folios/{id}`, one client)
//! and recording payments (`POST /api/folios/{id}/payments`, 16 clients, each on a folio of its own; answered short
//! with `Prefer: return=minimal` as a till asks, and with the whole folio), each next to a trivial GET measured in
//! the same run (the machine's noise falls on both).
//!
//! `cargo bench --bench folios`. Targets (docs/money.md): a 200-line folio reads with p50 under 5 ms; a payment
//! posts with p50 under 10 ms at 16 clients.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::load::{closed_loop, Call};
use support::{engines, ms, BenchServer, Stats};

const LINES: usize = 200;
const READS: usize = 300;
const CLIENTS: usize = 16;
const WINDOW: Duration = Duration::from_secs(5);

/// A confirmed stay of `nights` nights in the server's hotel: its folio id.
async fn folio(s: &BenchServer, room_type: &str, from: u64, nights: u64) -> String {
    let day = |d: u64| (chrono::Utc::now().date_naive() + chrono::Days::new(d)).to_string();
    let body = json!({"hotelId": s.hotel, "checkInDate": day(from), "checkOutDate": day(from + nights),
                      "rooms": [{"roomTypeId": room_type, "price": 10_000 * nights}]});
    let r: serde_json::Value = s
        .client
        .post(format!("{}/api/reservations", s.base))
        .header("authorization", s.basic())
        .json(&body)
        .send()
        .await
        .expect("reservation")
        .json()
        .await
        .expect("json");
    r["folio"]["id"].as_str().unwrap_or_else(|| panic!("no folio: {r}")).to_string()
}

async fn bench(engine: frontdesk::store::Engine) {
    let Some(s) = BenchServer::start(engine).await else { return };
    let post = |path: String, body: serde_json::Value| {
        let request = s.client.post(format!("{}{path}", s.base)).header("authorization", s.basic()).json(&body);
        async move {
            let answer = request.send().await.expect("post");
            assert!(answer.status().is_success(), "{path}: {}", answer.status());
            answer.json::<serde_json::Value>().await.expect("json")
        }
    };
    // Billing settings are an operator's (the bench's key may not change them): set as the command line would.
    let patch: frontdesk::domain::finance::billing::BillingPatch = serde_json::from_value(json!({
        "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                     {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                     {"category": "OTHER", "rateBasisPoints": 1900}],
        "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300}}))
    .expect("patch");
    frontdesk::domain::finance::billing::update(&s.db, &s.actor(), &s.hotel, patch).await.expect("billing");
    let room_type = post("/api/roomTypes".into(), json!({"hotelId": s.hotel, "name": "Double", "maxOccupancy": 2}))
        .await["id"]
        .as_str()
        .expect("room type")
        .to_string();
    for n in 0..(CLIENTS + 1) {
        post("/api/rooms".into(), json!({"roomTypeId": room_type, "name": format!("{}", 100 + n)})).await;
    }
    // A 30-night stay (30 nights and 30 city-tax lines), then charges up to 200 lines.
    let big = folio(&s, &room_type, 1, 30).await;
    for n in 0..(LINES - 60) {
        post(format!("/api/folios/{big}/charges"), json!({"description": format!("Minibar {n}"), "unitPrice": 450}))
            .await;
    }
    let read = |path: String| {
        let request = s.client.get(format!("{}{path}", s.base)).header("authorization", s.basic());
        async move {
            let started = Instant::now();
            let answer = request.send().await.expect("get");
            assert!(answer.status().is_success());
            let _ = answer.bytes().await;
            started.elapsed()
        }
    };
    assert_eq!(
        post(format!("/api/folios/{big}/charges"), json!({"description": "Check", "unitPrice": 1})).await["lines"]
            .as_array()
            .map(Vec::len),
        Some(LINES + 1)
    );
    let baseline = s.baseline(READS).await;
    let mut samples = Vec::with_capacity(READS);
    for _ in 0..READS {
        samples.push(read(format!("/api/folios/{big}")).await);
    }
    let reads = Stats::new(samples);
    println!("{engine:?}: GET a folio of {} lines, {READS} reads: {}", LINES + 1, reads.summary());
    println!(
        "{engine:?}:   baseline GET /api/hotels/{{id}}: {}; p50 ratio {:.1}x",
        baseline.summary(),
        ms(reads.percentile(50.0)) / ms(baseline.percentile(50.0))
    );

    // 16 clients, each recording 1-cent payments on a folio of its own (as 16 desks would): first as a till would
    // (`Prefer: return=minimal`: the folio's sums and the new line), then asking for the whole folio back.
    let mut folios = Vec::new();
    for c in 0..CLIENTS {
        folios.push(folio(&s, &room_type, 40 + c as u64 * 3, 2).await);
    }
    let folios = std::sync::Arc::new(folios);
    let payments = |minimal: bool| {
        let folios = folios.clone();
        let auth = s.basic();
        std::sync::Arc::new(move |client: u64, _n: u64| {
            let call = Call::post_json(
                format!("/api/folios/{}/payments", folios[client as usize]),
                &json!({"method": "CARD", "amount": 1}),
            )
            .header("authorization", auth.clone());
            if minimal {
                call.header("prefer", "return=minimal")
            } else {
                call
            }
        })
    };
    let minimal = closed_loop(&s.base, CLIENTS, Duration::from_secs(1), WINDOW, payments(true)).await;
    let whole = closed_loop(&s.base, CLIENTS, Duration::from_secs(1), WINDOW, payments(false)).await;
    let healthz =
        closed_loop(&s.base, CLIENTS, Duration::from_secs(1), WINDOW, support::load::repeat(Call::get("/healthz")))
            .await;
    let lines = post(format!("/api/folios/{}/payments", folios[0]), json!({"method": "CARD", "amount": 1})).await
        ["lines"]
        .as_array()
        .map_or(0, Vec::len);
    println!("{engine:?}: POST a payment, {CLIENTS} clients, Prefer: return=minimal: {}", minimal.summary());
    println!("{engine:?}: POST a payment, {CLIENTS} clients, answering the whole folio: {}", whole.summary());
    println!("{engine:?}:   (each client's folio has {lines} lines at the end)");
    println!(
        "{engine:?}:   GET /healthz, {CLIENTS} clients: {}; p50 ratios {:.1}x (minimal), {:.1}x (whole folio)",
        healthz.summary(),
        ms(minimal.latency.percentile(50.0)) / ms(healthz.latency.percentile(50.0)).max(0.001),
        ms(whole.latency.percentile(50.0)) / ms(healthz.latency.percentile(50.0)).max(0.001)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in engines() {
            bench(engine).await;
        }
    });
}
