//! Today: the front desk's morning page. Arrivals, departures, guests in house, requests waiting, occupancy for
//! the next two weeks and rooms by housekeeping status.

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;

use super::HotelPage;
use crate::app::AppState;
use crate::domain::finance::end_of_day::{self, BusinessDay};
use crate::domain::front_office::{self, NightOccupancy};
use crate::domain::reservations::ReservationStatus;
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
    /// Stays that need attention: the stay, why in the desk's words, and what exactly.
    attention: Vec<(StayRow, String, String)>,
    tonight: NightOccupancy,
    chart: OccupancyChart,
    housekeeping: Vec<HousekeepingCount>,
    arrivals_left: usize,
    departures_left: usize,
    /// The business date and what its last close did, in words.
    business: String,
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
    let day = end_of_day::business_day(&state.db, &page.session.actor, &page.hotel.id).await?;
    let rows = |lines: &[front_office::StayLine]| StayRow::rows(lines, &catalog);
    let arrivals = rows(&board.arrivals);
    let departures = rows(&board.departures);
    let template = TodayTemplate {
        business: business_words(&day),
        date: view::date_long(board.date),
        arrivals_left: arrivals.iter().filter(|r| r.status == ReservationStatus::Confirmed).count(),
        departures_left: departures.iter().filter(|r| r.status == ReservationStatus::CheckedIn).count(),
        arrivals,
        departures,
        in_house: rows(&board.in_house),
        requests: rows(&board.requests),
        attention: board
            .attention
            .iter()
            .map(|(flag, line)| {
                let why = flag.reasons.iter().map(|r| r.label()).collect::<Vec<_>>().join(", ");
                (StayRow::new(line, &catalog), why, flag.detail.clone())
            })
            .collect(),
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

/// "Business date Sat 28 Nov; the day ends at 03:00. Last closed Fri 27 Nov: 12 lines posted, 1 no-show (K7QM3XHD)."
fn business_words(day: &BusinessDay) -> String {
    let mut words =
        format!("Business date {}; the day ends at {}.", view::date_short(day.business_date), day.end_of_day);
    if let Some(last) = &day.last_close {
        let no_shows = match last.no_shows.len() {
            0 => "no no-shows".to_string(),
            1 => format!("1 no-show ({})", last.no_shows[0]),
            n => format!("{n} no-shows ({})", last.no_shows.join(", ")),
        };
        let lines = if last.lines_posted == 1 { "line" } else { "lines" };
        words.push_str(&format!(
            " Last closed {}: {} {lines} posted, {no_shows}.",
            view::date_short(last.closed),
            last.lines_posted
        ));
    }
    words
}

/// The occupancy outlook as bars of a server-drawn SVG: no script, no library, readable by a screen reader through
/// its title, description and the table beside it. The SVG has no `viewBox`: bars and labels are placed in per cent
/// of its width and in pixels of its fixed height, so it takes the width of its card without scaling its text, and
/// the labels keep their CSS size (12 px) on a phone as on a desktop.
struct OccupancyChart {
    height: i64,
    baseline: i64,
    bars: Vec<Bar>,
    summary: String,
}

struct Bar {
    /// Left edge, width and the middle of the slot, in per cent of the chart's width (`"3.571%"`).
    x: String,
    width: String,
    label_x: String,
    y: i64,
    height: i64,
    /// The weekday in two letters ("Mo"), and the rest of its short name ("n"), which narrow screens leave out.
    day_start: String,
    day_rest: String,
    day: String,
    date: String,
    percent: i64,
    occupied: i64,
    sellable: i64,
    class: &'static str,
}

/// `value` per cent, as an SVG length.
fn per_cent(value: f64) -> String {
    format!("{value:.3}%")
}

impl OccupancyChart {
    const HEIGHT: i64 = 190;
    const TOP: i64 = 22;
    const BOTTOM: i64 = 40;

    fn new(nights: &[NightOccupancy]) -> OccupancyChart {
        let slot = 100.0 / (nights.len().max(1) as f64);
        let plot = Self::HEIGHT - Self::TOP - Self::BOTTOM;
        let baseline = Self::HEIGHT - Self::BOTTOM;
        let bars = nights
            .iter()
            .enumerate()
            .map(|(i, night)| {
                let percent = night.percent().clamp(0, 100);
                let height = (plot * percent / 100).max(if night.occupied > 0 { 2 } else { 0 });
                let left = i as f64 * slot;
                let day = night.date.format("%a").to_string();
                let split = day.char_indices().nth(2).map_or(day.len(), |(at, _)| at);
                Bar {
                    x: per_cent(left + slot / 6.0),
                    width: per_cent(slot * 2.0 / 3.0),
                    label_x: per_cent(left + slot / 2.0),
                    y: baseline - height,
                    height,
                    day_start: day[..split].to_string(),
                    day_rest: day[split..].to_string(),
                    day,
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
        OccupancyChart { height: Self::HEIGHT, baseline, bars, summary }
    }
}
