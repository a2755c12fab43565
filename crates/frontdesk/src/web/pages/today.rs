//! Today: the front desk's morning page. Arrivals, departures, guests in house, requests waiting, occupancy for
//! the next two weeks and rooms by housekeeping status.

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;

use super::HotelPage;
use crate::domain::front_office::{self, NightOccupancy};
use crate::domain::reservations::ReservationStatus;
use crate::http::AppState;
use crate::web::page::{render_page, Chrome, Section, WebResult};
use crate::web::view::{self, Catalog, StayRow};

pub fn router() -> Router<AppState> {
    Router::new().route("/hotels/{hotel_id}/today", get(today))
}

#[derive(Template)]
#[template(path = "today.html")]
struct TodayTemplate {
    chrome: Chrome,
    date: String,
    arrivals: Vec<StayRow>,
    departures: Vec<StayRow>,
    in_house: Vec<StayRow>,
    requests: Vec<StayRow>,
    tonight: NightOccupancy,
    chart: OccupancyChart,
    housekeeping: Vec<HousekeepingCount>,
    arrivals_left: usize,
    departures_left: usize,
}

struct HousekeepingCount {
    label: &'static str,
    class: &'static str,
    count: i64,
}

async fn today(State(state): State<AppState>, page: HotelPage) -> WebResult {
    let board = front_office::today(&state.db, &page.session.actor, &page.hotel.id).await?;
    let mut catalog = Catalog::load(&state.db, &page.session.actor, &page.hotel.id).await?;
    catalog.note_occupants(&board.in_house);
    let chrome = page.chrome(&state, Section::Today, "Today").await?;
    let rows = |lines: &[front_office::StayLine]| StayRow::rows(lines, &catalog);
    let arrivals = rows(&board.arrivals);
    let departures = rows(&board.departures);
    let template = TodayTemplate {
        date: view::date_long(board.date),
        arrivals_left: arrivals.iter().filter(|r| r.status == ReservationStatus::Confirmed).count(),
        departures_left: departures.iter().filter(|r| r.status == ReservationStatus::CheckedIn).count(),
        arrivals,
        departures,
        in_house: rows(&board.in_house),
        requests: rows(&board.requests),
        tonight: board.occupancy.first().cloned().unwrap_or(NightOccupancy {
            date: board.date,
            occupied: 0,
            sellable: 0,
        }),
        chart: OccupancyChart::new(&board.occupancy),
        housekeeping: board
            .housekeeping
            .iter()
            .map(|(status, count)| HousekeepingCount {
                label: view::housekeeping_label(*status),
                class: view::housekeeping_class(*status),
                count: *count,
            })
            .collect(),
        chrome,
    };
    Ok(render_page(&template, &page.session, &state))
}

/// The occupancy outlook as bars of a server-drawn SVG: no script, no library, readable by a screen reader through
/// its title, description and the table beside it.
struct OccupancyChart {
    width: i64,
    height: i64,
    baseline: i64,
    bars: Vec<Bar>,
    summary: String,
}

struct Bar {
    x: i64,
    y: i64,
    width: i64,
    height: i64,
    label_x: i64,
    day: String,
    date: String,
    percent: i64,
    occupied: i64,
    sellable: i64,
    class: &'static str,
}

impl OccupancyChart {
    const WIDTH: i64 = 720;
    const HEIGHT: i64 = 190;
    const TOP: i64 = 22;
    const BOTTOM: i64 = 40;

    fn new(nights: &[NightOccupancy]) -> OccupancyChart {
        let slot = Self::WIDTH / (nights.len().max(1) as i64);
        let plot = Self::HEIGHT - Self::TOP - Self::BOTTOM;
        let baseline = Self::HEIGHT - Self::BOTTOM;
        let bars = nights
            .iter()
            .enumerate()
            .map(|(i, night)| {
                let percent = night.percent().clamp(0, 100);
                let height = (plot * percent / 100).max(if night.occupied > 0 { 2 } else { 0 });
                let x = i as i64 * slot + slot / 6;
                Bar {
                    x,
                    y: baseline - height,
                    width: slot * 2 / 3,
                    height,
                    label_x: x + slot / 3,
                    day: night.date.format("%a").to_string(),
                    date: night.date.format("%-d").to_string(),
                    percent: night.percent(),
                    occupied: night.occupied,
                    sellable: night.sellable,
                    class: if i == 0 {
                        "bar tonight"
                    } else if percent >= 90 {
                        "bar full"
                    } else {
                        "bar"
                    },
                }
            })
            .collect::<Vec<_>>();
        let peak = nights.iter().max_by_key(|n| n.percent());
        let summary = match peak {
            Some(peak) => format!(
                "Occupancy for the next {} nights; the busiest is {} at {}%.",
                nights.len(),
                view::date_short(peak.date),
                peak.percent()
            ),
            None => "No nights to show.".into(),
        };
        OccupancyChart { width: Self::WIDTH, height: Self::HEIGHT, baseline, bars, summary }
    }
}
