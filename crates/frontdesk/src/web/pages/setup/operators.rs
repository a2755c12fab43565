//! The operators of the organization: the list with their roles; adding one with a password or with an invitation
//! link, in a role and for every hotel or one; changing another's role; giving another a new password; removing one. The signed-in operator's own password. The invitation link's page, where an
//! invited operator chooses a password and is signed in.
//!
//! The rules are the domain's (`identity::add_operator`, `invite_operator`, `reset_password`, `remove_operator`,
//! `change_own_password`, `accept_invitation`), which the command line's `admin set-password` and
//! `admin remove-operator` call too: a new password or a removal ends every session, token and assistant grant of
//! that operator; nobody removes themselves, and the last operator stays.

use askama::Template;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{render_form, Area, SetupChrome, SetupPage};
use crate::app::limits::{client_address, limit_sign_in, ClientAddress};
use crate::app::AppState;
use crate::domain::identity::{self, Invitation, Operator, OperatorEntry};
use crate::domain::{secrets, Error};
use crate::web::assets;
use crate::web::form::{self, FormErrors};
use crate::web::page::{self, render_page, ConfirmPage, WebResult};
use crate::web::session::{self, Cookie, Flash, Posted};
use crate::web::step_up::StepUpForm;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/setup/operators", get(list).post(add))
        .route("/setup/operators/{id}/password", get(reset_form).post(reset))
        .route("/setup/operators/{id}/invitation", post(renew))
        .route("/setup/operators/{id}/remove", post(remove))
        .route("/setup/operators/{id}/role", post(change_role))
        .route("/setup/password", get(own_password_form).post(change_own_password))
        // The token travels in the query and the form, not the path: request logs name paths.
        .route("/invitation", get(invitation).post(accept))
}

/// The date and time (UTC) an invitation link works until, as the page says it.
fn until(at: DateTime<Utc>) -> String {
    at.format("%-d %b %Y, %H:%M UTC").to_string()
}

struct OperatorRow {
    operator: Operator,
    /// "Every hotel", or the names of theirs.
    hotels: String,
    is_me: bool,
    /// "Invited: the link works until …" or "Invited: the link has expired"; empty once they have a password.
    invitation: String,
}

/// The role a new operator is offered: the least a new colleague at the desk needs.
const DEFAULT_ROLE: &str = "FRONT_DESK";

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct AddForm {
    name: String,
    email: String,
    /// `invite` (a link to pass on) or `password` (chosen here).
    mode: String,
    password: String,
    /// A role's code (`FRONT_DESK`); the form offers the front desk first.
    role: String,
    /// A hotel's id, or empty for every hotel.
    hotel: String,
}

impl AddForm {
    fn staffing(&self) -> Result<identity::Staffing, Error> {
        let hotel_ids = (!self.hotel.is_empty()).then(|| vec![self.hotel.clone()]);
        // A form without a role asks for the one the form offers first.
        let role = if self.role.is_empty() { DEFAULT_ROLE.to_string() } else { self.role.clone() };
        identity::RoleIn { role, hotel_ids }.staffing()
    }

    fn invites(&self) -> bool {
        self.mode != "password"
    }
}

#[derive(Template)]
#[template(path = "setup/operators.html")]
struct ListTemplate {
    chrome: SetupChrome,
    rows: Vec<OperatorRow>,
    /// Every role: (code, name).
    roles: Vec<(&'static str, &'static str)>,
    /// The organization's hotels: (id, name).
    hotels: Vec<(String, String)>,
    form: AddForm,
    errors: FormErrors,
    unplaced: Vec<String>,
}

async fn list_page(state: &AppState, page: &SetupPage, form: AddForm, errors: FormErrors) -> WebResult {
    let actor = &page.session.actor;
    let now = crate::domain::now();
    let hotels: Vec<(String, String)> =
        crate::domain::hotels::list(&state.db, actor).await?.into_iter().map(|h| (h.id, h.name)).collect();
    let rows = identity::operators_with_invitations(&state.db, actor)
        .await?
        .into_iter()
        .map(|OperatorEntry { operator, invited_until }| OperatorRow {
            hotels: match &operator.hotel_ids {
                None => "Every hotel".to_string(),
                Some(ids) => ids
                    .iter()
                    .map(|id| hotels.iter().find(|(h, _)| h == id).map_or(id.as_str(), |(_, name)| name.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            },
            is_me: operator.id == page.session.operator.id,
            invitation: match invited_until {
                Some(at) if at > now => format!("Invited: the link works until {}", until(at)),
                Some(_) => "Invited: the link has expired".to_string(),
                None => String::new(),
            },
            operator,
        })
        .collect();
    let refused = !errors.is_empty();
    use strum::IntoEnumIterator;
    let template = ListTemplate {
        chrome: page.chrome(state, Area::Operators, "Operators").await?,
        rows,
        roles: identity::Role::iter().map(|r| (r.as_str(), r.label())).collect(),
        hotels,
        unplaced: errors.unplaced(&["name", "email", "password", "role", "hotelIds"]),
        form,
        errors,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn list(State(state): State<AppState>, page: SetupPage) -> WebResult {
    let form = AddForm { mode: "invite".into(), role: DEFAULT_ROLE.into(), ..AddForm::default() };
    list_page(&state, &page, form, FormErrors::default()).await
}

/// The page that shows an invitation's link, once: it is not stored, so it cannot be shown again (a new one can be
/// made).
#[derive(Template)]
#[template(path = "setup/invitation_link.html")]
struct LinkTemplate {
    chrome: SetupChrome,
    name: String,
    email: String,
    link: String,
    until: String,
}

async fn link_page(state: &AppState, page: &SetupPage, invitation: Invitation) -> WebResult {
    let template = LinkTemplate {
        chrome: page.chrome(state, Area::Operators, "Invitation link").await?,
        name: invitation.operator.name,
        email: invitation.operator.email,
        link: format!("{}/invitation?token={}", state.config.public_base(), invitation.token),
        until: until(invitation.expires_at),
    };
    Ok(render_page(&template, &page.session, state))
}

async fn add(State(state): State<AppState>, page: SetupPage, posted: Posted<AddForm>) -> WebResult {
    let mut f = posted.form;
    let actor = &page.session.actor;
    let staffing = match f.staffing() {
        Ok(staffing) => staffing,
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            return list_page(&state, &page, f, errors).await;
        }
    };
    if f.invites() {
        match identity::invite_operator(&state.db, actor, f.email.trim(), &f.name, &staffing).await {
            Ok(invitation) => link_page(&state, &page, invitation).await,
            Err(err) => {
                let mut errors = FormErrors::default();
                errors.absorb(err)?;
                list_page(&state, &page, f, errors).await
            }
        }
    } else {
        let password = std::mem::take(&mut f.password);
        match identity::add_operator(&state.db, actor, f.email.trim(), &f.name, &password, &staffing).await {
            Ok(op) => {
                let flash = Flash::success(format!("Added {} ({}). Give them their password.", op.name, op.email));
                Ok(session::redirect_with("/setup/operators", flash, &state))
            }
            Err(err) => {
                let mut errors = FormErrors::default();
                errors.absorb(err)?;
                list_page(&state, &page, f, errors).await
            }
        }
    }
}

async fn renew(
    State(state): State<AppState>,
    page: SetupPage,
    Path(id): Path<String>,
    _posted: Posted<session::NoFields>,
) -> WebResult {
    match identity::renew_invitation(&state.db, &page.session.actor, &id).await {
        Ok(invitation) => link_page(&state, &page, invitation).await,
        Err(Error::Conflict(message)) => {
            Ok(session::redirect_with("/setup/operators", Flash::error(capital(&message) + "."), &state))
        }
        Err(err) => Err(err.into()),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoleForm {
    role: String,
}

/// `POST /setup/operators/{id}/role`: another operator's new role, for the hotels they have.
async fn change_role(
    State(state): State<AppState>,
    page: SetupPage,
    Path(id): Path<String>,
    form: StepUpForm<RoleForm>,
) -> WebResult {
    let posted = match form.confirmed(&state, "Changing an operator's role").await {
        Ok(posted) => posted,
        Err(asked) => return Ok(asked),
    };
    let actor = &page.session.actor;
    let operator = identity::operator_of_organization(&state.db, actor, &id).await?;
    let asked = identity::RoleIn { role: posted.form.role.clone(), hotel_ids: operator.hotel_ids.clone() };
    let outcome = match asked.staffing() {
        Ok(staffing) => identity::set_role(&state.db, actor, &id, &staffing).await,
        Err(err) => Err(err),
    };
    let flash = match outcome {
        Ok(op) => Flash::success(format!("{} is now {}.", op.name, op.role.label())),
        Err(Error::Conflict(message)) => Flash::error(format!("{} keeps their role: {message}.", operator.name)),
        Err(Error::Unprocessable(_)) => Flash::error("Choose one of the roles offered.".to_string()),
        Err(err) => return Err(err.into()),
    };
    Ok(session::redirect_with("/setup/operators", flash, &state))
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PasswordForm {
    password: String,
}

#[derive(Template)]
#[template(path = "setup/operator_password.html")]
struct ResetTemplate {
    chrome: SetupChrome,
    operator: Operator,
    errors: FormErrors,
}

async fn reset_page(state: &AppState, page: &SetupPage, operator: Operator, errors: FormErrors) -> WebResult {
    let refused = !errors.is_empty();
    let template = ResetTemplate {
        chrome: page.chrome(state, Area::Operators, format!("New password for {}", operator.name)).await?,
        operator,
        errors,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn reset_form(State(state): State<AppState>, page: SetupPage, Path(id): Path<String>) -> WebResult {
    let operator = identity::operator_of_organization(&state.db, &page.session.actor, &id).await?;
    if operator.id == page.session.operator.id {
        return Ok(Redirect::to("/setup/password").into_response());
    }
    reset_page(&state, &page, operator, FormErrors::default()).await
}

async fn reset(
    State(state): State<AppState>,
    page: SetupPage,
    Path(id): Path<String>,
    posted: Posted<PasswordForm>,
) -> WebResult {
    let operator = identity::operator_of_organization(&state.db, &page.session.actor, &id).await?;
    match identity::reset_password(&state.db, &page.session.actor, &id, &posted.form.password).await {
        Ok(op) => {
            let flash = Flash::success(format!(
                "{} has a new password: give it to them. Every session and token of theirs has ended.",
                op.name
            ));
            Ok(session::redirect_with("/setup/operators", flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            reset_page(&state, &page, operator, errors).await
        }
    }
}

#[derive(Deserialize)]
struct RemoveForm {
    confirmed: Option<String>,
}

async fn remove(
    State(state): State<AppState>,
    page: SetupPage,
    Path(id): Path<String>,
    step_up: StepUpForm<RemoveForm>,
) -> WebResult {
    let operator = identity::operator_of_organization(&state.db, &page.session.actor, &id).await?;
    if !form::confirmed(step_up.form().confirmed.as_deref()) {
        let template = ConfirmPage {
            frame: page.chrome(&state, Area::Operators, "Please confirm").await?.into(),
            question: format!("Remove {} ({})?", operator.name, operator.email),
            detail: "They can no longer sign in; every session, access token and connected assistant of theirs ends \
                     at once."
                .into(),
            action: format!("/setup/operators/{id}/remove"),
            fields: vec![("confirmed".into(), "yes".into())],
            button: format!("Yes, remove {}", operator.name),
            cancel_href: "/setup/operators".into(),
        };
        return Ok(render_page(&template, &page.session, &state));
    }
    if let Err(asked) = step_up.confirmed(&state, &format!("Removing {}", operator.name)).await {
        return Ok(asked);
    }
    let flash = match identity::remove_operator(&state.db, &page.session.actor, &id).await {
        Ok(op) => Flash::success(format!("Removed {}. Their sessions have ended.", op.name)),
        Err(Error::Conflict(message)) => Flash::error(format!("{} was not removed: {message}.", operator.name)),
        Err(err) => return Err(err.into()),
    };
    Ok(session::redirect_with("/setup/operators", flash, &state))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct OwnPasswordForm {
    current_password: String,
    password: String,
}

#[derive(Template)]
#[template(path = "setup/password.html")]
struct OwnPasswordTemplate {
    chrome: SetupChrome,
    email: String,
    errors: FormErrors,
}

async fn own_password_page(state: &AppState, page: &SetupPage, errors: FormErrors) -> WebResult {
    let refused = !errors.is_empty();
    let template = OwnPasswordTemplate {
        chrome: page.chrome(state, Area::Password, "Your password").await?,
        email: page.session.operator.email.clone(),
        errors,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn own_password_form(State(state): State<AppState>, page: SetupPage) -> WebResult {
    own_password_page(&state, &page, FormErrors::default()).await
}

/// Changes the signed-in operator's password. Every session of theirs ends, this browser's too, which gets a new
/// one in its place.
async fn change_own_password(
    State(state): State<AppState>,
    page: SetupPage,
    ClientAddress(address): ClientAddress,
    headers: axum::http::HeaderMap,
    posted: Posted<OwnPasswordForm>,
) -> WebResult {
    let f = posted.form;
    let user_agent = headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok());
    let limits = state.config.session_limits();
    match identity::change_own_password(
        &state.db,
        &page.session.actor,
        f.current_password,
        &f.password,
        &address,
        limits,
        user_agent,
    )
    .await
    {
        Ok(signed_in) => {
            let flash = Flash::success("Your password is changed. Every other session and token of yours has ended.");
            let mut response = session::redirect_with("/setup/password", flash, &state);
            let max_age = (signed_in.expires_at - chrono::Utc::now()).num_seconds().max(0);
            session::append_cookie(
                &mut response,
                &session::set_cookie(Cookie::Session, &signed_in.token, max_age, &state),
            );
            Ok(response)
        }
        Err(Error::TooManyAttempts { retry_after_secs, .. }) => {
            let mut errors = FormErrors::default();
            let wait = crate::web::view::wait_words(retry_after_secs);
            errors.add("currentPassword", format!("Too many wrong passwords. Wait {wait}, then try again."));
            let response = own_password_page(&state, &page, errors).await?;
            Ok(page::with_retry_after(response, retry_after_secs))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            own_password_page(&state, &page, errors).await
        }
    }
}

/// The invitation link's page: no session (the invited operator has none yet); the link's token opens it. Its form
/// carries a random token doubled in a cookie, as the sign-in form does, besides the origin check of every post.
#[derive(Template)]
#[template(path = "setup/invitation.html")]
struct InvitationTemplate {
    css: String,
    csrf: String,
    token: String,
    name: String,
    email: String,
    organization: String,
    invited_by: String,
    errors: FormErrors,
}

fn invitation_page(state: &AppState, token: &str, view: identity::InvitationView, errors: FormErrors) -> Response {
    let csrf = secrets::generate("");
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    let template = InvitationTemplate {
        css: assets::url("app.css"),
        csrf: csrf.clone(),
        token: token.to_string(),
        name: view.operator.name,
        email: view.operator.email,
        organization: view.organization.name,
        invited_by: view.invited_by,
        errors,
    };
    let mut response = page::render(&template, status);
    session::append_cookie(&mut response, &session::set_cookie(Cookie::SignInCsrf, &csrf, 3600, state));
    response
}

/// The answer for a link that does not work (unknown, used, replaced or expired: one answer for all).
fn invalid_link() -> Response {
    let page = page::MessagePage {
        title: "This link does not work",
        message: "The invitation link was used already, has expired, or was replaced by a newer one. Ask an operator \
                  of your organization for a new link.",
        css: assets::url("app.css"),
        link: ("/sign-in", "Sign in"),
    };
    page::render(&page, StatusCode::NOT_FOUND)
}

#[derive(Deserialize)]
struct TokenQuery {
    #[serde(default)]
    token: String,
}

async fn invitation(State(state): State<AppState>, Query(TokenQuery { token }): Query<TokenQuery>) -> Response {
    match identity::invitation(&state.db, &token).await {
        Ok(view) => invitation_page(&state, &token, view, FormErrors::default()),
        Err(Error::NotFound(_)) => invalid_link(),
        Err(err) => page::error_response(err),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AcceptForm {
    #[serde(rename = "_csrf")]
    csrf: String,
    token: String,
    password: String,
}

/// Sets the invited operator's password, once, and signs them in.
async fn accept(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(Form(form)) = Form::<AcceptForm>::from_request(Request::from_parts(parts.clone(), body), &state).await
    else {
        return page::bad_request("The form could not be read.");
    };
    let expected = session::cookie(&parts.headers, Cookie::SignInCsrf.name(&state)).unwrap_or_default();
    if !session::csrf_matches(&expected, Some(&form.csrf)) {
        return page::forbidden("This form has expired. Open the invitation link again.");
    }
    if let Err(err) = limit_sign_in(&parts, &state).await {
        return page::error_response(err);
    }
    let token = form.token;
    let address = client_address(&parts, &state);
    let user_agent = parts.headers.get(axum::http::header::USER_AGENT).and_then(|v| v.to_str().ok());
    let limits = state.config.session_limits();
    match identity::accept_invitation(&state.db, &token, &form.password, &address, limits, user_agent).await {
        Ok(signed_in) => {
            if let Err(refused) = session::end_earlier_session(&parts.headers, &state, &signed_in.operator).await {
                return refused;
            }
            let flash = Flash::success(format!("Welcome, {}. Your password is set.", signed_in.operator.name));
            let mut response = session::redirect_with("/", flash, &state);
            let max_age = (signed_in.expires_at - chrono::Utc::now()).num_seconds().max(0);
            session::append_cookie(
                &mut response,
                &session::set_cookie(Cookie::Session, &signed_in.token, max_age, &state),
            );
            session::append_cookie(&mut response, &session::clear_cookie(Cookie::SignInCsrf, &state));
            response
        }
        Err(Error::NotFound(_)) => invalid_link(),
        Err(err @ Error::Validation(_)) => {
            let mut errors = FormErrors::default();
            if let Err(err) = errors.absorb(err) {
                return page::error_response(err);
            }
            match identity::invitation(&state.db, &token).await {
                Ok(view) => invitation_page(&state, &token, view, errors),
                Err(_) => invalid_link(),
            }
        }
        Err(err) => page::error_response(err),
    }
}
