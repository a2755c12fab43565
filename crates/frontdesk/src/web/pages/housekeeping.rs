//! Housekeeping: every room by floor with its status, the guest in it or arriving to it today, and who changed its
//! status last; one tap changes a status. Made for the phone a housekeeper carries: one column of room cards, big
//! buttons, filters for the rooms that need someone (dirty, arriving today, out of order).
//!
//! A change goes through `rooms::update`, what `PUT /api/rooms/{id}` runs: the out-of-order rule (a room that a
//! stay holds cannot go out of order) and the change's history are the same.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::housekeeping::{self, RoomNow};
use crate::domain::rooms::{self, HousekeepingStatus, RoomPatch};
use crate::domain::Error;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::session::{self, Flash, Posted};
use crate::web::view;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hotels/{hotel_id}/housekeeping", get(board))
        .route("/hotels/{hotel_id}/housekeeping/{room_id}", post(set_status))
}

/// Which rooms the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    All,
    Dirty,
    Arriving,
    OutOfOrder,
}

impl Show {
    const ALL: [Show; 4] = [Show::All, Show::Dirty, Show::Arriving, Show::OutOfOrder];

    fn as_str(self) -> &'static str {
        match self {
            Show::All => "all",
            Show::Dirty => "dirty",
            Show::Arriving => "arriving",
            Show::OutOfOrder => "out-of-order",
        }
    }

    fn parse(s: &str) -> Show {
        Show::ALL.into_iter().find(|show| show.as_str() == s).unwrap_or(Show::All)
    }

    fn label(self) -> &'static str {
        match self {
            Show::All => "All rooms",
            Show::Dirty => "Dirty",
            Show::Arriving => "Arriving today",
            Show::OutOfOrder => "Out of order",
        }
    }

    fn keeps(self, room: &RoomNow) -> bool {
        match self {
            Show::All => true,
            Show::Dirty => room.room.housekeeping_status == HousekeepingStatus::Dirty,
            Show::Arriving => room.arrival.is_some(),
            Show::OutOfOrder => room.room.housekeeping_status == HousekeepingStatus::OutOfOrder,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct BoardQuery {
    #[serde(default)]
    show: String,
}

struct Filter {
    label: &'static str,
    href: String,
    count: usize,
    current: bool,
}

struct Floor {
    title: String,
    rooms: Vec<RoomCard>,
}

struct RoomCard {
    id: String,
    name: String,
    room_type: String,
    status_label: &'static str,
    status_class: &'static str,
    /// Who is in the room or coming to it, as a line for people.
    guest_line: Option<String>,
    guest_href: Option<String>,
    /// "Dirty since 25 Nov 10:02, Ana (check-out of K7QM3XHD)".
    changed: Option<String>,
    /// The statuses one tap can set, with their button labels.
    moves: Vec<(&'static str, &'static str)>,
}

#[derive(Template)]
#[template(path = "housekeeping.html")]
struct BoardTemplate {
    chrome: Chrome,
    date: String,
    filters: Vec<Filter>,
    show: &'static str,
    floors: Vec<Floor>,
    shown: usize,
}

async fn board(State(state): State<AppState>, page: HotelPage, Query(query): Query<BoardQuery>) -> WebResult {
    let show = Show::parse(&query.show);
    let board = housekeeping::board(&state.db, &page.session.actor, &page.hotel.id).await?;
    let tz = page.hotel.time_zone();
    let filters = Show::ALL
        .into_iter()
        .map(|f| Filter {
            label: f.label(),
            href: page.path(&format!("housekeeping?show={}", f.as_str())),
            count: board.rooms.iter().filter(|r| f.keeps(r)).count(),
            current: f == show,
        })
        .collect();
    let mut floors: Vec<Floor> = Vec::new();
    for room in board.rooms.iter().filter(|r| show.keeps(r)) {
        let title = match room.room.floor {
            Some(floor) => format!("Floor {floor}"),
            None => "No floor given".to_string(),
        };
        let card = card(&page, room, board.today, tz);
        match floors.last_mut() {
            Some(last) if last.title == title => last.rooms.push(card),
            _ => floors.push(Floor { title, rooms: vec![card] }),
        }
    }
    let template = BoardTemplate {
        chrome: page.chrome(&state, Section::Housekeeping, "Housekeeping").await?,
        date: view::date_long(board.today),
        filters,
        show: show.as_str(),
        shown: floors.iter().map(|f| f.rooms.len()).sum(),
        floors,
    };
    Ok(render_page(&template, &page.session, &state))
}

fn card(page: &HotelPage, room: &RoomNow, today: chrono::NaiveDate, tz: chrono_tz::Tz) -> RoomCard {
    // Housekeeping is not shown who stays, nor a link to the stay (docs/roles.md).
    let sees_guests = page.session.actor.require_scope(crate::domain::Scope::GuestsRead).is_ok();
    let name = |line: &crate::domain::front_office::StayLine| match (&line.guest, sees_guests) {
        (Some(guest), _) => crate::domain::front_office::guest_name(guest),
        (None, true) => "No guest".into(),
        (None, false) => "a guest".into(),
    };
    let stay_href = |id: &str| sees_guests.then(|| page.path(&format!("reservations/{id}")));
    let (guest_line, guest_href) = match (&room.occupant, &room.arrival) {
        (Some(o), _) => {
            let leaves = o.reservation.check_out_date;
            let when = if leaves < today {
                format!("was due to leave {}", view::date_short(leaves))
            } else if leaves == today {
                "leaves today".to_string()
            } else {
                format!("leaves {}", view::date_short(leaves))
            };
            (Some(format!("In house: {}, {when}", name(o))), stay_href(&o.reservation.id))
        }
        (None, Some(a)) => (Some(format!("Arriving today: {}", name(a))), stay_href(&a.reservation.id)),
        (None, None) => (None, None),
    };
    let status = room.room.housekeeping_status;
    let changed = room.room.housekeeping_changed_at.map(|at| {
        let local = at.with_timezone(&tz);
        let by = room.room.housekeeping_changed_by.as_deref().unwrap_or("someone");
        format!("{} since {}, {by}", view::housekeeping_label(status), local.format("%-d %b %H:%M"))
    });
    RoomCard {
        id: room.room.id.clone(),
        name: room.room.name.clone(),
        room_type: room.room_type.clone(),
        status_label: view::housekeeping_label(status),
        status_class: view::housekeeping_class(status),
        guest_line,
        guest_href,
        changed,
        moves: HousekeepingStatus::ALL
            .into_iter()
            .filter(|s| *s != status)
            .map(|s| (s.as_str(), view::housekeeping_label(s)))
            .collect(),
    }
}

#[derive(Deserialize)]
struct StatusForm {
    status: String,
    #[serde(default)]
    show: String,
}

/// `POST …/housekeeping/{room_id}`: one tap, one status. Back to the same filter, with the outcome as a message.
async fn set_status(
    State(state): State<AppState>,
    page: HotelPage,
    Path((_, room_id)): Path<(String, String)>,
    posted: Posted<StatusForm>,
) -> WebResult {
    let back = page.path(&format!("housekeeping?show={}", Show::parse(&posted.form.show).as_str()));
    let actor = &page.session.actor;
    let room = rooms::get(&state.db, actor, &room_id).await?;
    if room.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("room")));
    }
    let Some(status) = HousekeepingStatus::parse(&posted.form.status) else {
        return Ok(crate::web::page::bad_request("The form did not say which status to set."));
    };
    let patch = RoomPatch { housekeeping_status: Some(status), ..RoomPatch::default() };
    let flash = match rooms::update(&state.db, actor, &room.id, patch).await {
        Ok(room) => Flash::success(format!(
            "Room {} is now {}.",
            room.name,
            view::housekeeping_label(room.housekeeping_status).to_lowercase()
        )),
        Err(Error::Conflict(message)) => Flash::error(message),
        Err(err) => return Err(WebError(err)),
    };
    Ok(session::redirect_with(&format!("{back}#room-{}", room.id), flash, &state))
}
