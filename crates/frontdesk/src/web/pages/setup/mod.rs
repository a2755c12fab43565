//! Setup: what an organization sets up before and beside the front desk's work. Hotels (create, edit, with their
//! room types, rooms and rate plans), the operators of the organization (add, invite, reset a password, remove) and
//! the signed-in operator's own password. Organization-wide pages, so they have a frame of their own ([`SetupChrome`])
//! without a hotel's tabs: an organization without a hotel yet sets up its first one here.
//!
//! Every write goes through the same domain functions as the REST routes (`hotels::update` is
//! `PUT /api/hotels/{id}`, `room_types::delete` is the room type's `DELETE`), so every rule, every 409 and every
//! validation message is the API's. Hotels and their catalogue are set up by owners and managers (the roles that
//! configure hotels, docs/roles.md); operators by owners; everyone changes their own password.

pub mod billing;
pub mod catalogue;
pub mod hotels;
pub mod operators;

use askama::Template;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;

use crate::app::AppState;
use crate::domain::access::{Scope, Task};
use crate::domain::hotels as hotel_records;
use crate::web::page::{render_page, HotelChoice, WebError};
use crate::web::session::Session;
use crate::web::{assets, errors};

pub fn router(state: &AppState) -> Router<AppState> {
    let hotel_setup = Router::new()
        .route("/setup", axum::routing::get(|| async { axum::response::Redirect::to("/setup/hotels") }))
        .merge(hotels::router())
        .merge(billing::router())
        .merge(catalogue::router())
        .route_layer(axum::middleware::from_fn_with_state((state.clone(), Needs::Task(Task::ConfigureHotel)), only));
    let rate_plans = catalogue::rate_plan_router()
        .route_layer(axum::middleware::from_fn_with_state((state.clone(), Needs::Scope(Scope::RatesWrite)), only));
    // Operators check their own: the list is the owner's, an operator's own password page everyone's.
    hotel_setup.merge(rate_plans).merge(operators::router())
}

/// What a group of setup pages takes.
#[derive(Debug, Clone, Copy)]
enum Needs {
    Task(Task),
    Scope(Scope),
}

/// Hotels, their billing, room types and rooms are set up by the roles that configure hotels; rate plans by the
/// roles that change rates. For the others every page of a group answers 403, saying which role it takes (the
/// domain refuses their writes too).
async fn only(State((state, needs)): State<(AppState, Needs)>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let session = match Session::from_request_parts(&mut parts, &state).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let allowed = match needs {
        Needs::Task(task) => session.actor.require(task),
        Needs::Scope(scope) => session.actor.require_scope(scope),
    };
    if let Err(refused) = allowed {
        return errors::error_response(refused);
    }
    next.run(Request::from_parts(parts, body)).await
}

/// The areas of setup, for its navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Hotels,
    Operators,
    Password,
}

/// The frame of a setup page: who is signed in, the organization's hotels (to go back to one's front desk), the
/// areas of setup, the flash message.
#[derive(Debug, Clone)]
pub struct SetupChrome {
    pub title: String,
    pub operator_id: String,
    pub operator_name: String,
    pub organization_name: String,
    pub hotels: Vec<HotelChoice>,
    pub area: Area,
    /// The areas the operator may open: hotels (the roles that configure them) and operators (owners).
    pub shown_hotels: bool,
    pub shown_operators: bool,
    pub csrf: String,
    pub flash: Option<crate::web::session::Flash>,
    pub css: String,
    pub js: String,
}

impl SetupChrome {
    pub async fn load(
        state: &AppState,
        session: &Session,
        area: Area,
        title: impl Into<String>,
    ) -> Result<Self, WebError> {
        let hotels = hotel_records::list(&state.db, &session.actor).await?;
        Ok(SetupChrome {
            title: title.into(),
            operator_id: session.operator.id.clone(),
            operator_name: session.operator.name.clone(),
            organization_name: session.organization.name.clone(),
            hotels: hotels.into_iter().map(|h| HotelChoice { id: h.id, name: h.name }).collect(),
            area,
            shown_hotels: session.actor.require(Task::ConfigureHotel).is_ok(),
            shown_operators: session.actor.require(Task::Administer).is_ok(),
            csrf: session.csrf.clone(),
            flash: session.flash.clone(),
            css: assets::url("app.css"),
            js: assets::url("app.js"),
        })
    }

    /// `aria-current` for the navigation link of an area.
    pub fn current(&self, area: Area) -> &'static str {
        if self.area == area {
            "page"
        } else {
            "false"
        }
    }

    /// Where "Front desk" leads: the dashboard's home, which opens the first hotel's page the operator starts on
    /// (Today, or housekeeping's board), or the setup of a first hotel.
    pub fn front_desk(&self) -> &'static str {
        "/"
    }
}

/// A signed-in operator on a setup page (the session, read once per request).
pub struct SetupPage {
    pub session: Session,
}

impl FromRequestParts<AppState> for SetupPage {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(SetupPage { session: Session::from_request_parts(parts, state).await? })
    }
}

impl SetupPage {
    pub async fn chrome(
        &self,
        state: &AppState,
        area: Area,
        title: impl Into<String>,
    ) -> Result<SetupChrome, WebError> {
        SetupChrome::load(state, &self.session, area, title).await
    }
}

/// Renders a setup page: 200, or 422 for a form refused with messages beside its fields.
pub fn render_form(template: &impl Template, session: &Session, state: &AppState, refused: bool) -> Response {
    let mut response = render_page(template, session, state);
    if refused {
        *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    response
}

impl From<SetupChrome> for crate::web::page::ConfirmFrame {
    fn from(c: SetupChrome) -> crate::web::page::ConfirmFrame {
        crate::web::page::ConfirmFrame {
            title: c.title,
            organization_name: c.organization_name,
            operator_name: c.operator_name,
            csrf: c.csrf,
            css: c.css,
            js: c.js,
        }
    }
}
