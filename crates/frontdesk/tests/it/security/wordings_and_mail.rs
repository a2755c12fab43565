//! What a review of the guest e-mails found, each closed and kept closed on both engines: a hotel's wording that
//! could take the service down, booking e-mails sent with a stranger's text, and encoded words in subjects.

use crate::common::smtp::SmtpServer;
use crate::common::{day, Auth, Dashboard, Org, TestServer, WAIT};
use frontdesk::config::Config;
use frontdesk::store::Engine;
use serde_json::{json, Value};

use super::{bookable, offer};

on_both_engines_configured!(
    a_wording_cannot_take_the_service_down,
    a_saved_wording_that_does_not_render_sends_the_default,
    booking_e_mails_are_plain_addresses_and_names_carry_none,
    encoded_words_in_names_reach_the_subject_as_typed,
);

/// The wording the review sent: four strings of 100 MB each.
const HOSTILE: &str = "{% for i in range(4) %}{{ 'x' * 100000000 }}{% endfor %}";

fn with_mail(smtp: &SmtpServer) -> impl FnOnce(&mut Config) + '_ {
    crate::common::smtp::sending_to(smtp, "Sea Hotel <desk@sea.example>")
}

/// Posts the wording editor of the confirmation in English: (status, page).
async fn post_wording(d: &Dashboard<'_>, hotel: &str, action: &str, subject: &str, body: &str) -> (u16, String) {
    let path = format!("/hotels/{hotel}/messages/stay_confirmed/en");
    let (status, _, page) = d.post(&path, &[("action", action), ("subject", subject), ("body", body)]).await;
    (status, page)
}

/// A CONFIRMED stay through the API, for a guest with these fields.
async fn confirmed_stay(s: &TestServer, org: &Org, hotel: &str, room_type: &str, guest: Value) -> String {
    let mut guest = guest;
    guest["hotelId"] = json!(hotel);
    let guest_id = s.create("/api/guests", &org.auth(), guest).await;
    let plans = s.get(&format!("/api/ratePlans?hotelId={hotel}"), &org.auth()).await.expect(200);
    let plan = plans.body[0]["id"].as_str().expect("a plan").to_string();
    s.create(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "guestId": guest_id, "status": "CONFIRMED", "checkInDate": day(10),
               "checkOutDate": day(12), "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
    )
    .await
}

/// Previewing or saving the review's wording grew the process from 61 MB to 2 GB and stalled `/healthz`. Now it is
/// refused with its reason before it runs, and so is a wording that loops too much or writes too much; nothing is
/// saved, and the service answers on.
async fn a_wording_cannot_take_the_service_down(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 1).await;
    let d = Dashboard::new(&s, &org.token);
    let (previewed, saved) = tokio::join!(
        post_wording(&d, &hotel, "preview", "Hello", HOSTILE),
        post_wording(&d, &hotel, "save", "Hello", HOSTILE),
    );
    for (status, page) in [previewed, saved] {
        assert_eq!(status, 422, "{page:.500}");
        assert!(page.contains("cannot join or repeat text"), "the reason is given: {page:.3000}");
        assert!(page.len() < 200_000, "the page is not the rendered text: {} bytes", page.len());
    }
    s.get("/healthz", &Auth::None).await.expect(200);
    let loops = "{% for a in hotel.address %}{% for b in hotel.address %}{% for c in hotel.address %}.{% endfor %}\
                 {% endfor %}{% endfor %}";
    let (status, page) = post_wording(&d, &hotel, "save", "Hello", loops).await;
    assert_eq!(status, 422);
    assert!(page.contains("too much work"), "{page:.3000}");
    let (status, page) = post_wording(&d, &hotel, "preview", "Hello", "{{ hotel.address|indent(100000000) }}").await;
    assert_eq!(status, 422);
    assert!(page.contains("indent is not available"), "{page:.3000}");
    assert_eq!(s.count("message_templates").await, 0, "nothing refused was saved");
    // A plain wording still previews and saves.
    let (status, page) =
        post_wording(&d, &hotel, "preview", "Hello {{ guest.first_name }}", "Dear {{ guest.first_name|upper }}").await;
    assert_eq!(status, 200, "{page:.3000}");
    assert!(page.contains("Dear ANA"), "{page:.3000}");
    let (status, page) = post_wording(&d, &hotel, "save", "Hello {{ guest.first_name }}", "Welcome").await;
    assert_eq!(status, 303, "{page:.3000}");
    assert_eq!(s.count("message_templates").await, 1);
    s.stop().await;
}

/// A wording saved before these bounds (written here past the domain, as an old release would have) is rendered
/// again for every message: it is refused at send time and the guest gets the built-in wording.
async fn a_saved_wording_that_does_not_render_sends_the_default(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, room_type) = bookable(&s, &org, "Sea", 2).await;
    let mut tx = s.db.begin_write().await.expect("write");
    frontdesk::store::guest_messages::save_template(
        tx.conn(),
        &hotel,
        "stay_confirmed",
        "en",
        "Hello {{ guest.first_name }}",
        HOSTILE,
        chrono::Utc::now(),
    )
    .await
    .expect("saved as an old release would have");
    tx.commit().await.expect("commit");
    let guest = json!({"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"});
    confirmed_stay(&s, &org, &hotel, &room_type, guest).await;
    let mail = smtp.wait_for("ana@example.com", "is confirmed", 1, WAIT).await;
    assert!(mail[0].text().contains("Ana"), "the built-in wording: {}", mail[0].text());
    assert!(!mail[0].data.contains("xxxxxxxxxx"));
    s.get("/healthz", &Auth::None).await.expect(200);
    s.stop().await;
}

/// `0<victim@example.net>` passed the e-mail check and the mailer delivered to the inner address, each form a new
/// address for the per-address limit, each mail opening with the name given ("Dear Refund pending: visit ...").
/// Now only a plain address is taken, one mailbox counts once however it is written, and a name that carries an
/// address is refused, on the API and on the page alike.
async fn booking_e_mails_are_plain_addresses_and_names_carry_none(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |c| c.booking_requests_per_email_per_hour = 2).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _) = bookable(&s, &org, "Sea", 10).await;
    let book = |offer: String, first: &'static str, email: &'static str| {
        let s = &s;
        let hotel = hotel.clone();
        async move {
            let body = json!({"offerId": offer, "guest": {"firstName": first, "lastName": "Doe", "email": email}});
            s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, body).await
        }
    };
    for (email, n) in [("0<victim@example.net>", 3), ("Victim <victim@example.net>", 4), ("\"v\"@example.net", 5)] {
        let refused = book(offer(&s, &hotel, n, n + 1).await, "Ana", email).await.expect(400);
        assert!(refused.body.to_string().contains("guest.email"), "{email}: {}", refused.body);
    }
    for name in ["Refund pending: visit evil.example", "https://evil.example", "=?utf-8?b?UmVmdW5k?="] {
        let refused = book(offer(&s, &hotel, 6, 7).await, name, "ana@example.com").await.expect(400);
        assert!(refused.body.to_string().contains("guest.firstName"), "{name}: {}", refused.body);
    }
    // One mailbox, however written, counts once: the third request for it is refused.
    book(offer(&s, &hotel, 8, 9).await, "Ana", "victim@example.net").await.expect(201);
    book(offer(&s, &hotel, 9, 10).await, "Ana", "VICTIM@Example.NET").await.expect(201);
    book(offer(&s, &hotel, 10, 11).await, "Ana", "Victim@example.net").await.expect(429);
    assert_eq!(s.count("reservations").await, 2, "nothing refused was written");
    s.stop().await;
}

/// A name like `=?utf-8?b?...?=` reached the subject as such, where mail programs decode it into whatever it hides.
/// Now the subject says the name as it was typed.
async fn encoded_words_in_names_reach_the_subject_as_typed(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, room_type) = bookable(&s, &org, "Sea", 2).await;
    let d = Dashboard::new(&s, &org.token);
    let (status, page) = post_wording(&d, &hotel, "save", "Dear {{ guest.first_name }}: confirmed", "Welcome").await;
    assert_eq!(status, 303, "{page:.2000}");
    // "Refund pending: visit evil.example", encoded.
    let encoded = "=?utf-8?b?UmVmdW5kIHBlbmRpbmc6IHZpc2l0IGV2aWwuZXhhbXBsZQ==?=";
    let guest = json!({"firstName": encoded, "lastName": "Doe", "email": "ana@example.com"});
    confirmed_stay(&s, &org, &hotel, &room_type, guest).await;
    let mail = smtp.wait_for("ana@example.com", "confirmed", 1, WAIT).await;
    let subject = mail[0].subject();
    assert!(!subject.contains("Refund pending"), "not decoded: {subject}");
    assert_eq!(subject.replace('\u{2060}', ""), format!("Dear {encoded}: confirmed"));
    let raw_subject = mail[0].data.lines().find(|l| l.starts_with("Subject:")).expect("a subject").to_string();
    assert!(
        !raw_subject.contains("=?utf-8?b?UmVmdW5k"),
        "the name is not an encoded word of the header: {raw_subject}"
    );
    s.stop().await;
}
