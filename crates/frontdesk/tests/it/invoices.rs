//! Invoices (docs/invoices.md): issued from a checked-out folio with the hotel's next number, never changed,
//! cancelled only by a cancellation invoice, refused with every reason at once, numbered without gaps under
//! concurrency (two processes on PostgreSQL), exported for an accountant; on both engines.

use std::collections::BTreeSet;

use crate::common::browser::{Browser, PHONE};
use crate::common::process::spawn;
use crate::common::receiver::Receiver;
use crate::common::smtp::SmtpServer;
use crate::common::{day, delivering, Auth, Org, TestServer, PASSWORD, WAIT};
use frontdesk::domain::Scope;
use frontdesk::store::Engine;
use reqwest::Method;
use serde_json::{json, Value};

on_both_engines!(
    a_checked_out_stay_is_invoiced_cancelled_and_invoiced_again,
    an_invoice_is_refused_with_every_reason_at_once,
    fifty_concurrent_issues_take_fifty_consecutive_numbers,
    who_may_issue_and_read_invoices,
    the_accountant_exports_invoices_as_json_and_csv,
    anonymising_the_guest_leaves_issued_invoices_as_issued,
);
on_both_engines_configured!(
    an_invoice_is_e_mailed_with_its_pdf_attached,
    the_desk_issues_finds_downloads_and_cancels_an_invoice,
    invoice_created_reaches_only_subscriptions_that_name_it,
);

/// A hotel in Berlin that may issue invoices: 7 % on rooms and food, 19 % on other, city tax 3.00 a person a night
/// without VAT, the issuer named in full. (hotel, room type, plan, rooms)
async fn invoicing_hotel(s: &TestServer, org: &Org, room_count: usize) -> (String, String, String, Vec<String>) {
    let hotel = s.hotel(org, "Spree").await;
    s.put(&format!("/api/hotels/{hotel}"), &org.auth(), json!({"country": "DE"})).await.expect(200);
    s.put(
        &format!("/api/hotels/{hotel}/billing"),
        &org.auth(),
        json!({
            "vatRates": [{"category": "ACCOMMODATION", "rateBasisPoints": 700},
                         {"category": "FOOD_AND_BEVERAGE", "rateBasisPoints": 700},
                         {"category": "OTHER", "rateBasisPoints": 1900}],
            "cityTax": {"name": "City tax", "basis": "PER_PERSON_PER_NIGHT", "amount": 300},
            "invoiceIssuer": {"legalName": "Spree Hotels GmbH", "street": "Uferweg 1", "postalCode": "10115",
                              "city": "Berlin", "country": "DE", "vatId": "DE 123 456 789"},
            "paymentTerms": "Payable on receipt without deduction.",
        }),
    )
    .await
    .expect(200);
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 3})).await;
    let mut rooms = Vec::new();
    for n in 0..room_count {
        rooms.push(
            s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)})).await,
        );
    }
    let plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "BAR"})).await;
    (hotel, room_type, plan, rooms)
}

/// A guest with a full postal address, staying from today for `nights` at 100.00 a night, two adults, checked in:
/// (reservation id, folio id).
async fn checked_in_stay(
    s: &TestServer,
    org: &Org,
    h: &(String, String, String, Vec<String>),
    nights: u64,
) -> (String, String) {
    let room_id = h.3[0].clone();
    let guest = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"hotelId": h.0, "firstName": "Łukasz", "lastName": "Żółć", "street": "ul. Długa 5",
                   "postalCode": "00-238", "city": "Warszawa", "country": "PL"}),
        )
        .await;
    let room =
        json!({"roomTypeId": h.1, "ratePlanId": h.2, "price": 10_000 * nights as i64, "adults": 2, "roomId": room_id});
    let body = json!({"hotelId": h.0, "guestId": guest, "checkInDate": day(0), "checkOutDate": day(nights),
                      "rooms": [room]});
    let r = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let id = r["id"].as_str().unwrap().to_string();
    let folio = r["folio"]["id"].as_str().unwrap().to_string();
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
    (id, folio)
}

async fn check_out_on_account(s: &TestServer, org: &Org, reservation: &str) {
    s.put(
        &format!("/api/reservations/{reservation}"),
        &org.auth(),
        json!({"status": "CHECKED_OUT", "onAccountReason": "Invoice to follow"}),
    )
    .await
    .expect(200);
}

/// The text of a PDF, as `pdftotext` reads it.
fn pdf_text(bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("frontdesk-invoice-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("invoice.pdf");
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new("pdftotext")
        .args(["-layout", file.to_str().unwrap(), "-"])
        .output()
        .expect("pdftotext (poppler-utils) is needed: run scripts/services.sh");
    assert!(out.status.success(), "pdftotext failed: {}", String::from_utf8_lossy(&out.stderr));
    let check = std::process::Command::new("qpdf")
        .args(["--check", file.to_str().unwrap()])
        .output()
        .expect("qpdf is needed: run scripts/services.sh");
    assert!(check.status.success(), "qpdf --check failed: {}", String::from_utf8_lossy(&check.stdout));
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout).unwrap()
}

async fn pdf(s: &TestServer, org: &Org, invoice: &str) -> Vec<u8> {
    let answer = s
        .client
        .get(format!("{}/api/invoices/{invoice}/pdf", s.base))
        .header("authorization", format!("Token {}", org.token))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/pdf");
    answer.bytes().await.unwrap().to_vec()
}

async fn a_checked_out_stay_is_invoiced_cancelled_and_invoiced_again(s: TestServer) {
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    // A night (100.00 at 7 %), its city tax (2 x 3.00, no VAT) and a bottle of wine (30.00 at 19 %).
    s.post(
        &format!("/api/folios/{folio}/charges"),
        &org.auth(),
        json!({"description": "Wine", "unitPrice": 3000, "category": "OTHER"}),
    )
    .await
    .expect(200);
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "CARD", "amount": 10_000}))
        .await
        .expect(200);
    // Before check-out, the night is not posted: the preview says so, and issuing is refused.
    let preview = s.get(&format!("/api/folios/{folio}/invoice-preview"), &org.auth()).await.expect(200).body;
    assert_eq!(preview["issuable"], json!(false), "{preview}");
    assert_eq!(preview["invoice"]["number"], json!(format!("RE-{}-000001", chrono::Utc::now().format("%Y"))));
    s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(422);
    check_out_on_account(&s, &org, &reservation).await;

    let year = chrono::Utc::now().format("%Y").to_string();
    let issued = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({"language": "de"})).await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let invoice = issued.body;
    let id = invoice["id"].as_str().unwrap().to_string();
    assert_eq!(invoice["number"], json!(format!("RE-{year}-000001")));
    assert_eq!((&invoice["kind"], &invoice["language"]), (&json!("INVOICE"), &json!("de")));
    assert_eq!(invoice["issuer"]["vatId"], json!("DE123456789"), "stored without spaces");
    assert_eq!(invoice["recipient"]["name"], json!("Łukasz Żółć"));
    assert_eq!(invoice["recipient"]["address"]["city"], json!("Warszawa"));
    assert_eq!(invoice["lines"].as_array().unwrap().len(), 3);
    // The totals per rate are the folio's, to the cent.
    let ledger = s.get(&format!("/api/folios/{folio}"), &org.auth()).await.expect(200).body;
    assert_eq!(invoice["vatTotals"], ledger["vatTotals"]);
    assert_eq!(
        invoice["vatTotals"],
        json!([{"vatRateBasisPoints": 0, "net": 600, "vat": 0, "gross": 600},
               {"vatRateBasisPoints": 700, "net": 9346, "vat": 654, "gross": 10_000},
               {"vatRateBasisPoints": 1900, "net": 2521, "vat": 479, "gross": 3000}])
    );
    assert_eq!(
        (&invoice["totalNet"], &invoice["totalVat"], &invoice["totalGross"]),
        (&json!(12_467), &json!(1133), &json!(13_600))
    );
    assert_eq!((&invoice["paid"], &invoice["balanceDue"]), (&json!(10_000), &json!(3600)));
    assert_eq!(invoice["paymentTerms"], json!("Payable on receipt without deduction."));
    assert!(ledger["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == json!("CHARGE"))
        .all(|l| l["invoiceId"] == json!(id)));

    // The PDF: the number, the issuer's VAT id, net, VAT and gross, the recipient's name; the same bytes each time.
    let first = pdf(&s, &org, &id).await;
    let text = pdf_text(&first);
    for needle in [
        format!("RE-{year}-000001"),
        "DE123456789".into(),
        "124,67".into(),
        "11,33".into(),
        "136,00".into(),
        "Łukasz Żółć".into(),
        "Rechnung".into(),
    ] {
        assert!(text.contains(&needle), "the PDF's text lacks {needle:?}:\n{text}");
    }
    // A later payment changes neither the JSON nor the PDF.
    s.post(&format!("/api/folios/{folio}/payments"), &org.auth(), json!({"method": "BANK_TRANSFER", "amount": 3600}))
        .await
        .expect(200);
    assert_eq!(s.get(&format!("/api/invoices/{id}"), &org.auth()).await.expect(200).body, invoice);
    assert_eq!(pdf(&s, &org, &id).await, first, "byte-identical");
    // No PUT, no DELETE.
    s.put(&format!("/api/invoices/{id}"), &org.auth(), json!({"note": "x"})).await.expect(405);
    s.delete(&format!("/api/invoices/{id}"), &org.auth()).await.expect(405);
    // Invoiced once: a second invoice of the same lines is refused.
    let again = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(422).body;
    assert!(again["errors"][0]["message"].as_str().unwrap().contains("already invoiced"), "{again}");

    // Cancelled: the next number, every line and total negated, naming what it cancels.
    s.post(&format!("/api/invoices/{id}/cancel"), &org.auth(), json!({"reason": " "})).await.expect(400);
    let cancel = s.post(&format!("/api/invoices/{id}/cancel"), &org.auth(), json!({"reason": "Wrong address"})).await;
    assert_eq!(cancel.status, 201, "{}", cancel.body);
    let cancellation = cancel.body;
    assert_eq!(cancellation["number"], json!(format!("RE-{year}-000002")));
    assert_eq!(
        (&cancellation["kind"], &cancellation["cancelsNumber"]),
        (&json!("CANCELLATION"), &json!(format!("RE-{year}-000001")))
    );
    assert_eq!((&cancellation["totalGross"], &cancellation["totalVat"]), (&json!(-13_600), &json!(-1133)));
    assert_eq!(cancellation["lines"][0]["gross"], json!(-10_000));
    let cancelled = s.get(&format!("/api/invoices/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(cancelled["cancelledByInvoiceId"], cancellation["id"]);
    assert_eq!(cancelled["number"], invoice["number"], "the document itself is unchanged");
    let cid = cancellation["id"].as_str().unwrap();
    assert!(pdf_text(&pdf(&s, &org, cid).await).contains("Stornorechnung"));
    // Neither a second cancel nor a cancel of the cancellation.
    s.post(&format!("/api/invoices/{id}/cancel"), &org.auth(), json!({"reason": "Again"})).await.expect(409);
    s.post(&format!("/api/invoices/{cid}/cancel"), &org.auth(), json!({"reason": "Undo"})).await.expect(409);

    // The lines are open again: a corrected invoice, to a company, takes the next number and shows both payments.
    let corrected = s
        .post(
            &format!("/api/folios/{folio}/invoices"),
            &org.auth(),
            json!({"recipient": {"kind": "COMPANY", "name": "Acme GmbH", "street": "Hauptstr. 2", "postalCode": "80331",
                                 "city": "München", "country": "DE", "vatId": "DE999999999"}, "note": "PO 4711"}),
        )
        .await;
    assert_eq!(corrected.status, 201, "{}", corrected.body);
    assert_eq!(corrected.body["number"], json!(format!("RE-{year}-000003")));
    assert_eq!((&corrected.body["paid"], &corrected.body["balanceDue"]), (&json!(13_600), &json!(0)));
    assert_eq!(corrected.body["recipient"]["vatId"], json!("DE999999999"));
    let of_folio = s.get(&format!("/api/folios/{folio}/invoices"), &org.auth()).await.expect(200).body;
    assert_eq!(of_folio.as_array().unwrap().len(), 3);
    // The list finds them by number and date.
    let found = s.get(&format!("/api/invoices?hotelId={}&number=000003", h.0), &org.auth()).await.expect(200).body;
    assert_eq!(found.as_array().unwrap().len(), 1);
    let today = day(0);
    let all = s.get(&format!("/api/invoices?dateFrom={today}&dateTo={today}&limit=2"), &org.auth()).await.expect(200);
    assert_eq!(all.body.as_array().unwrap().len(), 2);
    assert_eq!(all.header("x-total-count"), Some("3"));
}

async fn an_invoice_is_refused_with_every_reason_at_once(s: TestServer) {
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Bare").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    s.create("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "1"})).await;
    let plan = s.create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "name": "BAR"})).await;
    let guest =
        s.create("/api/guests", &org.auth(), json!({"hotelId": hotel, "firstName": "Ana", "lastName": "Silva"})).await;
    let body = json!({"hotelId": hotel, "guestId": guest, "checkInDate": day(0), "checkOutDate": day(3),
                      "rooms": [{"roomTypeId": room_type, "ratePlanId": plan, "price": 30_000}]});
    let r = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
    let folio = r["folio"]["id"].as_str().unwrap();
    // Not checked out, no issuer, a guest without an address on an invoice over 250.00: every reason, each with its field.
    let refused = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(422).body;
    let fields: BTreeSet<&str> =
        refused["errors"].as_array().unwrap().iter().filter_map(|e| e["field"].as_str()).collect();
    for field in [
        "folio",
        "invoiceIssuer.legalName",
        "invoiceIssuer.vatId",
        "invoiceIssuer.street",
        "recipient.street",
        "recipient.postalCode",
        "recipient.city",
        "recipient.country",
    ] {
        assert!(fields.contains(field), "{field} is not named: {refused}");
    }
    assert_eq!(refused["type"], json!("urn:frontdesk:problem:unprocessable"));
    // A company without a name.
    let refused = s
        .post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({"recipient": {"kind": "COMPANY"}}))
        .await
        .expect(422)
        .body;
    assert!(refused["errors"].as_array().unwrap().iter().any(|e| e["field"] == json!("recipient.name")), "{refused}");
    // Malformed input is a 400, before anything is read.
    for bad in [
        json!({"language": "fr"}),
        json!({"recipient": {"kind": "COMPANY", "name": "Evil\u{0007}Corp"}}),
        json!({"recipient": {"kind": "COMPANY", "name": "x".repeat(10_000)}}),
        json!({"recipient": {"kind": "GUEST", "name": "Someone else"}}),
        json!({"recipient": {"kind": "COMPANY", "name": "A", "vatId": "12"}}),
        json!({"note": "n".repeat(1001)}),
        json!({"unknown": 1}),
    ] {
        let answer = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), bad.clone()).await;
        assert_eq!(answer.status, 400, "{bad}: {}", answer.body);
    }
    // Another organization's folio is not found; nothing was issued anywhere.
    let other = s.org("Other").await;
    s.post(&format!("/api/folios/{folio}/invoices"), &other.auth(), json!({})).await.expect(404);
    s.get(&format!("/api/folios/{folio}/invoice-preview"), &other.auth()).await.expect(404);
    let none = s.get("/api/invoices", &org.auth()).await.expect(200).body;
    assert_eq!(none, json!([]));
    // A bad number pattern is refused when saved.
    s.put(&format!("/api/hotels/{hotel}/billing"), &org.auth(), json!({"invoiceNumberPattern": "RE-{year}"}))
        .await
        .expect(400);
}

async fn fifty_concurrent_issues_take_fifty_consecutive_numbers(s: TestServer) {
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 50).await;
    // Fifty one-night stays, checked out; small invoices (106.00) need no recipient address.
    let mut folios = Vec::new();
    for n in 0..50 {
        let room = json!({"roomTypeId": h.1, "ratePlanId": h.2, "price": 10_000, "adults": 2, "roomId": h.3[n]});
        let body = json!({"hotelId": h.0, "checkInDate": day(0), "checkOutDate": day(1), "rooms": [room],
                          "notes": format!("stay {n}")});
        let r = s.post("/api/reservations", &org.auth(), body).await.expect(200).body;
        let id = r["id"].as_str().unwrap().to_string();
        s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"status": "CHECKED_IN"})).await.expect(200);
        check_out_on_account(&s, &org, &id).await;
        folios.push(r["folio"]["id"].as_str().unwrap().to_string());
    }
    let recipient = json!({"recipient": {"kind": "COMPANY", "name": "Walk-in guest"}});
    // On PostgreSQL half go to a second `frontdesk serve` process on the same database.
    let second = match s.engine {
        Engine::Postgres => Some(spawn(s.database_url()).await),
        Engine::Sqlite => None,
    };
    let client = reqwest::Client::new();
    let requests = folios.iter().enumerate().map(|(n, folio)| {
        let base = match (&second, n % 2) {
            (Some(p), 1) => p.base.clone(),
            _ => s.base.clone(),
        };
        let request = client
            .post(format!("{base}/api/folios/{folio}/invoices"))
            .header("authorization", format!("Token {}", org.token))
            .json(&recipient);
        async move {
            let started = std::time::Instant::now();
            let answer = request.send().await.unwrap();
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.unwrap();
            (status, body, started.elapsed())
        }
    });
    let answers = futures::future::join_all(requests).await;
    let year = chrono::Utc::now().format("%Y").to_string();
    let mut numbers = BTreeSet::new();
    for (status, body, _) in &answers {
        assert_eq!(*status, 201, "{body}");
        numbers.insert(body["number"].as_str().unwrap().to_string());
    }
    let expected: BTreeSet<String> = (1..=50).map(|n| format!("RE-{year}-{n:06}")).collect();
    assert_eq!(numbers, expected, "fifty distinct, consecutive numbers");
    drop(second);
}

async fn who_may_issue_and_read_invoices(s: TestServer) {
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    check_out_on_account(&s, &org, &reservation).await;
    let reader = Auth::Key(s.key(&org, &[Scope::FoliosRead], None).await);
    let writer = Auth::Key(s.key(&org, &[Scope::InvoicesWrite], None).await);
    let elsewhere = s.hotel(&org, "Elsewhere").await;
    let pinned = Auth::Key(s.key(&org, &[Scope::FoliosRead, Scope::InvoicesWrite], Some(&elsewhere)).await);
    s.post(&format!("/api/folios/{folio}/invoices"), &reader, json!({})).await.expect(403);
    s.post(&format!("/api/folios/{folio}/invoices"), &pinned, json!({})).await.expect(404);
    let invoice = s.post(&format!("/api/folios/{folio}/invoices"), &writer, json!({})).await.expect(201).body;
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(invoice["issuedBy"].as_str().unwrap().split(':').next(), Some("api_key"));
    s.get(&format!("/api/invoices/{id}"), &reader).await.expect(200);
    s.get(&format!("/api/invoices/{id}"), &writer).await.expect(403);
    s.get(&format!("/api/invoices/{id}"), &pinned).await.expect(404);
    s.get(&format!("/api/invoices/{id}"), &s.org("Other").await.auth()).await.expect(404);
    s.post(&format!("/api/invoices/{id}/cancel"), &reader, json!({"reason": "No"})).await.expect(403);
    let listed = s.request(Method::GET, "/api/invoices", &pinned, None).await.expect(200).body;
    assert_eq!(listed, json!([]), "a key pinned to another hotel lists none");
}

async fn the_accountant_exports_invoices_as_json_and_csv(s: TestServer) {
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    check_out_on_account(&s, &org, &reservation).await;
    let invoice = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(201).body;
    let id = invoice["id"].as_str().unwrap();
    s.post(&format!("/api/invoices/{id}/cancel"), &org.auth(), json!({"reason": "Typo"})).await.expect(201);
    let period = format!("hotelId={}&dateFrom={}&dateTo={}", h.0, day(0), day(0));
    let export = s.get(&format!("/api/reports/invoices?{period}"), &org.auth()).await.expect(200).body;
    let rows = export["invoices"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let year = chrono::Utc::now().format("%Y").to_string();
    assert_eq!(rows[0]["cancelledByNumber"], json!(format!("RE-{year}-000002")));
    assert_eq!(rows[1]["cancelsNumber"], json!(format!("RE-{year}-000001")));
    assert_eq!((&rows[0]["totalGross"], &rows[1]["totalGross"]), (&json!(10_600), &json!(-10_600)));
    let csv = s
        .client
        .get(format!("{}/api/reports/invoices?{period}", s.base))
        .header("authorization", format!("Token {}", org.token))
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let today = day(0);
    assert!(
        csv.contains(&format!(
            "RE-{year}-000001,INVOICE,{today},Łukasz Żółć,,EUR,7,93.46,6.54,100.00,99.46,6.54,106.00,,RE-{year}-000002\n"
        )),
        "{csv}"
    );
    assert!(
        csv.contains(&format!("RE-{year}-000002,CANCELLATION,{today},Łukasz Żółć,,EUR,0,-6.00,0.00,-6.00")),
        "{csv}"
    );
    s.get(&format!("/api/reports/invoices?hotelId={}&dateFrom={}", h.0, day(0)), &org.auth()).await.expect(400);
}

async fn an_invoice_is_e_mailed_with_its_pdf_attached(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) =
        TestServer::configured(engine, crate::common::smtp::sending_to(&smtp, "Spree <desk@spree.example>")).await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    check_out_on_account(&s, &org, &reservation).await;
    let invoice =
        s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({"language": "de"})).await.expect(201).body;
    let id = invoice["id"].as_str().unwrap();
    let number = invoice["number"].as_str().unwrap();
    // The guest has no e-mail address yet: nothing to send to.
    s.post(&format!("/api/invoices/{id}/send"), &org.auth(), json!({})).await.expect(409);
    let guest =
        s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body["guestId"].clone();
    let guest = guest.as_str().unwrap();
    s.put(&format!("/api/guests/{guest}"), &org.auth(), json!({"email": "lukasz@example.com"})).await.expect(200);
    let queued = s.post(&format!("/api/invoices/{id}/send"), &org.auth(), json!({})).await.expect(202).body;
    assert_eq!(queued["status"], json!("pending"));
    let mail = smtp.wait_for("lukasz@example.com", number, 1, WAIT).await;
    use mail_parser::MimeHeaders;
    let parsed = mail[0].parsed();
    assert!(mail[0].subject().starts_with("Ihre Rechnung"), "in the invoice's language: {}", mail[0].subject());
    assert!(mail[0].text().contains(&format!("Rechnung {number} über EUR 106.00")), "{}", mail[0].text());
    let attachment = parsed.attachments().next().expect("the PDF is attached");
    assert_eq!(attachment.attachment_name(), Some(format!("{number}.pdf").as_str()));
    let text = pdf_text(attachment.contents());
    assert!(text.contains(number) && text.contains("DE123456789"), "{text}");
    // The PDF sent is the PDF served.
    assert_eq!(attachment.contents(), pdf(&s, &org, id).await.as_slice());
}

async fn anonymising_the_guest_leaves_issued_invoices_as_issued(s: TestServer) {
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    s.put(
        &format!("/api/reservations/{reservation}"),
        &org.auth(),
        json!({"notes": "Allergic to nuts; Łukasz's wife"}),
    )
    .await
    .expect(200);
    check_out_on_account(&s, &org, &reservation).await;
    let invoice = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(201).body;
    let id = invoice["id"].as_str().unwrap();
    let before_pdf = pdf(&s, &org, id).await;
    let guest =
        s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body["guestId"].clone();
    let guest = guest.as_str().unwrap();
    s.post(&format!("/api/guests/{guest}/anonymise"), &s.org("Other").await.auth(), json!({})).await.expect(404);
    let reader = Auth::Key(s.key(&org, &[Scope::GuestsRead], None).await);
    s.post(&format!("/api/guests/{guest}/anonymise"), &reader, json!({})).await.expect(403);
    let erased = s.post(&format!("/api/guests/{guest}/anonymise"), &org.auth(), json!({})).await.expect(200).body;
    assert_eq!((&erased["firstName"], &erased["lastName"]), (&json!("Anonymised"), &json!("guest")));
    for field in ["email", "phone", "street", "postalCode", "city", "country", "notes"] {
        assert_eq!(erased[field], Value::Null, "{field} is cleared");
    }
    let stay = s.get(&format!("/api/reservations/{reservation}"), &org.auth()).await.expect(200).body;
    assert_eq!(stay["notes"], Value::Null, "the stay's notes are cleared");
    // The invoice keeps its recipient as issued, and its PDF its bytes.
    let kept = s.get(&format!("/api/invoices/{id}"), &org.auth()).await.expect(200).body;
    assert_eq!(kept["recipient"]["name"], json!("Łukasz Żółć"));
    assert_eq!(kept["recipient"]["address"]["street"], json!("ul. Długa 5"));
    assert_eq!(pdf(&s, &org, id).await, before_pdf);
}

async fn the_desk_issues_finds_downloads_and_cancels_an_invoice(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    let stay_page = format!("/hotels/{}/reservations/{reservation}", h.0);
    // Before check-out the preview says why it cannot be issued yet.
    b.goto(&format!("{stay_page}/invoice")).await;
    b.wait_for_text("It cannot be issued yet").await;
    assert!(b.page_text().await.contains("check the guest out first"));
    check_out_on_account(&s, &org, &reservation).await;
    // From the folio: the preview in German, to a company, then issued.
    b.goto(&stay_page).await;
    b.click_text("a", "Issue an invoice").await;
    b.wait_for_text("Update the preview").await;
    b.select("#inv-language", "de").await;
    b.select("#inv-to", "company").await;
    b.fill("#inv-name", "Acme GmbH").await;
    b.fill("#inv-street", "Hauptstr. 2").await;
    b.fill("#inv-postal", "80331").await;
    b.fill("#inv-city", "München").await;
    b.fill("#inv-country", "DE").await;
    b.click_text("button", "Update the preview").await;
    b.wait_for_text("Acme GmbH").await;
    let year = chrono::Utc::now().format("%Y").to_string();
    let number = format!("RE-{year}-000001");
    let text = b.page_text().await;
    assert!(text.contains(&format!("Issue invoice {number}")) && text.contains("EUR 106.00"), "{text}");
    b.assert_page_ok("the invoice preview").await;
    if engine == Engine::Sqlite {
        b.screenshot("invoice-preview").await;
    }
    b.click_text("button", &format!("Issue invoice {number}")).await;
    b.wait_for_text(&format!("Invoice {number} issued.")).await;
    let href = b.find("a[download]").await.attr("href").await.unwrap().unwrap();
    assert!(href.ends_with("/pdf"), "{href}");
    b.assert_page_ok("an invoice").await;
    if engine == Engine::Sqlite {
        b.screenshot("invoice").await;
    }
    let issued = s.get(&format!("/api/folios/{folio}/invoices"), &org.auth()).await.expect(200).body;
    assert_eq!(issued[0]["recipient"]["name"], json!("Acme GmbH"));
    assert_eq!(issued[0]["language"], json!("de"));
    // The PDF the page links is the invoice's.
    let bytes = b.fetch_bytes(&href).await;
    assert!(pdf_text(&bytes).contains(&number));
    // Cancelled with a reason: the page of the cancellation invoice.
    b.fill("#cancel-reason", "Wrong company").await;
    b.click_text("button", "Cancel with a cancellation invoice").await;
    let cancellation = format!("RE-{year}-000002");
    b.wait_for_text(&format!("is cancelled by {cancellation}")).await;
    assert!(b.page_text().await.contains("EUR -106.00"));
    // The list finds both by number, and the folio links them.
    b.goto(&format!("/hotels/{}/invoices?number=000001", h.0)).await;
    b.wait_for_text(&format!("Cancelled by {cancellation}")).await;
    b.assert_page_ok("the invoice list").await;
    if engine == Engine::Sqlite {
        b.screenshot("invoices").await;
    }
    b.goto(&stay_page).await;
    b.wait_for_text(&format!("Cancellation invoice {cancellation}")).await;
    assert!(b.page_text().await.contains("Issue an invoice"), "the lines are open again");
    b.close().await;
    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    let id = issued[0]["id"].as_str().unwrap();
    phone.goto(&format!("/hotels/{}/invoices/{id}", h.0)).await;
    phone.wait_for_text("Download PDF").await;
    phone.assert_page_ok("an invoice on a phone").await;
    phone.goto(&format!("{stay_page}/invoice")).await;
    phone.wait_for_text("Update the preview").await;
    phone.assert_page_ok("the invoice preview on a phone").await;
    phone.close().await;
}

async fn invoice_created_reaches_only_subscriptions_that_name_it(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = invoicing_hotel(&s, &org, 2).await;
    let named = Receiver::start().await;
    let contract = Receiver::start().await;
    for (receiver, events) in [(&named, json!(["invoice.created"])), (&contract, json!([]))] {
        let body = json!({"hotelId": h.0, "url": receiver.url, "events": events});
        s.post("/api/webhooksubscriptions", &org.auth(), body).await.expect(200);
    }
    let (reservation, folio) = checked_in_stay(&s, &org, &h, 1).await;
    check_out_on_account(&s, &org, &reservation).await;
    let invoice = s.post(&format!("/api/folios/{folio}/invoices"), &org.auth(), json!({})).await.expect(201).body;
    let id = invoice["id"].as_str().unwrap();
    s.post(&format!("/api/invoices/{id}/cancel"), &org.auth(), json!({"reason": "Typo"})).await.expect(201);
    let events = |r: &Receiver| r.received().iter().map(|d| d.json()).collect::<Vec<Value>>();
    let deadline = tokio::time::Instant::now() + WAIT;
    while events(&named).len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "deliveries: {:?}", events(&named));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Deliveries of two events may arrive in either order (each is its own request; a retry may overtake).
    let mut kinds: Vec<(String, String)> = events(&named)
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap_or_default().to_string(),
                e["data"]["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    kinds.sort();
    let expected = [("invoice.created", "CANCELLATION"), ("invoice.created", "INVOICE")];
    assert_eq!(kinds, expected.map(|(e, k)| (e.to_string(), k.to_string())));
    let issued =
        events(&named).into_iter().find(|e| e["data"]["kind"] == json!("INVOICE")).expect("the invoice's event");
    assert_eq!(issued["data"]["number"], invoice["number"]);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(events(&contract).iter().all(|e| e["event"] != json!("invoice.created")), "the contract's kinds only");
}
