//! Connected assistants: the assistant endpoint clients an operator of the organization allowed (name, where its sign-ins
//! return, who allowed it and when, last use), with revoke, which cuts it off at once. Through
//! `domain::connected_assistants`.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;

use super::{when, when_or, Frame, Nav, Tab};
use crate::app::AppState;
use crate::domain::connected_assistants::{self, ConnectedAssistant};
use crate::web::form;
use crate::web::page::{render_page, Chrome, ConfirmPage, Section, WebResult};
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/integrations/assistants", get(list))
        .route("/hotels/{hotel_id}/integrations/assistants/{client_id}/revoke", post(revoke))
}

pub struct AssistantRow {
    pub name: String,
    pub hosts: String,
    pub allowed_by: String,
    pub allowed: String,
    pub last_used: String,
    pub revoke_href: String,
}

fn row(frame: &Frame, a: &ConnectedAssistant) -> AssistantRow {
    let hotel = &frame.chrome.hotel;
    AssistantRow {
        name: a.name.clone(),
        hosts: a.redirect_hosts.join(", "),
        allowed_by: a.allowed_by.join(", "),
        allowed: when(hotel, a.allowed_at),
        last_used: when_or(hotel, a.last_used_at, "not yet"),
        revoke_href: frame.path(&format!("assistants/{}/revoke", a.client_id)),
    }
}

#[derive(Template)]
#[template(path = "integrations/assistants.html")]
struct ListPage {
    chrome: Chrome,
    nav: Nav,
    assistants: Vec<AssistantRow>,
    mcp_url: String,
}

async fn list(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let frame = Frame::load(&state, &page, Tab::Assistants, "Connected assistants").await?;
    let assistants = connected_assistants::list(&state.db, &page.session.actor).await?;
    let t = ListPage {
        assistants: assistants.iter().map(|a| row(&frame, a)).collect(),
        mcp_url: format!("{}/mcp", state.config.public_base()),
        chrome: frame.chrome,
        nav: frame.nav,
    };
    Ok(render_page(&t, &page.session, &state))
}

async fn revoke(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, client_id)): Path<(String, String)>,
    posted: Posted<HashMap<String, String>>,
) -> WebResult {
    let actor = &page.session.actor;
    let assistant = connected_assistants::get(&state.db, actor, &client_id).await?;
    let back = page.path("integrations/assistants");
    if !form::confirmed(posted.form.get("confirmed").map(String::as_str)) {
        let frame = Frame::load(&state, &page, Tab::Assistants, "Please confirm").await?;
        let t = ConfirmPage {
            frame: frame.chrome.into(),
            question: format!("Disconnect the assistant “{}”?", assistant.name),
            detail: "It is cut off at once: its next question is refused, and it must be allowed again by signing in \
                     to ask more."
                .into(),
            action: page.path(&format!("integrations/assistants/{client_id}/revoke")),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, disconnect “{}”", assistant.name),
            cancel_href: back,
        };
        return Ok(render_page(&t, &page.session, &state));
    }
    connected_assistants::revoke(&state.db, actor, &client_id).await?;
    let flash = Flash::success(format!("Disconnected the assistant “{}”.", assistant.name));
    Ok(session::redirect_with(&back, flash, &state))
}
