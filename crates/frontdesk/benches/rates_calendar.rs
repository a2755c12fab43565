//! The dashboard's rates calendar, on SQLite and PostgreSQL, as a signed-in operator's browser asks for it.
//!
//! The hotel is the availability benchmark's (`support::data::availability_hotel`): 20 room types of 10 rooms, 5 rate
//! plans each (100 plans) priced for a year, 10,000 confirmed stays. Measured, next to `GET /healthz` of the same
//! server in the same run:
//! 1. the calendar of every plan over 14 and 31 nights (20 room types × 5 plans × 31 days = 3,100 cells);
//! 2. a bulk edit of 365 nights × 10 plans (3,650 nights, each changed): its preview, and its apply (the `POST` that
//!    writes all of it in one transaction and answers the redirect).
//!
//! Targets on this 2-core machine: the 31-night calendar p50 under 50 ms; the bulk edit applied under 500 ms.
//!
//! `cargo bench --bench rates_calendar` (`FRONTDESK_BENCH_ENGINES=sqlite` for one engine).

mod support;

use std::time::{Duration, Instant};

use chrono::{Days, TimeDelta, Utc};
use frontdesk::domain::identity;
use frontdesk::store::Engine;
use support::{ms, BenchServer, Stats};

const PAGE_SAMPLES: usize = 100;
const BULK_SAMPLES: usize = 10;

async fn timed_get(server: &BenchServer, cookie: &str, path: &str, samples: usize) -> Stats {
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        let res =
            server.client.get(format!("{}{path}", server.base)).header("cookie", cookie).send().await.expect("request");
        let status = res.status();
        let _ = res.bytes().await;
        assert!(status.is_success(), "{path} answered {status}");
        out.push(started.elapsed());
    }
    Stats::new(out)
}

fn report(name: &str, stats: &Stats, floor: f64) {
    println!("  {name:<52} {}  ({:.0}x /healthz)", stats.summary(), ms(stats.percentile(50.0)) / floor);
}

/// Posts the bulk form; answers the status, the body and how long it took.
async fn post(server: &BenchServer, cookie: &str, path: &str, form: &[(String, String)]) -> (u16, String, Duration) {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let started = Instant::now();
    let res =
        client.post(format!("{}{path}", server.base)).header("cookie", cookie).form(form).send().await.expect("post");
    let status = res.status().as_u16();
    let body = res.text().await.unwrap_or_default();
    (status, body, started.elapsed())
}

async fn run(engine: Engine) {
    let Some(server) = BenchServer::start(engine).await else { return };
    println!("== {engine:?}: 20 room types × 5 rate plans, 10,000 stays");
    let started = Instant::now();
    support::data::availability_hotel(&server, &server.hotel).await;
    eprintln!("  seeded in {:.1} s", started.elapsed().as_secs_f64());
    let operator = identity::create_operator(
        &server.db,
        identity::OperatorIn {
            organization_id: &server.org,
            email: "rates@example.com",
            name: "Revenue",
            password: "bench-password",
        },
    )
    .await
    .expect("operator");
    let token = identity::issue_token(&server.db, operator, TimeDelta::days(1)).await.expect("token").token;
    let cookie = format!("fd_session={token}");
    let csrf = frontdesk::web::session::csrf_for(&token);
    let hotel = server.hotel.clone();

    let healthz = timed_get(&server, &cookie, "/healthz", PAGE_SAMPLES * 2).await;
    let floor = ms(healthz.percentile(50.0));
    report("GET /healthz", &healthz, floor);
    let next_month = Utc::now().date_naive() + Days::new(30);
    for (name, path) in [
        ("Calendar, 100 plans × 14 nights", format!("/hotels/{hotel}/rates")),
        ("Calendar, 100 plans × 31 nights", format!("/hotels/{hotel}/rates?days=31")),
        ("Calendar, 100 plans × 31 nights, next month", format!("/hotels/{hotel}/rates?from={next_month}&days=31")),
    ] {
        report(name, &timed_get(&server, &cookie, &path, PAGE_SAMPLES).await, floor);
    }

    // The bulk edit: 10 plans (those of the first two room types) × 365 nights from tomorrow, a new price each time
    // so that every night changes.
    let plans: Vec<String> = {
        let mut conn = server.db.read().await.expect("connection");
        frontdesk::store::query("SELECT id FROM rate_plans ORDER BY name, id LIMIT 10")
            .fetch_all(&mut conn)
            .await
            .expect("plans")
            .iter()
            .map(|row| row.get("id"))
            .collect()
    };
    let from = Utc::now().date_naive() + Days::new(1);
    let to = from + Days::new(364);
    let path = format!("/hotels/{hotel}/rates/bulk");
    let (mut previews, mut applies) = (Vec::new(), Vec::new());
    for i in 0..BULK_SAMPLES {
        let mut form: Vec<(String, String)> = vec![
            ("_csrf".into(), csrf.clone()),
            ("from".into(), from.to_string()),
            ("to".into(), to.to_string()),
            ("priceAction".into(), "set".into()),
            ("price".into(), format!("{}.00", 200 + i)),
        ];
        for day in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] {
            form.push(("weekdays".into(), day.into()));
        }
        for plan in &plans {
            form.push(("ratePlanIds".into(), plan.clone()));
        }
        let (status, page, took) = post(&server, &cookie, &path, &form).await;
        assert_eq!(status, 200, "preview: {page}");
        assert!(page.contains("This changes 3,650 nights"), "the preview counts every night: {page}");
        previews.push(took);
        let fingerprint = page
            .split("name=\"previewed\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the preview's fingerprint")
            .to_string();
        form.push(("previewed".into(), fingerprint));
        form.push(("step".into(), "apply".into()));
        let (status, page, took) = post(&server, &cookie, &path, &form).await;
        assert_eq!(status, 303, "apply: {page}");
        applies.push(took);
    }
    let written: i64 = {
        let mut conn = server.db.read().await.expect("connection");
        frontdesk::store::query(&format!(
            "SELECT COUNT(*) AS n FROM daily_rates WHERE price = {} AND date >= '{from}' AND date <= '{to}'",
            (200 + BULK_SAMPLES as i64 - 1) * 100
        ))
        .fetch_one(&mut conn)
        .await
        .expect("count")
        .get("n")
    };
    assert_eq!(written, 3650, "the last bulk edit wrote every night");
    report("Bulk edit preview, 10 plans × 365 nights", &Stats::new(previews), floor);
    report("Bulk edit apply, 10 plans × 365 nights (3,650 written)", &Stats::new(applies), floor);
    let healthz = timed_get(&server, &cookie, "/healthz", PAGE_SAMPLES * 2).await;
    report("GET /healthz, after", &healthz, floor);
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        for engine in support::engines() {
            run(engine).await;
        }
    });
}
