//! Invoices: a folio closed into a numbered document that never changes ([`issue`]), corrected only by a
//! cancellation invoice that negates it ([`cancel`]), read as JSON or PDF, listed, and exported for an accountant
//! ([`export`]). What an invoice says is made in [`document`]; its number in [`numbering`]. docs/invoices.md states
//! the rules and the law they follow.
//!
//! Who may: `invoices:write` issues, cancels and sends; `folios:read` reads. Operators hold both.

pub mod document;
pub mod export;
pub mod numbering;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use self::document::{Choices, Draft, Recipient};
use self::numbering::Pattern;
use super::billing;
use crate::domain::access::{Actor, Scope};
use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::listing::{ListItems, ListParams, Listing, Shape, Vocabulary};
use crate::domain::validate::{clean, parse_date, Checks};
use crate::domain::{hotels, idempotency, new_id, now, Error, FieldError, Result};
pub use crate::model::invoices::{
    Invoice, InvoiceDocument, InvoiceKind, InvoiceLanguage, PostalAddress, RecipientKind,
};
use crate::store::{self, Db};

/// Who an invoice is addressed to: the reservation's guest (with the address on the guest's record), or a company.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RecipientIn {
    /// `GUEST` (the default) or `COMPANY`.
    pub kind: Option<RecipientKind>,
    /// A company's name (with `COMPANY`; a guest's comes from the guest).
    #[schema(max_length = 200)]
    #[param(max_length = 200)]
    pub name: Option<String>,
    #[schema(max_length = 200)]
    #[param(max_length = 200)]
    pub street: Option<String>,
    #[schema(max_length = 20)]
    #[param(max_length = 20)]
    pub postal_code: Option<String>,
    #[schema(max_length = 100)]
    #[param(max_length = 100)]
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[schema(pattern = "^[A-Z]{2}$")]
    #[param(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    /// The company's VAT identification number, when it has one.
    #[schema(pattern = "^[A-Z]{2}[A-Z0-9]{2,13}$")]
    #[param(pattern = "^[A-Z]{2}[A-Z0-9]{2,13}$")]
    pub vat_id: Option<String>,
}

/// An invoice to issue from a folio.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvoiceIn {
    /// `en` (the default) or `de`.
    pub language: Option<InvoiceLanguage>,
    /// The guest when left out.
    pub recipient: Option<RecipientIn>,
    /// Printed on the invoice.
    #[schema(max_length = 1000)]
    pub note: Option<String>,
}

/// Why an invoice is cancelled.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancellationIn {
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// What issuing would give now: the document (with the number it would take if issued now), and every reason it
/// cannot be issued yet (empty: it can).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoicePreview {
    pub issuable: bool,
    pub problems: Vec<FieldError>,
    pub invoice: InvoiceDocument,
}

impl Record for Invoice {
    const KIND: RecordKind = RecordKind::Invoice;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }

    /// The document is kept whole, as issued, beside the log: the log names it by its number and totals, and keeps
    /// none of the recipient's details.
    fn audited(&self) -> serde_json::Result<serde_json::Value> {
        let d = &self.document;
        Ok(serde_json::json!({
            "number": d.number,
            "kind": d.kind,
            "issueDate": d.issue_date,
            "currency": d.currency,
            "totalGross": d.total_gross,
            "reservationId": self.reservation_id,
            "folioId": self.folio_id,
            "cancelsInvoiceId": self.cancels_invoice_id,
            "cancelledByInvoiceId": self.cancelled_by_invoice_id,
        }))
    }
}

/// The recipient chosen, checked: 400 for what is malformed (control characters, overlong text, a company without a
/// name is a 422 later, with the other reasons).
fn recipient(input: Option<RecipientIn>) -> Result<Recipient> {
    let input = input.unwrap_or_default();
    let mut checks = Checks::new();
    let text = |v: &Option<String>| v.as_deref().map(clean).filter(|t| !t.is_empty());
    let (name, street, postal_code, city, country) =
        (text(&input.name), text(&input.street), text(&input.postal_code), text(&input.city), text(&input.country));
    let vat_id = text(&input.vat_id).map(|v| v.chars().filter(|c| !c.is_whitespace()).collect::<String>());
    checks.opt_line("recipient.name", name.as_deref(), 200);
    checks.opt_line("recipient.street", street.as_deref(), 200);
    checks.opt_line("recipient.postalCode", postal_code.as_deref(), 20);
    checks.opt_line("recipient.city", city.as_deref(), 100);
    if country.as_deref().is_some_and(|c| !billing::is_country(c)) {
        checks.fail("recipient.country", "must be an ISO 3166-1 alpha-2 code such as DE");
    }
    if vat_id.as_deref().is_some_and(|v| !billing::is_vat_id(v)) {
        checks.fail("recipient.vatId", "must be two letters and 2 to 13 letters or digits, e.g. DE123456789");
    }
    let kind = input.kind.unwrap_or(RecipientKind::Guest);
    if kind == RecipientKind::Guest {
        for (field, given) in [
            ("name", &name),
            ("street", &street),
            ("postalCode", &postal_code),
            ("city", &city),
            ("country", &country),
            ("vatId", &vat_id),
        ] {
            if given.is_some() {
                checks.fail(
                    &format!("recipient.{field}"),
                    "comes from the guest's record with kind GUEST: change the guest, or issue to a COMPANY",
                );
            }
        }
    }
    checks.finish()?;
    Ok(match kind {
        RecipientKind::Guest => Recipient::Guest,
        RecipientKind::Company => Recipient::Company {
            name: name.unwrap_or_default(),
            address: PostalAddress { street, postal_code, city, country },
            vat_id,
        },
    })
}

fn note(note: Option<&str>) -> Result<Option<String>> {
    let note = note.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
    let mut checks = Checks::new();
    checks.opt_text("note", note.as_deref(), 1000);
    checks.finish()?;
    Ok(note)
}

/// What an issue reads of a folio, inside the change (or a read): everything [`document::draft`] needs.
struct Read {
    owner: store::folios::FolioOwner,
    hotel: crate::model::hotels::Hotel,
    billing: billing::BillingSettings,
    reservation: crate::model::reservations::Reservation,
    guest: Option<crate::model::guests::Guest>,
    lines: Vec<crate::model::folios::FolioLine>,
    invoices: Vec<Invoice>,
}

async fn read(conn: &mut store::Conn, actor: &Actor, folio_id: &str) -> Result<Read> {
    let owner = store::folios::owner(conn, &actor.organization_id, folio_id)
        .await?
        .filter(|o| actor.sees_hotel(Some(&o.hotel_id)))
        .ok_or(Error::NotFound("folio"))?;
    let reservation = store::reservations::get(conn, &actor.organization_id, &owner.reservation_id)
        .await?
        .ok_or(Error::NotFound("folio"))?;
    let hotel = hotels::require_named(conn, actor, Some(&owner.hotel_id)).await?;
    let billing = billing::settings_of(conn, &hotel).await?;
    let guest = match &reservation.guest_id {
        Some(id) => store::guests::get(conn, &actor.organization_id, id).await?,
        None => None,
    };
    let lines = store::folios::lines(conn, folio_id).await?;
    let invoices = store::invoices::of_folio(conn, folio_id).await?;
    Ok(Read { owner, hotel, billing, reservation, guest, lines, invoices })
}

fn pattern(billing: &billing::BillingSettings) -> Result<Pattern> {
    Pattern::parse(&billing.invoice_number_pattern)
        .map_err(|e| Error::Internal(anyhow::anyhow!("a stored invoice number pattern is invalid: {e}")))
}

fn draft(read: &Read, choices: &Choices, number: String) -> std::result::Result<Draft, Box<document::Refused>> {
    let folio = document::Folio {
        hotel: &read.hotel,
        billing: &read.billing,
        reservation: &read.reservation,
        guest: read.guest.as_ref(),
        lines: &read.lines,
        invoices: &read.invoices,
    };
    document::draft(&folio, choices, number)
}

/// What issuing an invoice from the folio would give now, and what stands in the way.
pub async fn preview(db: &Db, actor: &Actor, folio_id: &str, input: InvoiceIn) -> Result<InvoicePreview> {
    actor.require_scope(Scope::FoliosRead)?;
    let mut conn = db.read().await?;
    // The folio first: a folio the caller cannot see is a 404 whatever the rest of the request says.
    let read = read(&mut conn, actor, folio_id).await?;
    let recipient = recipient(input.recipient)?;
    let note = note(input.note.as_deref())?;
    let issue_date = read.hotel.today();
    let pattern = pattern(&read.billing)?;
    let next = store::invoices::last_in_series(&mut conn, &read.hotel.id, &pattern.series(issue_date)).await? + 1;
    let choices =
        Choices { language: input.language.unwrap_or(InvoiceLanguage::En), recipient: &recipient, note, issue_date };
    Ok(match draft(&read, &choices, pattern.number(issue_date, next)) {
        Ok(d) => InvoicePreview { issuable: true, problems: Vec::new(), invoice: d.document },
        Err(refused) => InvoicePreview { issuable: false, problems: refused.problems, invoice: refused.draft.document },
    })
}

/// Whether `actor` may issue (and send) invoices: the dashboard offers it only then.
pub fn may_issue(actor: &Actor) -> bool {
    actor.require_scope(Scope::InvoicesWrite).is_ok()
}

/// Refused unless `actor` may cancel invoices.
fn require_canceller(actor: &Actor) -> Result<()> {
    actor.require_scope(Scope::InvoicesWrite)?;
    actor.require(crate::domain::access::Task::CancelInvoice)
}

/// Whether `actor` may cancel invoices: the dashboard offers it only then.
pub fn may_cancel(actor: &Actor) -> bool {
    require_canceller(actor).is_ok()
}

/// Issues the folio's open lines as an invoice numbered from the hotel's series, once per idempotency `key` of the
/// caller when one is given. 422 with every reason when it cannot be issued.
pub async fn issue(db: &Db, actor: &Actor, folio_id: &str, input: InvoiceIn, key: Option<&str>) -> Result<Invoice> {
    actor.require_scope(Scope::InvoicesWrite)?;
    if let Some(key) = key {
        idempotency::check_key(key)
            .map_err(|message| Error::Validation(vec![FieldError::field("Idempotency-Key", message)]))?;
    }
    let request = serde_json::to_string(&input).map_err(anyhow::Error::from)?;
    let digest = idempotency::digest(&[folio_id, &request]);
    let scope = idempotency::caller_scope(actor);
    let k = key.map(|key| idempotency::Key {
        namespace: idempotency::Namespace::Invoices,
        organization_id: &actor.organization_id,
        scope: &scope,
        key,
    });
    let mut tx = Change::begin(db, actor).await?;
    if let Some(k) = &k {
        if let Some(first) = idempotency::replay(tx.conn(), k, &digest).await? {
            drop(tx);
            return get(db, actor, &first).await;
        }
    }
    // The folio first: a folio the caller cannot see is a 404 whatever the rest of the request says.
    let read = read(tx.conn(), actor, folio_id).await?;
    let recipient = recipient(input.recipient)?;
    let note = note(input.note.as_deref())?;
    let issue_date = read.hotel.today();
    let choices =
        Choices { language: input.language.unwrap_or(InvoiceLanguage::En), recipient: &recipient, note, issue_date };
    // Every reason is found before a number is taken: the counter's row is held only by issues that will succeed.
    let pattern = pattern(&read.billing)?;
    let Draft { mut document, line_ids } =
        draft(&read, &choices, String::new()).map_err(|refused| Error::Unprocessable(refused.problems))?;
    document.number = numbering::take(tx.conn(), &read.hotel.id, &pattern, issue_date).await?;
    let invoice = Invoice {
        id: new_id(),
        hotel_id: read.hotel.id.clone(),
        folio_id: read.owner.head.id.clone(),
        reservation_id: read.reservation.id.clone(),
        cancels_invoice_id: None,
        cancelled_by_invoice_id: None,
        issued_by: tx.writer().label(),
        created_at: now(),
        document,
    };
    save(&mut tx, actor, &invoice).await?;
    let taken = store::invoices::take_lines(tx.conn(), folio_id, &line_ids, &invoice.id).await?;
    if taken != line_ids.len() as u64 {
        return Err(Error::Conflict(
            "another invoice took some of the folio's lines meanwhile; nothing was issued, read the folio again".into(),
        ));
    }
    if let Some(k) = &k {
        if idempotency::remember(&mut tx, k, &digest, &invoice.id).await? == idempotency::Remembered::TakenMeanwhile {
            drop(tx);
            let first = idempotency::replay_after_race(db, k, &digest).await?;
            return get(db, actor, &first).await;
        }
    }
    tx.commit().await?;
    Ok(invoice)
}

async fn save(tx: &mut Change, actor: &Actor, invoice: &Invoice) -> Result<()> {
    let json = serde_json::to_string(&invoice.document).map_err(anyhow::Error::from)?;
    let new = store::invoices::NewInvoice { organization_id: &actor.organization_id, invoice, document_json: &json };
    store::invoices::insert(tx.conn(), &new).await.map_err(|e| match e.kind() {
        store::ErrorKind::Taken => Error::Conflict(format!(
            "the number {} is already taken in this hotel (was the number pattern changed back?); nothing was issued",
            invoice.document.number
        )),
        _ => e.into(),
    })?;
    tx.created(&actor.organization_id, invoice).await
}

/// Cancels an invoice by issuing its cancellation invoice (the next number, every line negated); the folio's lines
/// may then be invoiced again. 409 for a cancellation invoice, or an invoice already cancelled.
pub async fn cancel(db: &Db, actor: &Actor, invoice_id: &str, input: CancellationIn) -> Result<Invoice> {
    require_canceller(actor)?;
    let reason = clean(&input.reason);
    let mut checks = Checks::new();
    checks.line("reason", &reason, 500);
    checks.finish()?;
    let mut tx = Change::begin(db, actor).await?;
    let original = visible(tx.conn(), actor, invoice_id).await?;
    if original.document.kind == InvoiceKind::Cancellation {
        return Err(Error::Conflict(format!(
            "{} is a cancellation invoice, which cannot be cancelled: issue a new invoice from the folio instead",
            original.document.number
        )));
    }
    if let Some(by) = &original.cancelled_by_invoice_id {
        let by = store::invoices::get(tx.conn(), &actor.organization_id, by).await?;
        return Err(Error::Conflict(format!(
            "{} is already cancelled (by {})",
            original.document.number,
            by.map_or_else(|| "a cancellation invoice".to_string(), |b| b.document.number)
        )));
    }
    let hotel = hotels::require_named(tx.conn(), actor, Some(&original.hotel_id)).await?;
    let settings = billing::settings_of(tx.conn(), &hotel).await?;
    let issue_date = hotel.today();
    let number = numbering::take(tx.conn(), &hotel.id, &pattern(&settings)?, issue_date).await?;
    let cancellation = Invoice {
        id: new_id(),
        hotel_id: original.hotel_id.clone(),
        folio_id: original.folio_id.clone(),
        reservation_id: original.reservation_id.clone(),
        cancels_invoice_id: Some(original.id.clone()),
        cancelled_by_invoice_id: None,
        issued_by: tx.writer().label(),
        created_at: now(),
        document: document::cancellation(&original.document, number, reason, issue_date),
    };
    save(&mut tx, actor, &cancellation).await?;
    if !store::invoices::mark_cancelled(tx.conn(), &original.id, &cancellation.id).await? {
        return Err(Error::Conflict(format!("{} was cancelled meanwhile", original.document.number)));
    }
    store::invoices::release_lines(tx.conn(), &original.folio_id, &original.id).await?;
    let after = Invoice { cancelled_by_invoice_id: Some(cancellation.id.clone()), ..original.clone() };
    tx.updated(&actor.organization_id, &original, &after).await?;
    tx.commit().await?;
    Ok(cancellation)
}

/// An invoice of the actor's organization (and pin), or 404.
async fn visible(conn: &mut store::Conn, actor: &Actor, invoice_id: &str) -> Result<Invoice> {
    store::invoices::get(conn, &actor.organization_id, invoice_id)
        .await?
        .filter(|i| actor.sees_hotel(Some(&i.hotel_id)))
        .ok_or(Error::NotFound("invoice"))
}

/// One invoice.
pub async fn get(db: &Db, actor: &Actor, invoice_id: &str) -> Result<Invoice> {
    actor.require_scope(Scope::FoliosRead)?;
    visible(&mut *db.read().await?, actor, invoice_id).await
}

/// The invoices of a folio, oldest first.
pub async fn of_folio(db: &Db, actor: &Actor, folio_id: &str) -> Result<Vec<Invoice>> {
    actor.require_scope(Scope::FoliosRead)?;
    let mut conn = db.read().await?;
    store::folios::owner(&mut conn, &actor.organization_id, folio_id)
        .await?
        .filter(|o| actor.sees_hotel(Some(&o.hotel_id)))
        .ok_or(Error::NotFound("folio"))?;
    Ok(store::invoices::of_folio(&mut conn, folio_id).await?)
}

/// The invoices of some reservations (a guest's), newest first.
pub async fn of_reservations(db: &Db, actor: &Actor, reservation_ids: &[String]) -> Result<Vec<Invoice>> {
    actor.require_scope(Scope::FoliosRead)?;
    let invoices = store::invoices::of_reservations(&mut *db.read().await?, reservation_ids).await?;
    Ok(invoices.into_iter().filter(|i| actor.sees_hotel(Some(&i.hotel_id))).collect())
}

/// E-mails an issued invoice to the guest of its stay, as a PDF attachment, through the guest-message outbox (sent
/// by the mail dispatcher, retried like every guest message). 409 when the guest has no e-mail address.
pub async fn send(db: &Db, actor: &Actor, invoice_id: &str) -> Result<crate::domain::guest_messages::GuestMessage> {
    actor.require_scope(Scope::InvoicesWrite)?;
    let mut tx = Change::begin(db, actor).await?;
    let invoice = visible(tx.conn(), actor, invoice_id).await?;
    let reservation = store::reservations::get(tx.conn(), &actor.organization_id, &invoice.reservation_id).await?;
    let guest = match reservation.and_then(|r| r.guest_id) {
        Some(id) => store::guests::get(tx.conn(), &actor.organization_id, &id).await?,
        None => None,
    };
    let message =
        crate::domain::guest_messages::send_invoice(&mut tx, &actor.organization_id, &invoice, guest.as_ref()).await?;
    tx.commit().await?;
    Ok(message)
}

/// The filters of `GET /api/invoices`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct InvoiceFilter {
    pub hotel_id: Option<String>,
    /// Issued on or after, `YYYY-MM-DD`.
    #[param(format = Date)]
    pub date_from: Option<String>,
    /// Issued on or before, `YYYY-MM-DD`.
    #[param(format = Date)]
    pub date_to: Option<String>,
    /// Numbers containing this text.
    #[param(max_length = 40)]
    pub number: Option<String>,
    /// `id` (the default: the order of issue), `number`, `issueDate`.
    #[param(pattern = "^(id|number|issueDate)$")]
    pub sort_field: Option<String>,
}

const VOCABULARY: Vocabulary =
    Vocabulary { sortable: &[("id", "id"), ("number", "number"), ("issueDate", "issue_date")], fields: &[] };

/// Invoices of the organization (or the key's hotel), filtered, paged and streamed like the other lists.
pub async fn list(db: &Db, actor: &Actor, filter: InvoiceFilter, params: ListParams) -> Result<Listing<Invoice>> {
    actor.require_scope(Scope::FoliosRead)?;
    let page = params.validate(Shape { sort_field: filter.sort_field.as_deref(), fields: None }, &VOCABULARY)?;
    let mut checks = Checks::new();
    let from = filter.date_from.as_deref().and_then(|d| parse_date(&mut checks, "dateFrom", d));
    let to = filter.date_to.as_deref().and_then(|d| parse_date(&mut checks, "dateTo", d));
    let number = filter.number.as_deref().map(str::trim).filter(|n| !n.is_empty());
    if number.is_some_and(|n| n.chars().count() > 40) {
        checks.fail("number", "must be at most 40 characters");
    }
    checks.finish()?;
    let hotel_id = hotels::optional_filter(&mut *db.read().await?, actor, filter.hotel_id.as_deref()).await?;
    let by = store::invoices::InvoicesWhere { hotel_id: hotel_id.as_deref(), from, to, number };
    let total = store::invoices::count(db, &actor.organization_id, by, &page).await?;
    let items = store::invoices::list(db, &actor.organization_id, by, &page).await?;
    use futures::{StreamExt, TryStreamExt};
    Ok(Listing { total, items: ListItems::Streamed(items.map_err(Error::from).boxed()), projection: None })
}

/// The `Content-Disposition` of an invoice's PDF: `attachment; filename="RE-2026-000001.pdf"` (a `/` of the number
/// becomes `-`).
pub fn pdf_disposition(invoice: &Invoice) -> String {
    format!("attachment; filename=\"{}\"", crate::domain::guest_messages::attachment_name(invoice))
}

/// The query of `GET /api/folios/{folioId}/invoice-preview`: the body of an issue, as query parameters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PreviewQuery {
    /// `en` (the default) or `de`.
    pub language: Option<InvoiceLanguage>,
    /// `GUEST` (the default) or `COMPANY`.
    pub recipient_kind: Option<RecipientKind>,
    #[param(max_length = 200)]
    pub recipient_name: Option<String>,
    #[param(max_length = 200)]
    pub recipient_street: Option<String>,
    #[param(max_length = 20)]
    pub recipient_postal_code: Option<String>,
    #[param(max_length = 100)]
    pub recipient_city: Option<String>,
    #[param(pattern = "^[A-Z]{2}$")]
    pub recipient_country: Option<String>,
    #[param(pattern = "^[A-Z]{2}[A-Z0-9]{2,13}$")]
    pub recipient_vat_id: Option<String>,
    #[param(max_length = 1000)]
    pub note: Option<String>,
}

impl From<PreviewQuery> for InvoiceIn {
    fn from(q: PreviewQuery) -> InvoiceIn {
        let company = q.recipient_kind.is_some()
            || q.recipient_name.is_some()
            || q.recipient_street.is_some()
            || q.recipient_postal_code.is_some()
            || q.recipient_city.is_some()
            || q.recipient_country.is_some()
            || q.recipient_vat_id.is_some();
        InvoiceIn {
            language: q.language,
            recipient: company.then_some(RecipientIn {
                kind: q.recipient_kind,
                name: q.recipient_name,
                street: q.recipient_street,
                postal_code: q.recipient_postal_code,
                city: q.recipient_city,
                country: q.recipient_country,
                vat_id: q.recipient_vat_id,
            }),
            note: q.note,
        }
    }
}
