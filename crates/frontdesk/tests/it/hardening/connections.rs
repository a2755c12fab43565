//! The HTTP connection itself: oversized request heads are answered by the parser, and kept-alive connections are
//! closed only when the answer says so.

use crate::common::{Auth, TestServer};

on_both_engines!(
    oversized_request_heads_answer_before_the_service,
    kept_alive_connections_are_closed_only_when_announced,
);

/// Sends raw bytes on a fresh connection and answers everything the server sends back before closing it.
async fn raw_exchange(s: &TestServer, request: Vec<u8>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(s.base.trim_start_matches("http://")).await.expect("connect");
    // The server may answer and close before it has read everything: a failed write is part of the answer.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Pins where the HTTP parser's own answers start (docs/conventions.md, "Answers the HTTP parser gives"): requests
/// within the limits reach the service and get problem documents; beyond them hyper answers 414 or 431 itself, with
/// no body, and closes the connection.
async fn oversized_request_heads_answer_before_the_service(s: TestServer) {
    let get = |target: &str, headers: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n").into_bytes()
    };
    let within = raw_exchange(&s, get(&format!("/api/guests?email={}", "a".repeat(60_000)), "")).await;
    assert!(within.starts_with("HTTP/1.1 401"), "{within}");
    assert!(within.contains("application/problem+json"), "{within}");

    let long_url = raw_exchange(&s, get(&format!("/api/guests?email={}", "a".repeat(70_000)), "")).await;
    assert!(long_url.starts_with("HTTP/1.1 414"), "{long_url}");
    assert!(long_url.ends_with("\r\n\r\n") && long_url.contains("content-length: 0"), "no body: {long_url}");

    // Over hyper's read buffer: 431, from hyper (no body) or, when the whole head arrived in one read, from the service.
    let big_header = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(500_000)))).await;
    assert!(big_header.starts_with("HTTP/1.1 431"), "{big_header}");
    // Over the service's limit of header bytes but within hyper's buffer: always the service's 431, with a problem.
    let over = frontdesk::http::head_limit::MAX_HEADER_BYTES;
    let large_header = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(over)))).await;
    assert!(large_header.starts_with("HTTP/1.1 431"), "{large_header}");
    assert!(large_header.contains("application/problem+json"), "{large_header}");
    let within_headers = raw_exchange(&s, get("/healthz", &format!("X-Big: {}\r\n", "a".repeat(over - 100)))).await;
    assert!(within_headers.starts_with("HTTP/1.1 200"), "{within_headers}");
    let many: String = (0..120).map(|i| format!("X-H{i}: 1\r\n")).collect();
    let many_headers = raw_exchange(&s, get("/healthz", &many)).await;
    assert!(many_headers.starts_with("HTTP/1.1 431"), "{many_headers}");

    // The service keeps serving.
    s.get("/healthz", &Auth::None).await.expect(200);
}

/// Reads one answer (head and a `content-length` body) from a kept-alive connection: (head, body), or `None` when
/// the server closed the connection without answering.
async fn read_answer(stream: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    use tokio::io::AsyncReadExt;
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let timeout = std::time::Duration::from_secs(10);
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buffer.len() < end + 4 + length {
                let n = tokio::time::timeout(timeout, stream.read(&mut chunk)).await.ok()?.ok()?;
                if n == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            return Some((head, String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned()));
        }
        let n = tokio::time::timeout(timeout, stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// An answer given before the request body was read (401 before the body is needed, 404, …) ends the connection,
/// because hyper cannot find where the next request starts; the answer must say so (`Connection: close`), or the
/// client sends its next request into a closed connection. An answer after the whole body was read keeps the
/// connection open, and the next request on it is answered.
async fn kept_alive_connections_are_closed_only_when_announced(s: TestServer) {
    use tokio::io::AsyncWriteExt;
    let address = s.base.trim_start_matches("http://").to_string();
    let body = r#"{"email":"nobody@example.com","password":"wrong password"}"#;
    for path in ["/api/guests", "/mcp", "/api/no-such-thing", "/reservations/new"] {
        let mut stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
        // The head alone: the answer comes before the body has been sent.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, \
             text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("write");
        let (head, _) = read_answer(&mut stream).await.expect("an answer");
        assert!(head.contains("\r\nconnection: close"), "{path} answered before its body: {head}");
    }

    // Read to the end: the connection stays open and serves the next request.
    let mut stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
    for round in 0..3 {
        let request = format!(
            "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let (head, answer) = read_answer(&mut stream).await.unwrap_or_else(|| panic!("round {round} was answered"));
        assert!(head.starts_with("http/1.1 401"), "{head}\n{answer}");
        assert!(!head.contains("connection: close"), "the body was read, the connection is kept: {head}");
    }
}
