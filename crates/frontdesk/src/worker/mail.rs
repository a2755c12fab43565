//! The mail dispatcher: sends the guest messages that are due, over SMTP.
//!
//! Each round claims the messages due now with a lease ([`crate::domain::guest_messages::claim_due`]; on
//! PostgreSQL with `SKIP LOCKED`, so several processes share the work and each message is claimed by one), writes
//! each from its stay as it is now, sends it and reports the attempt to the domain, which decides what follows
//! (sent; retried later with a growing delay; failed for good). A process that dies mid-send leaves a claim that
//! runs out, and the message is sent by whichever process claims it next: delivery is at least once.
//!
//! The SMTP answer decides: 2xx is sent, 4xx (and a server that cannot be reached or does not answer in time) is
//! temporary, 5xx is permanent. Without `FRONTDESK_SMTP_URL` messages are recorded as not sent when they are due.

use std::time::Duration;

use anyhow::Context;
use chrono::TimeDelta;
use lettre::message::{header::ContentType, Attachment, Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::MailSettings;
use crate::domain::guest_messages::{self, Attempt, Claimed, Composed, Letter};
use crate::model::invoices::Invoice;
use crate::store::Db;

/// Tuning of the dispatcher; the defaults are what the service runs with.
#[derive(Debug, Clone)]
pub struct MailOptions {
    /// How often due messages are looked for.
    pub poll_interval: Duration,
    /// How long a claim holds before another dispatcher may take the message over.
    pub lease: TimeDelta,
    /// Most messages claimed at once.
    pub batch_size: i64,
    /// The wait before the first retry; each later wait doubles (see `guest_messages::retry_delay`).
    pub first_retry: TimeDelta,
    /// Longest one SMTP conversation may take.
    pub timeout: Duration,
}

impl MailOptions {
    pub fn from_settings(settings: &MailSettings) -> MailOptions {
        MailOptions {
            poll_interval: Duration::from_secs(1),
            lease: TimeDelta::minutes(2),
            batch_size: 20,
            first_retry: TimeDelta::seconds(settings.mail_first_retry_secs.clamp(1, 3600) as i64),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Where messages go: an SMTP server, or nowhere (recorded as not sent).
#[derive(Clone)]
pub enum Postbox {
    Smtp { transport: Box<AsyncSmtpTransport<Tokio1Executor>>, from: Mailbox },
    NotConfigured,
}

impl Postbox {
    /// The postbox the settings describe; a URL or sender that cannot be used is an error naming the setting.
    pub fn from_settings(settings: &MailSettings, timeout: Duration) -> anyhow::Result<Postbox> {
        let Some(url) = settings.smtp_url.as_deref() else { return Ok(Postbox::NotConfigured) };
        let from = settings
            .mail_from
            .as_deref()
            .context("FRONTDESK_MAIL_FROM (--mail-from) is required with FRONTDESK_SMTP_URL")?
            .parse::<Mailbox>()
            .context("FRONTDESK_MAIL_FROM (--mail-from) is not an e-mail address such as `Hotel <desk@example.com>`")?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .with_context(|| {
                format!(
                    "FRONTDESK_SMTP_URL (--smtp-url) {} is not an SMTP URL such as smtp://user:password@host:587?tls=required \
                     or smtps://host:465",
                    MailSettings::describe_url(url)
                )
            })?
            .timeout(Some(timeout))
            .build();
        Ok(Postbox::Smtp { transport: Box::new(transport), from })
    }

    pub fn is_configured(&self) -> bool {
        matches!(self, Postbox::Smtp { .. })
    }

    async fn send(&self, to: &str, letter: &Letter, invoice: Option<&Invoice>) -> Attempt {
        let Postbox::Smtp { transport, from } = self else { return Attempt::NotConfigured };
        let to = match to.parse::<Mailbox>() {
            Ok(to) => to,
            Err(err) => return Attempt::PermanentFailure(format!("the address {to} cannot be used: {err}")),
        };
        let text = MultiPart::alternative()
            .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(letter.text.clone()))
            .singlepart(SinglePart::builder().header(ContentType::TEXT_HTML).body(letter.html.clone()));
        let body = match invoice {
            None => text,
            Some(invoice) => match invoice_attachment(invoice) {
                Ok(pdf) => MultiPart::mixed().multipart(text).singlepart(pdf),
                // The same document renders the same way every time: trying again cannot help.
                Err(err) => return Attempt::PermanentFailure(format!("the invoice could not be made a PDF: {err}")),
            },
        };
        let message = Message::builder().from(from.clone()).to(to).subject(letter.subject.clone()).multipart(body);
        let message = match message {
            Ok(message) => message,
            Err(err) => return Attempt::PermanentFailure(format!("the message could not be built: {err}")),
        };
        match transport.send(message).await {
            Ok(_) => Attempt::Sent { subject: letter.subject.clone() },
            Err(err) if err.is_permanent() => Attempt::PermanentFailure(describe(&err)),
            // 4xx, and everything that is not an answer of the server (refused or cut connections, timeouts, TLS).
            Err(err) => Attempt::TemporaryFailure(describe(&err)),
        }
    }
}

/// The invoice as the PDF attachment of its e-mail, named by its number.
fn invoice_attachment(invoice: &Invoice) -> anyhow::Result<SinglePart> {
    let pdf = crate::documents::invoice_pdf::render(&invoice.document)?;
    let name = guest_messages::attachment_name(invoice);
    Ok(Attachment::new(name).body(pdf, ContentType::parse("application/pdf")?))
}

fn describe(err: &lettre::transport::smtp::Error) -> String {
    use std::error::Error as _;
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(500).collect()
}

/// The running dispatcher.
pub struct MailDispatcher {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl MailDispatcher {
    pub fn spawn(db: Db, postbox: Postbox, options: MailOptions) -> MailDispatcher {
        let (stop, stopped) = watch::channel(false);
        if !postbox.is_configured() {
            tracing::info!("no mail server configured (FRONTDESK_SMTP_URL): guest messages are recorded, not sent");
        }
        let task = tokio::spawn(run(db, postbox, options, stopped));
        MailDispatcher { stop, task }
    }

    /// Stops after the message being sent, if any.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn run(db: Db, postbox: Postbox, options: MailOptions, mut stopped: watch::Receiver<bool>) {
    loop {
        let claimed = match guest_messages::claim_due(&db, options.lease, options.batch_size).await {
            Ok(claimed) => claimed,
            Err(err) => {
                tracing::warn!(error = ?err, "could not claim due guest messages");
                Vec::new()
            }
        };
        let full = claimed.len() as i64 == options.batch_size;
        for message in claimed {
            if *stopped.borrow() {
                // The claim runs out and the message is sent by the next process that claims it.
                return;
            }
            deliver(&db, &postbox, &options, &message).await;
        }
        if full {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(options.poll_interval) => {}
            _ = stopped.changed() => return,
        }
    }
}

async fn deliver(db: &Db, postbox: &Postbox, options: &MailOptions, claimed: &Claimed) {
    let m = &claimed.message;
    let attempt = match guest_messages::compose(db, claimed).await {
        Ok(Composed::Skip(reason)) => Attempt::Skipped(reason),
        Ok(Composed::Send(letter, invoice)) => postbox.send(&m.recipient, &letter, invoice.as_deref()).await,
        Err(err) => {
            tracing::warn!(message = %m.id, error = ?err, "could not write a guest message; it is tried again");
            Attempt::TemporaryFailure(format!("the message could not be written: {err}"))
        }
    };
    let outcome = match &attempt {
        Attempt::Sent { .. } => "sent",
        Attempt::TemporaryFailure(_) => "temporary_failure",
        Attempt::PermanentFailure(_) => "permanent_failure",
        Attempt::NotConfigured => "not_configured",
        Attempt::Skipped(_) => "skipped",
    };
    metrics::counter!("frontdesk_guest_messages_total", "kind" => m.kind.as_str(), "outcome" => outcome).increment(1);
    match &attempt {
        Attempt::TemporaryFailure(reason) | Attempt::PermanentFailure(reason) => {
            tracing::info!(message = %m.id, kind = m.kind.as_str(), attempt = m.attempts, outcome, reason = %reason, "guest message not delivered")
        }
        _ => tracing::debug!(message = %m.id, kind = m.kind.as_str(), outcome, "guest message"),
    }
    match guest_messages::after_attempt(db, claimed, &attempt, options.first_retry).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(message = %m.id, "a guest message's claim ran out while it was sent; another process took it over")
        }
        Err(err) => {
            tracing::warn!(message = %m.id, error = ?err, "could not record a guest message's attempt; its claim runs out and it is tried again")
        }
    }
}
