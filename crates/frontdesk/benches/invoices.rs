//! Issuing invoices, on SQLite and PostgreSQL: issuing a 30-line invoice from a checked-out folio
//! (`POST /api/folios/{id}/invoices`, one client, each request on a folio of its own prepared beforehand), fetching
//! the PDF of such an invoice (`GET /api/invoices/{id}/pdf`, one client, rendered on every fetch), and 50 issues
//! started at once on 50 folios of one hotel (the slowest answer, and whether the 50 numbers are consecutive). Each
//! one-client measurement alternates with a trivial GET `/healthz` measured in the same run (the machine's noise
//! falls on both), and the ratio of their p50s is printed.
//!
//! Each folio is a guest's stay that began three days ago, checked in today and checked out today on account (an
//! early departure: the three nights stayed are kept, the night not stayed leaves the folio): 3 room nights, 3 city-tax
//! lines and 24 charges (minibar, breakfast, parking), 30 invoice lines, about 550.00 (so the guest's address is on
//! the invoice). The first invoices are issued to the guest (`{}`); the 50 concurrent ones to a company, address
//! given.
//!
//! `cargo bench -p frontdesk --bench invoices`. Targets (docs/invoices.md): an invoice issues with p50 under 30 ms,
//! its PDF fetches with p50 under 50 ms, and no request of the 50 concurrent issues takes over 1 s.

mod support;

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use support::{engines, ms, BenchServer, Stats};

/// Invoice lines of each folio: 3 room nights, 3 city-tax lines and the charges.
const LINES: usize = 30;
const NIGHTS: usize = 3;
const CHARGES: usize = LINES - 2 * NIGHTS;
/// Issues (and then PDF fetches) measured one after the other.
const ISSUES: usize = 100;
/// Issues started at once.
const CONCURRENT: usize = 50;
/// Issues and fetches before measuring (the PDF's typefaces are read once per process, on the first).
const WARM_UP: usize = 3;
/// Folios prepared at a time.
const PREPARING: usize = 4;

const ISSUE_TARGET_MS: f64 = 30.0;
const PDF_TARGET_MS: f64 = 50.0;
const CONCURRENT_TARGET: Duration = Duration::from_secs(1);

fn day(offset: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Duration::days(offset)).to_string()
}

/// A request through the API: the answer's status, JSON body and time.
async fn send(s: &BenchServer, method: reqwest::Method, path: &str, body: Option<&Value>) -> (u16, Value, Duration) {
    let mut request = s.client.request(method, format!("{}{path}", s.base)).header("authorization", s.basic());
    if let Some(body) = body {
        request = request.json(body);
    }
    let started = Instant::now();
    let answer = request.send().await.expect("request");
    let status = answer.status().as_u16();
    let bytes = answer.bytes().await.expect("body");
    let took = started.elapsed();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), took)
}

/// `POST` or `PUT` of JSON that must succeed: the answer.
async fn write(s: &BenchServer, method: reqwest::Method, path: &str, body: Value) -> Value {
    let (status, answer, _) = send(s, method, path, Some(&body)).await;
    assert!((200..300).contains(&status), "{path}: {status}: {answer}");
    answer
}

/// A GET whose body is read to the end: its time (it must succeed).
async fn timed_get(s: &BenchServer, path: &str) -> (Duration, usize) {
    let request = s.client.get(format!("{}{path}", s.base)).header("authorization", s.basic());
    let started = Instant::now();
    let answer = request.send().await.expect("get");
    let status = answer.status();
    let bytes = answer.bytes().await.expect("body");
    let took = started.elapsed();
    assert!(status.is_success(), "{path}: {status}");
    (took, bytes.len())
}

/// An invoice's number's counter: the digits after its last `-` (`RE-2026-000042` is 42).
fn counter(number: &str) -> u64 {
    number.rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("a number: {number}"))
}

/// The hotel set up to issue invoices: billing settings with the issuer, a guest with an address, a room type and
/// `rooms` rooms. Answers (guest, room type, rooms).
async fn invoicing_hotel(s: &BenchServer, rooms: usize) -> (String, String, Vec<String>) {
    // Billing settings are an operator's (the bench's key may not change them): set as the command line would.
    let patch: frontdesk::domain::finance::billing::BillingPatch = serde_json::from_value(json!({
        "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                     {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                     {"category": "OTHER", "rateBasisPoints": 1900}],
        "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300},
        "invoiceIssuer": {"legalName": "Bench Hotels GmbH", "street": "Uferweg 1", "postalCode": "10115",
                          "city": "Berlin", "country": "DE", "vatId": "DE123456789"},
        "paymentTerms": "Payable on receipt without deduction."}))
    .expect("patch");
    frontdesk::domain::finance::billing::update(&s.db, &s.actor(), &s.hotel, patch).await.expect("billing");
    let guest = write(
        s,
        reqwest::Method::POST,
        "/api/guests",
        json!({"hotelId": s.hotel, "firstName": "Łukasz", "lastName": "Żółć", "street": "ul. Długa 5",
               "postalCode": "00-238", "city": "Warszawa", "country": "PL"}),
    )
    .await["id"]
        .as_str()
        .expect("guest")
        .to_string();
    let actor = s.actor();
    let input = frontdesk::domain::room_types::RoomTypeIn {
        hotel_id: Some(s.hotel.clone()),
        name: "Double".into(),
        description: None,
        max_occupancy: 2,
        max_adults: None,
        max_children: None,
    };
    let room_type = frontdesk::domain::room_types::create(&s.db, &actor, input).await.expect("room type").id;
    let mut ids = Vec::with_capacity(rooms);
    for n in 0..rooms {
        let input = frontdesk::domain::rooms::RoomIn {
            hotel_id: None,
            room_type_id: room_type.clone(),
            name: format!("{}", 1000 + n),
            floor: None,
            housekeeping_status: None,
        };
        ids.push(frontdesk::domain::rooms::create(&s.db, &actor, input).await.expect("room").id);
    }
    (guest, room_type, ids)
}

/// A stay that began `NIGHTS` days ago and was booked a night longer, checked in and checked out today on account,
/// with `CHARGES` charges: its folio id.
async fn checked_out_folio(s: &BenchServer, guest: &str, room_type: &str, room: &str) -> String {
    let nights = NIGHTS as i64 + 1;
    let body = json!({"hotelId": s.hotel, "guestId": guest, "checkInDate": day(-(NIGHTS as i64)),
                      "checkOutDate": day(1),
                      "rooms": [{"roomTypeId": room_type, "roomId": room, "price": 10_000 * nights, "adults": 2}]});
    let r = write(s, reqwest::Method::POST, "/api/reservations", body).await;
    let id = r["id"].as_str().expect("id").to_string();
    let folio = r["folio"]["id"].as_str().unwrap_or_else(|| panic!("no folio: {r}")).to_string();
    let path = format!("/api/reservations/{id}");
    write(s, reqwest::Method::PUT, &path, json!({"status": "CHECKED_IN"})).await;
    let charges = [("Minibar", 450, "OTHER"), ("Breakfast", 1_950, "FOOD_AND_BEVERAGE"), ("Parking", 2_200, "OTHER")];
    for n in 0..CHARGES {
        let (description, unit_price, category) = charges[n % charges.len()];
        let body = json!({"description": description, "unitPrice": unit_price, "category": category});
        write(s, reqwest::Method::POST, &format!("/api/folios/{folio}/charges"), body).await;
    }
    let body = json!({"status": "CHECKED_OUT", "onAccountReason": "Invoice to follow"});
    write(s, reqwest::Method::PUT, &path, body).await;
    folio
}

/// Issues an invoice from `folio` with `body`: (time, id, number).
async fn issue(s: &BenchServer, folio: &str, body: &Value) -> (Duration, String, String) {
    let (status, invoice, took) =
        send(s, reqwest::Method::POST, &format!("/api/folios/{folio}/invoices"), Some(body)).await;
    assert_eq!(status, 201, "issuing from {folio}: {invoice}");
    assert_eq!(invoice["lines"].as_array().map(Vec::len), Some(LINES), "{invoice}");
    let text = |field: &str| invoice[field].as_str().expect(field).to_string();
    (took, text("id"), text("number"))
}

fn ratio(of: &Stats, to: &Stats) -> f64 {
    ms(of.percentile(50.0)) / ms(to.percentile(50.0)).max(0.001)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

async fn bench(engine: frontdesk::store::Engine) {
    let Some(s) = BenchServer::start(engine).await else { return };
    println!("== {engine:?}");
    let folios_needed = WARM_UP + ISSUES + CONCURRENT;
    let (guest, room_type, rooms) = invoicing_hotel(&s, folios_needed).await;
    let started = Instant::now();
    let folios: Vec<String> = futures::stream::iter(rooms.iter())
        .map(|room| checked_out_folio(&s, &guest, &room_type, room))
        .buffered(PREPARING)
        .collect()
        .await;
    eprintln!(
        "  prepared {} checked-out folios of {LINES} lines in {:.1} s",
        folios.len(),
        started.elapsed().as_secs_f64()
    );
    let (warm, rest) = folios.split_at(WARM_UP);
    let (one_by_one, at_once) = rest.split_at(ISSUES);

    // (1) One client issuing to the guest, one folio after the other, each issue next to a GET /healthz.
    let to_guest = json!({});
    let mut last_number = 0;
    let mut warm_ids = Vec::new();
    for folio in warm {
        let (_, id, number) = issue(&s, folio, &to_guest).await;
        timed_get(&s, "/healthz").await;
        warm_ids.push(id);
        last_number = counter(&number);
    }
    let (mut issues, mut healthz, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for folio in one_by_one {
        healthz.push(timed_get(&s, "/healthz").await.0);
        let (took, id, number) = issue(&s, folio, &to_guest).await;
        assert_eq!(counter(&number), last_number + 1, "one client's numbers follow each other");
        last_number = counter(&number);
        issues.push(took);
        ids.push(id);
    }
    let (issues, healthz) = (Stats::new(issues), Stats::new(healthz));
    println!("{engine:?}: POST an invoice of {LINES} lines, one client, {ISSUES} issues: {}", issues.summary());
    println!(
        "{engine:?}:   GET /healthz in the same run: {}; p50 ratio {:.1}x; target p50 under {ISSUE_TARGET_MS} ms: {}",
        healthz.summary(),
        ratio(&issues, &healthz),
        verdict(ms(issues.percentile(50.0)) < ISSUE_TARGET_MS)
    );

    // (2) One client fetching the PDFs of those invoices, each fetch next to a GET /healthz.
    for id in &warm_ids {
        timed_get(&s, &format!("/api/invoices/{id}/pdf")).await;
    }
    let (mut pdfs, mut healthz, mut bytes) = (Vec::new(), Vec::new(), 0);
    for id in &ids {
        healthz.push(timed_get(&s, "/healthz").await.0);
        let (took, size) = timed_get(&s, &format!("/api/invoices/{id}/pdf")).await;
        pdfs.push(took);
        bytes += size;
    }
    let (pdfs, healthz) = (Stats::new(pdfs), Stats::new(healthz));
    println!(
        "{engine:?}: GET the PDF of a {LINES}-line invoice, one client, {ISSUES} fetches: {} ({} bytes on average)",
        pdfs.summary(),
        bytes / ids.len().max(1)
    );
    println!(
        "{engine:?}:   GET /healthz in the same run: {}; p50 ratio {:.1}x; target p50 under {PDF_TARGET_MS} ms: {}",
        healthz.summary(),
        ratio(&pdfs, &healthz),
        verdict(ms(pdfs.percentile(50.0)) < PDF_TARGET_MS)
    );

    // (3) 50 issues to a company started at once, one folio each; the client opens its connections as they go.
    let to_company = json!({"recipient": {"kind": "COMPANY", "name": "Acme Travel GmbH", "street": "Hafenstraße 3",
                                          "postalCode": "20457", "city": "Hamburg", "country": "DE"}});
    let started = Instant::now();
    let answers = futures::future::join_all(at_once.iter().map(|folio| issue(&s, folio, &to_company))).await;
    let all = started.elapsed();
    let mut numbers: Vec<u64> = answers.iter().map(|(_, _, number)| counter(number)).collect();
    numbers.sort_unstable();
    let distinct = numbers.windows(2).all(|w| w[0] != w[1]);
    let consecutive =
        distinct && numbers.last().zip(numbers.first()).is_some_and(|(l, f)| l - f + 1 == CONCURRENT as u64);
    let times = Stats::new(answers.iter().map(|(took, _, _)| *took).collect());
    let slowest = times.percentile(100.0);
    println!(
        "{engine:?}: {CONCURRENT} issues at once on {CONCURRENT} folios: slowest {:.1} ms, median {:.1} ms, all done in \
         {:.1} ms; target none over {} ms: {}",
        ms(slowest),
        ms(times.percentile(50.0)),
        ms(all),
        CONCURRENT_TARGET.as_millis(),
        verdict(slowest <= CONCURRENT_TARGET)
    );
    println!(
        "{engine:?}:   numbers {}..{}, consecutive: {} (right after the one client's last, {last_number}: {})",
        numbers.first().copied().unwrap_or_default(),
        numbers.last().copied().unwrap_or_default(),
        if consecutive { "yes" } else { "no" },
        if numbers.first() == Some(&(last_number + 1)) { "yes" } else { "no" }
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
