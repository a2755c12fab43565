//! Channex's API over HTTP (docs/channex-api-notes.md §1-2): the key in the `user-api-key` header on every call,
//! JSON answers with `data`, `meta` or `errors`.
//!
//! An ARI call answers 200 with a task id (`data[].id`, `type: "task"`) and `meta.warnings`: each value Channex
//! refused, echoed with a `warning` map of field → messages. A 200 therefore does not mean every value was taken;
//! the warnings are kept and shown. Errors carry `errors.code` and `errors.title`, and `details` either as an
//! object (422) or as a list (400), kept as JSON.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::mapping::{AvailabilityValue, RestrictionValue, Values};

/// A client for one connection: its base URL (`https://staging.channex.io/api/v1`) and key.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key never reaches a log.
        f.debug_struct("Client").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// Channex answered.
    Answered(Answer),
    /// No answer: the host was unreachable, the connection broke, or the call timed out. In words.
    NoAnswer(String),
}

/// An answer, as documented.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub status: u16,
    /// The task ids of `data` (ARI calls).
    pub task_ids: Vec<String>,
    /// `meta.message` (`"Success"`).
    pub message: Option<String>,
    /// `meta.warnings`: each refused value as Channex echoed it, with its `warning` map.
    pub warnings: Vec<Value>,
    /// `errors`, when the call failed.
    pub error: Option<ApiError>,
    /// `data` as sent (reads).
    pub data: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ApiError {
    pub code: String,
    pub title: String,
    #[serde(default)]
    pub details: Option<Value>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    data: Option<Value>,
    #[serde(default)]
    meta: Option<Meta>,
    #[serde(default)]
    errors: Option<ApiError>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    warnings: Option<Vec<Value>>,
}

impl Answer {
    fn read(status: u16, body: &[u8]) -> Answer {
        let mut answer = Answer { status, ..Answer::default() };
        let Ok(envelope) = serde_json::from_slice::<Envelope>(body) else {
            if !(200..300).contains(&status) {
                let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                answer.error = Some(ApiError { code: "unreadable".into(), title: text, details: None });
            }
            return answer;
        };
        if let Some(Value::Array(items)) = &envelope.data {
            answer.task_ids = items
                .iter()
                .filter(|item| item.get("type").and_then(Value::as_str) == Some("task"))
                .filter_map(|item| item.get("id").and_then(Value::as_str).map(str::to_string))
                .collect();
        }
        answer.data = envelope.data;
        if let Some(meta) = envelope.meta {
            answer.message = meta.message;
            answer.warnings = meta.warnings.unwrap_or_default();
        }
        answer.error = envelope.errors;
        answer
    }

    /// The answer in words, for the connection page.
    pub fn words(&self) -> String {
        let mut words = match &self.error {
            Some(e) => format!("{} {}: {}", self.status, e.code, e.title),
            None => format!("{} {}", self.status, self.message.as_deref().unwrap_or("")).trim_end().to_string(),
        };
        if let Some(details) = self.error.as_ref().and_then(|e| e.details.as_ref()) {
            words.push_str(&format!(" ({details})"));
        }
        if !self.warnings.is_empty() {
            words.push_str(&format!("; {} value(s) refused", self.warnings.len()));
        }
        words
    }
}

impl Client {
    /// A client of `http` (its timeout is the calls' timeout) for `base_url` with `api_key`.
    pub fn new(http: reqwest::Client, base_url: &str, api_key: &str) -> Client {
        Client { http, base_url: base_url.trim_end_matches('/').to_string(), api_key: api_key.to_string() }
    }

    /// The HTTP client the dispatcher shares among connections.
    pub fn http(timeout: Duration) -> anyhow::Result<reqwest::Client> {
        Ok(reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Frontdesk/", env!("CARGO_PKG_VERSION")))
            .build()?)
    }

    /// `POST /availability`.
    pub async fn availability(&self, values: &[AvailabilityValue]) -> Sent {
        self.send(reqwest::Method::POST, "/availability", Some(&Values { values })).await
    }

    /// `POST /restrictions`.
    pub async fn restrictions(&self, values: &[RestrictionValue]) -> Sent {
        self.send(reqwest::Method::POST, "/restrictions", Some(&Values { values })).await
    }

    /// `GET /booking_revisions/feed` for `property_id`, oldest first: the revisions not acknowledged yet.
    pub async fn feed(&self, property_id: &str) -> Sent {
        let property: String = url::form_urlencoded::byte_serialize(property_id.as_bytes()).collect();
        self.get(&format!("/booking_revisions/feed?filter[property_id]={property}&order[inserted_at]=asc")).await
    }

    /// `GET /booking_revisions/:id`.
    pub async fn revision(&self, id: &str) -> Sent {
        let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        self.get(&format!("/booking_revisions/{id}")).await
    }

    /// `POST /booking_revisions/:id/ack` (no body): the revision is in Frontdesk.
    pub async fn ack(&self, id: &str) -> Sent {
        let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        self.send::<()>(reqwest::Method::POST, &format!("/booking_revisions/{id}/ack"), None).await
    }

    /// `GET /room_types/options?filter[property_id]=…`: every room type of the property, without paging.
    pub async fn room_type_options(&self, property_id: &str) -> Sent {
        self.get(&format!("/room_types/options?filter[property_id]={}", encoded(property_id))).await
    }

    /// `GET /rate_plans/options?filter[property_id]=…`: every rate plan of the property, without paging.
    pub async fn rate_plan_options(&self, property_id: &str) -> Sent {
        self.get(&format!("/rate_plans/options?filter[property_id]={}", encoded(property_id))).await
    }

    /// `POST /room_types` with `{"room_type": …}`.
    pub async fn create_room_type(&self, room_type: &Value) -> Sent {
        self.send(reqwest::Method::POST, "/room_types", Some(&serde_json::json!({ "room_type": room_type }))).await
    }

    /// `POST /rate_plans` with `{"rate_plan": …}`.
    pub async fn create_rate_plan(&self, rate_plan: &Value) -> Sent {
        self.send(reqwest::Method::POST, "/rate_plans", Some(&serde_json::json!({ "rate_plan": rate_plan }))).await
    }

    /// `POST /webhooks` with `{"webhook": …}`.
    pub async fn create_webhook(&self, webhook: &Value) -> Sent {
        self.send(reqwest::Method::POST, "/webhooks", Some(&serde_json::json!({ "webhook": webhook }))).await
    }

    /// `PUT /webhooks/:id` with `{"webhook": …}`. `id` is one Channex gave (see [`is_plain_id`]).
    pub async fn update_webhook(&self, id: &str, webhook: &Value) -> Sent {
        let path = format!("/webhooks/{id}");
        self.send(reqwest::Method::PUT, &path, Some(&serde_json::json!({ "webhook": webhook }))).await
    }

    /// `DELETE /webhooks/:id`.
    pub async fn delete_webhook(&self, id: &str) -> Sent {
        self.send::<()>(reqwest::Method::DELETE, &format!("/webhooks/{id}"), None).await
    }

    /// `GET path` (`/room_types?filter[property_id]=…`).
    pub async fn get(&self, path: &str) -> Sent {
        self.send::<()>(reqwest::Method::GET, path, None).await
    }

    async fn send<B: Serialize>(&self, method: reqwest::Method, path: &str, body: Option<&B>) -> Sent {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base_url))
            .header("user-api-key", &self.api_key)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(err) => return Sent::NoAnswer(no_answer(err)),
        };
        let status = response.status().as_u16();
        match response.bytes().await {
            Ok(body) => Sent::Answered(Answer::read(status, &body)),
            Err(err) => Sent::NoAnswer(no_answer(err)),
        }
    }
}

/// `text` as it goes in a URL's query or path.
fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Why no answer came, in words (the URL left out; the key is in a header, never in a URL).
fn no_answer(err: reqwest::Error) -> String {
    if err.is_timeout() {
        "no answer in time".into()
    } else if err.is_connect() {
        "the host could not be reached".into()
    } else {
        format!("the call failed: {}", err.without_url())
    }
}

/// Whether `id` (one Channex answered) can stand in a request's path as it is: letters, digits and dashes, as
/// Channex's UUIDs are. Anything else is not put in a URL.
pub fn is_plain_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 100 && id.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_documented() {
        let ok = Answer::read(
            200,
            br#"{"data":[{"id":"eb31d631-4fcc-478a-80c3-bf7a2acf0699","type":"task"}],"meta":{"message":"Success","warnings":[]}}"#,
        );
        assert_eq!(ok.task_ids, ["eb31d631-4fcc-478a-80c3-bf7a2acf0699"]);
        assert_eq!(ok.words(), "200 Success");
        let old = Answer::read(200, br#"{"meta":{"message":"Success"}}"#);
        assert!(old.task_ids.is_empty() && old.error.is_none());
        let warned = Answer::read(
            200,
            br#"{"data":[],"meta":{"message":"Success","warnings":[{"rate":"-2","warning":{"rate":["must be greater than 0"]}}]}}"#,
        );
        assert_eq!(warned.warnings.len(), 1);
        assert_eq!(warned.words(), "200 Success; 1 value(s) refused");
        let refused = Answer::read(
            422,
            br#"{"errors":{"code":"validation_error","title":"Validation Error","details":{"title":["can't be blank"]}}}"#,
        );
        assert_eq!(refused.error.as_ref().unwrap().code, "validation_error");
        let limited = Answer::read(429, br#"{"errors":{"code":"http_too_many_requests","title":"Too Many Requests"}}"#);
        assert_eq!(limited.words(), "429 http_too_many_requests: Too Many Requests");
        let garbage = Answer::read(502, b"<html>bad gateway</html>");
        assert_eq!(garbage.error.unwrap().code, "unreadable");
    }
}
