//! Turning a message's wording and the facts of its stay into an e-mail: a subject, a plain-text part and an HTML
//! part.
//!
//! A hotel edits one text per message (subject and body, minijinja syntax with the variables in [`VARIABLES`]);
//! both parts come from that one text, so they cannot say different things. The body is rendered as plain text,
//! and the HTML part escapes all of it (askama's `templates/mail/message.html`), so nothing a guest typed, and
//! nothing a hotel typed either, becomes markup. The facts of the stay and the hotel's address and contact follow
//! the body in both parts, whatever the wording.
//!
//! # Bounded rendering
//!
//! Any operator edits a wording, and a saved one is rendered again for every message, so a rendering must not be
//! able to take the service down. Three bounds, each refused with its reason on preview, on save and at send time
//! (where the default wording is sent instead, [`super::delivery`]):
//!
//! * **What a wording may say** ([`no_growing_operators`] on its tokens, [`permitted`] on its compiled
//!   instructions): variables, `if`, `for` over what the facts hold, tests, and the
//!   filters of [`FILTERS`]. Not what makes text grow faster than the work spent on it: `*` (a string repeated a
//!   hundred million times is one instruction), `+`, `**` and `~`, captures (`{% set %}…{% endset %}`,
//!   `{% filter %}`: each doubles what it captures), function calls (`range`) and the other filters (`replace`,
//!   `indent`, `format` pad or repeat). Minijinja's fuel alone does not bound memory: one instruction can make
//!   100 MB.
//! * **How much work** ([`MAX_FUEL`] instructions of minijinja's machine per part; a default wording takes a few
//!   hundred) and **how much text** ([`MAX_OUTPUT_BYTES`] per part, written into a buffer that refuses more).
//! * **Where and how long**: on a blocking thread, [`RENDERINGS_AT_ONCE`] at a time, given up after [`DEADLINE`]
//!   (the fuel ends the thread's work soon after).

use std::io;
use std::time::Duration;

use askama::Template;
use chrono::{Datelike, NaiveDate, Weekday};
use minijinja::machinery::{tokenize, Instruction, Token, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde::Serialize;
use tokio::sync::Semaphore;

use super::Language;
use crate::domain::money;

/// The variables a template may use, with what they hold (shown beside the editor).
pub const VARIABLES: &[(&str, &str)] = &[
    ("guest.first_name", "the guest's first name"),
    ("guest.last_name", "the guest's last name"),
    ("hotel.name", "the hotel's name"),
    ("hotel.address", "the hotel's address on one line"),
    ("hotel.contact_email", "the hotel's contact e-mail (may be empty)"),
    ("hotel.contact_phone", "the hotel's contact telephone (may be empty)"),
    ("hotel.check_in_time", "check-in from, e.g. 15:00"),
    ("hotel.check_out_time", "check-out until, e.g. 11:00"),
    ("stay.reference", "the reservation's reference, e.g. K7QM3XHD"),
    ("stay.check_in", "the arrival date, written out in the guest's language"),
    ("stay.check_out", "the departure date, written out"),
    ("stay.nights", "the number of nights"),
    ("stay.room_types", "the room types booked, e.g. Double room"),
    ("stay.party", "who stays, e.g. 2 adults, 1 child"),
    ("stay.price", "the total price with its currency, e.g. EUR 240.00"),
    ("invoice.number", "the invoice's number (in the invoice e-mail; empty in the others)"),
    ("invoice.total", "the invoice's total with its currency (in the invoice e-mail)"),
];

/// The most instructions of minijinja's machine one part (subject or body) may run.
pub const MAX_FUEL: u64 = 20_000;
/// The most one rendered part may hold.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// How long a rendering may take, waiting for its turn included.
pub const DEADLINE: Duration = Duration::from_secs(2);
/// Renderings run at once; the others wait for a turn (within [`DEADLINE`]).
pub const RENDERINGS_AT_ONCE: usize = 2;
/// The longest subject and body a wording may have.
pub const MAX_SUBJECT_CHARS: usize = 200;
pub const MAX_BODY_CHARS: usize = 10_000;
/// The filters a wording may use: each gives back at most about as much text as it was given.
pub const FILTERS: &[&str] = &[
    "upper",
    "lower",
    "title",
    "capitalize",
    "trim",
    "default",
    "d",
    "length",
    "count",
    "first",
    "last",
    "string",
    "int",
    "abs",
    "round",
];

static RENDERINGS: Semaphore = Semaphore::const_new(RENDERINGS_AT_ONCE);

/// What a message says about its stay and hotel.
#[derive(Debug, Clone)]
pub struct Facts {
    pub guest_first_name: String,
    pub guest_last_name: String,
    pub hotel_name: String,
    /// Address lines, in order (street, postal code and city, country), without empty ones.
    pub hotel_address: Vec<String>,
    pub contact_email: Option<String>,
    pub contact_phone: Option<String>,
    pub check_in_time: String,
    pub check_out_time: String,
    pub reference: String,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub room_types: Vec<String>,
    pub adults: i64,
    pub children: i64,
    pub infants: i64,
    pub total_price: i64,
    pub currency: String,
    /// The invoice an invoice e-mail carries: its number and gross total.
    pub invoice: Option<(String, i64)>,
}

impl Facts {
    /// Facts for previews and for checking a template before it is saved.
    pub fn example(hotel_name: &str) -> Facts {
        let check_in = NaiveDate::from_ymd_opt(2026, 12, 4).unwrap_or_default();
        Facts {
            guest_first_name: "Ana".into(),
            guest_last_name: "Silva".into(),
            hotel_name: hotel_name.to_string(),
            hotel_address: vec!["Rua das Flores 12".into(), "1200-195 Lisboa".into(), "PT".into()],
            contact_email: Some("desk@example.com".into()),
            contact_phone: Some("+351 21 000 0000".into()),
            check_in_time: "15:00".into(),
            check_out_time: "11:00".into(),
            reference: "K7QM3XHD".into(),
            check_in,
            check_out: check_in.succ_opt().and_then(|d| d.succ_opt()).unwrap_or(check_in),
            room_types: vec!["Double room".into()],
            adults: 2,
            children: 1,
            infants: 0,
            total_price: 24000,
            currency: "EUR".into(),
            invoice: Some(("RE-2026-000001".into(), 25_800)),
        }
    }

    fn nights(&self) -> i64 {
        (self.check_out - self.check_in).num_days()
    }
}

/// A message ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Letter {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// A template that does not render (a syntax error, an unknown variable), with minijinja's explanation.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(pub String);

#[derive(Serialize)]
struct Context<'a> {
    guest: GuestVars<'a>,
    hotel: HotelVars<'a>,
    stay: StayVars<'a>,
    invoice: InvoiceVars,
}

#[derive(Serialize)]
struct InvoiceVars {
    number: String,
    total: String,
}

#[derive(Serialize)]
struct GuestVars<'a> {
    first_name: &'a str,
    last_name: &'a str,
}

#[derive(Serialize)]
struct HotelVars<'a> {
    name: &'a str,
    address: String,
    contact_email: &'a str,
    contact_phone: &'a str,
    check_in_time: &'a str,
    check_out_time: &'a str,
}

#[derive(Serialize)]
struct StayVars<'a> {
    reference: &'a str,
    check_in: String,
    check_out: String,
    nights: i64,
    room_types: String,
    party: String,
    price: String,
}

#[derive(Template)]
#[template(path = "mail/message.html")]
struct HtmlLetter<'a> {
    language: &'a str,
    subject: &'a str,
    paragraphs: Vec<Vec<&'a str>>,
    facts: Vec<(&'static str, String)>,
    hotel_name: &'a str,
    footer: Vec<String>,
}

/// Renders `subject` and `body` (a hotel's wording or the default) with `facts`, within the bounds of the module's
/// documentation, off the async workers.
pub async fn render(language: Language, subject: &str, body: &str, facts: &Facts) -> Result<Letter, TemplateError> {
    let (subject, body, facts) = (subject.to_string(), body.to_string(), facts.clone());
    let bounded = async {
        // The permit is held by the blocking thread, so that a rendering given up still counts until it ends.
        let permit = RENDERINGS.acquire().await.map_err(|_| TemplateError("the service is stopping".into()))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            render_now(language, &subject, &body, &facts)
        })
        .await
        .map_err(|_| TemplateError("the wording could not be rendered".into()))?
    };
    tokio::time::timeout(DEADLINE, bounded).await.unwrap_or_else(|_| {
        Err(TemplateError(format!("the wording took longer than {} s to render", DEADLINE.as_secs())))
    })
}

/// [`render`] on the calling thread.
fn render_now(language: Language, subject: &str, body: &str, facts: &Facts) -> Result<Letter, TemplateError> {
    if subject.chars().count() > MAX_SUBJECT_CHARS {
        return Err(TemplateError(format!("the subject is longer than {MAX_SUBJECT_CHARS} characters")));
    }
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(TemplateError(format!("the body is longer than {MAX_BODY_CHARS} characters")));
    }
    let context = context(language, facts);
    let env = environment();
    let render = |source: &str| bounded_render(&env, source, &context);
    let subject = subject_line(&render(subject)?);
    if subject.is_empty() {
        return Err(TemplateError("the subject is empty".into()));
    }
    let body = render(body)?.replace("\r\n", "\n").trim().to_string();
    let labels = Labels::of(language);
    let facts_lines = fact_lines(language, &labels, facts);
    let footer = footer(&labels, facts);
    let mut text = body.clone();
    text.push_str("\n\n");
    for (label, value) in &facts_lines {
        text.push_str(&format!("{label}: {value}\n"));
    }
    text.push_str("\n--\n");
    text.push_str(&footer.join("\n"));
    text.push('\n');
    let paragraphs = body.split("\n\n").filter(|p| !p.trim().is_empty()).map(|p| p.lines().collect()).collect();
    let html = HtmlLetter {
        language: language.code(),
        subject: &subject,
        paragraphs,
        facts: facts_lines,
        hotel_name: &facts.hotel_name,
        footer,
    }
    .render()
    .map_err(|e| TemplateError(e.to_string()))?;
    Ok(Letter { subject, text, html })
}

/// The default wording of `kind` rendered, and checks that a hotel's own wording renders, before it is saved.
pub async fn check(language: Language, subject: &str, body: &str, hotel_name: &str) -> Result<Letter, TemplateError> {
    render(language, subject, body, &Facts::example(hotel_name)).await
}

/// One part rendered: compiled, its instructions [`permitted`], run with the fuel of the environment into a buffer
/// of at most [`MAX_OUTPUT_BYTES`].
fn bounded_render(env: &Environment<'_>, source: &str, context: &Context<'_>) -> Result<String, TemplateError> {
    no_growing_operators(source)?;
    let template = env.template_from_str(source).map_err(|e| TemplateError(explain(&e)))?;
    permitted(&template)?;
    let mut out = Capped::default();
    match template.render_captured_to(context, &mut out) {
        Ok(_) => String::from_utf8(out.bytes).map_err(|_| TemplateError("the wording made invalid text".into())),
        Err(_) if out.overflowed => {
            Err(TemplateError(format!("the text would be longer than {} KiB", MAX_OUTPUT_BYTES / 1024)))
        }
        Err(e) if e.kind() == ErrorKind::OutOfFuel => {
            Err(TemplateError("the wording does too much work (loops within loops)".into()))
        }
        Err(e) => Err(TemplateError(explain(&e))),
    }
}

/// Refuses a wording that joins or repeats text, before it is compiled: minijinja computes an operation on two
/// constants while compiling (`'x' * 100000000` is 100 MB made before anything runs).
fn no_growing_operators(source: &str) -> Result<(), TemplateError> {
    for token in tokenize(source, false, SyntaxConfig, WhitespaceConfig::default()) {
        let (token, span) = token.map_err(|e| TemplateError(explain(&e)))?;
        if matches!(token, Token::Plus | Token::Mul | Token::Pow | Token::Tilde) {
            return Err(TemplateError(format!(
                "cannot join or repeat text: +, *, ** and ~ are not available (line {})",
                span.start_line
            )));
        }
    }
    Ok(())
}

/// Refuses a compiled wording that uses what could make its text grow without bound (the module's documentation).
fn permitted(template: &minijinja::Template<'_, '_>) -> Result<(), TemplateError> {
    let compiled = minijinja::machinery::get_compiled_template(template);
    let instructions = &compiled.instructions;
    for idx in 0..instructions.len() {
        let Ok(at) = u32::try_from(idx) else { break };
        let refusal = match instructions.get(at) {
            // Refused by their tokens already; kept here so that a way of writing them the tokens miss is refused.
            Some(Instruction::Add | Instruction::Mul | Instruction::Pow | Instruction::StringConcat) => {
                Some("cannot join or repeat text: +, *, ** and ~ are not available".to_string())
            }
            Some(Instruction::CallFunction(..) | Instruction::CallMethod(..) | Instruction::CallObject(..)) => {
                Some("cannot call functions (such as range)".to_string())
            }
            Some(Instruction::BeginCapture(_)) => {
                Some("cannot capture text: {% set %} blocks and {% filter %} are not available".to_string())
            }
            Some(Instruction::ApplyFilter(name, ..)) if !FILTERS.contains(name) => {
                Some(format!("the filter {name} is not available (available: {})", FILTERS.join(", ")))
            }
            _ => None,
        };
        if let Some(refusal) = refusal {
            return Err(TemplateError(match instructions.get_line(at) {
                Some(line) => format!("{refusal} (line {line})"),
                None => refusal,
            }));
        }
    }
    Ok(())
}

/// A buffer that refuses to grow past [`MAX_OUTPUT_BYTES`].
#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > MAX_OUTPUT_BYTES {
            self.overflowed = true;
            return Err(io::Error::other("the text is too long"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn environment<'source>() -> Environment<'source> {
    let mut env = Environment::new();
    env.set_fuel(Some(MAX_FUEL));
    // A misspelt variable must fail when the template is saved, not print nothing to a guest.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Both parts are made from plain text: the HTML part escapes all of it when it is laid out.
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env
}

fn explain(err: &minijinja::Error) -> String {
    match err.line() {
        Some(line) => format!("{} (line {line})", err.detail().unwrap_or(&err.kind().to_string())),
        None => err.detail().map(str::to_string).unwrap_or_else(|| err.kind().to_string()),
    }
}

/// A subject on one line, in which no text (a guest's name) reads as an RFC 2047 encoded word: a mail program
/// decodes `=?utf-8?b?…?=` in a header into whatever it encodes. A word joiner (U+2060, invisible) after each `=`
/// before `?` breaks the pattern, and, not being ASCII, makes the mailer encode the word itself, so the guest sees
/// the text as it was typed.
fn subject_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace("=?", "=\u{2060}?")
}

fn context(language: Language, facts: &Facts) -> Context<'_> {
    Context {
        guest: GuestVars { first_name: &facts.guest_first_name, last_name: &facts.guest_last_name },
        hotel: HotelVars {
            name: &facts.hotel_name,
            address: facts.hotel_address.join(", "),
            contact_email: facts.contact_email.as_deref().unwrap_or_default(),
            contact_phone: facts.contact_phone.as_deref().unwrap_or_default(),
            check_in_time: &facts.check_in_time,
            check_out_time: &facts.check_out_time,
        },
        stay: StayVars {
            reference: &facts.reference,
            check_in: long_date(language, facts.check_in),
            check_out: long_date(language, facts.check_out),
            nights: facts.nights(),
            room_types: facts.room_types.join(", "),
            party: party(language, facts.adults, facts.children, facts.infants),
            price: money::format(facts.total_price, &facts.currency),
        },
        invoice: match &facts.invoice {
            Some((number, total)) => {
                InvoiceVars { number: number.clone(), total: money::format(*total, &facts.currency) }
            }
            None => InvoiceVars { number: String::new(), total: String::new() },
        },
    }
}

struct Labels {
    reference: &'static str,
    arrival: &'static str,
    departure: &'static str,
    nights: &'static str,
    rooms: &'static str,
    party: &'static str,
    price: &'static str,
    from: &'static str,
    until: &'static str,
    email: &'static str,
    phone: &'static str,
}

impl Labels {
    fn of(language: Language) -> Labels {
        match language {
            Language::English => Labels {
                reference: "Reference",
                arrival: "Arrival",
                departure: "Departure",
                nights: "Nights",
                rooms: "Room",
                party: "Guests",
                price: "Total price",
                from: "from",
                until: "until",
                email: "E-mail",
                phone: "Telephone",
            },
            Language::German => Labels {
                reference: "Buchungsnummer",
                arrival: "Anreise",
                departure: "Abreise",
                nights: "Nächte",
                rooms: "Zimmer",
                party: "Gäste",
                price: "Gesamtpreis",
                from: "ab",
                until: "bis",
                email: "E-Mail",
                phone: "Telefon",
            },
        }
    }
}

fn fact_lines(language: Language, labels: &Labels, facts: &Facts) -> Vec<(&'static str, String)> {
    vec![
        (labels.reference, facts.reference.clone()),
        (labels.arrival, format!("{} ({} {})", long_date(language, facts.check_in), labels.from, facts.check_in_time)),
        (
            labels.departure,
            format!("{} ({} {})", long_date(language, facts.check_out), labels.until, facts.check_out_time),
        ),
        (labels.nights, facts.nights().to_string()),
        (labels.rooms, facts.room_types.join(", ")),
        (labels.party, party(language, facts.adults, facts.children, facts.infants)),
        (labels.price, money::format(facts.total_price, &facts.currency)),
    ]
}

fn footer(labels: &Labels, facts: &Facts) -> Vec<String> {
    let mut lines = vec![facts.hotel_name.clone()];
    lines.extend(facts.hotel_address.iter().cloned());
    if let Some(email) = facts.contact_email.as_deref().filter(|e| !e.is_empty()) {
        lines.push(format!("{}: {email}", labels.email));
    }
    if let Some(phone) = facts.contact_phone.as_deref().filter(|p| !p.is_empty()) {
        lines.push(format!("{}: {phone}", labels.phone));
    }
    lines
}

/// `Friday, 4 December 2026` / `Freitag, 4. Dezember 2026`.
pub fn long_date(language: Language, d: NaiveDate) -> String {
    match language {
        Language::English => d.format("%A, %-d %B %Y").to_string(),
        Language::German => {
            const MONTHS: [&str; 12] = [
                "Januar",
                "Februar",
                "März",
                "April",
                "Mai",
                "Juni",
                "Juli",
                "August",
                "September",
                "Oktober",
                "November",
                "Dezember",
            ];
            let weekday = match d.weekday() {
                Weekday::Mon => "Montag",
                Weekday::Tue => "Dienstag",
                Weekday::Wed => "Mittwoch",
                Weekday::Thu => "Donnerstag",
                Weekday::Fri => "Freitag",
                Weekday::Sat => "Samstag",
                Weekday::Sun => "Sonntag",
            };
            format!("{weekday}, {}. {} {}", d.day(), MONTHS[d.month0() as usize], d.year())
        }
    }
}

/// `2 adults, 1 child` / `2 Erwachsene, 1 Kind`.
pub fn party(language: Language, adults: i64, children: i64, infants: i64) -> String {
    let words: [(&str, &str); 3] = match language {
        Language::English => [("adult", "adults"), ("child", "children"), ("infant", "infants")],
        Language::German => [("Erwachsener", "Erwachsene"), ("Kind", "Kinder"), ("Kleinkind", "Kleinkinder")],
    };
    let counted = |n: i64, (one, many): (&str, &str)| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = vec![counted(adults, words[0])];
    for (n, word) in [(children, words[1]), (infants, words[2])] {
        if n > 0 {
            parts.push(counted(n, word));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::guest_messages::defaults::wording;
    use crate::domain::guest_messages::MessageKind;

    #[tokio::test]
    async fn every_default_renders_in_both_languages() {
        for kind in MessageKind::ALL {
            for language in [Language::English, Language::German] {
                let (subject, body) = wording(kind, language);
                let letter = check(language, subject, body, "Hotel Aurora").await.expect("default renders");
                assert!(letter.subject.contains("K7QM3XHD"), "{kind:?} {language:?}: {}", letter.subject);
                assert!(letter.text.contains("Ana Silva") && letter.html.contains("Ana Silva"));
                assert!(letter.text.contains("EUR 240.00") && letter.html.contains("EUR 240.00"));
            }
        }
    }

    #[tokio::test]
    async fn guest_text_is_escaped_in_the_html_part_only() {
        let mut facts = Facts::example("Hotel <b>Aurora</b>");
        facts.guest_first_name = "<script>alert(1)</script>".into();
        let letter = render(Language::English, "Hello {{ guest.first_name }}", "Hi {{ guest.first_name }}", &facts)
            .await
            .expect("renders");
        assert!(letter.text.contains("Hi <script>alert(1)</script>"));
        assert!(!letter.html.contains("<script>"));
        let escaped = ["&lt;script&gt;alert(1)&lt;/script&gt;", "&#60;script&#62;alert(1)&#60;/script&#62;"];
        assert!(escaped.iter().any(|e| letter.html.contains(e)), "{}", letter.html);
        assert!(!letter.html.contains("<b>Aurora"));
    }

    #[tokio::test]
    async fn unknown_variables_and_broken_syntax_are_refused() {
        let err = check(Language::English, "Hi", "Dear {{ guest.nickname }}", "H").await.expect_err("unknown variable");
        assert!(!err.0.is_empty());
        check(Language::English, "Hi {{", "Body", "H").await.expect_err("broken syntax");
        check(Language::English, "   ", "Body", "H").await.expect_err("empty subject");
    }

    /// What a wording may not say, each refused with its reason before it runs.
    #[tokio::test]
    async fn what_makes_text_grow_is_refused() {
        for (body, reason) in [
            ("{% for i in range(4) %}{{ 'x' * 100000000 }}{% endfor %}", "repeat"),
            ("{% for i in range(4) %}{{ hotel.name }}{% endfor %}", "functions"),
            ("{{ 'x' * 100000000 }}", "repeat"),
            ("{{ guest.first_name ~ guest.first_name }}", "repeat"),
            ("{{ guest.first_name + guest.first_name }}", "repeat"),
            ("{% set a %}{{ hotel.address }}{{ hotel.address }}{% endset %}{{ a }}", "capture"),
            ("{% filter upper %}{{ hotel.address }}{% endfilter %}", "capture"),
            ("{{ hotel.address|replace(' ', hotel.address) }}", "replace is not available"),
            ("{{ hotel.address|indent(100000000) }}", "indent is not available"),
            ("{{ hotel.address.replace(' ', hotel.address) }}", "functions"),
        ] {
            let err = check(Language::English, "Hi", body, "H").await.expect_err(body);
            assert!(err.0.contains(reason), "{body}: {err}");
        }
        // What a wording needs stays: variables, conditions, loops, the simple filters.
        check(
            Language::English,
            "Hi {{ guest.first_name|upper }}",
            "{% if stay.nights > 1 %}{{ stay.nights }} nights{% else %}one night{% endif %}\n\
             {% for c in guest.first_name %}{{ c }}{% endfor %} {{ hotel.contact_email|default('-') }}",
            "H",
        )
        .await
        .expect("a plain wording renders");
    }

    #[tokio::test]
    async fn work_and_text_are_bounded() {
        let err = check(
            Language::English,
            "Hi",
            "{% for a in hotel.address %}{% for b in hotel.address %}{% for c in hotel.address %}.{% endfor %}\
             {% endfor %}{% endfor %}",
            "H",
        )
        .await
        .expect_err("too much work");
        assert!(err.0.contains("too much work"), "{err}");
        let mut facts = Facts::example("H");
        facts.hotel_address = vec!["x".repeat(190)];
        let err = render(
            Language::English,
            "Hi",
            "{% for a in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' %}\
             {% for b in 'abcdefghijklmnopqrstuvwxyz' %}{{ hotel.address }}{% endfor %}{% endfor %}",
            &facts,
        )
        .await
        .expect_err("too much text");
        assert!(err.0.contains("longer than 64 KiB"), "{err}");
        let err = check(Language::English, "Hi", &"x".repeat(MAX_BODY_CHARS + 1), "H").await.expect_err("too long");
        assert!(err.0.contains("longer than 10000"), "{err}");
    }

    #[tokio::test]
    async fn subjects_are_one_line() {
        let letter =
            render(Language::English, "A\r\nBcc: x@example.com", "B", &Facts::example("H")).await.expect("renders");
        assert_eq!(letter.subject, "A Bcc: x@example.com");
        let mut facts = Facts::example("H");
        facts.guest_first_name = "=?utf-8?b?UmVmdW5kIHBlbmRpbmc=?=".into();
        let letter = render(Language::English, "Dear {{ guest.first_name }}", "B", &facts).await.expect("renders");
        assert!(!letter.subject.contains("=?"), "{}", letter.subject);
        assert_eq!(letter.subject.replace('\u{2060}', ""), "Dear =?utf-8?b?UmVmdW5kIHBlbmRpbmc=?=");
    }

    #[test]
    fn dates_and_parties_in_german() {
        let d = NaiveDate::from_ymd_opt(2026, 12, 4).expect("date");
        assert_eq!(long_date(Language::German, d), "Freitag, 4. Dezember 2026");
        assert_eq!(long_date(Language::English, d), "Friday, 4 December 2026");
        assert_eq!(party(Language::German, 2, 1, 0), "2 Erwachsene, 1 Kind");
        assert_eq!(party(Language::English, 1, 0, 2), "1 adult, 2 infants");
    }
}
