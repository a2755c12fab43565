//! The public booking page, `/book/{hotelId}`: a hotel's guests search, choose and request a stay.
//!
//! * `GET /book/{hotelId}?checkInDate=&checkOutDate=&adults=&children=&infants=`: the hotel, the search form
//!   (prefilled from the query, so a hotel's own site can link to a search) and, once dates are given, every offer.
//! * `GET /book/{hotelId}/details?offer=…`: the chosen offer checked again and the guest form.
//! * `POST /book/{hotelId}/request`: the booking request, then a redirect (303) to its receipt.
//! * `GET /book/{hotelId}/requests/{reservationId}?token=…`: the receipt, at a link only the guest was given.
//!
//! No operator session: the pages call the same domain functions as the public API (`availability::search`,
//! `booking_requests::book`: signed offers, revalidation under the inventory lock, idempotency, the limits of public
//! booking requests, webhook events), plus the page's own reads in `availability::booking_page`. Every request
//! counts against the client address's public rate limit, like the API's public endpoints. The pages may be framed
//! only by the sites the hotel names (`bookingEmbedOrigins`); the dashboard never.
//!
//! Double submits, back-button resubmits and refreshes make one request: the guest form carries an idempotency key
//! made when the form is shown, and the browser keeps that form for the back button (the page is not `no-store`).
//! The key is the page's own ([`booking_page::form_key`]: signed, in a namespace of its own), and it answers with
//! the first request only when the form is sent unchanged; changed, it is refused without showing anything of the
//! first request. The form has a field people never see (`website`): a form that fills it in is a robot's.
//!
//! One file per step: [`search`] (search and results), [`details`] (the guest form and the request it sends),
//! [`receipt`]; the frame, the error pages and what the steps share are here.

mod choices;
mod details;
mod receipt;
mod search;

use askama::Template;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use chrono::NaiveDate;

use super::assets;
use super::form::FormErrors;
use super::page::render;
use super::view;
use crate::app::limits::{client_address, limit_address};
use crate::app::AppState;
use crate::domain::availability::booking_page::{self};
use crate::domain::availability::AvailabilityQuery;
use crate::domain::hotels::Hotel;
use crate::domain::Error;
use details::*;
use receipt::*;
use search::*;

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
        limit_address(parts, state).await.map_err(|err| error_page(err, None))?;
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
        Error::Validation(_) | Error::Unprocessable(_) | Error::BadRequest(_) | Error::Conflict(_) => message_page(
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
