//! Guest e-mails, on SQLite and PostgreSQL, sent to a real SMTP conversation (tests/common/smtp.rs) by the service's
//! own dispatcher: what each message says and to whom, refusals retried or recorded, reminders that follow the
//! stay's dates, and delivery across restarts and processes.

use std::time::Duration;

use crate::common::browser::{Browser, PHONE};
use crate::common::process::spawn_with;
use crate::common::smtp::SmtpServer;
use crate::common::{day, Auth, Org, TestServer, PASSWORD, WAIT};
use frontdesk::config::Config;
use frontdesk::store::Engine;
use frontdesk::worker::mail::{MailDispatcher, MailOptions, Postbox};
use serde_json::{json, Value};

on_both_engines_configured!(
    a_booking_request_is_acknowledged_confirmed_and_reminded,
    a_declined_request_and_a_cancelled_stay_are_told,
    refusals_for_now_are_retried_and_refusals_for_good_are_recorded,
    guests_without_an_e_mail_get_nothing_and_nothing_fails,
    german_guests_read_german,
    without_a_mail_server_messages_are_recorded_not_sent,
    messages_outlive_a_killed_process_and_two_processes_send_each_once,
    the_desk_reads_the_log_sends_again_and_words_its_own_messages,
);

const FROM: &str = "Sea Hotel <desk@sea.example>";

fn with_mail(smtp: &SmtpServer) -> impl FnOnce(&mut Config) + '_ {
    crate::common::smtp::sending_to(smtp, FROM)
}

/// A hotel with one room type, `rooms` rooms and a rate plan priced for 60 days.
async fn bookable(s: &TestServer, org: &Org, rooms: usize) -> (String, String, String) {
    let hotel = s.hotel(org, "Sea Hotel").await;
    let room_type = s
        .create("/api/roomTypes", &org.auth(), json!({"hotelId": hotel, "name": "Double room", "maxOccupancy": 3}))
        .await;
    for n in 0..rooms {
        s.post("/api/rooms", &org.auth(), json!({"roomTypeId": room_type, "name": format!("{}", 101 + n)}))
            .await
            .expect(200);
    }
    let plan = s
        .create("/api/ratePlans", &org.auth(), json!({"hotelId": hotel, "roomTypeId": room_type, "name": "Flexible"}))
        .await;
    let values: Vec<Value> = (0..60).map(|d| json!({"ratePlanId": plan, "date": day(d), "price": 12000})).collect();
    s.post("/api/dailyRates", &org.auth(), json!({"values": values})).await.expect(200);
    (hotel, room_type, plan)
}

/// A booking request made on the public booking API, as the booking page makes it.
async fn request(s: &TestServer, hotel: &str, from: u64, to: u64, guest: Value) -> String {
    let search = format!("/api/hotels/{hotel}/availability?checkInDate={}&checkOutDate={}", day(from), day(to));
    let offer = s.get(&search, &Auth::None).await.expect(200).body[0].clone();
    let body = json!({"offerId": offer["offerId"], "guest": guest});
    let booked = s.post(&format!("/api/hotels/{hotel}/book-reservation"), &Auth::None, body).await.expect(201);
    booked.body["reservationId"].as_str().expect("reservation id").to_string()
}

/// A CONFIRMED stay made through the API for a guest with these fields.
async fn confirmed_stay(
    s: &TestServer,
    org: &Org,
    hotel: &str,
    plan: &str,
    from: u64,
    to: u64,
    guest: Value,
) -> String {
    let mut guest = guest;
    guest["hotelId"] = json!(hotel);
    let guest_id = s.create("/api/guests", &org.auth(), guest).await;
    let room_type = plan_room_type(s, org, plan).await;
    s.create(
        "/api/reservations",
        &org.auth(),
        json!({"hotelId": hotel, "guestId": guest_id, "status": "CONFIRMED", "checkInDate": day(from),
               "checkOutDate": day(to), "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}),
    )
    .await
}

async fn plan_room_type(s: &TestServer, org: &Org, plan: &str) -> String {
    let plan = s.get(&format!("/api/ratePlans/{plan}"), &org.auth()).await.expect(200);
    plan.body["roomTypeId"].as_str().expect("room type").to_string()
}

/// The stored messages of a reservation: (kind, status, due_at, for_check_in), oldest first.
async fn messages(s: &TestServer, reservation: &str) -> Vec<(String, String, String, Option<String>)> {
    let mut conn = s.db.read().await.expect("connection");
    frontdesk::store::query(
        "SELECT kind, status, due_at, for_check_in FROM guest_messages WHERE reservation_id = $1 ORDER BY id",
    )
    .bind(reservation)
    .fetch_all(&mut conn)
    .await
    .expect("messages")
    .iter()
    .map(|r| (r.get("kind"), r.get("status"), r.get("due_at"), r.get("for_check_in")))
    .collect()
}

/// Waits until the reservation's message of `kind` has left `pending`, and answers its status.
async fn settled(s: &TestServer, reservation: &str, kind: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let found = messages(s, reservation).await.into_iter().filter(|m| m.0 == kind).map(|m| m.1).next_back();
        match found {
            Some(status) if status != "pending" => return status,
            _ if tokio::time::Instant::now() > deadline => panic!("{kind} of {reservation} still {found:?}"),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn a_booking_request_is_acknowledged_confirmed_and_reminded(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 2).await;
    let guest = json!({"firstName": "Ana <b>", "lastName": "Silva & Co", "email": "ana@example.com"});
    let id = request(&s, &hotel, 10, 12, guest).await;
    let reference = s.get(&format!("/api/reservations/{id}"), &org.auth()).await.expect(200).body["reference"]
        .as_str()
        .expect("reference")
        .to_string();

    let received = smtp.wait_for("ana@example.com", "received your booking request", 1, WAIT).await;
    let mail = &received[0];
    assert_eq!(mail.from, "desk@sea.example", "the envelope sender is FRONTDESK_MAIL_FROM's address");
    assert!(
        mail.data.contains("From: \"Sea Hotel\" <desk@sea.example>")
            || mail.data.contains("From: Sea Hotel <desk@sea.example>")
    );
    assert!(mail.subject().contains(&reference), "{}", mail.subject());
    let (text, html) = (mail.text(), mail.html());
    for part in [&text, &html] {
        assert!(part.contains(&reference), "reference in {part}");
        assert!(part.contains("EUR 240.00"), "price in {part}");
        assert!(part.contains("Sea Hotel"), "hotel in {part}");
        assert!(part.contains("Double room"), "room type in {part}");
        assert!(part.contains("2 adults"), "party in {part}");
    }
    assert!(text.contains("Dear Ana <b> Silva & Co"), "the text part as typed: {text}");
    assert!(html.contains("Ana &lt;b&gt; Silva &amp; Co") || html.contains("Ana &#60;b&#62; Silva &#38; Co"), "{html}");
    assert!(!html.contains("<b>"), "guest text never becomes markup: {html}");

    // Approved: "confirmed" once, and a reminder waiting for two days before arrival, 10:00 at the hotel.
    s.post(&format!("/api/reservations/{id}/approve"), &org.auth(), json!({})).await.expect(200);
    smtp.wait_for("ana@example.com", "is confirmed", 1, WAIT).await;
    let reminder = messages(&s, &id).await.into_iter().find(|m| m.0 == "pre_arrival_reminder").expect("reminder");
    assert_eq!((reminder.1.as_str(), reminder.3.as_deref()), ("pending", Some(day(10).as_str())));
    assert!(reminder.2.starts_with(&day(8)), "due two days before (Lisbon is UTC or UTC+1): {}", reminder.2);

    // The stay moves to tomorrow: its reminder is due at once and says the new date.
    let moved = json!({"checkInDate": day(1), "checkOutDate": day(3)});
    s.put(&format!("/api/reservations/{id}"), &org.auth(), moved).await.expect(200);
    let reminders = smtp.wait_for("ana@example.com", "See you soon", 1, WAIT).await;
    let tomorrow = chrono::NaiveDate::parse_from_str(&day(1), "%Y-%m-%d").expect("date");
    assert!(reminders[0].text().contains(&tomorrow.format("%-d %B %Y").to_string()), "{}", reminders[0].text());
    assert_eq!(settled(&s, &id, "pre_arrival_reminder").await, "sent");
    // Nothing is sent twice: a later change of the stay sends no second confirmation nor reminder.
    s.put(&format!("/api/reservations/{id}"), &org.auth(), json!({"notes": "Quiet room"})).await.expect(200);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let subjects: Vec<String> = smtp.received().iter().map(|m| m.subject()).collect();
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    s.stop().await;
}

async fn a_declined_request_and_a_cancelled_stay_are_told(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 2).await;
    let guest = json!({"firstName": "Rita", "lastName": "Lopes", "email": "rita@example.com"});
    let declined = request(&s, &hotel, 5, 6, guest).await;
    smtp.wait_for("rita@example.com", "received your booking request", 1, WAIT).await;
    s.put(&format!("/api/reservations/{declined}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    let mail = smtp.wait_for("rita@example.com", "Your booking request at Sea Hotel", 1, WAIT).await;
    assert!(mail[0].text().contains("cannot accept"), "{}", mail[0].text());

    let guest = json!({"firstName": "Ben", "lastName": "Ode", "email": "ben@example.com"});
    let stay = confirmed_stay(&s, &org, &hotel, &plan, 20, 22, guest).await;
    smtp.wait_for("ben@example.com", "is confirmed", 1, WAIT).await;
    assert!(messages(&s, &stay).await.iter().any(|m| m.0 == "pre_arrival_reminder" && m.1 == "pending"));
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    smtp.wait_for("ben@example.com", "is cancelled", 1, WAIT).await;
    let reminder = messages(&s, &stay).await.into_iter().find(|m| m.0 == "pre_arrival_reminder").expect("reminder");
    assert_eq!(reminder.1, "cancelled", "a cancelled stay is not reminded");
    s.stop().await;
}

async fn refusals_for_now_are_retried_and_refusals_for_good_are_recorded(engine: Engine) {
    // The first message is refused for now (451), the second for good (550).
    let smtp = SmtpServer::scripted(&[451]).await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 2).await;
    let first = request(&s, &hotel, 5, 6, json!({"firstName": "A", "lastName": "B", "email": "a@example.com"})).await;
    smtp.wait_for("a@example.com", "received your booking request", 1, WAIT).await;
    assert_eq!(smtp.answered(), vec![451, 250], "refused once, then sent on the retry");
    assert_eq!(settled(&s, &first, "request_received").await, "sent");

    let smtp_refusing = SmtpServer::scripted(&[550, 550, 550]).await;
    s.stop().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp_refusing)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, _) = bookable(&s, &org, 2).await;
    let second = request(&s, &hotel, 5, 6, json!({"firstName": "C", "lastName": "D", "email": "c@example.com"})).await;
    assert_eq!(settled(&s, &second, "request_received").await, "failed");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(smtp_refusing.answered(), vec![550], "a refusal for good is not retried");
    let mut conn = s.db.read().await.expect("connection");
    let error: String = frontdesk::store::query("SELECT last_error FROM guest_messages WHERE reservation_id = $1")
        .bind(&second)
        .fetch_one(&mut conn)
        .await
        .expect("row")
        .get("last_error");
    assert!(error.contains("550") || error.contains("no such mailbox"), "{error}");
    drop(conn);
    s.stop().await;
}

async fn guests_without_an_e_mail_get_nothing_and_nothing_fails(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 1).await;
    let stay = confirmed_stay(&s, &org, &hotel, &plan, 4, 6, json!({"firstName": "No", "lastName": "Mail"})).await;
    s.put(&format!("/api/reservations/{stay}"), &org.auth(), json!({"status": "CANCELLED"})).await.expect(200);
    assert!(messages(&s, &stay).await.is_empty());
    assert_eq!(s.count("guest_messages").await, 0);
    s.stop().await;
}

async fn german_guests_read_german(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 1).await;
    let guest = json!({"firstName": "Jörg", "lastName": "Weiß", "email": "joerg@example.com", "language": "de-AT"});
    confirmed_stay(&s, &org, &hotel, &plan, 4, 6, guest).await;
    let mail = smtp.wait_for("joerg@example.com", "ist bestätigt", 1, WAIT).await;
    assert!(mail[0].text().contains("Guten Tag Jörg Weiß"), "{}", mail[0].text());
    assert!(mail[0].text().contains("Gesamtpreis: EUR 240.00"), "{}", mail[0].text());
    assert!(mail[0].html().contains("lang=\"de\""));
    s.stop().await;
}

async fn without_a_mail_server_messages_are_recorded_not_sent(engine: Engine) {
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 1).await;
    let guest = json!({"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"});
    let stay = confirmed_stay(&s, &org, &hotel, &plan, 4, 6, guest).await;
    let kinds: Vec<String> = messages(&s, &stay).await.into_iter().map(|m| m.0).collect();
    assert_eq!(kinds, vec!["stay_confirmed", "pre_arrival_reminder"], "recorded in the write's transaction");
    // A dispatcher with no mail server records what is due as not sent; the reminder waits for its day.
    let options = MailOptions::from_settings(&Config::default().mail);
    let dispatcher = MailDispatcher::spawn(s.db.clone(), Postbox::NotConfigured, options);
    assert_eq!(settled(&s, &stay, "stay_confirmed").await, "not_sent");
    let statuses: Vec<String> = messages(&s, &stay).await.into_iter().map(|m| m.1).collect();
    assert_eq!(statuses, vec!["not_sent", "pending"]);
    dispatcher.stop().await;
    s.stop().await;
}

/// Messages are rows, not memory: enqueued by a process killed (SIGKILL) before it could send them, they are sent
/// by the processes that come after; two processes sharing the database send each message once; a reminder that
/// fell due while no process ran is sent when one is back.
async fn messages_outlive_a_killed_process_and_two_processes_send_each_once(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, |_| {}).await else { return };
    let org = s.org("Acme").await;
    let (hotel, room_type, plan) = bookable(&s, &org, 5).await;
    let url = s.database_url().to_string();
    let smtp_url = smtp.url();
    let mail = [("FRONTDESK_SMTP_URL", smtp_url.as_str()), ("FRONTDESK_MAIL_FROM", FROM)];
    let quiet = [mail[0], mail[1], ("FRONTDESK_MAIL_DISPATCHER", "false"), ("FRONTDESK_WEBHOOK_DISPATCHER", "false")];

    // A process that does not send (as one killed before its dispatcher's next round) takes five stays.
    let mut writer = spawn_with(&url, &quiet).await;
    let client = reqwest::Client::new();
    let mut stays = Vec::new();
    for n in 0..5 {
        let email = format!("guest{n}@example.com");
        let guest = client
            .post(format!("{}/api/guests", writer.base))
            .header("authorization", format!("Token {}", org.token))
            .json(&json!({"hotelId": hotel, "firstName": "G", "lastName": format!("{n}"), "email": email}))
            .send()
            .await
            .expect("guest");
        assert_eq!(guest.status(), 200);
        let guest: Value = guest.json().await.expect("json");
        let stay = client
            .post(format!("{}/api/reservations", writer.base))
            .header("authorization", format!("Token {}", org.token))
            .json(&json!({"hotelId": hotel, "guestId": guest["id"], "status": "CONFIRMED", "checkInDate": day(20),
                          "checkOutDate": day(22), "rooms": [{"roomTypeId": room_type, "ratePlanId": plan}]}))
            .send()
            .await
            .expect("stay");
        assert_eq!(stay.status(), 200);
        stays.push(stay.json::<Value>().await.expect("json")["id"].as_str().expect("id").to_string());
    }
    writer.child.kill().expect("SIGKILL");
    let _ = writer.child.wait();
    assert!(smtp.received().is_empty());

    // Two processes come up on the same database: each confirmation is sent, once.
    let dispatching = [mail[0], mail[1], ("FRONTDESK_WEBHOOK_DISPATCHER", "false")];
    let first = spawn_with(&url, &dispatching).await;
    let second = spawn_with(&url, &dispatching).await;
    for n in 0..5 {
        smtp.wait_for(&format!("guest{n}@example.com"), "is confirmed", 1, WAIT).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(smtp.received().len(), 5, "each confirmation once");
    drop((first, second));

    // While no process runs, the reminders fall due (their time is set into the past, as time passing would).
    {
        let mut conn = s.db.read().await.expect("connection");
        let past = "2020-01-01T00:00:00.000000Z";
        let moved = frontdesk::store::query(
            "UPDATE guest_messages SET due_at = $1 WHERE kind = 'pre_arrival_reminder' AND status = 'pending'",
        )
        .bind(past)
        .execute(&mut conn)
        .await
        .expect("update");
        assert_eq!(moved.rows_affected(), 5);
    }
    let back = spawn_with(&url, &dispatching).await;
    for n in 0..5 {
        smtp.wait_for(&format!("guest{n}@example.com"), "See you soon", 1, WAIT).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(smtp.received().len(), 10, "each reminder once");
    for stay in &stays {
        assert_eq!(settled(&s, stay, "pre_arrival_reminder").await, "sent");
    }
    drop(back);
    s.stop().await;
}

/// The dashboard, in Chromium: a guest's message log with "Send again", the hotel's reminder settings refused when
/// out of range, and a wording that does not render refused with the reason, then one that does used for the next
/// message.
async fn the_desk_reads_the_log_sends_again_and_words_its_own_messages(engine: Engine) {
    let smtp = SmtpServer::start().await;
    let Some(s) = TestServer::configured(engine, with_mail(&smtp)).await else { return };
    let org = s.org("Acme").await;
    let (hotel, _, plan) = bookable(&s, &org, 2).await;
    let guest = json!({"firstName": "Ana", "lastName": "Silva", "email": "ana@example.com"});
    let stay = confirmed_stay(&s, &org, &hotel, &plan, 10, 12, guest).await;
    smtp.wait_for("ana@example.com", "is confirmed", 1, WAIT).await;
    assert_eq!(settled(&s, &stay, "stay_confirmed").await, "sent");
    let guest_id = s.get(&format!("/api/reservations/{stay}"), &org.auth()).await.expect(200).body["guestId"]
        .as_str()
        .expect("guest")
        .to_string();

    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;

    b.goto(&format!("/hotels/{hotel}/guests/{guest_id}")).await;
    b.wait_for_text("Stay confirmed").await;
    let log = b.text("section[aria-labelledby=messages-title]").await;
    assert!(log.contains("Sent") && log.contains("Reminder before arrival") && log.contains("Scheduled"), "{log}");
    b.assert_page_ok("the guest's page with messages").await;
    if engine == Engine::Sqlite {
        b.screenshot("guest-messages").await;
    }
    b.click_text("section[aria-labelledby=messages-title] button", "Send again").await;
    b.wait_for_text("will be sent again to ana@example.com").await;
    smtp.wait_for("ana@example.com", "is confirmed", 2, WAIT).await;

    // Reminder settings: out of range is refused beside the field, and nothing is saved.
    b.goto(&format!("/hotels/{hotel}/messages")).await;
    b.fill("#reminderDaysBefore", "45").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("must be 0 to 30").await;
    assert_eq!(b.find("#reminderDaysBefore").await.attr("aria-invalid").await.expect("attr").as_deref(), Some("true"));
    b.fill("#reminderDaysBefore", "3").await;
    b.fill("#contactPhone", "+351 21 000 0000").await;
    b.click_text("button", "Save settings").await;
    b.wait_for_text("Saved the guest e-mail settings.").await;
    b.assert_page_ok("the guest e-mails page").await;

    // A wording with an unknown variable is refused with the reason; a good one is saved and used.
    b.goto(&format!("/hotels/{hotel}/messages/stay_confirmed/en")).await;
    b.fill("#subject", "Welcome {{ guest.nickname }}").await;
    b.click_text("button", "Save wording").await;
    b.wait_for_text("does not render").await;
    b.fill("#subject", "Welcome, {{ guest.first_name }}!").await;
    b.click_text("button", "Preview").await;
    b.wait_for_text("Welcome, Ana!").await;
    b.click_text("button", "Save wording").await;
    b.wait_for_text("Saved the wording").await;
    b.assert_page_ok("the wording editor").await;
    if engine == Engine::Sqlite {
        b.screenshot("guest-message-wording").await;
    }
    let guest = json!({"firstName": "Rui", "lastName": "Costa", "email": "rui@example.com"});
    confirmed_stay(&s, &org, &hotel, &plan, 14, 15, guest).await;
    let mail = smtp.wait_for("rui@example.com", "Welcome, Rui!", 1, WAIT).await;
    assert!(mail[0].text().contains("+351 21 000 0000"), "the hotel's contact: {}", mail[0].text());
    b.close().await;

    let Some(phone) = Browser::start_sized(&s.base, PHONE).await else { return };
    phone.sign_in(&org.operator_email, PASSWORD).await;
    phone.goto(&format!("/hotels/{hotel}/guests/{guest_id}")).await;
    phone.wait_for_text("Stay confirmed").await;
    phone.assert_page_ok("the guest's messages on a phone").await;
    if engine == Engine::Sqlite {
        phone.screenshot("guest-messages-phone").await;
    }
    phone.goto(&format!("/hotels/{hotel}/messages/stay_confirmed/en")).await;
    phone.assert_page_ok("the wording editor on a phone").await;
    if engine == Engine::Sqlite {
        phone.screenshot("guest-message-wording-phone").await;
    }
    phone.close().await;

    // Without JavaScript: the log's "Send again", the settings and the wording's preview are plain forms.
    let Some(plain) = Browser::start_without_javascript(&s.base).await else { return };
    plain.sign_in(&org.operator_email, "correct horse battery").await;
    plain.goto(&format!("/hotels/{hotel}/guests/{guest_id}")).await;
    plain.wait_for_text("Stay confirmed").await;
    plain.click_text("section[aria-labelledby=messages-title] button", "Send again").await;
    plain.wait_for_text("will be sent again to ana@example.com").await;
    // Sent again in the wording saved above.
    smtp.wait_for("ana@example.com", "Welcome, Ana!", 1, WAIT).await;
    plain.goto(&format!("/hotels/{hotel}/messages")).await;
    plain.fill("#reminderDaysBefore", "31").await;
    plain.click_text("button", "Save settings").await;
    plain.wait_for_text("must be 0 to 30").await;
    plain.goto(&format!("/hotels/{hotel}/messages/stay_confirmed/en")).await;
    plain.fill("#subject", "Hello {{ guest.first_name }}").await;
    plain.click_text("button", "Preview").await;
    plain.wait_for_text("Hello Ana").await;
    plain.close().await;
    s.stop().await;
}
