//! The room rack (tape chart): rooms grouped by type down the side, 14 or 30 nights across, each stay a bar with
//! its guest and status; stays without a room listed under their type with an "assign room" control, which posts
//! to the reservation's room assignment (the domain's overlap rule decides).

use askama::Template;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::Router;
use chrono::{Days, NaiveDate};
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::front_office::{self, RackStay, RACK_NIGHTS};
use crate::domain::rooms::HousekeepingStatus;
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view;

pub fn router() -> Router<AppState> {
    Router::new().route("/hotels/{hotel_id}/rack", get(rack))
}

#[derive(Deserialize)]
struct RackQuery {
    #[serde(default)]
    from: String,
    days: Option<u32>,
}

#[derive(Template)]
#[template(path = "rack.html")]
struct RackTemplate {
    chrome: Chrome,
    nights: u32,
    from_value: String,
    heading: String,
    days: Vec<DayHead>,
    groups: Vec<GroupView>,
    earlier: String,
    later: String,
    today_link: String,
    other_span: (u32, String),
    back: String,
    errors: FormErrors,
}

struct DayHead {
    weekday: String,
    day: String,
    class: &'static str,
    label: String,
}

struct GroupView {
    name: String,
    rooms: Vec<RoomRow>,
    unassigned: Vec<UnassignedView>,
}

struct RoomRow {
    name: String,
    housekeeping: &'static str,
    out_of_order: bool,
    cells: Vec<Cell>,
}

/// A cell of a room's row: an empty night, or a stay's bar over `span` nights.
struct Cell {
    span: usize,
    bar: Option<BarView>,
}

struct BarView {
    href: String,
    guest: String,
    class: &'static str,
    title: String,
}

struct UnassignedView {
    guest: String,
    href: String,
    dates: String,
    status_label: &'static str,
    status_class: &'static str,
    reservation_room_id: String,
    action: String,
    choices: Vec<(String, String)>,
}

async fn rack(State(state): State<AppState>, page: HotelPage, Query(q): Query<RackQuery>) -> WebResult {
    let today = page.hotel.today();
    let mut errors = FormErrors::default();
    let from = errors.date("from", &q.from, false).unwrap_or(today);
    let nights = q.days.filter(|d| RACK_NIGHTS.contains(d)).unwrap_or(RACK_NIGHTS[0]);
    let rack = front_office::rack(&state.db, &page.session.actor, &page.hotel.id, from, nights).await?;
    let dates: Vec<NaiveDate> = from.iter_days().take(nights as usize).collect();
    let link = |start: NaiveDate, span: u32| format!("{}?from={start}&days={span}", page.path("rack"));
    let shift = Days::new(u64::from(nights));
    let back = link(from, nights);
    let groups = rack
        .groups
        .iter()
        .map(|group| GroupView {
            name: group.room_type.name.clone(),
            rooms: group
                .rooms
                .iter()
                .map(|r| RoomRow {
                    name: r.room.name.clone(),
                    housekeeping: view::housekeeping_label(r.room.housekeeping_status),
                    out_of_order: r.room.housekeeping_status == HousekeepingStatus::OutOfOrder,
                    cells: cells(&dates, &r.stays, &page.hotel.id),
                })
                .collect(),
            unassigned: group
                .unassigned
                .iter()
                .map(|stay| UnassignedView {
                    guest: stay.guest_name.clone(),
                    href: format!("/hotels/{}/reservations/{}", page.hotel.id, stay.reservation_id),
                    dates: format!(
                        "{} – {}",
                        view::date_short(stay.check_in_date),
                        view::date_short(stay.check_out_date)
                    ),
                    status_label: view::status_label(stay.status),
                    status_class: view::status_class(stay.status),
                    reservation_room_id: stay.reservation_room_id.clone(),
                    action: format!("/hotels/{}/reservations/{}/rooms", page.hotel.id, stay.reservation_id),
                    choices: group
                        .rooms
                        .iter()
                        .filter(|r| r.room.housekeeping_status.sellable())
                        .map(|r| {
                            let busy = r.stays.iter().any(|other| overlaps(other, stay));
                            let label =
                                if busy { format!("{} (occupied then)", r.room.name) } else { r.room.name.clone() };
                            (r.room.id.clone(), label)
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    let last = dates.last().copied().unwrap_or(from);
    let other = if nights == RACK_NIGHTS[0] { RACK_NIGHTS[1] } else { RACK_NIGHTS[0] };
    let template = RackTemplate {
        chrome: page.chrome(&state, Section::Rack, "Room rack").await?,
        heading: format!("{} to {}", view::date_long(from), view::date_long(last)),
        days: dates
            .iter()
            .map(|d| DayHead {
                weekday: d.format("%a").to_string(),
                day: d.format("%-d").to_string(),
                class: if *d == today {
                    "today"
                } else if view::is_weekend(*d) {
                    "weekend"
                } else {
                    ""
                },
                label: view::date_long(*d),
            })
            .collect(),
        earlier: link(from.checked_sub_days(shift).unwrap_or(from), nights),
        later: link(from.checked_add_days(shift).unwrap_or(from), nights),
        today_link: link(today, nights),
        other_span: (other, link(from, other)),
        from_value: from.to_string(),
        nights,
        groups,
        back,
        errors,
    };
    Ok(render_page(&template, &page.session, &state))
}

fn overlaps(a: &RackStay, b: &RackStay) -> bool {
    a.check_in_date < b.check_out_date && b.check_in_date < a.check_out_date
}

/// A room's row across `dates`: empty nights, and a bar for each stay over the nights it covers (clipped to the
/// window). A stay that overlaps one already drawn (which the rules prevent for held stays) is left to its page.
fn cells(dates: &[NaiveDate], stays: &[RackStay], hotel_id: &str) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < dates.len() {
        let night = dates[i];
        match stays.iter().find(|s| s.check_in_date <= night && night < s.check_out_date) {
            Some(stay) => {
                let span = dates[i..].iter().take_while(|d| **d < stay.check_out_date).count().max(1);
                out.push(Cell {
                    span,
                    bar: Some(BarView {
                        href: format!("/hotels/{hotel_id}/reservations/{}", stay.reservation_id),
                        guest: stay.guest_name.clone(),
                        class: view::status_class(stay.status),
                        title: format!(
                            "{}, {} – {}, {}",
                            stay.guest_name,
                            view::date_short(stay.check_in_date),
                            view::date_short(stay.check_out_date),
                            view::status_label(stay.status)
                        ),
                    }),
                });
                i += span;
            }
            None => {
                out.push(Cell { span: 1, bar: None });
                i += 1;
            }
        }
    }
    out
}
