//! The read-only assistant endpoint: an MCP server (the official SDK, `rmcp`) whose tools answer questions about
//! the signed-in operator's organization from [`crate::domain::assistant`].
//!
//! It is served over Streamable HTTP at `/mcp` in stateless, JSON-response mode (see [`service`]): no session
//! lives in a process, so any number of processes can answer. Who is asking comes from the bearer-token check in
//! front of it (`http/mcp.rs`), which puts a [`Caller`] into the request; every tool is read-only, aggregate and
//! confined to the caller's organization.

use std::borrow::Cow;
use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ProtocolVersion, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::domain::assistant::{self, StayQuery};
use crate::domain::availability::{AvailabilityCopies, OfferKey};
use crate::domain::{validate, Actor, Error};
use crate::store::Db;

/// The operator a request to `/mcp` was authenticated as (inserted by the bearer check).
#[derive(Debug, Clone)]
pub struct Caller(pub Actor);

/// The protocol versions the assistant endpoint speaks.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25];

const INSTRUCTIONS: &str = "Read-only facts about the hotels of the signed-in operator's organization: hotels, room \
types, rate plans with prices, daily prices and restrictions, availability, housekeeping counts and a per-day \
schedule of counts. Amounts are integers in minor units of the stated currency (12000 EUR = 120.00 EUR). A count \
written like \"50+\" is a lower bound, not a total. Guests and individual reservations are never shown.";

#[derive(Clone)]
pub struct AssistantServer {
    db: Db,
    offer_key: OfferKey,
    copies: AvailabilityCopies,
    tool_router: ToolRouter<AssistantServer>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HotelParams {
    /// A hotel id from list_hotels.
    pub hotel_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatePlanParams {
    /// A hotel id from list_hotels.
    pub hotel_id: String,
    /// Only the plans of this room type (from list_room_types), and those pricing every room type.
    pub room_type_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DailyPricesParams {
    /// A rate plan id from list_rate_plans.
    pub rate_plan_id: String,
    /// First night, YYYY-MM-DD.
    pub date_from: String,
    /// Last night, YYYY-MM-DD, inclusive; at most 366 days after dateFrom.
    pub date_to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AvailabilityParams {
    /// A hotel id from list_hotels.
    pub hotel_id: String,
    /// Arrival, YYYY-MM-DD (not in the past).
    pub check_in_date: String,
    /// Departure, YYYY-MM-DD: 1 to 30 nights after checkInDate.
    pub check_out_date: String,
    /// 1 to 50; default 2.
    pub adults: Option<i64>,
    /// 0 to 50; default 0.
    pub children: Option<i64>,
    /// 0 to 50; default 0 (infants do not count toward occupancy).
    pub infants: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleParams {
    /// A hotel id from list_hotels.
    pub hotel_id: String,
    /// First day, YYYY-MM-DD.
    pub date_from: String,
    /// Last day, YYYY-MM-DD, inclusive; at most 366 days after dateFrom.
    pub date_to: String,
}

/// Every tool's name, as the metrics label tool calls (a name the assistant endpoint does not have is `unknown`: what a
/// client sends never becomes a label).
pub const TOOLS: &[&str] = &[
    "list_hotels",
    "list_room_types",
    "list_rate_plans",
    "get_daily_prices",
    "check_availability",
    "housekeeping_summary",
    "schedule_counts",
];

fn tool_label(name: &str) -> &'static str {
    TOOLS.iter().copied().find(|tool| *tool == name).unwrap_or("unknown")
}

/// The caller of this tool call, or a tool error when the request did not come through the bearer check.
fn caller(parts: &Parts) -> Result<&Actor, CallToolResult> {
    parts
        .extensions
        .get::<Caller>()
        .map(|c| &c.0)
        .ok_or_else(|| CallToolResult::error(vec![ContentBlock::text("not signed in")]))
}

/// A tool's answer for the caller of this call ([`caller`]): `tool` runs with the caller's actor, or the call is
/// answered with the tool error when there is none.
async fn as_caller<T: Serialize>(
    parts: &Parts,
    tool: impl AsyncFnOnce(&Actor) -> Result<T, Error>,
) -> Result<CallToolResult, ErrorData> {
    Ok(match caller(parts) {
        Ok(actor) => answer(tool(actor).await),
        Err(refused) => refused,
    })
}

/// A tool's answer: the value as structured content (and its JSON text), or a readable tool error.
fn answer<T: Serialize>(result: Result<T, Error>) -> CallToolResult {
    match result.map(serde_json::to_value) {
        Ok(Ok(value)) => CallToolResult::structured(value),
        Ok(Err(err)) => {
            tracing::error!(error = %err, "an assistant tool's answer did not serialize");
            CallToolResult::error(vec![ContentBlock::text("the service could not answer; try again later")])
        }
        Err(err) => CallToolResult::error(vec![ContentBlock::text(assistant::error_message(&err))]),
    }
}

#[tool_router]
impl AssistantServer {
    pub fn new(db: Db, offer_key: OfferKey, copies: AvailabilityCopies) -> AssistantServer {
        AssistantServer { db, offer_key, copies, tool_router: Self::tool_router() }
    }

    /// The hotels of your organization: id, name, currency and time zone.
    #[tool(annotations(
        title = "List hotels",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_hotels(&self, Extension(parts): Extension<Parts>) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| {
            assistant::hotels(&self.db, actor).await.map(|hotels| serde_json::json!({ "hotels": hotels }))
        })
        .await
    }

    /// The room types of a hotel with their occupancy limits.
    #[tool(annotations(
        title = "List room types",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_room_types(
        &self,
        Parameters(p): Parameters<HotelParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| {
            let types = assistant::room_types(&self.db, actor, &p.hotel_id).await;
            types.map(|types| serde_json::json!({ "roomTypes": types }))
        })
        .await
    }

    /// The rate plans of a hotel with catalogue prices in minor units: tonight's price and the lowest and highest
    /// nightly price over the next 30 nights.
    #[tool(annotations(
        title = "List rate plans",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_rate_plans(
        &self,
        Parameters(p): Parameters<RatePlanParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| {
            let plans = assistant::rate_plans(&self.db, actor, &p.hotel_id, p.room_type_id.as_deref()).await;
            plans.map(|plans| serde_json::json!({ "ratePlans": plans }))
        })
        .await
    }

    /// The published nightly prices (minor units) and restrictions (stop-sell, closed to arrival/departure,
    /// minimum and maximum stay, allotment) of one rate plan over a date range of at most 366 days.
    #[tool(annotations(
        title = "Daily prices of a rate plan",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_daily_prices(
        &self,
        Parameters(p): Parameters<DailyPricesParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| {
            assistant::daily_prices(&self.db, actor, &p.rate_plan_id, &p.date_from, &p.date_to).await
        })
        .await
    }

    /// What can be sold for a stay and party: each room type and rate plan with its nightly and total price
    /// (minor units) and how many rooms are left ("50+" is a lower bound).
    #[tool(annotations(
        title = "Check availability",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn check_availability(
        &self,
        Parameters(p): Parameters<AvailabilityParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        let stay = StayQuery {
            check_in_date: p.check_in_date,
            check_out_date: p.check_out_date,
            adults: p.adults,
            children: p.children,
            infants: p.infants,
        };
        as_caller(&parts, async |actor| {
            let offers =
                assistant::availability(&self.db, &self.offer_key, &self.copies, actor, &p.hotel_id, stay).await;
            offers.map(|offers| serde_json::json!({ "offers": offers }))
        })
        .await
    }

    /// How many rooms of a hotel are CLEAN, DIRTY, INSPECTED and OUT_OF_ORDER ("50+" is a lower bound).
    #[tool(annotations(
        title = "Housekeeping counts",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn housekeeping_summary(
        &self,
        Parameters(p): Parameters<HotelParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| assistant::housekeeping(&self.db, actor, &p.hotel_id).await).await
    }

    /// Per-day counts for a hotel over at most 366 days: arrivals, departures, in-house stays and booking
    /// requests pending approval (by arrival day). Counts only, never who; "50+" is a lower bound.
    #[tool(annotations(
        title = "Daily schedule counts",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn schedule_counts(
        &self,
        Parameters(p): Parameters<ScheduleParams>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        as_caller(&parts, async |actor| {
            assistant::schedule(&self.db, actor, &p.hotel_id, &p.date_from, &p.date_to).await
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AssistantServer {
    /// Every tool call, checked once for the service's rule on text before its tool runs: an argument holding a
    /// control character ([`crate::domain::validate::is_forbidden_char`]) is a tool error naming it.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let tool = tool_label(&request.name);
        let arguments = request.arguments.clone().map(serde_json::Value::Object).unwrap_or_default();
        if let Some(field) = validate::fields_with_forbidden_chars(&arguments).into_iter().next() {
            let message = format!("{}: {}", field.escape_default(), validate::FORBIDDEN_CHARS_MESSAGE);
            crate::metrics::mcp_tool_call(tool, false, started.elapsed());
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let answer = self.tool_router.call(call).await;
        let ok = match &answer {
            Ok(rmcp::model::CallToolResponse::Complete(result)) => result.is_error != Some(true),
            Ok(_) => true,
            Err(_) => false,
        };
        crate::metrics::mcp_tool_call(tool, ok, started.elapsed());
        answer
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("frontdesk", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }
}

/// The Streamable HTTP service for `/mcp`: stateless (no session kept in this process) and answering plain JSON.
///
/// The `Host` check of the SDK (against DNS rebinding of servers on a developer's machine) is off: the assistant endpoint
/// is meant to sit behind a public URL and proxies, and it honours no ambient credential (no cookie, no address
/// allow-list), only a bearer token, which a rebinding page does not have.
pub fn service(
    db: Db,
    offer_key: OfferKey,
    copies: AvailabilityCopies,
) -> StreamableHttpService<AssistantServer, NeverSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts();
    // The tools are described once; each request gets a cheap clone.
    let server = AssistantServer::new(db, offer_key, copies);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(NeverSessionManager::default()), config)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_metrics_know_every_tool() {
        let mut listed: Vec<String> =
            super::AssistantServer::tool_router().list_all().into_iter().map(|tool| tool.name.to_string()).collect();
        let mut known: Vec<String> = super::TOOLS.iter().map(|t| t.to_string()).collect();
        listed.sort();
        known.sort();
        assert_eq!(listed, known);
    }
}
