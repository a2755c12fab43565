//! Search and results: the search form, every offer cheapest first, and the answers for a sold-out or stale offer.

use askama::Template;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::Days;

use super::super::form::FormErrors;
use super::super::page::render;
use super::super::view;
use super::{error_page, framed_for, guest_errors, public_hotel, stay_line, Frame, Visitor};
use crate::app::AppState;
use crate::domain::availability::booking_page::{self, Rechecked, Stale};
use crate::domain::availability::{self, AvailabilityQuery, Offer, MAX_STAY_NIGHTS};
use crate::domain::hotels::Hotel;
use crate::domain::money;

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
    /// "plus EUR 18.00 city tax, EUR 318.00 in all", where the hotel's city has one.
    pub city_tax: Option<String>,
}

/// Rooms left at which a card says so.
pub(super) const FEW_LEFT: i64 = 3;

impl OfferCard {
    pub(super) fn new(hotel_id: &str, offer: &Offer) -> OfferCard {
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
            city_tax: offer.city_tax.as_ref().map(|tax| {
                format!(
                    "plus {} {}, {} in all",
                    money::format(tax.amount, &offer.currency),
                    tax.name.to_lowercase(),
                    money::format(offer.total_with_taxes, &offer.currency)
                )
            }),
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
pub(super) struct SearchPage {
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
pub(super) async fn run_search(
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

pub(super) fn results(hotel: &Hotel, query: &AvailabilityQuery, offers: &[Offer], none: String) -> Results {
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

pub(super) async fn search_page(
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
pub(super) const SOLD_OUT: &str =
    "Sorry, the room you chose has just been booked by someone else, or is no longer sold for these dates.";

/// The search page's query parameter value that shows [`SOLD_OUT`] above the search.
pub(super) const SOLD_OUT_PARAM: &str = "sold-out";

pub(super) fn search_answer(
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
pub(super) fn stale_answer(hotel: &Hotel, rechecked: &Rechecked, stale: &Stale, status: StatusCode) -> Response {
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
