//! The list of a hotel's reservations, with its filters and orders.

use askama::Template;
use axum::extract::{Query, RawQuery, State};

use serde::Deserialize;

use super::super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office::{self, StaySearch, StaySort};
use crate::domain::reservations::{ReservationStatus, Source};
use crate::web::form::{optional, FormErrors};
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view::{self, Catalog, StayRow};

#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    guest: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    dir: String,
    page: Option<i64>,
}

pub(super) struct Choice {
    value: &'static str,
    label: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "reservations/list.html")]
pub(super) struct ListTemplate {
    chrome: Chrome,
    rows: Vec<StayRow>,
    errors: FormErrors,
    query: ListQuery,
    statuses: Vec<Choice>,
    sources: Vec<Choice>,
    sorts: Vec<Choice>,
    descending: bool,
    page: i64,
    previous: Option<String>,
    next: Option<String>,
}

pub(super) async fn list(
    State(state): State<AppState>,
    page: HotelPage,
    RawQuery(raw): RawQuery,
    Query(mut query): Query<ListQuery>,
) -> WebResult {
    // Opened without filters: the stays from today on, which is what the desk works with.
    if raw.as_deref().unwrap_or("").is_empty() {
        query.from = page.hotel.today().to_string();
    }
    let mut errors = FormErrors::default();
    let status = ReservationStatus::parse(&query.status);
    if !query.status.is_empty() && status.is_none() {
        errors.add("status", "Choose a status from the list.");
    }
    let source = Source::parse(&query.source);
    let search = StaySearch {
        statuses: status.into_iter().collect(),
        stay_from: errors.date("from", &query.from, false),
        stay_to: errors.date("to", &query.to, false),
        guest: optional(&query.guest),
        source,
        sort: StaySort::parse(&query.sort).unwrap_or_default(),
        descending: query.dir == "desc",
        page: query.page.unwrap_or(1).clamp(1, 100_000),
    };
    let found = match errors.is_empty() {
        true => front_office::search(&state.db, &page.session.actor, &page.hotel.id, &search).await?,
        false => front_office::StayPage { lines: Vec::new(), has_more: false },
    };
    let catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    let link = |to_page: i64| {
        let mut params: Vec<(&str, String)> = vec![
            ("status", query.status.clone()),
            ("from", query.from.clone()),
            ("to", query.to.clone()),
            ("guest", query.guest.clone()),
            ("source", query.source.clone()),
            ("sort", query.sort.clone()),
            ("dir", query.dir.clone()),
        ];
        params.retain(|(_, v)| !v.is_empty());
        params.push(("page", to_page.to_string()));
        let query: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
        format!("{}?{query}", page.path("reservations"))
    };
    let statuses = ReservationStatus::ALL
        .into_iter()
        .map(|s| Choice { value: s.as_str(), label: view::status_label(s), selected: status == Some(s) })
        .collect();
    let sources = [Source::Api, Source::Dashboard, Source::BookingPage, Source::Channel]
        .into_iter()
        .map(|s| Choice { value: s.as_str(), label: view::source_label(s), selected: source == Some(s) })
        .collect();
    let sorts = StaySort::ALL
        .into_iter()
        .map(|s| Choice {
            value: s.as_str(),
            label: match s {
                StaySort::CheckIn => "Check-in date",
                StaySort::CheckOut => "Check-out date",
                StaySort::Created => "Booked on",
            },
            selected: s == search.sort,
        })
        .collect();
    let template = ListTemplate {
        chrome: page.chrome(&state, Section::Reservations, "Reservations").await?,
        rows: StayRow::rows(&found.lines, &catalog),
        previous: (search.page > 1).then(|| link(search.page - 1)),
        next: found.has_more.then(|| link(search.page + 1)),
        page: search.page,
        descending: search.descending,
        errors,
        query,
        statuses,
        sources,
        sorts,
    };
    Ok(render_page(&template, &page.session, &state))
}
