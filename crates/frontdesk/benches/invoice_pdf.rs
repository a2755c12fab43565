//! Rendering an issued invoice as a PDF (`documents::invoice_pdf::render`): a 30-line invoice rendered 200 times,
//! next to serialising the same document to JSON in the same run (the machine's noise falls on both; the ratio
//! says what a PDF costs over the JSON the API answers with). No server and no database: the renderer alone.
//!
//! `cargo bench -p frontdesk --bench invoice_pdf`. Target (docs/invoices.md): p50 well under 50 ms.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use frontdesk::documents::invoice_pdf;
use frontdesk::model::folios::PaymentMethod;
use frontdesk::model::invoices::{
    InvoiceDocument, InvoiceIssuer, InvoiceKind, InvoiceLanguage, InvoiceLine, InvoicePayment, InvoiceRecipient,
    InvoiceVatTotal, PostalAddress, RecipientKind, ServicePeriod,
};

const LINES: usize = 30;
const RUNS: usize = 200;
/// Renderings before measuring: the typefaces are read once per process, on the first.
const WARM_UP: usize = 5;

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, d).expect("a December day")
}

/// A German invoice of `LINES` lines (rooms, breakfasts, extras) with two payments, totals consistent.
fn invoice() -> InvoiceDocument {
    let templates: [(&str, i64, i64, i64); 5] = [
        ("Übernachtung Doppelzimmer Hafenblick", 1, 14_900, 700),
        ("Frühstücksbuffet für François Müller und Γιώργος Παπαδόπουλος", 2, 1_950, 1_900),
        ("Minibar", 3, 450, 1_900),
        ("Tiefgarage", 1, 2_200, 1_900),
        ("Kulturförderabgabe (Дмитрий Иванов)", 1, 745, 0),
    ];
    let lines: Vec<InvoiceLine> = (0..LINES)
        .map(|n| {
            let (description, quantity, unit_net, rate) = templates[n % templates.len()];
            let net = quantity * unit_net;
            let vat = (net * rate + 5_000) / 10_000;
            InvoiceLine {
                folio_line_id: format!("fl-{n}"),
                service_date: day(1 + (n / templates.len()) as u32),
                description: description.into(),
                quantity,
                unit_net,
                vat_rate_basis_points: rate,
                net,
                vat,
                gross: net + vat,
            }
        })
        .collect();
    let mut vat_totals: Vec<InvoiceVatTotal> = Vec::new();
    for rate in [0, 700, 1_900] {
        let of_rate = lines.iter().filter(|l| l.vat_rate_basis_points == rate);
        let (net, vat, gross) = of_rate.fold((0, 0, 0), |(n, v, g), l| (n + l.net, v + l.vat, g + l.gross));
        vat_totals.push(InvoiceVatTotal { vat_rate_basis_points: rate, net, vat, gross });
    }
    let (total_net, total_vat, total_gross) =
        vat_totals.iter().fold((0, 0, 0), |(n, v, g), t| (n + t.net, v + t.vat, g + t.gross));
    let payments = vec![
        InvoicePayment {
            paid_on: day(1),
            method: PaymentMethod::Card,
            reference: Some("AUTH 448213".into()),
            amount: 20_000,
        },
        InvoicePayment { paid_on: day(6), method: PaymentMethod::BankTransfer, reference: None, amount: 50_000 },
    ];
    let paid = payments.iter().map(|p| p.amount).sum::<i64>();
    InvoiceDocument {
        number: "RE-2026-000042".into(),
        kind: InvoiceKind::Invoice,
        cancels_number: None,
        cancellation_reason: None,
        language: InvoiceLanguage::De,
        issue_date: day(7),
        service_period: ServicePeriod { from: day(1), to: day(6) },
        currency: "EUR".into(),
        issuer: InvoiceIssuer {
            legal_name: "Harbour Hotels GmbH".into(),
            hotel_name: "Hotel Am Hafen".into(),
            address: PostalAddress {
                street: Some("Kaistraße 12".into()),
                postal_code: Some("20457".into()),
                city: Some("Hamburg".into()),
                country: Some("DE".into()),
            },
            vat_id: "DE123456789".into(),
            tax_number: Some("27/123/45678".into()),
        },
        recipient: InvoiceRecipient {
            kind: RecipientKind::Guest,
            name: "Łukasz Żółć".into(),
            address: PostalAddress {
                street: Some("ul. Piękna 7".into()),
                postal_code: Some("00-549".into()),
                city: Some("Warszawa".into()),
                country: Some("PL".into()),
            },
            vat_id: None,
        },
        reservation_reference: "HAF-7Q2K9".into(),
        lines,
        vat_totals,
        total_net,
        total_vat,
        total_gross,
        payments,
        paid,
        balance_due: total_gross - paid,
        payment_terms: Some("Zahlbar sofort nach Erhalt ohne Abzug.".into()),
        note: None,
    }
}

/// The `p`-th percentile of sorted `samples`.
fn percentile(samples: &[Duration], p: f64) -> Duration {
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index.min(samples.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `RUNS` timings of `work`, sorted.
fn measure(mut work: impl FnMut() -> usize) -> (Vec<Duration>, usize) {
    let mut size = 0;
    let mut samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            size = black_box(work());
            started.elapsed()
        })
        .collect();
    samples.sort_unstable();
    (samples, size)
}

fn main() {
    let doc = invoice();
    for _ in 0..WARM_UP {
        black_box(invoice_pdf::render(&doc).expect("render"));
    }
    let (pdf, pdf_bytes) = measure(|| invoice_pdf::render(black_box(&doc)).expect("render").len());
    let (json, json_bytes) = measure(|| serde_json::to_vec(black_box(&doc)).expect("serialise").len());

    println!("invoice_pdf: a {LINES}-line invoice, {RUNS} runs each");
    println!(
        "  PDF   p50 {:8.3} ms  p99 {:8.3} ms  ({pdf_bytes} bytes)",
        ms(percentile(&pdf, 0.50)),
        ms(percentile(&pdf, 0.99))
    );
    println!(
        "  JSON  p50 {:8.3} ms  p99 {:8.3} ms  ({json_bytes} bytes)",
        ms(percentile(&json, 0.50)),
        ms(percentile(&json, 0.99))
    );
    println!(
        "  ratio PDF/JSON at p50: {:.0}x",
        percentile(&pdf, 0.50).as_secs_f64() / percentile(&json, 0.50).as_secs_f64().max(1e-9)
    );
}
