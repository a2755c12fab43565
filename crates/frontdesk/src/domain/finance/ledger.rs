//! What people record on a folio: charges (an extra from the hotel's list, or one described at the desk),
//! allowances against a charge, payments, refunds against a payment, and no-show or cancellation fees. Each is
//! posted at once, made by the writer of its change, and answered with the whole folio ([`FolioLedger`]).
//!
//! Who may: `folios:write` charges, corrects and charges fees; only `payments:write` takes payments and gives
//! refunds (a point-of-sale key charges, but cannot pay out); `folios:read` reads. Operators hold all three.
//! Every write takes an `Idempotency-Key`: the same request sent again is recorded once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::billing::{self, BillingSettings};
use super::lines::{with_amounts, LineOrigin};
use super::tax;
use crate::domain::access::{Actor, Scope, Task};
use crate::domain::change::{Change, Record, RecordKind};
use crate::domain::validate::{clean, parse_date, Checks};
use crate::domain::{hotels, idempotency, money, now, Error, FieldError, Result};
use crate::model::folios::{FolioLedger, FolioLine, LineKind, LineSource, PaymentMethod, VatTotal};
use crate::model::hotels::Hotel;
use crate::store::{self, Db};

/// A charge: one of the hotel's extras by its code, or one described here.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChargeIn {
    /// The code of one of the hotel's extras (`billing.extras`): its name, price and parts are used.
    pub extra_code: Option<String>,
    /// Without `extraCode`: what is charged.
    #[schema(max_length = 200)]
    pub description: Option<String>,
    /// Without `extraCode`: the price of one, in minor units (with VAT when the hotel's prices include it).
    #[schema(minimum = 0, maximum = 1_000_000_000_000_i64)]
    pub unit_price: Option<i64>,
    /// Without `extraCode`: a category of the hotel's VAT rates (`OTHER` when left out).
    pub category: Option<String>,
    /// How many (1 when left out).
    #[schema(minimum = 1, maximum = 10000)]
    pub quantity: Option<i64>,
    /// The day of the service, `YYYY-MM-DD` (the hotel's today when left out).
    #[schema(format = Date)]
    pub service_date: Option<String>,
}

/// A correction against one charge: an amount off it, up to what is left of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowanceIn {
    /// In minor units, VAT included (the VAT comes off at the charge's rate).
    #[schema(minimum = 1, maximum = 1_000_000_000_000_i64)]
    pub amount: i64,
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// A payment received elsewhere (a card terminal, a bank, a channel): recorded, never processed here.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PaymentIn {
    pub method: PaymentMethod,
    /// In minor units of the folio's currency.
    #[schema(minimum = 1, maximum = 1_000_000_000_000_i64)]
    pub amount: i64,
    /// Must be the folio's currency, when given.
    pub currency: Option<String>,
    /// A terminal's receipt number, a transfer's reference.
    #[schema(max_length = 200)]
    pub reference: Option<String>,
    /// When it was received (now when left out).
    pub paid_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Money given back against one payment, up to what is left of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefundIn {
    #[schema(minimum = 1, maximum = 1_000_000_000_000_i64)]
    pub amount: i64,
    #[schema(max_length = 500)]
    pub reason: Option<String>,
}

/// Which fee.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FeeKind {
    NoShow,
    Cancellation,
}

/// A no-show or cancellation fee.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeeIn {
    pub kind: FeeKind,
    /// In minor units (with VAT when the hotel's prices include it).
    #[schema(minimum = 1, maximum = 1_000_000_000_000_i64)]
    pub amount: i64,
    /// A category of the hotel's VAT rates (`ACCOMMODATION` when left out: a fee in place of the stay).
    pub category: Option<String>,
    #[schema(max_length = 500)]
    pub reason: Option<String>,
}

/// One thing to record.
#[derive(Debug, Clone, Serialize)]
pub enum Entry {
    Charge(ChargeIn),
    Allowance { charge_id: String, allowance: AllowanceIn },
    Payment(PaymentIn),
    Refund { payment_id: String, refund: RefundIn },
    Fee(FeeIn),
}

/// The kinds of [`Entry`], for what a caller may record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Charge,
    Allowance,
    Payment,
    Refund,
    Fee,
}

impl EntryKind {
    fn scope(self) -> Scope {
        match self {
            EntryKind::Payment | EntryKind::Refund => Scope::PaymentsWrite,
            EntryKind::Charge | EntryKind::Allowance | EntryKind::Fee => Scope::FoliosWrite,
        }
    }

    /// What an operator's role must allow beyond the scope: the front desk charges but neither corrects nor
    /// refunds; the accountant corrects but does not charge.
    fn task(self) -> Option<Task> {
        match self {
            EntryKind::Payment => None,
            EntryKind::Charge | EntryKind::Fee => Some(Task::Charge),
            EntryKind::Allowance => Some(Task::Correct),
            EntryKind::Refund => Some(Task::Refund),
        }
    }

    /// Refused (403, naming the role it takes) unless `actor` may record an entry of this kind.
    pub fn require(self, actor: &Actor) -> Result<()> {
        actor.require_scope(self.scope())?;
        match self.task() {
            Some(task) => actor.require(task),
            None => Ok(()),
        }
    }

    /// Whether `actor` may record an entry of this kind (the dashboard offers only these forms).
    pub fn allowed(self, actor: &Actor) -> bool {
        self.require(actor).is_ok()
    }
}

impl Entry {
    fn kind(&self) -> EntryKind {
        match self {
            Entry::Charge(_) => EntryKind::Charge,
            Entry::Allowance { .. } => EntryKind::Allowance,
            Entry::Payment(_) => EntryKind::Payment,
            Entry::Refund { .. } => EntryKind::Refund,
            Entry::Fee(_) => EntryKind::Fee,
        }
    }
}

/// What [`record`] answers: the folio's sums with the lines the write added, and whether this was a request sent
/// again.
pub struct Recorded {
    pub folio: FolioSummary,
    pub replayed: bool,
}

/// A folio of the actor's organization (and pin): its owner, or 404.
pub(super) async fn owner(conn: &mut store::Conn, actor: &Actor, folio_id: &str) -> Result<store::folios::FolioOwner> {
    store::folios::owner(conn, &actor.organization_id, folio_id)
        .await?
        .filter(|o| actor.sees_hotel(Some(&o.hotel_id)))
        .ok_or(Error::NotFound("folio"))
}

/// The folio with its lines, totals and balance.
pub async fn get(db: &Db, actor: &Actor, folio_id: &str) -> Result<FolioLedger> {
    actor.require_scope(Scope::FoliosRead)?;
    let mut conn = db.read().await?;
    let owner = owner(&mut conn, actor, folio_id).await?;
    let lines = store::folios::lines(&mut conn, folio_id).await?;
    Ok(ledger(owner, lines))
}

/// A folio's sums: per kind, per VAT rate (charges less allowances, lowest rate first), and the balance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sums {
    pub charges: i64,
    pub allowances: i64,
    pub payments: i64,
    pub refunds: i64,
    pub vat_totals: Vec<VatTotal>,
    pub balance: i64,
}

/// The sums of amounts given as (kind, VAT rate, gross, net, VAT): of lines, or of the store's totals of them.
/// Amounts were checked when written; the sums saturate rather than wrap for rows no check ever saw.
fn sums(amounts: impl Iterator<Item = (LineKind, i64, i64, i64, i64)>) -> Sums {
    let mut s = Sums::default();
    for (kind, rate, gross, net, vat) in amounts {
        let sum = match kind {
            LineKind::Charge => &mut s.charges,
            LineKind::Allowance => &mut s.allowances,
            LineKind::Payment => &mut s.payments,
            LineKind::Refund => &mut s.refunds,
        };
        *sum = sum.saturating_add(gross);
        if !matches!(kind, LineKind::Charge | LineKind::Allowance) {
            continue;
        }
        let sign = kind.sign();
        let total = match s.vat_totals.iter().position(|t| t.vat_rate_basis_points == rate) {
            Some(i) => &mut s.vat_totals[i],
            None => {
                s.vat_totals.push(VatTotal { vat_rate_basis_points: rate, net: 0, vat: 0, gross: 0 });
                let last = s.vat_totals.len() - 1;
                &mut s.vat_totals[last]
            }
        };
        total.net = total.net.saturating_add(sign.saturating_mul(net));
        total.vat = total.vat.saturating_add(sign.saturating_mul(vat));
        total.gross = total.gross.saturating_add(sign.saturating_mul(gross));
    }
    s.vat_totals.sort_by_key(|t| t.vat_rate_basis_points);
    s.balance = s.charges.saturating_sub(s.allowances).saturating_sub(s.payments).saturating_add(s.refunds);
    s
}

fn amounts(l: &FolioLine) -> (LineKind, i64, i64, i64, i64) {
    (l.kind, l.vat_rate_basis_points, l.gross, l.net, l.vat)
}

/// The folio with its lines and their sums.
pub fn ledger(owner: store::folios::FolioOwner, lines: Vec<FolioLine>) -> FolioLedger {
    let s = sums(lines.iter().map(amounts));
    FolioLedger {
        id: owner.head.id,
        reservation_id: owner.reservation_id,
        hotel_id: owner.hotel_id,
        currency: owner.head.currency,
        lines,
        vat_totals: s.vat_totals,
        charges: s.charges,
        allowances: s.allowances,
        payments: s.payments,
        refunds: s.refunds,
        balance: s.balance,
        on_account_reason: owner.on_account_reason,
        city_tax_exempt_reason: owner.city_tax_exempt_reason,
    }
}

/// Records `entry` on a folio, once per idempotency `key` of the caller when one is given. Answers the folio's
/// sums and the lines this write added (a request sent again: the lines the first one added).
pub async fn record(db: &Db, actor: &Actor, folio_id: &str, entry: Entry, key: Option<&str>) -> Result<Recorded> {
    entry.kind().require(actor)?;
    if let Some(key) = key {
        idempotency::check_key(key)
            .map_err(|message| Error::Validation(vec![FieldError::field("Idempotency-Key", message)]))?;
    }
    let request = serde_json::to_string(&entry).map_err(anyhow::Error::from)?;
    let digest = idempotency::digest(&[folio_id, &request]);
    let scope = idempotency::caller_scope(actor);
    let k = key.map(|key| idempotency::Key {
        namespace: idempotency::Namespace::Folios,
        organization_id: &actor.organization_id,
        scope: &scope,
        key,
    });
    let mut tx = Change::begin(db, actor).await?;
    if let Some(k) = &k {
        if let Some(first) = idempotency::replay(tx.conn(), k, &digest).await? {
            drop(tx);
            return Ok(Recorded { folio: summary_now(db, actor, folio_id, &first).await?, replayed: true });
        }
    }
    let after = record_within(&mut tx, actor, folio_id, entry).await?;
    if let Some(k) = &k {
        let first = after.added_lines.first().map_or(folio_id, |l| l.id.as_str());
        if idempotency::remember(&mut tx, k, &digest, first).await? == idempotency::Remembered::TakenMeanwhile {
            drop(tx);
            let first = idempotency::replay_after_race(db, k, &digest).await?;
            return Ok(Recorded { folio: summary_now(db, actor, folio_id, &first).await?, replayed: true });
        }
    }
    tx.commit().await?;
    Ok(Recorded { folio: after, replayed: false })
}

/// A folio's sums now, with the lines the write that made line `first_id` added: the answer to a request sent again.
async fn summary_now(db: &Db, actor: &Actor, folio_id: &str, first_id: &str) -> Result<FolioSummary> {
    let mut conn = db.read().await?;
    let owner = owner(&mut conn, actor, folio_id).await?;
    let totals = store::folios::totals(&mut conn, folio_id).await?;
    let added = store::folios::made_with(&mut conn, folio_id, first_id).await?;
    Ok(FolioSummary::new(&owner, sums(totals.iter().map(total_amounts)), added))
}

fn total_amounts(t: &store::folios::KindTotal) -> (LineKind, i64, i64, i64, i64) {
    (t.kind, t.vat_rate_basis_points, t.gross, t.net, t.vat)
}

/// Records `entry` on a folio inside a change under way (the end of day's no-show fee): the lines, the folio's
/// `folio.updated` and a payment's `payment.created`. Reads of the folio only what the entry needs (its sums, and
/// the line an allowance or refund is against), so that a write to a long folio costs what one to a short one does.
/// Answers the folio's sums after, with the lines added.
pub(crate) async fn record_within(
    tx: &mut Change,
    actor: &Actor,
    folio_id: &str,
    entry: Entry,
) -> Result<FolioSummary> {
    let owner = owner(tx.conn(), actor, folio_id).await?;
    let service = Actor::service(&actor.organization_id, tx.writer().clone());
    let hotel = hotels::require_named(tx.conn(), &service, Some(&owner.hotel_id)).await?;
    // Only charges and fees are priced by the hotel's settings: payments, refunds and allowances skip reading them.
    let billing = match &entry {
        Entry::Charge(_) | Entry::Fee(_) => Some(billing::settings_of(tx.conn(), &hotel).await?),
        Entry::Allowance { .. } | Entry::Payment(_) | Entry::Refund { .. } => None,
    };
    let totals = store::folios::totals(tx.conn(), folio_id).await?;
    let related = match &entry {
        Entry::Allowance { charge_id: id, .. } | Entry::Refund { payment_id: id, .. } => {
            store::folios::line_with_corrections(tx.conn(), folio_id, id).await?
        }
        Entry::Charge(_) | Entry::Payment(_) | Entry::Fee(_) => Vec::new(),
    };
    let made_by = tx.writer().label();
    let lines = LineOrigin { folio_id: &owner.head.id, currency: &owner.head.currency, made_by, at: now() };
    let origin = Origin { currency: &owner.head.currency, related: &related, lines };
    let lines = match (&entry, &billing) {
        (Entry::Charge(input), Some(billing)) => charge(&origin, &hotel, billing, input)?,
        (Entry::Fee(input), Some(billing)) => vec![fee(&origin, &hotel, billing, input)?],
        (Entry::Allowance { charge_id, allowance }, _) => vec![allowance_on(&origin, charge_id, allowance)?],
        (Entry::Payment(input), _) => vec![payment(&origin, &hotel, input)?],
        (Entry::Refund { payment_id, refund }, _) => vec![refund_of(&origin, &hotel, payment_id, refund)?],
        (Entry::Charge(_) | Entry::Fee(_), None) => {
            return Err(Error::Internal(anyhow::anyhow!("a charge without the hotel's billing settings")))
        }
    };
    let before = sums(totals.iter().map(total_amounts));
    let after = sums(totals.iter().map(total_amounts).chain(lines.iter().map(amounts)));
    if !money::in_bounds(after.charges) || !money::in_bounds(after.payments) {
        return Err(Error::Validation(vec![FieldError::field(
            "amount",
            "would take the folio's sums past the largest amount",
        )]));
    }
    store::folios::insert(tx.conn(), &lines).await?;
    for line in lines.iter().filter(|l| l.kind == LineKind::Payment) {
        tx.created(&actor.organization_id, &PaymentRecord { line, hotel_id: &owner.hotel_id }).await?;
    }
    let (was, is) = (FolioSummary::new(&owner, before, Vec::new()), FolioSummary::new(&owner, after, lines));
    tx.updated(&actor.organization_id, &was, &is).await?;
    Ok(is)
}

/// Records `folio.updated` for a change the stay made to its own lines (its nights made anew, released, or cut
/// short by an early departure), when the lines' amounts or dates changed: `before`, the lines as they were;
/// `added`, the lines the change made. Answers the folio after.
pub(crate) async fn stay_changed(
    tx: &mut Change,
    organization_id: &str,
    folio_id: &str,
    before: Vec<FolioLine>,
    added: &[FolioLine],
) -> Result<FolioLedger> {
    let owner = store::folios::owner(tx.conn(), organization_id, folio_id)
        .await?
        .ok_or_else(|| Error::Internal(anyhow::anyhow!("a stay's folio without its reservation")))?;
    let after = ledger(owner.clone(), store::folios::lines(tx.conn(), folio_id).await?);
    // Nights made anew with the same amounts (a note changed, a guest added where no tax depends on it) are the
    // same bill: nothing to announce.
    let bill = |lines: &[FolioLine]| {
        let mut bill: Vec<_> = lines
            .iter()
            .map(|l| {
                let (kind, source): (&'static str, &'static str) = (l.kind.into(), l.source.into());
                (kind, source, l.service_date, l.gross, l.net, l.vat, l.description.clone())
            })
            .collect();
        bill.sort();
        bill
    };
    if bill(&before) != bill(&after.lines) {
        let was = FolioSummary::new(&owner, sums(before.iter().map(amounts)), Vec::new());
        let is = FolioSummary::new(&owner, sums(after.lines.iter().map(amounts)), added.to_vec());
        tx.updated(organization_id, &was, &is).await?;
    }
    Ok(after)
}

/// The folio as [`get`] reads it, for a writer who may not hold `folios:read` (a point-of-sale key that charges):
/// the answer to its write.
pub async fn get_for_writer(db: &Db, actor: &Actor, folio_id: &str) -> Result<FolioLedger> {
    let mut conn = db.read().await?;
    let owner = owner(&mut conn, actor, folio_id).await?;
    let lines = store::folios::lines(&mut conn, folio_id).await?;
    Ok(ledger(owner, lines))
}

/// What every line recorded here shares: the folio's currency, the line an allowance or refund is against (with
/// the lines already against it), and who records it when.
struct Origin<'a> {
    currency: &'a str,
    related: &'a [FolioLine],
    lines: LineOrigin<'a>,
}

impl Origin<'_> {
    /// A line of `kind`, posted at once (what people record is posted when it is made).
    fn line(&self, kind: LineKind, source: LineSource, date: chrono::NaiveDate, description: String) -> FolioLine {
        let mut line = self.lines.line(kind, source, date, description);
        line.posted_at = Some(self.lines.at);
        line
    }

    fn at(&self) -> chrono::DateTime<chrono::Utc> {
        self.lines.at
    }
}

fn refused(errors: Vec<FieldError>) -> Error {
    Error::Validation(errors)
}

/// The lines of a charge: one per part of an extra (a package splits its price by share, each part at its own
/// rate), or one line described here.
fn charge(o: &Origin, hotel: &Hotel, billing: &BillingSettings, input: &ChargeIn) -> Result<Vec<FolioLine>> {
    let mut checks = Checks::new();
    let quantity = input.quantity.unwrap_or(1);
    if !(1..=10_000).contains(&quantity) {
        checks.fail("quantity", "must be 1 to 10000");
    }
    let date = match &input.service_date {
        Some(text) => parse_date(&mut checks, "serviceDate", text),
        None => Some(hotel.today()),
    };
    let (description, unit_price, parts): (String, i64, Vec<(String, i64)>) = match &input.extra_code {
        Some(code) => {
            for field in ["description", "unitPrice", "category"] {
                let given = match field {
                    "description" => input.description.is_some(),
                    "unitPrice" => input.unit_price.is_some(),
                    _ => input.category.is_some(),
                };
                if given {
                    checks.fail(field, "comes from the extra: leave it out with extraCode");
                }
            }
            match billing.extras.iter().find(|e| &e.code == code) {
                Some(extra) => (
                    extra.name.clone(),
                    extra.unit_price,
                    extra.parts.iter().map(|p| (p.category.clone(), p.share_basis_points)).collect(),
                ),
                None => {
                    checks.fail("extraCode", "is not one of the hotel's extras");
                    (String::new(), 0, Vec::new())
                }
            }
        }
        None => {
            let description = input.description.as_deref().map(clean).unwrap_or_default();
            checks.line("description", &description, 200);
            let price = match input.unit_price {
                Some(p) if money::in_bounds(p) => p,
                Some(_) => {
                    checks.fail("unitPrice", money::out_of_bounds_message());
                    0
                }
                None => {
                    checks.fail("unitPrice", "is required without extraCode");
                    0
                }
            };
            let category = input.category.clone().unwrap_or_else(|| billing::OTHER.to_string());
            if billing.rate_of(&category).is_none() {
                checks.fail("category", "is not a category of the hotel's VAT rates");
            }
            (description, price, vec![(category, tax::WHOLE)])
        }
    };
    checks.finish()?;
    let date = date.ok_or_else(|| refused(vec![FieldError::field("serviceDate", "must be a date")]))?;
    let total = tax::times(unit_price, quantity)
        .filter(|t| money::in_bounds(*t))
        .ok_or_else(|| refused(vec![FieldError::field("quantity", "makes an amount past the largest amount")]))?;
    let shares: Vec<i64> = parts.iter().map(|(_, share)| *share).collect();
    let amounts = tax::split(total, &shares).ok_or_else(|| Error::Internal(anyhow::anyhow!("an extra's shares")))?;
    let mut lines = Vec::new();
    for ((category, _), amount) in parts.iter().zip(amounts) {
        let rate = billing.rate_of(category).unwrap_or(0);
        let values = tax::line(amount, rate, billing.prices_include_vat)
            .ok_or_else(|| refused(vec![FieldError::field("unitPrice", money::out_of_bounds_message())]))?;
        let mut line = o.line(LineKind::Charge, LineSource::Extra, date, description.clone());
        line.quantity = quantity;
        lines.push(with_amounts(line, category, rate, values));
    }
    Ok(lines)
}

/// An allowance against charge `charge_id`, up to what is left of it; its VAT at the charge's rate (all of it,
/// exactly, when the allowance takes the whole charge).
fn allowance_on(o: &Origin, charge_id: &str, input: &AllowanceIn) -> Result<FolioLine> {
    let charge =
        o.related.iter().find(|l| l.id == charge_id && l.kind == LineKind::Charge).ok_or(Error::NotFound("charge"))?;
    let mut checks = Checks::new();
    let reason = clean(&input.reason);
    checks.line("reason", &reason, 500);
    let taken = o.related.iter().filter(|l| l.corrects_line_id.as_deref() == Some(charge_id));
    let taken = taken.fold(0_i64, |t, l| t.saturating_add(l.gross));
    let left = charge.gross - taken;
    if input.amount < 1 || input.amount > left {
        checks.fail("amount", format!("must be 1 to {left}, what is left of the charge"));
    }
    checks.finish()?;
    let amounts = if taken == 0 && input.amount == charge.gross {
        tax::LineAmounts { gross: charge.gross, net: charge.net, vat: charge.vat }
    } else {
        tax::line(input.amount, charge.vat_rate_basis_points, true)
            .ok_or_else(|| refused(vec![FieldError::field("amount", money::out_of_bounds_message())]))?
    };
    let description = format!("Allowance: {}", charge.description);
    let mut line = o.line(LineKind::Allowance, LineSource::Entry, charge.service_date, description);
    line.corrects_line_id = Some(charge.id.clone());
    line.reason = Some(reason);
    let category = charge.category.clone().unwrap_or_else(|| billing::OTHER.to_string());
    Ok(with_amounts(line, &category, charge.vat_rate_basis_points, amounts))
}

/// Whether a hotel may take cash: not in Germany, until the service has a certified security module for cash
/// registers (KassenSichV, § 146a AO), which every electronic record of cash takings there needs.
fn takes_cash(hotel: &Hotel) -> bool {
    hotel.address.country.as_deref() != Some("DE")
}

fn payment(o: &Origin, hotel: &Hotel, input: &PaymentIn) -> Result<FolioLine> {
    let mut checks = Checks::new();
    if !(1..=money::MAX_AMOUNT).contains(&input.amount) {
        checks.fail("amount", format!("must be 1 to {} minor units", money::MAX_AMOUNT));
    }
    if input.currency.as_deref().is_some_and(|c| c != o.currency) {
        checks.fail("currency", format!("must be the folio's currency, {}", o.currency));
    }
    let reference = input.reference.as_deref().map(clean).filter(|r| !r.is_empty());
    checks.opt_line("reference", reference.as_deref(), 200);
    checks.finish()?;
    if input.method == PaymentMethod::Cash && !takes_cash(hotel) {
        return Err(Error::Conflict(
            "cash cannot be recorded for a hotel in Germany: German law (KassenSichV) requires a certified security \
             module for cash registers, which Frontdesk does not have yet; record cash in the hotel's cash register"
                .into(),
        ));
    }
    let paid_at = input.paid_at.unwrap_or(o.at());
    let description = format!("Payment, {}", input.method.label().to_lowercase());
    let mut line = o.line(LineKind::Payment, LineSource::Entry, hotel.local_date(paid_at), description);
    line.gross = input.amount;
    line.net = input.amount;
    line.method = Some(input.method);
    line.reference = reference;
    line.paid_at = Some(paid_at);
    Ok(line)
}

/// What is left of a payment to refund: its amount less the refunds against it.
fn left_of(lines: &[FolioLine], payment: &FolioLine) -> i64 {
    let refunded = lines.iter().filter(|l| l.kind == LineKind::Refund);
    let refunded = refunded.filter(|l| l.corrects_line_id.as_deref() == Some(payment.id.as_str()));
    payment.gross - refunded.fold(0_i64, |t, l| t.saturating_add(l.gross))
}

/// The payments of a folio that can still be refunded, with what is left of each, newest first.
pub fn refundable(folio: &FolioLedger) -> Vec<(&FolioLine, i64)> {
    let mut payments: Vec<(&FolioLine, i64)> = folio
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Payment)
        .map(|l| (l, left_of(&folio.lines, l)))
        .filter(|(_, left)| *left > 0)
        .collect();
    payments.reverse();
    payments
}

fn refund_of(o: &Origin, hotel: &Hotel, payment_id: &str, input: &RefundIn) -> Result<FolioLine> {
    let paid = o
        .related
        .iter()
        .find(|l| l.id == payment_id && l.kind == LineKind::Payment)
        .ok_or(Error::NotFound("payment"))?;
    let mut checks = Checks::new();
    let left = left_of(o.related, paid);
    if input.amount < 1 || input.amount > left {
        checks.fail("amount", format!("must be 1 to {left}, what is left of the payment"));
    }
    let reason = input.reason.as_deref().map(clean).filter(|r| !r.is_empty());
    checks.opt_line("reason", reason.as_deref(), 500);
    checks.finish()?;
    let mut line = o.line(
        LineKind::Refund,
        LineSource::Entry,
        hotel.local_date(o.at()),
        format!("Refund of the {}", paid.description.to_lowercase()),
    );
    line.gross = input.amount;
    line.net = input.amount;
    line.method = paid.method;
    line.corrects_line_id = Some(paid.id.clone());
    line.reason = reason;
    line.paid_at = Some(o.at());
    Ok(line)
}

fn fee(o: &Origin, hotel: &Hotel, billing: &BillingSettings, input: &FeeIn) -> Result<FolioLine> {
    let mut checks = Checks::new();
    if !(1..=money::MAX_AMOUNT).contains(&input.amount) {
        checks.fail("amount", format!("must be 1 to {} minor units", money::MAX_AMOUNT));
    }
    let category = input.category.clone().unwrap_or_else(|| billing::ACCOMMODATION.to_string());
    let rate = billing.rate_of(&category);
    if rate.is_none() {
        checks.fail("category", "is not a category of the hotel's VAT rates");
    }
    let reason = input.reason.as_deref().map(clean).filter(|r| !r.is_empty());
    checks.opt_line("reason", reason.as_deref(), 500);
    checks.finish()?;
    let rate = rate.unwrap_or(0);
    let amounts = tax::line(input.amount, rate, billing.prices_include_vat)
        .ok_or_else(|| refused(vec![FieldError::field("amount", money::out_of_bounds_message())]))?;
    let description = match input.kind {
        FeeKind::NoShow => "No-show fee",
        FeeKind::Cancellation => "Cancellation fee",
    };
    let mut line = o.line(LineKind::Charge, LineSource::Fee, hotel.today(), description.to_string());
    line.reason = reason;
    Ok(with_amounts(line, &category, rate, amounts))
}

/// A folio as a write to it answers with `Prefer: return=minimal`, and as its change records it (and `folio.updated`
/// carries it): its sums and the lines this write added, not every line, so that a folio of many lines does not make
/// every payment's answer and event as large as the folio. `GET /api/folios/{id}` has the rest.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FolioSummary {
    pub id: String,
    pub reservation_id: String,
    pub hotel_id: String,
    #[schema(value_type = crate::model::codes::CurrencyCode)]
    pub currency: String,
    /// By rate, lowest first.
    pub vat_totals: Vec<VatTotal>,
    pub charges: i64,
    pub allowances: i64,
    pub payments: i64,
    pub refunds: i64,
    pub balance: i64,
    pub added_lines: Vec<FolioLine>,
}

impl FolioSummary {
    fn new(owner: &store::folios::FolioOwner, sums: Sums, added: Vec<FolioLine>) -> FolioSummary {
        FolioSummary {
            id: owner.head.id.clone(),
            reservation_id: owner.reservation_id.clone(),
            hotel_id: owner.hotel_id.clone(),
            currency: owner.head.currency.clone(),
            vat_totals: sums.vat_totals,
            charges: sums.charges,
            allowances: sums.allowances,
            payments: sums.payments,
            refunds: sums.refunds,
            balance: sums.balance,
            added_lines: added,
        }
    }
}

impl Record for FolioSummary {
    const KIND: RecordKind = RecordKind::Folio;

    fn hotel_id(&self) -> Option<&str> {
        Some(&self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.id.clone()
    }

    /// The lines a change added, each in a few words (`CHARGE Minibar ×2 EUR 9.00`), beside the sums: a line
    /// never changes once written, so its words are all the log needs of it.
    fn audited(&self) -> serde_json::Result<serde_json::Value> {
        let mut json = serde_json::to_value(self)?;
        let added: Vec<String> = self
            .added_lines
            .iter()
            .map(|l| {
                let kind: &'static str = l.kind.into();
                format!(
                    "{} {} ×{} {}",
                    kind,
                    l.description,
                    l.quantity,
                    crate::domain::money::format(l.gross, &l.currency)
                )
            })
            .collect();
        json["addedLines"] = serde_json::json!(added);
        Ok(json)
    }
}

/// A payment line, as its `payment.created` event carries it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PaymentRecord<'a> {
    #[serde(flatten)]
    line: &'a FolioLine,
    hotel_id: &'a str,
}

impl Record for PaymentRecord<'_> {
    const KIND: RecordKind = RecordKind::Payment;

    fn hotel_id(&self) -> Option<&str> {
        Some(self.hotel_id)
    }

    fn record_id(&self) -> String {
        self.line.id.clone()
    }
}
