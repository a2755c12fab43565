//! The pages themselves: the demo hotel reads well on desktop and phone, the focus ring shows on every background,
//! every page has a favicon and a description (and htmx only where used), other organizations' records are the 404
//! page, and answers are compressed when the client asks.

use crate::common::browser::{Browser, DESKTOP, PHONE};
use crate::common::{delivering, Auth, TestServer, PASSWORD};
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{guest, hotel, no_redirects, stay};

on_both_engines_configured!(
    other_organizations_records_show_the_404_page,
    the_demo_hotel_reads_well_on_desktop_and_phone,
    answers_are_compressed_when_the_client_asks,
    the_focus_ring_shows_on_every_background,
    every_page_has_a_favicon_and_a_description_and_htmx_only_where_used,
);

fn screenshots(s: &TestServer) -> bool {
    s.engine == Engine::Sqlite
}

/// An e-mail address as long as real ones get, without a hyphen to break at: it must wrap where it is shown, not
/// push the page sideways.
const LONG_EMAIL: &str = "annika.lindqvistjohansson.reservations@harbourviewexamplehotels.com";

/// The controls a finger picks with (selects, date fields, the buttons of the rack's date navigation and the hotel
/// switcher), at least 44 px tall on a phone.
const PICKERS: &str = "select, input[type=date], .rack-nav .button, .rack-nav button, .switcher button";

/// The smallest font size of the Today page's occupancy chart as drawn, in CSS pixels (its SVG may be scaled).
async fn smallest_chart_label(b: &Browser) -> f64 {
    let script = "const sizes = [...document.querySelectorAll('.chart svg text, .chart svg tspan')]
                      .filter(t => t.getClientRects().length)
                      .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
                  return sizes.length ? Math.min(...sizes) : 0;";
    b.client.execute(script, vec![]).await.unwrap().as_f64().unwrap()
}

/// Every page of the demo hotel (`serve --demo`'s data) at desktop (1280 px) and phone (375 px) width: none scrolls
/// sideways, axe-core finds no violation on any, the actions of the front desk stay in reach and read in full, a
/// phone's pickers take a finger, the chart's labels are readable; and, on SQLite, the screenshots in
/// `docs/screenshots/` that the README shows.
async fn the_demo_hotel_reads_well_on_desktop_and_phone(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    frontdesk::demo::seed(&s.db).await.unwrap();
    let hotel = first_id(&s, "SELECT id FROM hotels").await;
    let stay = first_id(&s, "SELECT id FROM reservations WHERE status = 'CHECKED_IN' ORDER BY check_in_date, id").await;
    let confirmed =
        first_id(&s, "SELECT id FROM reservations WHERE status = 'CONFIRMED' ORDER BY check_in_date, id").await;
    // The guest of a request waiting in the inbox, with a long e-mail address (shown there and on their page).
    let guest =
        first_id(&s, "SELECT guest_id AS id FROM reservations WHERE status = 'REQUESTED' ORDER BY check_in_date, id")
            .await;
    let login = json!({"email": frontdesk::demo::DEMO_EMAIL, "password": frontdesk::demo::DEMO_PASSWORD});
    let token =
        s.post("/api/auth/login", &Auth::None, login).await.expect(200).body["token"].as_str().unwrap().to_string();
    s.put(&format!("/api/guests/{guest}"), &Auth::Token(token), json!({"email": LONG_EMAIL})).await.expect(200);
    // (name, path, text to wait for, whether the README shows its screenshot)
    let pages = [
        ("today", format!("/hotels/{hotel}/today"), "Arrivals", true),
        ("room-rack", format!("/hotels/{hotel}/rack"), "Room rack", true),
        ("room-rack-30", format!("/hotels/{hotel}/rack?days=30"), "Room rack", false),
        ("booking-requests", format!("/hotels/{hotel}/requests"), "Booking requests", true),
        ("reservations", format!("/hotels/{hotel}/reservations"), "Reservations", true),
        ("reservation", format!("/hotels/{hotel}/reservations/{stay}"), "Folio", true),
        ("confirmed-reservation", format!("/hotels/{hotel}/reservations/{confirmed}"), "Folio", false),
        ("new-reservation", format!("/hotels/{hotel}/reservations/new"), "New reservation", true),
        ("guests", format!("/hotels/{hotel}/guests"), "Guests", true),
        ("guest-search", format!("/hotels/{hotel}/guests?q={LONG_EMAIL}"), "Guests matching", false),
        ("guest", format!("/hotels/{hotel}/guests/{guest}"), "Stays", true),
        ("guest-form", format!("/hotels/{hotel}/guests/{guest}/edit"), "Save changes", false),
        ("settings", format!("/hotels/{hotel}/settings"), "Embedding code", false),
        ("not-found", "/no-such-page".to_string(), "There is nothing here", false),
    ];
    for (size, suffix) in [(DESKTOP, ""), (PHONE, "-phone")] {
        let phone = size == PHONE;
        let Some(b) = Browser::start_sized(&s.base, size).await else { return };
        b.goto("/sign-in").await;
        b.assert_page_ok("the sign-in page").await;
        if screenshots(&s) {
            b.screenshot(&format!("sign-in{suffix}")).await;
        }
        b.sign_in(frontdesk::demo::DEMO_EMAIL, frontdesk::demo::DEMO_PASSWORD).await;
        for (name, path, text, shown) in &pages {
            b.goto(path).await;
            b.wait_for_text(text).await;
            b.assert_page_ok(name).await;
            b.assert_in_reach("main button, main .button", name).await;
            if phone {
                b.assert_min_height(PICKERS, 44.0, name).await;
            }
            if screenshots(&s) && *shown {
                b.screenshot(&format!("{name}{suffix}")).await;
            }
        }
        let path_of = |name: &str| pages.iter().find(|page| page.0 == name).map(|page| page.1.clone()).unwrap();
        b.goto(&path_of("today")).await;
        b.wait_for_text("Occupancy").await;
        let smallest = smallest_chart_label(&b).await;
        assert!(smallest >= 12.0, "the chart's labels are drawn at {smallest:.1} px");
        // The confirmation a destructive action shows when the browser did not ask (as without JavaScript): its
        // button names the whole action.
        b.goto(&path_of("confirmed-reservation")).await;
        b.wait_for_text("Folio").await;
        b.client
            .execute(
                "document.querySelectorAll('[data-confirm]').forEach(f => f.removeAttribute('data-confirm'));",
                vec![],
            )
            .await
            .unwrap();
        b.click_text("button", "Cancel reservation").await;
        b.wait_for_text("This cannot be undone").await;
        b.assert_page_ok("the confirmation page").await;
        b.assert_in_reach("main button, main .button", "the confirmation page").await;
        let label = b.text("main form button[type=submit]").await;
        assert!(label.starts_with("Yes, cancel the reservation of ") && label.len() > 31, "{label}");
        b.close().await;
    }
}

/// The first value of the `id` column a query answers.
async fn first_id(s: &TestServer, sql: &str) -> String {
    let mut conn = s.db.read().await.unwrap();
    frontdesk::store::query(sql).fetch_one(&mut conn).await.unwrap().get("id")
}

async fn other_organizations_records_show_the_404_page(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let rival = s.org("Rival").await;
    let rival_hotel = hotel(&s, &rival).await;
    let rival_guest = guest(&s, &rival, "Eve", "Spy").await;
    let rival_stay = stay(&s, &rival, &rival_hotel, &rival_guest, 1, 2, None).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    for path in [
        format!("/hotels/{}/reservations/{rival_stay}", h.id),
        format!("/hotels/{}/reservations/{rival_stay}", rival_hotel.id),
        format!("/hotels/{}/today", rival_hotel.id),
        format!("/hotels/{}/guests/{rival_guest}", h.id),
        "/no-such-page".to_string(),
    ] {
        b.goto(&path).await;
        b.wait_for_text("There is nothing here").await;
        assert!(!b.page_text().await.contains("Eve"), "{path}");
    }
    b.assert_page_ok("the 404 page").await;
    let answer = s
        .client
        .get(format!("{}/hotels/{}/reservations/{rival_stay}", s.base, h.id))
        .header("cookie", format!("fd_session={}", b.client.get_named_cookie("fd_session").await.unwrap().value()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 404);
    // The API's unknown paths still answer problem documents.
    let api = s.get("/api/no-such-endpoint", &Auth::None).await;
    assert_eq!(api.status.as_u16(), 404);
    assert_eq!(api.header("content-type"), Some("application/problem+json"));
    b.close().await;
}

/// `body` decoded from `encoding` (`gzip` or `br`).
fn decoded(body: &[u8], encoding: &str) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out).expect("gzip"),
        "br" => brotli::Decompressor::new(body, 4096).read_to_end(&mut out).expect("brotli"),
        other => panic!("no decoder for {other}"),
    };
    out
}

/// Answers are compressed (gzip or brotli) when the client says it takes them and sent as they are otherwise:
/// assets, pages, problem documents and streamed lists alike, each the same once decoded.
async fn answers_are_compressed_when_the_client_asks(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    for n in 0..30 {
        let g = guest(&s, &org, "Guest", &format!("Number{n}")).await;
        stay(&s, &org, &h, &g, 1 + n % 20, 3 + n % 20, None).await;
    }
    let token = match org.auth() {
        Auth::Token(token) => token,
        _ => unreachable!("an organization's operator signs in with a token"),
    };
    let paths = [
        frontdesk::web::assets::url("app.css"),
        frontdesk::web::assets::url("htmx.min.js"),
        "/no-such-page".to_string(),
        // A list streamed record by record (no limit), and a page.
        format!("/api/reservations?hotelId={}", h.id),
        "/api/guests?limit=10".to_string(),
    ];
    for path in &paths {
        let get = |encoding: Option<&str>| {
            let mut request =
                s.client.get(format!("{}{path}", s.base)).header("authorization", format!("Token {token}"));
            if let Some(encoding) = encoding {
                request = request.header("accept-encoding", encoding);
            }
            request.send()
        };
        let plain = get(None).await.unwrap();
        let status = plain.status();
        assert!(plain.headers().get("content-encoding").is_none(), "{path} was compressed unasked");
        let length = plain.headers().get("content-length").map(|v| v.to_str().unwrap().parse::<usize>().unwrap());
        let plain = plain.bytes().await.unwrap();
        if let Some(length) = length {
            assert_eq!(length, plain.len(), "{path}");
        }
        assert!(plain.len() > 32, "{path} is long enough to be compressed");
        for encoding in ["gzip", "br"] {
            let answer = get(Some(encoding)).await.unwrap();
            assert_eq!(answer.status(), status, "{path}");
            assert_eq!(answer.headers()["content-encoding"], encoding, "{path}");
            assert!(answer.headers()["vary"].to_str().unwrap().to_lowercase().contains("accept-encoding"), "{path}");
            let body = answer.bytes().await.unwrap();
            assert!(body.len() < plain.len(), "{path}: {} compressed bytes for {}", body.len(), plain.len());
            assert_eq!(decoded(&body, encoding), plain.to_vec(), "{path} decodes to the same answer");
        }
    }
    // A problem document is still one once decoded.
    let answer = s
        .client
        .post(format!("{}/api/guests", s.base))
        .header("authorization", format!("Token {token}"))
        .header("accept-encoding", "br")
        .json(&json!({"firstName": "", "lastName": "", "email": "x", "country": "xx", "language": "x".repeat(40)}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    assert_eq!(answer.headers()["content-type"], "application/problem+json");
    assert_eq!(answer.headers()["content-encoding"], "br");
    let problem: Value = serde_json::from_slice(&decoded(&answer.bytes().await.unwrap(), "br")).unwrap();
    assert_eq!(problem["status"], json!(400));
    assert!(problem["errors"].as_array().is_some_and(|errors| errors.len() >= 2), "{problem}");
    // An answer too short to gain is sent as it is.
    let answer = s
        .client
        .get(format!("{}/api/no-such-endpoint", s.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(answer.headers().get("content-encoding").is_none());
    assert_eq!(answer.headers()["content-type"], "application/problem+json");
}

/// The keyboard's focus shows everywhere: a ring at least 3:1 against what it is drawn on, on the light pages, on the
/// dark bars (the dashboard's top bar, the booking page's head), inside the room rack's scrolled table; and in forced
/// colours, where backgrounds and shadows are dropped.
async fn the_focus_ring_shows_on_every_background(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let ana = guest(&s, &org, "Ana", "Silva").await;
    stay(&s, &org, &h, &ana, 0, 2, Some(&h.rooms[0])).await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    for path in [format!("/hotels/{}/today", h.id), format!("/hotels/{}/rack", h.id)] {
        b.goto(&path).await;
        b.wait_for_text("Sign out").await;
        b.assert_focus_rings(24, &path).await;
    }
    b.goto(&format!("/book/{}", h.id)).await;
    b.wait_for_text("Book your stay").await;
    b.assert_focus_rings(8, "the booking page").await;
    b.emulate_forced_colors(true).await;
    b.goto(&format!("/hotels/{}/today", h.id)).await;
    b.wait_for_text("Sign out").await;
    b.assert_focus_rings(16, "Today in forced colours").await;
    b.close().await;
}

/// Every kind of page (the dashboard's, sign-in, the 404 page, the booking page, the assistant endpoint's OAuth
/// pages) links the favicon under its content-digest URL and describes itself; htmx is loaded only by the page that
/// uses it (the new-reservation form's price preview).
async fn every_page_has_a_favicon_and_a_description_and_htmx_only_where_used(engine: Engine) {
    let Some(s) = delivering(engine).await else { return };
    let org = s.org("Acme").await;
    let h = hotel(&s, &org).await;
    let client = no_redirects();
    let signed_in = client
        .post(format!("{}/sign-in", s.base))
        .header("cookie", "fd_signin=t0k3n")
        .form(&[("email", org.operator_email.as_str()), ("password", PASSWORD), ("_csrf", "t0k3n")])
        .send()
        .await
        .unwrap();
    let session = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("fd_session=").map(|rest| rest.split(';').next().unwrap_or_default().to_string()))
        .expect("a session cookie");
    let favicon = frontdesk::web::assets::url("favicon.svg");
    let pages = [
        (format!("/hotels/{}/today", h.id), false),
        (format!("/hotels/{}/rack", h.id), false),
        (format!("/hotels/{}/reservations/new", h.id), true),
        ("/sign-in".to_string(), false),
        ("/no-such-page".to_string(), false),
        (format!("/book/{}", h.id), false),
        ("/oauth/authorize".to_string(), false),
    ];
    for (path, uses_htmx) in pages {
        let mut request = client.get(format!("{}{path}", s.base));
        if path.starts_with("/hotels/") {
            request = request.header("cookie", format!("fd_session={session}"));
        }
        let page = request.send().await.unwrap();
        let html_page =
            page.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/html"));
        assert!(html_page, "{path}: {} {:?}", page.status(), page.headers());
        let html = page.text().await.unwrap();
        assert!(
            html.contains(&format!("<link rel=\"icon\" href=\"{favicon}\" type=\"image/svg+xml\">")),
            "{path}: {html}"
        );
        let description = html
            .split("<meta name=\"description\" content=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        assert!(description.len() > 20, "{path} describes itself: {description:?}");
        assert_eq!(html.contains("htmx.min.js"), uses_htmx, "{path}");
    }
    // The favicon is this service's, kept for a year under its digest URL, and revalidated by its tag otherwise.
    let icon = client.get(format!("{}{favicon}", s.base)).send().await.unwrap();
    assert_eq!(icon.status().as_u16(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    assert_eq!(icon.headers()["cache-control"], "public, max-age=31536000, immutable");
    let tag = icon.headers()["etag"].to_str().unwrap().to_string();
    assert!(icon.text().await.unwrap().starts_with("<svg"));
    let again = client.get(format!("{}{favicon}", s.base)).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 304);
}
