//! Hotels of the organization: the list, a new hotel, and one hotel's page (its details to edit, with its room
//! types, rooms and rate plans). Saved through `hotels::create` and `hotels::update`, as `POST /api/hotels` and
//! `PUT /api/hotels/{id}` save them.

use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use super::{render_form, Area, SetupChrome, SetupPage};
use crate::app::AppState;
use crate::domain::hotels::{self, Hotel, HotelIn, HotelPatch};
use crate::domain::rate_plans::{self, RatePlan};
use crate::domain::room_types::{self, RoomType};
use crate::domain::rooms::{self, Room};
use crate::web::form::{optional, FormErrors};
use crate::web::page::WebResult;
use crate::web::pages::HotelPage;
use crate::web::session::{self, Flash, Posted};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/setup/hotels", get(list).post(create))
        .route("/setup/hotels/new", get(new_form))
        .route("/setup/hotels/{hotel_id}", get(show).post(update))
}

/// The path of a hotel's setup page.
pub fn hotel_path(hotel_id: &str) -> String {
    format!("/setup/hotels/{hotel_id}")
}

struct HotelRow {
    hotel: Hotel,
    booking_url: String,
}

#[derive(Template)]
#[template(path = "setup/hotels.html")]
struct ListTemplate {
    chrome: SetupChrome,
    rows: Vec<HotelRow>,
    /// Opening a hotel is the owner's (`POST /api/hotels`).
    may_open: bool,
}

async fn list(State(state): State<AppState>, page: SetupPage) -> WebResult {
    let found = hotels::list(&state.db, &page.session.actor).await?;
    let base = state.config.public_base();
    let rows =
        found.into_iter().map(|hotel| HotelRow { booking_url: format!("{base}/book/{}", hotel.id), hotel }).collect();
    let may_open = page.session.actor.require(crate::domain::access::Task::Administer).is_ok();
    let template = ListTemplate { chrome: page.chrome(&state, Area::Hotels, "Hotels").await?, rows, may_open };
    Ok(crate::web::page::render_page(&template, &page.session, &state))
}

/// The hotel form's fields, as typed (named like the API's JSON fields, so the domain's messages find them).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct HotelForm {
    name: String,
    timezone: String,
    currency: String,
    check_in_time: String,
    check_out_time: String,
    address_line1: String,
    address_line2: String,
    city: String,
    postal_code: String,
    region: String,
    country: String,
    /// `on` when ticked; a browser sends nothing for an unticked box.
    public_booking: Option<String>,
}

impl HotelForm {
    fn of(h: &Hotel) -> HotelForm {
        let a = &h.address;
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        HotelForm {
            name: h.name.clone(),
            timezone: h.timezone.clone(),
            currency: h.currency.clone(),
            check_in_time: h.check_in_time.clone(),
            check_out_time: h.check_out_time.clone(),
            address_line1: text(&a.address_line1),
            address_line2: text(&a.address_line2),
            city: text(&a.city),
            postal_code: text(&a.postal_code),
            region: text(&a.region),
            country: text(&a.country),
            public_booking: h.public_booking.then(|| "on".to_string()),
        }
    }

    fn blank() -> HotelForm {
        HotelForm {
            check_in_time: "15:00".into(),
            check_out_time: "11:00".into(),
            public_booking: Some("on".into()),
            ..HotelForm::default()
        }
    }

    pub fn public_booking(&self) -> bool {
        self.public_booking.is_some()
    }

    /// Codes are typed in any case; the API's are upper case.
    fn upper(value: &str) -> String {
        value.trim().to_uppercase()
    }
}

/// Every field a message may name that the form shows.
const HOTEL_FIELDS: [&str; 11] = [
    "name",
    "timezone",
    "currency",
    "checkInTime",
    "checkOutTime",
    "addressLine1",
    "addressLine2",
    "city",
    "postalCode",
    "region",
    "country",
];

/// One hotel's page: its details as a form, and (for a hotel that exists) its room types, rooms and rate plans.
#[derive(Template)]
#[template(path = "setup/hotel.html")]
struct HotelTemplate {
    chrome: SetupChrome,
    /// The hotel being edited; `None` for a new one.
    hotel: Option<Hotel>,
    action: String,
    form: HotelForm,
    errors: FormErrors,
    unplaced: Vec<String>,
    timezones: Vec<&'static str>,
    booking_url: String,
    room_types: Vec<RoomType>,
    rooms: Vec<RoomLine>,
    rate_plans: Vec<PlanLine>,
}

struct RoomLine {
    room: Room,
    room_type: String,
}

struct PlanLine {
    plan: RatePlan,
    room_type: String,
}

impl HotelTemplate {
    fn path(&self, rest: &str) -> String {
        match &self.hotel {
            Some(h) => format!("{}/{rest}", hotel_path(&h.id)),
            None => String::new(),
        }
    }
}

async fn hotel_page(
    state: &AppState,
    page: &SetupPage,
    hotel: Option<Hotel>,
    form: HotelForm,
    errors: FormErrors,
) -> WebResult {
    let actor = &page.session.actor;
    let (title, action) = match &hotel {
        Some(h) => (h.name.clone(), hotel_path(&h.id)),
        None => ("New hotel".to_string(), "/setup/hotels".to_string()),
    };
    let (mut types, mut room_lines, mut plan_lines) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(h) = &hotel {
        types = room_types::list(&state.db, actor, Some(&h.id)).await?;
        let type_name = |id: Option<&str>| match id {
            Some(id) => types.iter().find(|t| t.id == id).map(|t| t.name.clone()).unwrap_or_default(),
            None => "Every room type".to_string(),
        };
        room_lines = rooms::list(&state.db, actor, Some(&h.id), None)
            .await?
            .into_iter()
            .map(|room| RoomLine { room_type: type_name(Some(&room.room_type_id)), room })
            .collect();
        plan_lines = rate_plans::list(&state.db, actor, Some(&h.id), None)
            .await?
            .into_iter()
            .map(|plan| PlanLine { room_type: type_name(plan.room_type_id.as_deref()), plan })
            .collect();
    }
    let refused = !errors.is_empty();
    let template = HotelTemplate {
        chrome: page.chrome(state, Area::Hotels, title).await?,
        booking_url: hotel
            .as_ref()
            .map(|h| format!("{}/book/{}", state.config.public_base(), h.id))
            .unwrap_or_default(),
        hotel,
        action,
        unplaced: errors.unplaced(&HOTEL_FIELDS),
        form,
        errors,
        timezones: chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name()).collect(),
        room_types: types,
        rooms: room_lines,
        rate_plans: plan_lines,
    };
    Ok(render_form(&template, &page.session, state, refused))
}

async fn new_form(State(state): State<AppState>, page: SetupPage) -> WebResult {
    page.session.actor.require(crate::domain::access::Task::Administer)?;
    hotel_page(&state, &page, None, HotelForm::blank(), FormErrors::default()).await
}

async fn show(State(state): State<AppState>, hotel: HotelPage) -> WebResult {
    let page = SetupPage { session: hotel.session };
    let form = HotelForm::of(&hotel.hotel);
    hotel_page(&state, &page, Some(hotel.hotel), form, FormErrors::default()).await
}

async fn create(State(state): State<AppState>, page: SetupPage, posted: Posted<HotelForm>) -> WebResult {
    let f = posted.form;
    let input = HotelIn {
        name: f.name.clone(),
        timezone: f.timezone.trim().to_string(),
        currency: HotelForm::upper(&f.currency),
        check_in_time: Some(f.check_in_time.trim().to_string()),
        check_out_time: Some(f.check_out_time.trim().to_string()),
        address_line1: optional(&f.address_line1),
        address_line2: optional(&f.address_line2),
        city: optional(&f.city),
        postal_code: optional(&f.postal_code),
        region: optional(&f.region),
        country: optional(&f.country).map(|c| c.to_uppercase()),
        public_booking: Some(f.public_booking()),
        booking_embed_origins: None,
    };
    match hotels::create(&state.db, &page.session.actor, input).await {
        Ok(hotel) => {
            let flash = Flash::success(format!(
                "Created {}. Add its room types, rooms and rate plans below; prices go in the rates calendar.",
                hotel.name
            ));
            Ok(session::redirect_with(&hotel_path(&hotel.id), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            hotel_page(&state, &page, None, f, errors).await
        }
    }
}

async fn update(State(state): State<AppState>, hotel: HotelPage, posted: Posted<HotelForm>) -> WebResult {
    let f = posted.form;
    let page = SetupPage { session: hotel.session };
    // Every field of the form is sent: an emptied address field clears it.
    let patch = HotelPatch {
        name: Some(f.name.clone()),
        timezone: Some(f.timezone.trim().to_string()),
        currency: Some(HotelForm::upper(&f.currency)),
        check_in_time: Some(f.check_in_time.trim().to_string()),
        check_out_time: Some(f.check_out_time.trim().to_string()),
        address_line1: Some(optional(&f.address_line1)),
        address_line2: Some(optional(&f.address_line2)),
        city: Some(optional(&f.city)),
        postal_code: Some(optional(&f.postal_code)),
        region: Some(optional(&f.region)),
        country: Some(optional(&f.country).map(|c| c.to_uppercase())),
        public_booking: Some(f.public_booking()),
        booking_embed_origins: None,
    };
    match hotels::update(&state.db, &page.session.actor, &hotel.hotel.id, patch).await {
        Ok(saved) => {
            let flash = Flash::success(format!("Saved the details of {}.", saved.name));
            Ok(session::redirect_with(&hotel_path(&saved.id), flash, &state))
        }
        Err(err) => {
            let mut errors = FormErrors::default();
            errors.absorb(err)?;
            hotel_page(&state, &page, Some(hotel.hotel), f, errors).await
        }
    }
}
