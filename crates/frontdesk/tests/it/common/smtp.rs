//! A small SMTP server for the guest-message tests: it speaks enough of RFC 5321 for a real client (lettre, over
//! plain TCP), keeps every message it accepts, and answers the end of each message's data with the codes a test
//! scripts (451 then 250, 550, ...), so temporary and permanent refusals can be tested.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A message as the server accepted it.
#[derive(Debug, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    /// The message's data (headers and body), dot-unstuffed.
    pub data: String,
}

impl Received {
    pub fn parsed(&self) -> mail_parser::Message<'_> {
        mail_parser::MessageParser::default().parse(self.data.as_bytes()).expect("a parseable message")
    }

    pub fn subject(&self) -> String {
        self.parsed().subject().unwrap_or_default().to_string()
    }

    pub fn text(&self) -> String {
        self.parsed().body_text(0).map(|t| t.to_string()).unwrap_or_default()
    }

    pub fn html(&self) -> String {
        self.parsed().body_html(0).map(|t| t.to_string()).unwrap_or_default()
    }
}

#[derive(Default)]
struct Shared {
    received: Vec<Received>,
    /// Answers to the end of the next messages' data; 250 once it is empty.
    script: VecDeque<u16>,
    /// Every answer given to a message's data, in order.
    answered: Vec<u16>,
}

pub struct SmtpServer {
    pub port: u16,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SmtpServer {
    pub async fn start() -> SmtpServer {
        Self::scripted(&[]).await
    }

    /// A server that answers the data of its first messages with `codes`, in order, and 250 after.
    pub async fn scripted(codes: &[u16]) -> SmtpServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind SMTP");
        let port = listener.local_addr().expect("address").port();
        let shared = Arc::new(Mutex::new(Shared { script: codes.iter().copied().collect(), ..Shared::default() }));
        let for_task = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = for_task.clone();
                tokio::spawn(async move {
                    let _ = session(stream, shared).await;
                });
            }
        });
        SmtpServer { port, shared, task }
    }

    /// The URL the service is configured with.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.lock().expect("lock").received.clone()
    }

    pub fn answered(&self) -> Vec<u16> {
        self.shared.lock().expect("lock").answered.clone()
    }

    /// Waits up to `within` for `n` accepted messages to `to` whose subject contains `subject`.
    pub async fn wait_for(&self, to: &str, subject: &str, n: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let found: Vec<Received> = self
                .received()
                .into_iter()
                .filter(|m| m.to.iter().any(|t| t.eq_ignore_ascii_case(to)) && m.subject().contains(subject))
                .collect();
            if found.len() >= n || tokio::time::Instant::now() >= deadline {
                assert!(
                    found.len() >= n,
                    "expected {n} message(s) to {to} about {subject:?} within {within:?}; the server has: {:?}",
                    self.received().iter().map(|m| (m.to.clone(), m.subject())).collect::<Vec<_>>()
                );
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn session(stream: tokio::net::TcpStream, shared: Arc<Mutex<Shared>>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 localhost test SMTP\r\n").await?;
    let mut from = String::new();
    let mut to = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_string();
        let upper = command.to_ascii_uppercase();
        if upper.starts_with("EHLO") {
            write.write_all(b"250-localhost\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n").await?;
        } else if upper.starts_with("HELO") {
            write.write_all(b"250 localhost\r\n").await?;
        } else if upper.starts_with("MAIL FROM:") {
            from = address(&command["MAIL FROM:".len()..]);
            to.clear();
            write.write_all(b"250 OK\r\n").await?;
        } else if upper.starts_with("RCPT TO:") {
            to.push(address(&command["RCPT TO:".len()..]));
            write.write_all(b"250 OK\r\n").await?;
        } else if upper == "DATA" {
            write.write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n").await?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" || line == ".\n" {
                    break;
                }
                data.push_str(line.strip_prefix('.').unwrap_or(&line));
            }
            let code = {
                let mut shared = shared.lock().expect("lock");
                let code = shared.script.pop_front().unwrap_or(250);
                shared.answered.push(code);
                if code == 250 {
                    shared.received.push(Received { from: from.clone(), to: to.clone(), data });
                }
                code
            };
            let answer = match code {
                250 => "250 2.0.0 queued\r\n".to_string(),
                451 => "451 4.3.0 try again later\r\n".to_string(),
                550 => "550 5.1.1 no such mailbox\r\n".to_string(),
                other => format!("{other} scripted answer\r\n"),
            };
            write.write_all(answer.as_bytes()).await?;
        } else if upper == "RSET" || upper == "NOOP" {
            write.write_all(b"250 OK\r\n").await?;
        } else if upper == "QUIT" {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            write.write_all(b"502 5.5.2 command not implemented\r\n").await?;
        }
    }
}

fn address(arg: &str) -> String {
    let arg = arg.trim();
    let inner = arg.split_once('<').and_then(|(_, rest)| rest.split_once('>')).map(|(a, _)| a).unwrap_or(arg);
    inner.to_string()
}

/// A server configured to send its guest e-mails to `smtp`, from `from`, retrying after a second.
pub fn sending_to<'a>(smtp: &'a SmtpServer, from: &'a str) -> impl FnOnce(&mut frontdesk::config::Config) + 'a {
    move |config| {
        config.mail.smtp_url = Some(smtp.url());
        config.mail.mail_from = Some(from.into());
        config.mail.mail_first_retry_secs = 1;
    }
}
