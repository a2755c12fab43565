//! The guest form: the chosen offer checked again, the guest's details, and the booking request it sends.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::super::form::{optional, FormErrors};
use super::super::page::render;
use super::super::view;
use super::choices::Choice;
use super::{
    choices, error_page, framed_for, guest_errors, message_page, public_hotel, receipt_link, search_link, stale_answer,
    stay_line, Frame, OfferCard, Visitor, SOLD_OUT, SOLD_OUT_PARAM,
};
use crate::app::AppState;
use crate::domain::availability::booking_page::{self, Rechecked, Stale};
use crate::domain::availability::Offer;
use crate::domain::booking_requests::{self, BookingFrom, BookingGuestIn, BookingIn, PublicCaller};
use crate::domain::change::Writer;
use crate::domain::hotels::Hotel;
use crate::domain::idempotency::Namespace;
use crate::domain::{money, Error};

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
pub(super) struct DetailsPage {
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
pub(super) enum Chosen<'a> {
    Offer(&'a Offer),
    OneOf(&'a [Offer]),
}

pub(super) fn details_answer(
    hotel: &Hotel,
    rechecked: &Rechecked,
    offer: &Offer,
    form: GuestForm,
    errors: FormErrors,
) -> Response {
    let status = if errors.is_empty() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    guest_form_page(hotel, rechecked, Chosen::Offer(offer), form, errors, None, status)
}

pub(super) fn guest_form_page(
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
pub(super) fn stale_form_answer(
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

pub(super) async fn details_page(
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

pub(super) async fn send_request(
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
    let writer = Writer::BookingPage { address: visitor.address.clone() };
    let from = BookingFrom {
        writer: &writer,
        namespace: Namespace::BookingPage,
        idempotency_key: Some(&key),
        public: Some(PublicCaller { address: &visitor.address, limits: state.config.booking_limits() }),
    };
    match booking_requests::book(&state.db, &state.offer_key, &hotel.id, from, input).await {
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
pub(super) async fn form_again(state: &AppState, hotel: &Hotel, form: GuestForm, errors: FormErrors) -> Response {
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
