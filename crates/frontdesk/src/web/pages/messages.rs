//! A hotel's guest e-mails: how guests reach the hotel, when the reminder goes out, and the wording of each
//! message per language, edited with a preview. Saved through `domain::guest_messages`, which refuses a wording
//! that does not render.

use askama::Template;
use axum::extract::{Path, State};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::guest_messages::{self, render::VARIABLES, Language, Letter, MessageKind, MessageSettings};
use crate::web::form::{optional, FormErrors};
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/messages", get(show).post(save_settings))
        .route("/hotels/{hotel_id}/messages/{kind}/{language}", get(edit).post(save_wording))
}

/// The settings form, as typed.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SettingsForm {
    contact_email: String,
    contact_phone: String,
    reminder_days_before: String,
    reminder_hour: String,
    /// The checkbox: present when ticked.
    channel_bookings: Option<String>,
}

impl SettingsForm {
    fn of(s: &MessageSettings) -> SettingsForm {
        SettingsForm {
            contact_email: s.contact_email.clone().unwrap_or_default(),
            contact_phone: s.contact_phone.clone().unwrap_or_default(),
            reminder_days_before: s.reminder_days_before.to_string(),
            reminder_hour: s.reminder_hour.to_string(),
            channel_bookings: s.channel_bookings.then(|| "on".to_string()),
        }
    }
}

struct WordingLink {
    kind: &'static str,
    language: &'static str,
    href: String,
}

#[derive(Template)]
#[template(path = "messages/settings.html")]
struct SettingsTemplate {
    chrome: Chrome,
    form: SettingsForm,
    errors: FormErrors,
    hours: Vec<(i64, String)>,
    wordings: Vec<WordingLink>,
    mail_configured: bool,
}

async fn settings_page(
    state: &AppState,
    page: &HotelPage,
    form: SettingsForm,
    errors: FormErrors,
) -> Result<SettingsTemplate, crate::web::page::WebError> {
    let wordings = MessageKind::ALL
        .into_iter()
        .flat_map(|kind| {
            Language::ALL.into_iter().map(move |language| WordingLink {
                kind: kind.label(),
                language: language.name(),
                href: page.path(&format!("messages/{}/{}", kind.as_str(), language.code())),
            })
        })
        .collect();
    Ok(SettingsTemplate {
        chrome: page.chrome(state, Section::Settings, "Guest e-mails").await?,
        form,
        errors,
        hours: (0..24).map(|h| (h, format!("{h:02}:00"))).collect(),
        wordings,
        mail_configured: state.config.mail.smtp_url.is_some(),
    })
}

async fn show(State(state): State<AppState>, page: HotelPage) -> WebResult {
    page.session.actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let settings = guest_messages::settings(&state.db, &page.session.actor, &page.hotel.id).await?;
    let t = settings_page(&state, &page, SettingsForm::of(&settings), FormErrors::default()).await?;
    Ok(render_page(&t, &page.session, &state))
}

async fn save_settings(State(state): State<AppState>, page: HotelPage, posted: Posted<SettingsForm>) -> WebResult {
    let form = posted.form;
    let mut errors = FormErrors::default();
    let days = form.reminder_days_before.trim().parse::<i64>();
    let hour = form.reminder_hour.trim().parse::<i64>();
    if days.is_err() {
        errors.add("reminderDaysBefore", "Enter a number of days, 0 to 30.");
    }
    if hour.is_err() {
        errors.add("reminderHour", "Choose an hour.");
    }
    if let (Ok(days), Ok(hour)) = (days, hour) {
        let settings = MessageSettings {
            contact_email: optional(&form.contact_email),
            contact_phone: optional(&form.contact_phone),
            reminder_days_before: days,
            reminder_hour: hour,
            channel_bookings: form.channel_bookings.is_some(),
        };
        match guest_messages::save_settings(&state.db, &page.session.actor, &page.hotel.id, settings).await {
            Ok(_) => {
                let flash = Flash::success("Saved the guest e-mail settings.");
                return Ok(session::redirect_with(&page.path("messages"), flash, &state));
            }
            Err(err) => errors.absorb(err)?,
        }
    }
    let t = settings_page(&state, &page, form, errors).await?;
    let mut response = render_page(&t, &page.session, &state);
    *response.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

/// The wording form, as typed; `action` is the button pressed: `preview`, `save` or `reset`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WordingForm {
    subject: String,
    body: String,
    action: String,
}

#[derive(Template)]
#[template(path = "messages/wording.html")]
struct WordingTemplate {
    chrome: Chrome,
    kind: &'static str,
    language: &'static str,
    subject: String,
    body: String,
    own: bool,
    errors: FormErrors,
    preview: Option<Letter>,
    variables: &'static [(&'static str, &'static str)],
    back: String,
    action: String,
}

fn parse(kind: &str, language: &str) -> Result<(MessageKind, Language), crate::domain::Error> {
    let kind = MessageKind::parse(kind).ok_or(crate::domain::Error::NotFound("message"))?;
    let language =
        Language::ALL.into_iter().find(|l| l.code() == language).ok_or(crate::domain::Error::NotFound("language"))?;
    Ok((kind, language))
}

async fn edit(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, kind, language)): Path<(String, String, String)>,
) -> WebResult {
    page.session.actor.require(crate::domain::access::Task::ConfigureHotel)?;
    let (kind, language) = parse(&kind, &language)?;
    let wording = guest_messages::template(&state.db, &page.session.actor, &page.hotel.id, kind, language).await?;
    let preview = guest_messages::preview(&page.hotel.name, language, &wording.subject, &wording.body).await.ok();
    let t = WordingTemplate {
        chrome: page.chrome(&state, Section::Settings, kind.label()).await?,
        kind: kind.label(),
        language: language.name(),
        subject: wording.subject,
        body: wording.body,
        own: wording.own,
        errors: FormErrors::default(),
        preview,
        variables: VARIABLES,
        back: page.path("messages"),
        action: page.path(&format!("messages/{}/{}", kind.as_str(), language.code())),
    };
    Ok(render_page(&t, &page.session, &state))
}

async fn save_wording(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, kind, language)): Path<(String, String, String)>,
    posted: Posted<WordingForm>,
) -> WebResult {
    let (kind, language) = parse(&kind, &language)?;
    let form = posted.form;
    let actor = &page.session.actor;
    let action = page.path(&format!("messages/{}/{}", kind.as_str(), language.code()));
    let mut errors = FormErrors::default();
    match form.action.as_str() {
        "reset" => {
            guest_messages::save_template(&state.db, actor, &page.hotel.id, kind, language, None).await?;
            let flash = Flash::success(format!(
                "\u{201c}{}\u{201d} ({}) uses the default wording again.",
                kind.label(),
                language.name()
            ));
            return Ok(session::redirect_with(&action, flash, &state));
        }
        "save" => {
            let wording = Some((form.subject.as_str(), form.body.as_str()));
            match guest_messages::save_template(&state.db, actor, &page.hotel.id, kind, language, wording).await {
                Ok(()) => {
                    let flash = Flash::success(format!(
                        "Saved the wording of \u{201c}{}\u{201d} ({}).",
                        kind.label(),
                        language.name()
                    ));
                    return Ok(session::redirect_with(&action, flash, &state));
                }
                Err(err) => errors.absorb(err)?,
            }
        }
        _ => {}
    }
    let preview = match guest_messages::preview(&page.hotel.name, language, &form.subject, &form.body).await {
        Ok(letter) => Some(letter),
        Err(err) => {
            if !errors.has("body") && !errors.has("subject") {
                errors.add("body", format!("This wording does not render: {err}"));
            }
            None
        }
    };
    let own = guest_messages::template(&state.db, actor, &page.hotel.id, kind, language).await?.own;
    let t = WordingTemplate {
        chrome: page.chrome(&state, Section::Settings, kind.label()).await?,
        kind: kind.label(),
        language: language.name(),
        subject: form.subject,
        body: form.body,
        own,
        preview,
        variables: VARIABLES,
        back: page.path("messages"),
        action,
        errors,
    };
    let mut response = render_page(&t, &page.session, &state);
    if t.errors.has("body") || t.errors.has("subject") {
        *response.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(response)
}
