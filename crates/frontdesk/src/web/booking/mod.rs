//! The public booking page, `/book/{hotelId}`: a hotel's guests search, choose and request a stay.
//!
//! * `GET /book/{hotelId}?checkInDate=&checkOutDate=&adults=&children=&infants=`: the hotel, the search form
//!   (prefilled from the query, so a hotel's own site can link to a search) and, once dates are given, every offer.
//! * `GET /book/{hotelId}/details?offer=…`: the chosen offer checked again and the guest form.
//! * `POST /book/{hotelId}/request`: the booking request, then a redirect (303) to its receipt.
//! * `GET /book/{hotelId}/requests/{reservationId}?token=…`: the receipt, at a link only the guest was given.
//!
//! No operator session: the pages call the same domain functions as the public API (`availability::search`,
//! `availability::book`: signed offers, revalidation under the inventory lock, idempotency, the limits of public
//! booking requests, webhook events), plus the page's own reads in `availability::booking_page`. Every request
//! counts against the client address's public rate limit, like the API's public endpoints. The pages may be framed
//! only by the sites the hotel names (`bookingEmbedOrigins`); the dashboard never.
//!
//! Double submits, back-button resubmits and refreshes make one request: the guest form carries an idempotency key
//! made when the form is shown, and the browser keeps that form for the back button (the page is not `no-store`).
//! The key is the page's own ([`booking_page::form_key`]: signed, in a namespace of its own), and it answers with
//! the first request only when the form is sent unchanged; changed, it is refused without showing anything of the
//! first request. The form has a field people never see (`website`): a form that fills it in is a robot's.

mod choices;

use askama::Template;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use chrono::{Days, NaiveDate};

use super::assets;
use super::form::FormErrors;
use super::page::render;
use super::view;
use crate::app::limits::{client_address, limit};
use crate::app::AppState;
use crate::domain::availability::booking_page::{self, Rechecked, Stale};
use crate::domain::availability::{
    self, AvailabilityQuery, BookingFrom, BookingGuestIn, BookingIn, Offer, PublicCaller, MAX_STAY_NIGHTS,
};
use crate::domain::hotels::Hotel;
use crate::domain::idempotency::Namespace;
use crate::domain::reservations::ReservationStatus;
use crate::domain::{money, Error};
use choices::Choice;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/book/{hotel_id}", get(search_page))
        .route("/book/{hotel_id}/details", get(details_page))
        .route("/book/{hotel_id}/request", post(send_request))
        .route("/book/{hotel_id}/requests/{reservation_id}", get(receipt_page))
}

// ---------------------------------------------------------------------------------------------------------------
// What every page shares

/// A visitor of the booking page, counted against their address's limit like a caller of the public API.
pub struct Visitor {
    /// The client address ([`client_address`]).
    pub address: String,
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let address = client_address(parts, state);
        limit(parts, state, &format!("address:{address}"), state.config.public_rate_limit_per_minute)
            .await
            .map_err(|err| error_page(err, None))?;
        Ok(Visitor { address })
    }
}

/// The frame of a booking page: the hotel, its address and times, the assets.
#[derive(Debug, Clone)]
pub struct Frame {
    pub title: String,
    pub hotel_name: String,
    pub address: String,
    pub times: String,
    /// The booking page's own path, `/book/{hotelId}`.
    pub home: String,
    pub css: String,
    pub js: String,
}

impl Frame {
    fn new(hotel: &Hotel, title: impl Into<String>) -> Frame {
        let a = &hotel.address;
        let country = a.country.as_deref().and_then(choices::country_name);
        let address: Vec<&str> = [a.address_line1.as_deref(), a.address_line2.as_deref(), a.city.as_deref(), country]
            .into_iter()
            .flatten()
            .filter(|part| !part.trim().is_empty())
            .collect();
        Frame {
            title: title.into(),
            hotel_name: hotel.name.clone(),
            address: address.join(", "),
            times: format!("Check-in from {} · check-out until {}", hotel.check_in_time, hotel.check_out_time),
            home: format!("/book/{}", hotel.id),
            css: assets::url("app.css"),
            js: assets::url("app.js"),
        }
    }

    /// A frame for a page without a hotel (an unknown one, a refusal before the hotel was read).
    fn bare(title: &str) -> Frame {
        Frame {
            title: title.into(),
            hotel_name: String::new(),
            address: String::new(),
            times: String::new(),
            home: String::new(),
            css: assets::url("app.css"),
            js: assets::url("app.js"),
        }
    }
}

/// A booking page answer with the framing policy of `hotel`: only the origins it names may show the page in a frame
/// (`frame-ancestors`), none when it names none or the page is about no hotel. `X-Frame-Options` cannot name sites,
/// so it is sent (`DENY`) only when no site may frame the page.
fn framed_for(mut response: Response, hotel: Option<&Hotel>) -> Response {
    let origins = hotel.map(|h| h.booking_embed_origins.join(" ")).filter(|o| !o.is_empty());
    let ancestors = origins.as_deref().unwrap_or("'none'");
    let csp = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         form-action 'self'; base-uri 'none'; frame-ancestors {ancestors}"
    );
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    if origins.is_none() {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

#[derive(Template)]
#[template(path = "booking/message.html")]
struct MessagePage {
    frame: Frame,
    heading: String,
    message: String,
    link: Option<(String, String)>,
}

fn message_page(status: StatusCode, hotel: Option<&Hotel>, heading: &str, message: &str) -> Response {
    let frame = match hotel {
        Some(h) => Frame::new(h, heading),
        None => Frame::bare(heading),
    };
    let link = hotel.map(|h| (format!("/book/{}", h.id), "Start a new search".to_string()));
    let page = MessagePage { frame, heading: heading.into(), message: message.into(), link };
    framed_for(render(&page, status), hotel)
}

/// A domain error no page handles, explained to a guest.
fn error_page(err: Error, hotel: Option<&Hotel>) -> Response {
    match err {
        Error::NotFound(_) => message_page(
            StatusCode::NOT_FOUND,
            None,
            "Page not found",
            "This booking page does not exist, or the hotel does not take bookings online at the moment.",
        ),
        Error::RateLimited(_) => message_page(
            StatusCode::TOO_MANY_REQUESTS,
            hotel,
            "Too many requests",
            "Too many requests came from your connection in the last minute. Please wait a moment and try again.",
        ),
        Error::TooManyAttempts { retry_after_secs, .. } => crate::web::page::with_retry_after(
            message_page(
                StatusCode::TOO_MANY_REQUESTS,
                hotel,
                "Too many booking requests",
                &format!(
                    "This hotel has received many booking requests from your connection or for your e-mail address \
                     in the last hour. Please try again in {}, or contact the hotel directly.",
                    view::wait_words(retry_after_secs)
                ),
            ),
            retry_after_secs,
        ),
        Error::Internal(err) => {
            tracing::error!(error = format!("{err:#}"), "internal error on the booking page");
            message_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                hotel,
                "Something went wrong",
                "Something went wrong on our side. Please try again in a moment.",
            )
        }
        Error::Validation(_) | Error::BadRequest(_) | Error::Conflict(_) => message_page(
            StatusCode::BAD_REQUEST,
            hotel,
            "This link is not valid",
            "The link or form was changed or is incomplete. Please start a new search.",
        ),
        Error::Unauthorized(_) | Error::Forbidden(_) => message_page(
            StatusCode::FORBIDDEN,
            hotel,
            "Not allowed",
            "This request is not allowed. Please start a new search.",
        ),
    }
}

/// The hotel of the page, or the 404 page.
async fn public_hotel(state: &AppState, hotel_id: &str) -> Result<Hotel, Response> {
    booking_page::hotel(&state.db, hotel_id).await.map_err(|err| error_page(err, None))
}

/// A domain message for a guest: sentence case, API field names in words.
fn for_guest(message: &str) -> String {
    let text = message
        .replace("checkInDate", "the check-in date")
        .replace("checkOutDate", "the check-out date")
        .replace("offerId", "the offer");
    let mut chars = text.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// Form errors from a domain refusal, worded for guests.
fn guest_errors(err: Error) -> Result<FormErrors, Error> {
    let mut errors = FormErrors::default();
    errors.absorb(err)?;
    Ok(errors.map_messages(for_guest))
}

/// A link that searches `stay` again.
fn search_link(hotel_id: &str, query: &AvailabilityQuery) -> String {
    let params = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("checkInDate", &query.check_in_date)
        .append_pair("checkOutDate", &query.check_out_date)
        .append_pair("adults", &query.adults.unwrap_or(2).to_string())
        .append_pair("children", &query.children.unwrap_or(0).to_string())
        .append_pair("infants", &query.infants.unwrap_or(0).to_string())
        .finish();
    format!("/book/{hotel_id}?{params}")
}

fn stay_line(check_in: NaiveDate, check_out: NaiveDate) -> String {
    let nights = (check_out - check_in).num_days();
    format!("{} – {} · {}", view::date_long(check_in), view::date_long(check_out), view::nights(nights))
}

// ---------------------------------------------------------------------------------------------------------------
// Search and results

/// The search form as typed: text, so that a mistake is shown back as it was entered.
#[derive(Debug, Clone, Default)]
pub struct SearchForm {
    pub check_in: String,
    pub check_out: String,
    pub adults: String,
    pub children: String,
    pub infants: String,
}

impl SearchForm {
    /// The form of a query string, and whether it asks for a search (names dates). Unset fields take the
    /// defaults: tonight at the hotel for one night, two adults.
    fn from_query(raw: &str, hotel: &Hotel) -> (SearchForm, bool) {
        let today = hotel.today();
        let mut form = SearchForm {
            check_in: today.to_string(),
            check_out: (today + Days::new(1)).to_string(),
            adults: "2".into(),
            children: "0".into(),
            infants: "0".into(),
        };
        let mut searched = false;
        for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
            let value: String = value.trim().chars().take(20).collect();
            match name.as_ref() {
                "checkInDate" => (form.check_in, searched) = (value, true),
                "checkOutDate" => (form.check_out, searched) = (value, true),
                "adults" => form.adults = value,
                "children" => form.children = value,
                "infants" => form.infants = value,
                _ => {}
            }
        }
        (form, searched)
    }

    fn of(stay: &availability::Stay) -> SearchForm {
        SearchForm {
            check_in: stay.check_in.to_string(),
            check_out: stay.check_out.to_string(),
            adults: stay.adults.to_string(),
            children: stay.children.to_string(),
            infants: stay.infants.to_string(),
        }
    }

    /// The API's query for this form; a count that is not a number is an error of its field.
    fn query(&self, errors: &mut FormErrors) -> AvailabilityQuery {
        let mut count = |field: &str, value: &str| -> Option<i64> {
            match value.trim() {
                "" => None,
                text => text.parse::<i64>().map_err(|_| errors.add(field, "Enter a number.")).ok(),
            }
        };
        AvailabilityQuery {
            check_in_date: self.check_in.clone(),
            check_out_date: self.check_out.clone(),
            adults: count("adults", &self.adults),
            children: count("children", &self.children),
            infants: count("infants", &self.infants),
        }
    }
}

/// An offer as a card of the results.
pub struct OfferCard {
    pub room_type: String,
    pub description: String,
    pub sleeps: String,
    pub rate_plan: String,
    pub nightly: Vec<(String, String)>,
    /// The price of one night when every night costs the same.
    pub per_night: Option<String>,
    pub total: String,
    /// `3 nights`.
    pub nights: String,
    /// "Only 2 left" when few rooms remain.
    pub few_left: Option<String>,
    pub choose_href: String,
    pub offer_id: String,
}

/// Rooms left at which a card says so.
const FEW_LEFT: i64 = 3;

impl OfferCard {
    fn new(hotel_id: &str, offer: &Offer) -> OfferCard {
        let nightly: Vec<(String, String)> =
            offer.nightly.iter().map(|n| (view::date_short(n.date), money::format(n.price, &offer.currency))).collect();
        let same_every_night = offer.nightly.windows(2).all(|pair| pair[0].price == pair[1].price);
        let choose =
            url::form_urlencoded::Serializer::new(String::new()).append_pair("offer", &offer.offer_id).finish();
        OfferCard {
            room_type: offer.room_type_name.clone(),
            description: offer.description.clone().unwrap_or_default(),
            sleeps: match offer.max_occupancy {
                1 => "Sleeps 1".into(),
                n => format!("Sleeps up to {n}"),
            },
            rate_plan: offer.rate_plan_name.clone(),
            per_night: (same_every_night && offer.nightly.len() > 1)
                .then(|| offer.nightly.first().map(|n| money::format(n.price, &offer.currency)))
                .flatten(),
            nightly,
            total: money::format(offer.total_price, &offer.currency),
            nights: view::nights(offer.nights),
            few_left: (offer.available_units <= FEW_LEFT).then(|| match offer.available_units {
                1 => "Only 1 room left".to_string(),
                n => format!("Only {n} rooms left"),
            }),
            choose_href: format!("/book/{hotel_id}/details?{choose}"),
            offer_id: offer.offer_id.clone(),
        }
    }
}

/// The results of a search, ready for the page.
pub struct Results {
    /// `3 rooms for 2 adults` and the stay.
    pub heading: String,
    pub stay: String,
    /// `2 adults, 1 child`.
    pub party: String,
    pub offers: Vec<OfferCard>,
    /// Why nothing is offered, when nothing is.
    pub none: String,
}

#[derive(Template)]
#[template(path = "booking/search.html")]
struct SearchPage {
    frame: Frame,
    form: SearchForm,
    errors: FormErrors,
    /// The earliest check-in date the date pickers offer (today at the hotel).
    min_date: String,
    results: Option<Results>,
    /// A stale offer, explained above the offers of now.
    notice: Option<String>,
    /// The step of the booking this page is (1: the search, 2: choosing a room).
    step: u8,
    longest: i64,
}

/// Searches `form` at `hotel`: the offers, or the messages beside the fields.
async fn run_search(
    state: &AppState,
    hotel: &Hotel,
    form: &SearchForm,
) -> Result<(Option<Results>, FormErrors), Response> {
    let mut errors = FormErrors::default();
    let query = form.query(&mut errors);
    if !errors.is_empty() {
        return Ok((None, errors));
    }
    match availability::search(&state.db, &state.offer_key, &state.availability, &hotel.id, &query).await {
        Ok(answer) => {
            let offers = &answer.offers;
            let (adults, children) = (query.adults.unwrap_or(2), query.children.unwrap_or(0));
            let mut none = String::new();
            if offers.is_empty() {
                match booking_page::party_too_large(&state.db, &hotel.id, adults, children)
                    .await
                    .map_err(|err| error_page(err, Some(hotel)))?
                {
                    Some(most) => {
                        let mut message = format!("Our rooms take at most {} guests", most.guests);
                        if most.adults < most.guests {
                            message.push_str(&format!(", {} of them adults", most.adults));
                        }
                        if most.children < most.guests {
                            message.push_str(&format!(", {} of them children", most.children));
                        }
                        message.push_str(". For a larger party, send a request for each room.");
                        let field = if adults > most.adults || children == 0 { "adults" } else { "children" };
                        errors.add(field, message);
                        return Ok((None, errors));
                    }
                    None => none = "No room is free for all of these nights. Try other dates.".into(),
                }
            }
            Ok((Some(results(hotel, &query, offers, none)), errors))
        }
        Err(err) => match guest_errors(err) {
            Ok(errors) => Ok((None, errors)),
            Err(err) => Err(error_page(err, Some(hotel))),
        },
    }
}

fn results(hotel: &Hotel, query: &AvailabilityQuery, offers: &[Offer], none: String) -> Results {
    let party = view::party(query.adults.unwrap_or(2), query.children.unwrap_or(0), query.infants.unwrap_or(0));
    let stay = match (
        crate::domain::validate::calendar_date(&query.check_in_date),
        crate::domain::validate::calendar_date(&query.check_out_date),
    ) {
        (Some(from), Some(to)) => stay_line(from, to),
        _ => String::new(),
    };
    Results {
        heading: match offers.len() {
            0 => format!("No rooms for {party}"),
            1 => format!("1 offer for {party}"),
            n => format!("{n} offers for {party}"),
        },
        party: party.clone(),
        stay,
        offers: offers.iter().map(|o| OfferCard::new(&hotel.id, o)).collect(),
        none,
    }
}

async fn search_page(
    State(state): State<AppState>,
    _visitor: Visitor,
    Path(hotel_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let hotel = match public_hotel(&state, &hotel_id).await {
        Ok(hotel) => hotel,
        Err(response) => return response,
    };
    let (form, searched) = SearchForm::from_query(raw.as_deref().unwrap_or(""), &hotel);
    let (results, errors) = match searched {
        true => match run_search(&state, &hotel, &form).await {
            Ok(found) => found,
            Err(response) => return response,
        },
        false => (None, FormErrors::default()),
    };
    let title = if searched { "Available rooms" } else { "Book a stay" };
    // Sent here by a request whose room went while the form was filled in, with no other room left for the stay.
    let sold = url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .any(|(name, value)| name == "stale" && value == SOLD_OUT_PARAM);
    let notice = sold.then(|| format!("{SOLD_OUT} Nothing was booked, and no other room is free for these nights."));
    search_answer(&hotel, title, form, errors, results, notice, StatusCode::OK)
}

/// Why a chosen room can no longer be had.
const SOLD_OUT: &str =
    "Sorry, the room you chose has just been booked by someone else, or is no longer sold for these dates.";

/// The search page's query parameter value that shows [`SOLD_OUT`] above the search.
const SOLD_OUT_PARAM: &str = "sold-out";

fn search_answer(
    hotel: &Hotel,
    title: &str,
    form: SearchForm,
    errors: FormErrors,
    results: Option<Results>,
    notice: Option<String>,
    status: StatusCode,
) -> Response {
    let page = SearchPage {
        frame: Frame::new(hotel, title),
        form,
        errors,
        min_date: hotel.today().to_string(),
        step: if results.is_some() { 2 } else { 1 },
        longest: MAX_STAY_NIGHTS,
        results,
        notice,
    };
    framed_for(render(&page, status), Some(hotel))
}

/// The search page of a chosen offer that went stale: why, and the offers of now for the same stay.
fn stale_answer(hotel: &Hotel, rechecked: &Rechecked, stale: &Stale, status: StatusCode) -> Response {
    let query = booking_page::query_of(&rechecked.stay);
    let notice = match stale {
        Stale::Expired => "The offer you chose has expired: offers are held for 30 minutes. These are the rooms and \
                           prices for your stay now."
            .to_string(),
        Stale::SoldOut => "Sorry, the room you chose has just been booked by someone else, or is no longer sold for \
                           these dates. These are the rooms still available for your stay."
            .to_string(),
        Stale::Repriced { was, now } => format!(
            "The price of the room you chose has changed from {} to {}. Nothing was booked: please check the \
             prices below and choose again.",
            money::format(*was, &now.currency),
            money::format(now.total_price, &now.currency)
        ),
    };
    let none = if rechecked.offers.is_empty() {
        "No room is free for all of these nights any more. Try other dates.".to_string()
    } else {
        String::new()
    };
    let results = results(hotel, &query, &rechecked.offers, none);
    search_answer(
        hotel,
        "Available rooms",
        SearchForm::of(&rechecked.stay),
        FormErrors::default(),
        Some(results),
        Some(notice),
        status,
    )
}

// ---------------------------------------------------------------------------------------------------------------
// The guest form

/// The guest form as typed.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GuestForm {
    pub offer: String,
    /// The idempotency key made when the form was first shown.
    pub key: String,
    /// Hidden from people (and from assistive technology); a robot filling in every field fills it in.
    pub website: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub phone: String,
    pub country: String,
    pub arrival_time: String,
    pub notes: String,
}

/// The chosen offer, summed up beside the guest form.
pub struct Summary {
    pub room_type: String,
    pub description: String,
    pub rate_plan: String,
    pub stay: String,
    pub party: String,
    pub nightly: Vec<(String, String)>,
    pub total: String,
    pub back: String,
}

#[derive(Template)]
#[template(path = "booking/details.html")]
struct DetailsPage {
    frame: Frame,
    step: u8,
    summary: Summary,
    form: GuestForm,
    errors: FormErrors,
    countries: Vec<Choice>,
    arrival_times: Vec<Choice>,
    /// Why the form is shown again with what the guest typed (its offer went stale).
    notice: Option<String>,
    /// When the chosen room is gone: the rooms free for the stay now, each of which sends the form (the summary
    /// then has no room of its own).
    alternatives: Vec<OfferCard>,
}

/// What the guest form is for: one offer, or a choice among the offers of now (when the chosen one went).
enum Chosen<'a> {
    Offer(&'a Offer),
    OneOf(&'a [Offer]),
}

fn details_answer(
    hotel: &Hotel,
    rechecked: &Rechecked,
    offer: &Offer,
    form: GuestForm,
    errors: FormErrors,
) -> Response {
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    guest_form_page(hotel, rechecked, Chosen::Offer(offer), form, errors, None, status)
}

fn guest_form_page(
    hotel: &Hotel,
    rechecked: &Rechecked,
    chosen: Chosen,
    mut form: GuestForm,
    errors: FormErrors,
    notice: Option<String>,
    status: StatusCode,
) -> Response {
    let stay = &rechecked.stay;
    let mut summary = Summary {
        room_type: String::new(),
        description: String::new(),
        rate_plan: String::new(),
        stay: stay_line(stay.check_in, stay.check_out),
        party: view::party(stay.adults, stay.children, stay.infants),
        nightly: Vec::new(),
        total: String::new(),
        back: search_link(&hotel.id, &booking_page::query_of(stay)),
    };
    let mut alternatives = Vec::new();
    match chosen {
        Chosen::Offer(offer) => {
            form.offer = offer.offer_id.clone();
            let card = OfferCard::new(&hotel.id, offer);
            summary.room_type = offer.room_type_name.clone();
            summary.description = offer.description.clone().unwrap_or_default();
            summary.rate_plan = offer.rate_plan_name.clone();
            summary.nightly = card.nightly;
            summary.total = card.total;
        }
        Chosen::OneOf(offers) => {
            form.offer = String::new();
            alternatives = offers.iter().map(|o| OfferCard::new(&hotel.id, o)).collect();
        }
    }
    let page = DetailsPage {
        frame: Frame::new(hotel, "Your details"),
        step: 3,
        countries: choices::countries(&form.country),
        arrival_times: choices::arrival_times(&form.arrival_time),
        summary,
        form,
        errors,
        notice,
        alternatives,
    };
    let mut response = framed_for(render(&page, status), Some(hotel));
    // The browser may keep this page for the back button (always revalidated otherwise), so that a form sent, left
    // and sent again carries the same idempotency key.
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    response
}

/// The guest form again after its offer went stale between the search and the request (sold, repriced or
/// expired): everything the guest typed is kept, and beside it the offer of now for the same room and rate, or, when
/// that room is gone, the rooms still free for the stay, each of which sends the form. The answer to the POST is
/// this page with 409, as for a refused form: a reload sends the stale offer again, which is refused again and books
/// nothing. With no room left for the stay there is nothing to send: a redirect (303) to the search of the stay,
/// which says why.
fn stale_form_answer(
    hotel: &Hotel,
    rechecked: &Rechecked,
    stale: &Stale,
    form: GuestForm,
    errors: FormErrors,
) -> Response {
    const KEPT: &str = "Nothing was booked, and your details are kept:";
    let same = match stale {
        Stale::Repriced { now, .. } => Some(now.as_ref()),
        Stale::Expired | Stale::SoldOut => rechecked
            .offers
            .iter()
            .find(|o| o.room_type_id == rechecked.room_type_id && o.rate_plan_id == rechecked.rate_plan_id),
    };
    match (stale, same) {
        (Stale::Repriced { was, now }, _) => {
            let notice = format!(
                "The price of the room you chose has changed from {} to {}. {KEPT} check the new price and send your \
                 request again.",
                money::format(*was, &now.currency),
                money::format(now.total_price, &now.currency)
            );
            guest_form_page(hotel, rechecked, Chosen::Offer(now), form, errors, Some(notice), StatusCode::CONFLICT)
        }
        (_, Some(offer)) => {
            let notice = format!(
                "The offer you chose has expired: offers are held for 30 minutes. {KEPT} the room is shown again at \
                 its price of now; check it and send your request again."
            );
            guest_form_page(hotel, rechecked, Chosen::Offer(offer), form, errors, Some(notice), StatusCode::CONFLICT)
        }
        (_, None) if !rechecked.offers.is_empty() => {
            let notice = format!("{SOLD_OUT} {KEPT} choose one of the rooms still free for your stay to send it.");
            let chosen = Chosen::OneOf(&rechecked.offers);
            guest_form_page(hotel, rechecked, chosen, form, errors, Some(notice), StatusCode::CONFLICT)
        }
        (_, None) => {
            let search = search_link(&hotel.id, &booking_page::query_of(&rechecked.stay));
            Redirect::to(&format!("{search}&stale={SOLD_OUT_PARAM}")).into_response()
        }
    }
}

async fn details_page(
    State(state): State<AppState>,
    _visitor: Visitor,
    Path(hotel_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let hotel = match public_hotel(&state, &hotel_id).await {
        Ok(hotel) => hotel,
        Err(response) => return response,
    };
    let offer = url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .find(|(name, _)| name == "offer")
        .map(|(_, value)| value.into_owned());
    let Some(offer_id) = offer else {
        return Redirect::to(&format!("/book/{}", hotel.id)).into_response();
    };
    let rechecked =
        match booking_page::recheck(&state.db, &state.offer_key, &state.availability, &hotel.id, &offer_id).await {
            Ok(rechecked) => rechecked,
            Err(err) => return error_page(err, Some(&hotel)),
        };
    match &rechecked.chosen {
        Ok(offer) => {
            let form = GuestForm { key: booking_page::form_key(&state.offer_key, &hotel.id), ..GuestForm::default() };
            details_answer(&hotel, &rechecked, offer, form, FormErrors::default())
        }
        Err(stale) => stale_answer(&hotel, &rechecked, stale, StatusCode::OK),
    }
}

/// Optional text: blank is `None`.
fn optional(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

async fn send_request(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(hotel_id): Path<String>,
    body: Bytes,
) -> Response {
    let hotel = match public_hotel(&state, &hotel_id).await {
        Ok(hotel) => hotel,
        Err(response) => return response,
    };
    let Ok(form) = serde_urlencoded::from_bytes::<GuestForm>(&body) else {
        return error_page(Error::BadRequest("unreadable form".into()), Some(&hotel));
    };
    // A key the page did not give out (made up, or another hotel's) and a filled-in trap: not a form of this page.
    if !booking_page::is_form_key(&state.offer_key, &hotel.id, &form.key) || !form.website.is_empty() {
        return error_page(Error::BadRequest("not a form of this page".into()), Some(&hotel));
    }
    // The form's own choices; anything else is a changed form (the domain checks the format too).
    let mut errors = FormErrors::default();
    if !form.country.is_empty() && !choices::is_country(&form.country) {
        errors.add("country", "Choose a country from the list.");
    }
    if !form.arrival_time.is_empty() && !choices::is_arrival_time(&form.arrival_time) {
        errors.add("arrivalTime", "Choose a time from the list.");
    }
    let key = form.key.clone();
    let input = BookingIn {
        offer_id: form.offer.clone(),
        guest: BookingGuestIn {
            first_name: form.first_name.trim().to_string(),
            last_name: form.last_name.trim().to_string(),
            email: form.email.trim().to_string(),
            phone: optional(&form.phone),
            country: optional(&form.country),
        },
        notes: optional(&form.notes),
        arrival_time: optional(&form.arrival_time),
    };
    if !errors.is_empty() {
        return form_again(&state, &hotel, form, errors).await;
    }
    let from = BookingFrom {
        namespace: Namespace::BookingPage,
        idempotency_key: Some(&key),
        public: Some(PublicCaller { address: &visitor.address, limits: state.config.booking_limits() }),
    };
    match availability::book(&state.db, &state.offer_key, &hotel.id, from, input).await {
        Ok(out) => Redirect::to(&receipt_link(&state, &hotel, &out.reservation_id)).into_response(),
        Err(Error::Validation(field_errors)) if !field_errors.iter().any(|e| e.field.as_deref() == Some("offerId")) => {
            // Mistakes in the form: shown beside their fields, with the offer as it stands now.
            match guest_errors(Error::Validation(field_errors)) {
                Ok(errors) => form_again(&state, &hotel, form, errors).await,
                Err(err) => error_page(err, Some(&hotel)),
            }
        }
        Err(Error::Conflict(_)) => {
            // This form was sent before, and changed since: its first request stands. Nothing of it is shown: the
            // form (kept by a browser, or copied) is no pass to a guest's request.
            match booking_page::form_already_sent(&state.db, &hotel.id, &key).await {
                Ok(true) => {
                    return message_page(
                        StatusCode::CONFLICT,
                        Some(&hotel),
                        "This form was already sent",
                        "This form was sent before with other details, so no second request was made: the first \
                         request stands. To ask for another stay, start a new search.",
                    )
                }
                Ok(false) => {}
                Err(err) => return error_page(err, Some(&hotel)),
            }
            // Sold, repriced or expired between the search and the request: the offers of now.
            let rechecked =
                match booking_page::recheck(&state.db, &state.offer_key, &state.availability, &hotel.id, &form.offer)
                    .await
                {
                    Ok(rechecked) => rechecked,
                    Err(err) => return error_page(err, Some(&hotel)),
                };
            let stale = rechecked.chosen.as_ref().err().cloned().unwrap_or(Stale::SoldOut);
            stale_form_answer(&hotel, &rechecked, &stale, form, FormErrors::default())
        }
        Err(err) => error_page(err, Some(&hotel)),
    }
}

/// The guest form again, with `errors`, for the chosen offer as it stands now (or, when it went stale, with the
/// offer of now).
async fn form_again(state: &AppState, hotel: &Hotel, form: GuestForm, errors: FormErrors) -> Response {
    let rechecked =
        match booking_page::recheck(&state.db, &state.offer_key, &state.availability, &hotel.id, &form.offer).await {
            Ok(rechecked) => rechecked,
            Err(err) => return error_page(err, Some(hotel)),
        };
    match &rechecked.chosen {
        Ok(offer) => details_answer(hotel, &rechecked, offer, form, errors),
        Err(stale) => stale_form_answer(hotel, &rechecked, stale, form, errors),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The receipt

fn receipt_link(state: &AppState, hotel: &Hotel, reservation_id: &str) -> String {
    let token = booking_page::receipt_token(&state.offer_key, &hotel.id, reservation_id);
    format!("/book/{}/requests/{reservation_id}?token={token}", hotel.id)
}

#[derive(Template)]
#[template(path = "booking/receipt.html")]
struct ReceiptPage {
    frame: Frame,
    step: u8,
    receipt: booking_page::Receipt,
    heading: String,
    status_label: &'static str,
    status_class: &'static str,
    next_steps: String,
    stay: String,
    party: String,
    total: String,
}

async fn receipt_page(
    State(state): State<AppState>,
    _visitor: Visitor,
    Path((hotel_id, reservation_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Response {
    let hotel = match public_hotel(&state, &hotel_id).await {
        Ok(hotel) => hotel,
        Err(response) => return response,
    };
    let params: Vec<(String, String)> =
        url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes()).into_owned().collect();
    let param = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or("");
    let receipt =
        match booking_page::receipt(&state.db, &state.offer_key, &hotel.id, &reservation_id, param("token")).await {
            Ok(receipt) => receipt,
            Err(err) => return error_page(err, Some(&hotel)),
        };
    let name = receipt.guest_first_name.clone();
    let email = receipt.guest_email.clone();
    let (heading, status_label, status_class, next_steps) = match receipt.status {
        ReservationStatus::Requested => (
            format!("Thank you, {name}: your request has been sent"),
            "Waiting for the hotel",
            "requested",
            format!(
                "{} now checks your request; nothing has been charged. Once the hotel confirms it, your stay is \
                 booked. The hotel has your e-mail address, {email}, to reach you. Quote the reference below with \
                 any question about your request.",
                hotel.name
            ),
        ),
        ReservationStatus::Confirmed | ReservationStatus::CheckedIn | ReservationStatus::CheckedOut => (
            format!("Your stay is confirmed, {name}"),
            "Confirmed by the hotel",
            "confirmed",
            format!("{} has confirmed your stay. We look forward to welcoming you.", hotel.name),
        ),
        ReservationStatus::Cancelled | ReservationStatus::NoShow => (
            format!("Your request was not confirmed, {name}"),
            "Not confirmed",
            "cancelled",
            format!(
                "{} could not confirm this request, or it was cancelled. You can search for other dates.",
                hotel.name
            ),
        ),
    };
    let page = ReceiptPage {
        frame: Frame::new(&hotel, "Your booking request"),
        step: 4,
        stay: stay_line(receipt.check_in, receipt.check_out),
        party: view::party(receipt.adults, receipt.children, receipt.infants),
        total: money::format(receipt.total_price, &receipt.currency),
        receipt,
        heading,
        status_label,
        status_class,
        next_steps,
    };
    framed_for(render(&page, StatusCode::OK), Some(&hotel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_messages_read_as_sentences_for_guests() {
        assert_eq!(for_guest("must be after checkInDate"), "Must be after the check-in date.");
        assert_eq!(for_guest("a stay may span at most 30 nights"), "A stay may span at most 30 nights.");
        assert_eq!(for_guest(""), "");
    }
}
