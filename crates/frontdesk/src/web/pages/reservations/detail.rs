//! One reservation: its rooms, folio and guest, and the moves and changes it allows now.

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;

use chrono::NaiveDate;

use super::super::HotelPage;
use super::guest_title;
use crate::app::AppState;
use crate::domain::finance::billing::{self, BillingSettings};
use crate::domain::finance::folios::{FolioLedger, LineKind, PaymentMethod};
use crate::domain::finance::invoices;
use crate::domain::finance::ledger;
use crate::domain::finance::ledger::EntryKind;
use crate::domain::front_office::{self};
use crate::domain::guests::Guest;
use crate::domain::housekeeping::{self, RoomNow};
use crate::domain::reservations::{attention, stay, ReservationStatus, RoomStatus};
use crate::domain::{money, Actor, Error, Scope};
use crate::web::form::FormErrors;
use crate::web::page::{render_page, Chrome, Section, WebError, WebResult};
use crate::web::view::{self, Catalog, StayRow};

pub(super) struct RoomLine {
    id: String,
    room_type: String,
    rate_plan: String,
    room: Option<String>,
    status: &'static str,
    party: String,
    price: String,
    /// Rooms of its type it can be given (for the assignment controls).
    choices: Vec<RoomChoice>,
}

pub(super) struct RoomChoice {
    id: String,
    label: String,
    selected: bool,
}

/// The folio as the desk reads and works it.
pub(super) struct FolioView {
    pub(super) lines: Vec<FolioRow>,
    pub(super) vat_totals: Vec<VatRow>,
    pub(super) charges: String,
    pub(super) paid: String,
    pub(super) balance: String,
    /// What the guest owes, as the payment's amount field starts (empty when nothing is owed).
    pub(super) due: String,
    pub(super) on_account: Option<String>,
    pub(super) extras: Vec<(String, String)>,
    pub(super) categories: Vec<String>,
    pub(super) methods: Vec<(&'static str, &'static str)>,
    /// What the amount fields take, e.g. "EUR, 2 decimals".
    pub(super) currency: String,
    /// The stay's city tax, when the hotel charges one.
    pub(super) city_tax: Option<CityTaxView>,
    /// The folio's invoices and cancellation invoices, oldest first.
    pub(super) invoices: Vec<crate::web::pages::invoices::InvoiceLink>,
    /// Whether it has lines not yet on an invoice (charges or allowances), and the operator may issue one.
    pub(super) to_invoice: bool,
    /// Whether the operator's role may add charges (and exempt the stay from city tax), and take payments: the
    /// forms are shown only then.
    pub(super) may_charge: bool,
    pub(super) may_pay: bool,
}

/// Whether the stay pays the hotel's city tax, and whether the desk can still change that.
pub(super) struct CityTaxView {
    /// The tax's name in the hotel's settings ("City tax", "Kurtaxe").
    pub(super) name: String,
    pub(super) exempt_reason: Option<String>,
    /// While the stay's lines follow it (confirmed or in house).
    pub(super) changeable: bool,
}

pub(super) struct FolioRow {
    pub(super) id: String,
    pub(super) date: String,
    pub(super) description: String,
    /// VAT rate of a charge or allowance ("7 %"); payments have none.
    pub(super) rate: String,
    /// Signed as it counts in the balance: "-EUR 50.00" for a payment.
    pub(super) amount: String,
    pub(super) note: String,
    pub(super) posted: bool,
    pub(super) correctable: bool,
    pub(super) refundable: bool,
}

pub(super) struct VatRow {
    pub(super) rate: String,
    pub(super) net: String,
    pub(super) vat: String,
    pub(super) gross: String,
}

pub(super) fn folio_view(
    ledger: FolioLedger,
    billing: &BillingSettings,
    status: ReservationStatus,
    actor: &Actor,
) -> FolioView {
    let may_correct = EntryKind::Allowance.allowed(actor);
    let may_refund = EntryKind::Refund.allowed(actor);
    let may_charge = EntryKind::Charge.allowed(actor);
    let currency = ledger.currency.clone();
    let m = |minor: i64| money::format(minor, &currency);
    // By day, in the order they were made within a day: the folio as a guest reads it.
    let mut by_day: Vec<&crate::domain::finance::folios::FolioLine> = ledger.lines.iter().collect();
    by_day.sort_by_key(|l| l.service_date);
    let lines = by_day
        .into_iter()
        .map(|l| {
            let note = [l.reference.clone(), l.reason.clone()].into_iter().flatten().collect::<Vec<_>>().join(" · ");
            let quantity = if l.quantity > 1 { format!(" × {}", l.quantity) } else { String::new() };
            FolioRow {
                id: l.id.clone(),
                date: view::date_short(l.service_date),
                description: format!("{}{quantity}", l.description),
                rate: match l.kind {
                    LineKind::Charge | LineKind::Allowance => view::percent(l.vat_rate_basis_points),
                    _ => String::new(),
                },
                amount: m(l.kind.sign() * l.gross),
                note,
                posted: l.posted_at.is_some(),
                correctable: l.kind == LineKind::Charge && may_correct,
                refundable: l.kind == LineKind::Payment && may_refund,
            }
        })
        .collect();
    let vat_totals = ledger
        .vat_totals
        .iter()
        .map(|t| VatRow {
            rate: view::percent(t.vat_rate_basis_points),
            net: m(t.net),
            vat: m(t.vat),
            gross: m(t.gross),
        })
        .collect();
    FolioView {
        lines,
        vat_totals,
        charges: m(ledger.charges - ledger.allowances),
        paid: m(ledger.payments - ledger.refunds),
        balance: m(ledger.balance),
        due: if ledger.balance > 0 { money::input_value(ledger.balance, &currency) } else { String::new() },
        on_account: ledger.on_account_reason.clone(),
        extras: billing.extras.iter().map(|e| (e.code.clone(), format!("{} ({})", e.name, m(e.unit_price)))).collect(),
        categories: billing.vat_rates.iter().map(|r| r.category.clone()).collect(),
        methods: PaymentMethod::CHOICES.to_vec(),
        currency: format!("{currency}, {} decimals", money::exponent(&currency)),
        city_tax: billing.city_tax.as_ref().map(|rule| CityTaxView {
            name: rule.name.clone(),
            exempt_reason: ledger.city_tax_exempt_reason.clone(),
            changeable: may_charge && matches!(status, ReservationStatus::Confirmed | ReservationStatus::CheckedIn),
        }),
        invoices: Vec::new(),
        to_invoice: invoices::may_issue(actor)
            && ledger
                .lines
                .iter()
                .any(|l| matches!(l.kind, LineKind::Charge | LineKind::Allowance) && l.invoice_id.is_none()),
        may_charge,
        may_pay: EntryKind::Payment.allowed(actor),
    }
}

#[derive(Template)]
#[template(path = "reservations/detail.html")]
pub(super) struct DetailTemplate {
    chrome: Chrome,
    row: StayRow,
    guest: Option<Guest>,
    /// Other guests of the hotel with the guest's e-mail: a booking request brings its guest as typed, and staff
    /// decide whether it is someone they know.
    same_email: Vec<Guest>,
    check_in_value: String,
    check_out_value: String,
    rooms: Vec<RoomLine>,
    folio: Option<FolioView>,
    /// Whether the operator's role reads folios: the folio's section is left out otherwise.
    show_folio: bool,
    notes: String,
    created: String,
    can: Moves,
    back: String,
    errors: FormErrors,
    /// Why the stay needs attention, and what exactly (a channel's booking taken overbooked or unmapped).
    attention: Option<(String, String)>,
    /// The reservation's and its folio's changes, from the audit log.
    history: Option<Vec<crate::web::pages::audit::HistoryLine>>,
}

/// Which actions a reservation offers in its state.
pub(super) struct Moves {
    approve: bool,
    decline: bool,
    cancel: bool,
    check_in: bool,
    check_out: bool,
    undo_check_out: bool,
    no_show: bool,
    change_dates: bool,
    assign: bool,
}

impl Moves {
    /// `checked_out_today`: a check-out made today, which can still be undone. None without the right to change
    /// reservations (`writes`).
    fn of(status: ReservationStatus, checked_out_today: bool, writes: bool) -> Moves {
        use ReservationStatus::*;
        if !writes {
            return Moves {
                approve: false,
                decline: false,
                cancel: false,
                check_in: false,
                check_out: false,
                undo_check_out: false,
                no_show: false,
                change_dates: false,
                assign: false,
            };
        }
        Moves {
            approve: status.can_move_to(Confirmed) && status == Requested,
            decline: status == Requested,
            cancel: status == Confirmed,
            check_in: status == Confirmed,
            check_out: status.can_move_to(CheckedOut),
            undo_check_out: status == CheckedOut && checked_out_today,
            no_show: status.can_move_to(NoShow),
            change_dates: matches!(status, Requested | Confirmed),
            assign: matches!(status, Confirmed | CheckedIn),
        }
    }
}

pub(super) async fn detail(
    State(state): State<AppState>,
    page: HotelPage,
    axum::extract::Path((_, id)): axum::extract::Path<(String, String)>,
) -> WebResult {
    render_detail(&state, &page, &id, FormErrors::default(), StatusCode::OK).await
}

pub(super) async fn render_detail(
    state: &AppState,
    page: &HotelPage,
    id: &str,
    errors: FormErrors,
    status: StatusCode,
) -> WebResult {
    let actor = &page.session.actor;
    let line = front_office::stay(&state.db, actor, id).await?;
    if line.reservation.hotel_id != page.hotel.id {
        return Err(WebError(Error::NotFound("reservation")));
    }
    let catalog = Catalog::load(&state.db, actor, &page.hotel.id).await?;
    let board = housekeeping::board(&state.db, actor, &page.hotel.id).await?;
    let r = &line.reservation;
    let rooms = line
        .rooms
        .iter()
        .filter(|room| room.status != RoomStatus::Cancelled || r.status == ReservationStatus::Cancelled)
        .map(|room| RoomLine {
            id: room.id.clone(),
            room_type: catalog.room_type(&room.room_type_id),
            rate_plan: catalog.rate_plan(room.rate_plan_id.as_deref()),
            room: room.room_id.as_ref().map(|id| catalog.room(id)),
            status: match room.status {
                RoomStatus::Pending => "Pending",
                RoomStatus::Confirmed => "Confirmed",
                RoomStatus::Cancelled => "Cancelled",
            },
            party: view::party(room.adults, room.children, room.infants),
            price: money::format(room.price, &r.currency),
            choices: board
                .rooms
                .iter()
                .filter(|candidate| candidate.room.room_type_id == room.room_type_id)
                .map(|candidate| RoomChoice {
                    id: candidate.room.id.clone(),
                    label: room_choice_label(candidate, &r.id, board.today),
                    selected: room.room_id.as_deref() == Some(candidate.room.id.as_str()),
                })
                .collect(),
        })
        .collect();
    let folio = r.folio.as_ref();
    let reads = |scope: Scope| actor.require_scope(scope).is_ok();
    let same_email = match &line.guest {
        Some(guest) if reads(Scope::GuestsRead) => {
            crate::domain::guests::same_email_in_hotel(&state.db, actor, guest).await?
        }
        _ => Vec::new(),
    };
    let mut recorded = vec![r.id.clone()];
    recorded.extend(folio.map(|f| f.id.clone()));
    let history = crate::web::pages::audit::history(state, page, &recorded).await?;
    let attention = attention::open_of(&state.db, actor, &r.id)
        .await?
        .map(|flag| (flag.reasons.iter().map(|reason| reason.label()).collect::<Vec<_>>().join(", "), flag.detail));
    let template = DetailTemplate {
        attention,
        history,
        same_email,
        chrome: page
            .chrome(state, Section::Reservations, &format!("Reservation of {}", guest_title(&line.guest)))
            .await?,
        row: StayRow::new(&line, &catalog),
        check_in_value: r.check_in_date.to_string(),
        check_out_value: r.check_out_date.to_string(),
        show_folio: reads(Scope::FoliosRead),
        folio: match folio {
            Some(f) if reads(Scope::FoliosRead) => {
                let ledger = ledger::get(&state.db, actor, &f.id).await?;
                let billing = billing::get(&state.db, actor, &page.hotel.id).await?;
                let mut view = folio_view(ledger, &billing, r.status, actor);
                let invoices = crate::domain::finance::invoices::of_folio(&state.db, actor, &f.id).await?;
                view.invoices = crate::web::pages::invoices::InvoiceLink::all(&invoices);
                Some(view)
            }
            _ => None,
        },
        notes: r.notes.clone().unwrap_or_default(),
        created: r.created_at.format("%-d %b %Y %H:%M UTC").to_string(),
        can: Moves::of(
            r.status,
            stay::checked_out_today(&state.db, &page.hotel, r).await?,
            actor.require_scope(Scope::ReservationsWrite).is_ok(),
        ),
        back: format!("/hotels/{}/reservations/{}", page.hotel.id, r.id),
        guest: line.guest.clone(),
        rooms,
        errors,
    };
    let mut response = render_page(&template, &page.session, state);
    *response.status_mut() = status;
    Ok(response)
}

/// A room in a picker, with what the desk needs to choose: its housekeeping status and whether it is free now
/// ("101 · clean · free", "102 · dirty · in house until 26 Nov").
pub(super) fn room_choice_label(room: &RoomNow, reservation_id: &str, today: NaiveDate) -> String {
    let status = room.room.housekeeping_status;
    if !status.sellable() {
        return format!("{} · out of order", room.room.name);
    }
    let status = view::housekeeping_label(status).to_lowercase();
    let now = match &room.occupant {
        Some(o) if o.reservation.id == reservation_id => "this stay".to_string(),
        Some(o) if o.reservation.check_out_date <= today => "guest due out, not yet checked out".to_string(),
        Some(o) => format!("in house until {}", view::date_short(o.reservation.check_out_date)),
        None => "free".to_string(),
    };
    format!("{} · {status} · {now}", room.room.name)
}
