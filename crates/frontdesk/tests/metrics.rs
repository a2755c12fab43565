//! `GET /metrics`: behind the metrics token on the main listener (404 without one), on its own address with
//! `--metrics-listen`; requests labelled by route template (never an id), pools, the outbox, rate-limit refusals,
//! availability copies, webhook deliveries and memory. On both engines.
//!
//! The metrics recorder is global to a process, so the tests of this file take turns ([`turn`]): a scrape sets
//! the state gauges from its own server's database, and counters are compared before and after.

// The integration tests' helpers (tests/it/common), shared with this binary, which uses only some of them.
#[path = "it/common/mod.rs"]
#[allow(dead_code)]
mod common;

use std::time::Duration;

use common::receiver::Receiver;
use common::{day, Auth, TestDatabase, TestServer};
use frontdesk::store::Engine;
use serde_json::json;

on_both_engines_configured!(
    metrics_need_the_token_on_the_main_listener,
    without_a_token_metrics_are_an_unknown_path,
    requests_are_counted_by_route_template_never_by_id,
    a_scrape_shows_pools_outbox_copies_and_memory,
    rate_limit_refusals_are_counted_by_kind,
    availability_copy_reloads_are_counted,
    webhook_deliveries_are_counted_by_result,
    metrics_listen_serves_its_own_address_without_a_token,
);

const TOKEN: &str = "metrics-token-0123456789";

static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn turn() -> tokio::sync::MutexGuard<'static, ()> {
    TURN.lock().await
}

async fn server(engine: Engine, configure: impl FnOnce(&mut frontdesk::config::Config)) -> Option<TestServer> {
    TestServer::configured(engine, |c| {
        c.metrics_token = Some(TOKEN.into());
        configure(c);
    })
    .await
}

/// The scrape's text (asserting it is served).
async fn scrape(s: &TestServer) -> String {
    let res = s.client.get(format!("{}/metrics", s.base)).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let content_type = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    res.text().await.unwrap()
}

/// The value of the sample `name{labels}` (labels as rendered, in order; `""` for none), if present.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    text.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, rest) = match series.split_once('{') {
            Some((metric, rest)) => (metric, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        if metric != name {
            return None;
        }
        let have: Vec<&str> = if rest.is_empty() { Vec::new() } else { rest.split(',').collect() };
        let matches = wanted.iter().all(|w| have.contains(&w.as_str()));
        matches.then(|| value.parse().ok()).flatten()
    })
}

fn counter(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(text, name, labels).unwrap_or(0.0)
}

async fn metrics_need_the_token_on_the_main_listener(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |_| {}).await else { return };
    for auth in [
        Auth::None,
        Auth::Raw("Bearer wrong-token-0123456789".into()),
        Auth::Raw(format!("Bearer {TOKEN}x")),
        Auth::Raw(format!("Basic {TOKEN}")),
        Auth::Raw("Bearer".into()),
    ] {
        let refused = s.get("/metrics", &auth).await.expect(401);
        assert_eq!(refused.header("www-authenticate"), Some(r#"Bearer realm="metrics""#), "{auth:?}");
    }
    let text = scrape(&s).await;
    assert!(text.contains("# TYPE frontdesk_http_requests_total counter"), "{text}");
    assert_eq!(sample(&text, "frontdesk_build_info", &[("version", env!("CARGO_PKG_VERSION"))]), Some(1.0));
    // Only GET: the route exists, other methods are not allowed.
    s.post("/metrics", &Auth::Raw(format!("Bearer {TOKEN}")), json!({})).await.expect(405);
}

async fn without_a_token_metrics_are_an_unknown_path(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    s.get("/metrics", &Auth::None).await.expect(404);
    s.get("/metrics", &Auth::Raw(format!("Bearer {TOKEN}"))).await.expect(404);
    // With only --metrics-listen, the main listener does not serve them either.
    let Some(s) = TestServer::configured(engine, |c| c.metrics_listen = Some("127.0.0.1:0".parse().unwrap())).await
    else {
        return;
    };
    s.get("/metrics", &Auth::Raw(format!("Bearer {TOKEN}"))).await.expect(404);
}

async fn requests_are_counted_by_route_template_never_by_id(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let before = scrape(&s).await;
    let labels = |method, route, status| [("method", method), ("route", route), ("status", status)];
    // One scheme for every route, the API's and the pages': each parameter is `{id}`.
    let hotel_route = labels("GET", "/api/hotels/{id}", "200");
    let missing_route = labels("GET", "/api/reservations/{id}", "404");
    let booking_page = labels("GET", "/book/{id}", "404");
    let receipt_page = labels("GET", "/book/{id}/requests/{id}", "404");
    let unmatched = labels("GET", "unmatched", "404");

    s.get(&format!("/api/hotels/{hotel}"), &org.auth()).await.expect(200);
    s.get(&format!("/api/hotels/{hotel}"), &org.auth()).await.expect(200);
    let missing = "0190a0a0-0000-7000-8000-00000000beef";
    s.get(&format!("/api/reservations/{missing}"), &org.auth()).await.expect(404);
    // Booking pages of a hotel that does not exist: unknown, under their routes.
    let page = s.client.get(format!("{}/book/{missing}", s.base)).send().await.unwrap();
    assert_eq!(page.status(), 404);
    let page = s.client.get(format!("{}/book/{missing}/requests/{missing}", s.base)).send().await.unwrap();
    assert_eq!(page.status(), 404);
    let unknown = "no-such-thing-4f1d2c";
    s.get(&format!("/api/{unknown}/{missing}"), &Auth::None).await.expect(404);

    let after = scrape(&s).await;
    let total = "frontdesk_http_requests_total";
    assert_eq!(counter(&after, total, &hotel_route) - counter(&before, total, &hotel_route), 2.0, "{after}");
    assert_eq!(counter(&after, total, &missing_route) - counter(&before, total, &missing_route), 1.0, "{after}");
    assert_eq!(counter(&after, total, &booking_page) - counter(&before, total, &booking_page), 1.0, "{after}");
    assert_eq!(counter(&after, total, &receipt_page) - counter(&before, total, &receipt_page), 1.0, "{after}");
    assert_eq!(counter(&after, total, &unmatched) - counter(&before, total, &unmatched), 1.0, "{after}");
    for line in after.lines().filter(|line| line.starts_with(total)) {
        let route = line.split("route=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_default();
        let parameters = route.split('{').skip(1);
        assert!(parameters.clone().all(|p| p.starts_with("id}")), "{route} does not follow the scheme");
    }
    let buckets = "frontdesk_http_request_duration_seconds_count";
    assert!(counter(&after, buckets, &hotel_route) >= 2.0, "{after}");
    assert!(after.contains("frontdesk_http_request_duration_seconds_bucket{"), "{after}");
    for secret in [hotel.as_str(), missing, unknown, org.id.as_str(), org.token.as_str(), org.operator_email.as_str()] {
        assert!(!after.contains(secret), "{secret} appears in the metrics:\n{after}");
    }
}

async fn a_scrape_shows_pools_outbox_copies_and_memory(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    // The dispatcher is off in tests: the event stays in the outbox.
    s.create("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    let events = s.count("outbox_events").await;
    assert!(events >= 1);
    let pools: &[&str] = match engine {
        Engine::Sqlite => &["read", "write"],
        Engine::Postgres => &["shared"],
    };
    // A waiter is counted for the moment any task asks its pool for a connection (the server's own bookkeeping
    // too), so one scrape may catch one; a count that never returns to 0 (a waiter not let go) is what must not be.
    let mut text = scrape(&s).await;
    for _ in 0..20 {
        let waiting = |pool: &&str| sample(&text, "frontdesk_db_pool_waiting", &[("pool", pool)]);
        if pools.iter().all(|pool| waiting(pool) == Some(0.0)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        text = scrape(&s).await;
    }
    for pool in pools {
        for name in ["frontdesk_db_pool_connections_in_use", "frontdesk_db_pool_connections_idle"] {
            assert!(sample(&text, name, &[("pool", pool)]).is_some_and(|v| v >= 0.0), "{name} {pool}: {text}");
        }
        let max = sample(&text, "frontdesk_db_pool_connections_max", &[("pool", pool)]);
        assert!(max.is_some_and(|v| v >= 1.0), "{text}");
        assert_eq!(sample(&text, "frontdesk_db_pool_waiting", &[("pool", pool)]), Some(0.0), "{text}");
    }
    // The scrape itself holds a read connection while it counts the outbox.
    let in_use = sample(&text, "frontdesk_db_pool_connections_in_use", &[("pool", pools[0])]).unwrap_or(0.0);
    assert!(in_use >= 0.0);
    assert_eq!(sample(&text, "frontdesk_webhook_outbox_events", &[]), Some(events as f64), "{text}");
    assert!(sample(&text, "frontdesk_webhook_outbox_oldest_event_age_seconds", &[]).is_some_and(|v| v >= 0.0));
    assert_eq!(sample(&text, "frontdesk_availability_copies", &[]), Some(0.0), "{text}");
    if cfg!(target_os = "linux") {
        let rss = sample(&text, "process_resident_memory_bytes", &[]);
        assert!(rss.is_some_and(|bytes| bytes > 1_000_000.0), "{text}");
        // Split by kind, adding up to the whole.
        let anonymous = sample(&text, "frontdesk_process_anonymous_memory_bytes", &[]).expect("anonymous memory");
        let file_backed = sample(&text, "frontdesk_process_file_backed_memory_bytes", &[]).expect("file-backed");
        assert!(anonymous > 0.0 && file_backed > 0.0, "{text}");
        assert_eq!(Some(anonymous + file_backed), rss, "{text}");
    }
    for help in ["# HELP frontdesk_webhook_outbox_events", "# HELP frontdesk_db_pool_waiting"] {
        assert!(text.contains(help), "{help}: {text}");
    }
}

/// SQLite reads its database through a memory map: reading a 34 MB database (20,000 guests) grows the file-backed
/// memory by at least half that (51 MB in the runs so far: each connection maps the file), and the anonymous memory
/// (the process's own) far less (about 2 MB); the resident total alone could not tell them apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_s_mapped_database_counts_as_file_backed_memory_not_anonymous() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let _turn = turn().await;
    let Some(s) = server(Engine::Sqlite, |_| {}).await else { return };
    let org = s.org("Acme").await;
    // The token's first use is recorded (a write) as it happens: let it happen before the measured read.
    s.get("/api/hotels", &org.auth()).await.expect(200);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut tx = s.db.begin_write().await.unwrap();
    frontdesk::store::query(
        "INSERT INTO guests (id, organization_id, first_name, last_name, notes, created_at, updated_at) \
         WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20000) \
         SELECT printf('g-%07d', x), $1, 'Ada', 'Lovelace', printf('%.1000c', 'x'), $2, $2 FROM n",
    )
    .bind(&org.id)
    .bind("2026-01-01T12:00:00.000000Z")
    .execute(tx.conn())
    .await
    .unwrap();
    tx.commit().await.unwrap();
    // Out of the write-ahead log (read with read(2)) into the database file (read through the map).
    let mut conn = s.db.read().await.unwrap();
    frontdesk::store::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await.unwrap();
    drop(conn);
    let bytes = std::fs::metadata(s.database_url().trim_start_matches("sqlite://")).unwrap().len() as f64;
    assert!(bytes > 20e6, "{bytes}");

    let memory = |text: &str, name: &str| sample(text, name, &[]).expect(name);
    let (anonymous, file_backed) =
        ("frontdesk_process_anonymous_memory_bytes", "frontdesk_process_file_backed_memory_bytes");
    let before = scrape(&s).await;
    // Read piece by piece and let go: the test's own memory is the process's too.
    let everyone =
        s.client.get(format!("{}/api/guests", s.base)).header("authorization", format!("Token {}", org.token));
    let mut everyone = everyone.send().await.unwrap();
    assert_eq!(everyone.headers()["x-total-count"], "20000");
    let mut read = 0;
    while let Some(piece) = everyone.chunk().await.unwrap() {
        read += piece.len();
    }
    assert!(read as f64 > 20e6, "{read}");
    let after = scrape(&s).await;
    let mapped = memory(&after, file_backed) - memory(&before, file_backed);
    let own = memory(&after, anonymous) - memory(&before, anonymous);
    assert!(mapped > bytes / 2.0, "file-backed grew by {mapped} bytes reading a {bytes}-byte database");
    assert!(own < mapped, "anonymous memory grew by {own} bytes, file-backed by {mapped}");
}

async fn rate_limit_refusals_are_counted_by_kind(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |c| {
        c.rate_limit_per_minute = 1;
        c.operator_rate_limit_per_minute = 3;
        c.public_rate_limit_per_minute = 1;
    })
    .await
    else {
        return;
    };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await; // operator request 1
    let key = Auth::Key(s.key(&org, &[], None).await); // 2
    let before = scrape(&s).await;
    let refusals = "frontdesk_rate_limit_refusals_total";

    s.get("/api/hotels", &org.auth()).await.expect(200); // 3
    s.get("/api/hotels", &org.auth()).await.expect(429);
    s.get("/api/hotels", &key).await.expect(200);
    s.get("/api/hotels", &key).await.expect(429);
    s.get("/api/hotels", &key).await.expect(429);
    let search = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(3), day(4));
    s.get(&search, &Auth::None).await.expect(200);
    s.get(&search, &Auth::None).await.expect(429);

    let after = scrape(&s).await;
    for (kind, refused) in [("operator", 1.0), ("api_key", 2.0), ("public", 1.0)] {
        let labels = [("kind", kind)];
        assert_eq!(
            counter(&after, refusals, &labels) - counter(&before, refusals, &labels),
            refused,
            "{kind}: {after}"
        );
    }
    let status = [("method", "GET"), ("route", "/api/hotels"), ("status", "429")];
    assert!(counter(&after, "frontdesk_http_requests_total", &status) >= 3.0, "{after}");
    assert!(!after.contains("127.0.0.1"), "no address in a label: {after}");
}

async fn availability_copy_reloads_are_counted(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let room_type =
        s.create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double", "maxOccupancy": 2})).await;
    s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": "101"})).await.expect(200);
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "BAR"}))
        .await;
    let price = |amount: i64| json!({"values": [{"ratePlanId": plan, "date": day(3), "price": amount}]});
    s.post("/api/dailyRates", &org.auth(), price(9000)).await.expect(200);
    let search = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(3), day(4));
    let before = scrape(&s).await;
    let (loads, reloads) = ("frontdesk_availability_copy_loads_total", "frontdesk_availability_copy_reloads_total");

    let offers = s.get(&search, &Auth::None).await.expect(200);
    assert_eq!(offers.body[0]["totalPrice"], json!(9000), "{}", offers.body);
    s.get(&search, &Auth::None).await.expect(200); // from the copy: nothing loaded
    let loaded = scrape(&s).await;
    let catalogue = [("part", "catalogue")];
    assert_eq!(counter(&loaded, loads, &catalogue) - counter(&before, loads, &catalogue), 1.0, "{loaded}");
    assert!(counter(&loaded, loads, &[("part", "page")]) > counter(&before, loads, &[("part", "page")]));
    assert_eq!(counter(&loaded, reloads, &[]), counter(&before, reloads, &[]), "{loaded}");
    assert_eq!(sample(&loaded, "frontdesk_availability_copies", &[]), Some(1.0), "{loaded}");

    s.post("/api/dailyRates", &org.auth(), price(9500)).await.expect(200);
    let offers = s.get(&search, &Auth::None).await.expect(200);
    assert_eq!(offers.body[0]["totalPrice"], json!(9500), "{}", offers.body);
    let reloaded = scrape(&s).await;
    assert_eq!(counter(&reloaded, reloads, &[]) - counter(&loaded, reloads, &[]), 1.0, "{reloaded}");
    assert_eq!(counter(&reloaded, loads, &catalogue) - counter(&loaded, loads, &catalogue), 1.0, "{reloaded}");
    assert_eq!(sample(&reloaded, "frontdesk_availability_copies", &[]), Some(1.0), "{reloaded}");
}

async fn webhook_deliveries_are_counted_by_result(engine: Engine) {
    let _turn = turn().await;
    let Some(s) = server(engine, |c| c.webhook_dispatcher = true).await else { return };
    let org = s.org("Acme").await;
    let hotel = s.hotel(&org, "Sea").await;
    let receiver = Receiver::start().await;
    let subscription = json!({"hotelId": hotel, "url": format!("{}/hooks", receiver.url), "events": []});
    s.post("/api/webhooksubscriptions", &org.auth(), subscription).await.expect(200);
    let before = scrape(&s).await;
    let (deliveries, durations) =
        ("frontdesk_webhook_deliveries_total", "frontdesk_webhook_delivery_duration_seconds_count");
    let success = [("result", "success")];

    s.create("/api/guests", &org.auth(), json!({"firstName": "Ana", "lastName": "Silva"})).await;
    receiver.wait_for(1, Duration::from_secs(15)).await;
    // The attempt is counted once the receiver's answer is read: look again until it is (bounded).
    let mut after = scrape(&s).await;
    for _ in 0..100 {
        if counter(&after, deliveries, &success) > counter(&before, deliveries, &success) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = scrape(&s).await;
    }
    assert_eq!(counter(&after, deliveries, &success) - counter(&before, deliveries, &success), 1.0, "{after}");
    assert!(counter(&after, durations, &success) >= 1.0, "{after}");
    assert!(!after.contains(&receiver.url), "no URL in a label");
}

async fn metrics_listen_serves_its_own_address_without_a_token(engine: Engine) {
    let _turn = turn().await;
    let Some(database) = TestDatabase::create_or_skip(engine).await else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let process = common::process::spawn_with(&database.url, &[("FRONTDESK_METRICS_LISTEN", address.as_str())]).await;
    let client = reqwest::Client::new();
    let metrics = format!("http://{address}/metrics");
    client.get(format!("{}/healthz", process.base)).send().await.unwrap();

    let res = client.get(&metrics).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    let healthz = [("method", "GET"), ("route", "/healthz"), ("status", "200")];
    assert!(counter(&text, "frontdesk_http_requests_total", &healthz) >= 1.0, "{text}");
    assert!(sample(&text, "frontdesk_webhook_outbox_events", &[]).is_some(), "{text}");
    assert!(text.contains("frontdesk_db_pool_connections_max{pool="), "{text}");

    // Nothing else on that address; and the main listener, without a token configured, does not serve them.
    let other = client.get(format!("http://{address}/api/hotels")).send().await.unwrap();
    assert_eq!(other.status(), 404);
    let main = client.get(format!("{}/metrics", process.base)).send().await.unwrap();
    assert_eq!(main.status(), 404);
    assert_eq!(main.headers().get("content-type").unwrap(), "application/problem+json");
    drop(process);
}

/// The shipped dashboard is valid JSON and every metric it queries exists and is documented.
#[test]
fn the_dashboard_and_the_documentation_name_real_metrics() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/");
    let dashboard = std::fs::read_to_string(format!("{root}grafana-dashboard.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    assert!(parsed["panels"].as_array().is_some_and(|p| !p.is_empty()));
    let documentation = std::fs::read_to_string(format!("{root}operations.md")).unwrap();
    let known = frontdesk_metric_names();
    let mut used = Vec::new();
    for word in dashboard.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("frontdesk_") || word.starts_with("process_") {
            let base = ["_bucket", "_count", "_sum"].iter().fold(word, |w, suffix| w.strip_suffix(suffix).unwrap_or(w));
            assert!(known.contains(&base), "the dashboard queries {word}, which the service does not export");
            used.push(base);
        }
    }
    for name in &known {
        assert!(documentation.contains(&format!("| `{name}` |")), "{name} is not documented in docs/operations.md");
        assert!(used.contains(name), "{name} is on no panel of the dashboard");
    }
}

fn frontdesk_metric_names() -> Vec<&'static str> {
    use frontdesk::metrics::names::*;
    vec![
        HTTP_REQUESTS,
        HTTP_DURATION,
        DB_POOL_IN_USE,
        DB_POOL_IDLE,
        DB_POOL_MAX,
        DB_POOL_WAITING,
        OUTBOX_EVENTS,
        OUTBOX_OLDEST_AGE,
        WEBHOOK_DELIVERIES,
        WEBHOOK_DELIVERY_DURATION,
        RATE_LIMIT_REFUSALS,
        RATE_LIMIT_REDIS_FAILURES,
        RATE_LIMIT_REDIS_UP,
        AVAILABILITY_COPIES,
        AVAILABILITY_LOADS,
        AVAILABILITY_RELOADS,
        MCP_TOOL_CALLS,
        MCP_TOOL_DURATION,
        SCRAPE_ERRORS,
        BUILD_INFO,
        PROCESS_RESIDENT_MEMORY,
        PROCESS_ANONYMOUS_MEMORY,
        PROCESS_FILE_BACKED_MEMORY,
    ]
}
