//! Webhook subscriptions: operator access token only.

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::app::AppState;
use crate::domain::webhooks::{
    self, DeliveriesQuery, WebhookDelivery, WebhookSubscription, WebhookSubscriptionCreated, WebhookSubscriptionIn,
    WebhookSubscriptionPatch,
};
use crate::domain::Result;
use crate::http::auth::Principal;
use crate::http::extract::{Json, Path, Query};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhook_subscriptions, create_webhook_subscription))
        .routes(routes!(get_webhook_subscription, update_webhook_subscription, delete_webhook_subscription))
        .routes(routes!(list_webhook_deliveries))
}

/// The organization's subscriptions (never their secrets).
#[utoipa::path(
    get,
    path = "/api/webhooksubscriptions",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    responses(
        (status = 200, body = Vec<WebhookSubscription>),
        (status = 403, description = "Not an operator access token"),
    )
)]
async fn list_webhook_subscriptions(
    State(state): State<AppState>,
    Principal(actor): Principal,
) -> Result<Json<Vec<WebhookSubscription>>> {
    webhooks::list(&state.db, &actor).await.map(Json)
}

/// Subscribes a URL to a hotel's events. The answer carries the signing secret, exactly once.
#[utoipa::path(
    post,
    path = "/api/webhooksubscriptions",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    request_body = WebhookSubscriptionIn,
    responses(
        (status = 200, body = WebhookSubscriptionCreated),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "The hotel is not in the organization"),
    )
)]
async fn create_webhook_subscription(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Json(input): Json<WebhookSubscriptionIn>,
) -> Result<Json<WebhookSubscriptionCreated>> {
    webhooks::create(&state.db, &state.webhooks, &actor, input).await.map(Json)
}

/// One subscription (without its secret).
#[utoipa::path(
    get,
    path = "/api/webhooksubscriptions/{webhookSubscriptionId}",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    params(("webhookSubscriptionId" = String, Path, description = "The subscription's id")),
    responses(
        (status = 200, body = WebhookSubscription),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such subscription in the organization"),
    )
)]
async fn get_webhook_subscription(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<WebhookSubscription>> {
    webhooks::get(&state.db, &actor, &id).await.map(Json)
}

/// Changes the URL, the events or `active` (`true` turns a subscription back on and clears its failure count).
/// The hotel and the secret are immutable.
#[utoipa::path(
    put,
    path = "/api/webhooksubscriptions/{webhookSubscriptionId}",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    params(("webhookSubscriptionId" = String, Path, description = "The subscription's id")),
    request_body = WebhookSubscriptionPatch,
    responses(
        (status = 200, body = WebhookSubscription),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such subscription in the organization"),
    )
)]
async fn update_webhook_subscription(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Json(patch): Json<WebhookSubscriptionPatch>,
) -> Result<Json<WebhookSubscription>> {
    webhooks::update(&state.db, &state.webhooks, &actor, &id, patch).await.map(Json)
}

/// Deletes a subscription; nothing more is sent to it.
#[utoipa::path(
    delete,
    path = "/api/webhooksubscriptions/{webhookSubscriptionId}",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    params(("webhookSubscriptionId" = String, Path, description = "The subscription's id")),
    responses(
        (status = 200, description = "The deleted subscription", body = WebhookSubscription),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such subscription in the organization"),
    )
)]
async fn delete_webhook_subscription(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
) -> Result<Json<WebhookSubscription>> {
    webhooks::delete(&state.db, &actor, &id).await.map(Json)
}

/// The subscription's most recent delivery attempts, newest first (the last 100 are kept).
#[utoipa::path(
    get,
    path = "/api/webhooksubscriptions/{webhookSubscriptionId}/deliveries",
    tag = "webhookSubscriptions",
    security(("accessToken" = [])),
    params(("webhookSubscriptionId" = String, Path, description = "The subscription's id"), DeliveriesQuery),
    responses(
        (status = 200, body = Vec<WebhookDelivery>),
        (status = 403, description = "Not an operator access token"),
        (status = 404, description = "No such subscription in the organization"),
    )
)]
async fn list_webhook_deliveries(
    State(state): State<AppState>,
    Principal(actor): Principal,
    Path(id): Path<String>,
    Query(query): Query<DeliveriesQuery>,
) -> Result<Json<Vec<WebhookDelivery>>> {
    webhooks::deliveries(&state.db, &actor, &id, query).await.map(Json)
}
