//! The password asked again before a dangerous dashboard action (step-up: `domain::identity::step_up`).
//!
//! A handler of such an action reads its form as [`StepUpForm`] and calls [`StepUpForm::confirmed`] with what the
//! action is. When the password was given within `--step-up-minutes`, the form goes through as [`Posted`]. Otherwise
//! the answer is a page asking for the password, whose form posts the same fields again with the password; a right
//! password goes through, a wrong one asks again (401), and too many wrong ones wait like failed sign-ins (429).

use askama::Template;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::TimeDelta;
use serde::de::DeserializeOwned;

use super::page::{self, ConfirmFrame};
use super::session::{self, Posted, CSRF_FIELD};
use super::{assets, errors};
use crate::app::limits::client_address;
use crate::app::AppState;
use crate::domain::identity::step_up;
use crate::domain::Error;

/// The field of the step-up page that carries the password.
pub const PASSWORD_FIELD: &str = "stepUpPassword";

/// A dashboard form for a dangerous action, not yet confirmed.
pub struct StepUpForm<T> {
    posted: Posted<T>,
    /// The form's fields as posted (less the CSRF token and the password), to post again from the step-up page.
    fields: Vec<(String, String)>,
    password: Option<String>,
    action: String,
    cancel_href: String,
    address: String,
}

impl<T> FromRequest<AppState> for StepUpForm<T>
where
    T: DeserializeOwned,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (parts, session, bytes) = session::read_form(req, state).await?;
        let mut password = None;
        let mut fields = Vec::new();
        for (name, value) in url::form_urlencoded::parse(&bytes) {
            match name.as_ref() {
                CSRF_FIELD => {}
                PASSWORD_FIELD => password = Some(value.into_owned()),
                _ => fields.push((name.into_owned(), value.into_owned())),
            }
        }
        let encoded = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&fields).finish();
        let form = serde_urlencoded::from_str(&encoded)
            .map_err(|err| errors::bad_request(&format!("The form could not be read: {err}.")))?;
        let action = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().into());
        let cancel_href = session::referer_path(&parts.headers)
            .filter(|p| session::is_local_path(p) && *p != action)
            .unwrap_or_else(|| "/".into());
        Ok(StepUpForm {
            posted: Posted { session, form },
            fields,
            password,
            action,
            cancel_href,
            address: client_address(&parts, state),
        })
    }
}

#[derive(Template)]
#[template(path = "step_up.html")]
struct StepUpPage {
    frame: ConfirmFrame,
    what: String,
    minutes: u32,
    action: String,
    fields: Vec<(String, String)>,
    cancel_href: String,
    error: Option<String>,
}

impl<T> StepUpForm<T> {
    /// The form as posted, before it is confirmed (to ask "Are you sure?" first).
    pub fn form(&self) -> &T {
        &self.posted.form
    }

    /// The form, once the operator has given their password recently enough (or with this very post); else the
    /// page that asks for it. `what` names the action for the page ("Creating an API key").
    pub async fn confirmed(self, state: &AppState, what: &str) -> Result<Posted<T>, Response> {
        let minutes = state.config.sessions.step_up_minutes;
        let actor = &self.posted.session.actor;
        let error = match self.password.clone() {
            Some(password) => match step_up::give_password(&state.db, actor, password, &self.address).await {
                Ok(()) => return Ok(self.posted),
                Err(Error::Unauthorized(_)) => {
                    Some(("The password is not right.".to_string(), StatusCode::UNAUTHORIZED))
                }
                Err(Error::TooManyAttempts { retry_after_secs, .. }) => {
                    let wait = crate::web::view::wait_words(retry_after_secs);
                    let page = self.page(
                        what,
                        minutes,
                        Some(format!("Too many wrong passwords. Wait {wait}, then try again.")),
                        StatusCode::TOO_MANY_REQUESTS,
                    );
                    return Err(errors::with_retry_after(page, retry_after_secs));
                }
                Err(err) => return Err(errors::error_response(err)),
            },
            None => {
                let window = TimeDelta::minutes(i64::from(minutes));
                match step_up::password_fresh(&state.db, actor, window).await {
                    Ok(true) => return Ok(self.posted),
                    Ok(false) => None,
                    Err(err) => return Err(errors::error_response(err)),
                }
            }
        };
        let (message, status) = match error {
            Some((message, status)) => (Some(message), status),
            None => (None, StatusCode::OK),
        };
        Err(self.page(what, minutes, message, status))
    }

    fn page(&self, what: &str, minutes: u32, error: Option<String>, status: StatusCode) -> Response {
        let session = &self.posted.session;
        let t = StepUpPage {
            frame: ConfirmFrame {
                title: "Confirm your password".into(),
                organization_name: session.organization.name.clone(),
                operator_name: session.operator.name.clone(),
                csrf: session.csrf.clone(),
                css: assets::url("app.css"),
                js: assets::url("app.js"),
            },
            what: what.to_string(),
            minutes,
            action: self.action.clone(),
            fields: self.fields.clone(),
            cancel_href: self.cancel_href.clone(),
            error,
        };
        page::render(&t, status)
    }
}
