//! An issued invoice as a PDF ([`render`]): A4, in the invoice's language, with DejaVu Sans embedded (only the
//! glyphs a file uses are written into it, with their Unicode mapping, so its text can be searched and copied),
//! and the same bytes for the same document every time: krilla writes no creation date unless given one, and its
//! file identifiers are hashes of the content.
//!
//! Rendering is two passes. [`compose`] sets the document into pages of [`Mark`]s, every text already shaped and
//! measured (right alignment, wrapping and page breaks need the widths), so that the footer can say "Page 1 of 3"
//! once the number of pages is known; [`write_pdf`] then draws the marks. Every measure of the page is in
//! [`layout`].

use std::sync::OnceLock;

use chrono::NaiveDate;
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::num::NormalizedF32;
use krilla::page::PageSettings;
use krilla::paint::{Fill, FillRule};
use krilla::surface::Surface;
use krilla::text::{Font, GlyphId, KrillaGlyph};
use krilla::{Document, SerializeSettings};

use crate::domain::money;
use crate::model::folios::PaymentMethod;
use crate::model::invoices::{InvoiceDocument, InvoiceKind, InvoiceLanguage, PostalAddress};

/// Why an invoice could not be rendered. None of these depends on the document: each is a fault of the build.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("the embedded typeface {0} could not be read")]
    Typeface(&'static str),
    #[error("the page size was refused")]
    PageSize,
    #[error("the PDF could not be written: {0}")]
    Pdf(String),
}

/// The invoice `doc` as a PDF file.
pub fn render(doc: &InvoiceDocument) -> Result<Vec<u8>, RenderError> {
    let typefaces = typefaces()?;
    let pages = compose(doc, typefaces);
    write_pdf(doc, typefaces, &pages)
}

/// Every measure of the page in one place, in PDF points (1/72 inch), x from the left edge and y downwards from
/// the top edge, as krilla draws.
mod layout {
    /// A4.
    pub const PAGE_WIDTH: f32 = 595.28;
    pub const PAGE_HEIGHT: f32 = 841.89;
    /// 20 mm on the left (room for a punch), 17 mm on the right.
    pub const LEFT: f32 = 56.7;
    pub const RIGHT: f32 = PAGE_WIDTH - 48.2;
    pub const CONTENT_WIDTH: f32 = RIGHT - LEFT;
    /// The top of the first line on every page.
    pub const TOP: f32 = 48.0;

    /// A line box is the type size times this; the baseline sits one type size below the box's top, which
    /// centres DejaVu's capitals and descenders in it.
    pub const LEADING: f32 = 1.35;
    pub const BASELINE: f32 = 1.0;

    /// Type sizes.
    pub const HOTEL_NAME_SIZE: f32 = 16.0;
    pub const TITLE_SIZE: f32 = 17.0;
    pub const BODY_SIZE: f32 = 9.0;
    pub const RECIPIENT_SIZE: f32 = 10.0;
    pub const TABLE_SIZE: f32 = 8.0;
    pub const SMALL_SIZE: f32 = 7.5;
    pub const SENDER_LINE_SIZE: f32 = 6.5;
    pub const FOOTER_SIZE: f32 = 7.0;
    /// The smallest size an amount is shrunk to so that it stays whole within its column.
    pub const MIN_AMOUNT_SIZE: f32 = 5.0;

    /// The issuer's block, top right.
    pub const ISSUER_WIDTH: f32 = 240.0;
    /// The recipient's block, where a DIN 5008 window envelope shows it (45 mm from the top).
    pub const ADDRESS_TOP: f32 = 127.6;
    pub const ADDRESS_WIDTH: f32 = 240.0;
    /// The block of number, dates and reservation, beside the address.
    pub const INFO_LEFT: f32 = 330.0;
    pub const INFO_LABEL_GAP: f32 = 10.0;
    /// The title never rises above this, however short the blocks above it.
    pub const TITLE_MIN_TOP: f32 = 250.0;

    /// Vertical space between sections.
    pub const GAP: f32 = 14.0;
    pub const SMALL_GAP: f32 = 6.0;

    /// Table cells' padding.
    pub const CELL_PAD_X: f32 = 3.0;
    pub const CELL_PAD_Y: f32 = 3.5;
    /// A description longer than this many lines is cut with an ellipsis.
    pub const DESCRIPTION_MAX_LINES: usize = 3;
    /// Column headers wrap onto at most this many lines.
    pub const HEADER_MAX_LINES: usize = 2;
    /// The line table's columns other than the description, which takes the rest: service date, quantity, unit
    /// price, VAT rate, net, VAT, gross.
    pub const DATE_COLUMN: f32 = 52.0;
    pub const QUANTITY_COLUMN: f32 = 36.0;
    pub const UNIT_COLUMN: f32 = 58.0;
    pub const RATE_COLUMN: f32 = 36.0;
    pub const NET_COLUMN: f32 = 58.0;
    pub const VAT_COLUMN: f32 = 52.0;
    pub const GROSS_COLUMN: f32 = 60.0;

    /// The block of VAT by rate and the totals, right-aligned under the lines.
    pub const SUMMARY_WIDTH: f32 = 290.0;
    pub const SUMMARY_RATE_COLUMN: f32 = 56.0;
    /// The payments table: date, method, amount; the reference takes the rest.
    pub const PAYMENT_DATE_COLUMN: f32 = 70.0;
    pub const PAYMENT_METHOD_COLUMN: f32 = 150.0;
    pub const PAYMENT_AMOUNT_COLUMN: f32 = 110.0;

    /// The footer: a rule, then two lines under it.
    pub const FOOTER_RULE: f32 = PAGE_HEIGHT - 56.0;
    pub const FOOTER_TEXT_TOP: f32 = FOOTER_RULE + 5.0;
    /// Nothing of the body goes below this.
    pub const BODY_BOTTOM: f32 = FOOTER_RULE - 12.0;

    pub const HAIRLINE: f32 = 0.5;
    pub const RULE: f32 = 0.9;

    /// Colours as RGB.
    pub const INK: (u8, u8, u8) = (0x1b, 0x1f, 0x24);
    pub const MUTED: (u8, u8, u8) = (0x5c, 0x63, 0x6e);
    pub const LINE: (u8, u8, u8) = (0xc9, 0xcd, 0xd3);
    pub const BAND: (u8, u8, u8) = (0xee, 0xf0, 0xf3);
}

// ---------------------------------------------------------------------------------------------------------------
// Typefaces and text

const REGULAR_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const BOLD_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

/// One typeface: as krilla embeds it, and as rustybuzz shapes with it (so what is measured is what is drawn).
struct Typeface {
    pdf: Font,
    shaper: rustybuzz::Face<'static>,
}

impl Typeface {
    fn load(name: &'static str, data: &'static [u8]) -> Result<Typeface, RenderError> {
        let pdf = Font::new(data.into(), 0).ok_or(RenderError::Typeface(name))?;
        let shaper = rustybuzz::Face::from_slice(data, 0).ok_or(RenderError::Typeface(name))?;
        Ok(Typeface { pdf, shaper })
    }
}

struct Typefaces {
    regular: Typeface,
    bold: Typeface,
}

/// The typefaces, read once for the process: parsing them is a good part of a small invoice's time.
fn typefaces() -> Result<&'static Typefaces, RenderError> {
    static TYPEFACES: OnceLock<Result<Typefaces, &'static str>> = OnceLock::new();
    let loaded = TYPEFACES.get_or_init(|| {
        let load = |name, data| Typeface::load(name, data).map_err(|_| name);
        Ok(Typefaces { regular: load("DejaVu Sans", REGULAR_FONT)?, bold: load("DejaVu Sans Bold", BOLD_FONT)? })
    });
    loaded.as_ref().map_err(|name| RenderError::Typeface(name))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Weight {
    Regular,
    Bold,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tone {
    Ink,
    Muted,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Style {
    weight: Weight,
    size: f32,
    tone: Tone,
}

impl Style {
    const fn new(weight: Weight, size: f32, tone: Tone) -> Style {
        Style { weight, size, tone }
    }

    fn line_height(self) -> f32 {
        self.size * layout::LEADING
    }

    fn with_size(self, size: f32) -> Style {
        Style { size, ..self }
    }
}

const BODY: Style = Style::new(Weight::Regular, layout::BODY_SIZE, Tone::Ink);
const BODY_BOLD: Style = Style::new(Weight::Bold, layout::BODY_SIZE, Tone::Ink);
const BODY_MUTED: Style = Style::new(Weight::Regular, layout::BODY_SIZE, Tone::Muted);
const SMALL_MUTED: Style = Style::new(Weight::Regular, layout::SMALL_SIZE, Tone::Muted);
const CELL: Style = Style::new(Weight::Regular, layout::TABLE_SIZE, Tone::Ink);
const CELL_BOLD: Style = Style::new(Weight::Bold, layout::TABLE_SIZE, Tone::Ink);
const HEADER: Style = Style::new(Weight::Bold, layout::SMALL_SIZE, Tone::Muted);
const FOOTER: Style = Style::new(Weight::Regular, layout::FOOTER_SIZE, Tone::Muted);

/// A text shaped in one typeface: its glyphs (advances in em), and its width in em.
#[derive(Debug, Clone)]
struct Run {
    text: String,
    glyphs: Vec<KrillaGlyph>,
    width_em: f32,
}

impl Run {
    fn width(&self, size: f32) -> f32 {
        self.width_em * size
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// Shaping, measuring, wrapping and cutting text.
struct Typesetter<'a> {
    typefaces: &'a Typefaces,
}

impl Typesetter<'_> {
    fn face(&self, weight: Weight) -> &Typeface {
        match weight {
            Weight::Regular => &self.typefaces.regular,
            Weight::Bold => &self.typefaces.bold,
        }
    }

    /// `text` shaped in `weight`. Each glyph keeps the bytes of the text it stands for (its cluster), which
    /// krilla writes as the file's Unicode mapping.
    fn shape(&self, weight: Weight, text: &str) -> Run {
        // A control character (a line break typed into a name) has no glyph: it would print as a box.
        let cleaned: String;
        let text = if text.chars().any(char::is_control) {
            cleaned = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            cleaned.as_str()
        } else {
            text
        };
        let face = &self.face(weight).shaper;
        let mut buffer = rustybuzz::UnicodeBuffer::new();
        buffer.push_str(text);
        buffer.guess_segment_properties();
        let shaped = rustybuzz::shape(face, &[], buffer);
        let units_per_em = f32::from(face.units_per_em().max(1) as u16);
        // A cluster ends where the next one (in text order) begins, whichever direction the glyphs run in.
        let mut cluster_starts: Vec<usize> = shaped.glyph_infos().iter().map(|info| info.cluster as usize).collect();
        cluster_starts.sort_unstable();
        cluster_starts.dedup();
        let cluster_end = |start: usize| {
            let next = cluster_starts.partition_point(|&s| s <= start);
            cluster_starts.get(next).copied().unwrap_or(text.len())
        };
        let mut width_em = 0.0;
        let glyphs = shaped
            .glyph_infos()
            .iter()
            .zip(shaped.glyph_positions())
            .map(|(info, position)| {
                let start = info.cluster as usize;
                let x_advance = position.x_advance as f32 / units_per_em;
                width_em += x_advance;
                KrillaGlyph::new(
                    GlyphId::new(info.glyph_id),
                    x_advance,
                    position.x_offset as f32 / units_per_em,
                    position.y_offset as f32 / units_per_em,
                    position.y_advance as f32 / units_per_em,
                    start..cluster_end(start),
                    None,
                )
            })
            .collect();
        Run { text: text.to_owned(), glyphs, width_em }
    }

    fn width(&self, style: Style, text: &str) -> f32 {
        self.shape(style.weight, text).width(style.size)
    }

    /// `text` on one line of at most `max_width`: whole if it fits, else cut and ended with an ellipsis.
    fn fit(&self, style: Style, text: &str, max_width: f32) -> Run {
        let whole = self.shape(style.weight, text);
        if whole.width(style.size) <= max_width {
            return whole;
        }
        // No glyph of DejaVu Sans is narrower than a quarter em, so no more characters than this can fit: a
        // very long text is not cut one character at a time from its end.
        let most = (max_width / (style.size * 0.25)).ceil() as usize;
        let mut kept: Vec<char> = text.chars().take(most).collect();
        while !kept.is_empty() {
            kept.pop();
            let candidate = format!("{}…", kept.iter().collect::<String>().trim_end());
            let run = self.shape(style.weight, &candidate);
            if run.width(style.size) <= max_width {
                return run;
            }
        }
        self.shape(style.weight, "…")
    }

    /// `text` wrapped at spaces into lines of at most `max_width` (a word longer than a line is broken), at most
    /// `max_lines` of them, the last cut with an ellipsis when the text goes on.
    fn wrap(&self, style: Style, text: &str, max_width: f32, max_lines: usize) -> Vec<Run> {
        // No line holds more characters than a quarter em each allows, plus the space dropped at its break: a
        // longer text cannot fit, and is set only as far as the lines shown need (a description of a hundred
        // thousand characters costs no more than one of a few hundred).
        let per_line = (max_width / (style.size * 0.25)).ceil().max(0.0) as usize + 1;
        let limit = max_lines.saturating_mul(per_line).saturating_add(1);
        let text = match text.char_indices().nth(limit) {
            Some((end, _)) => &text[..end],
            None => text,
        };
        let mut lines: Vec<String> = Vec::new();
        let mut current = String::new();
        for word in text.split_whitespace() {
            let candidate = if current.is_empty() { word.to_owned() } else { format!("{current} {word}") };
            if self.width(style, &candidate) <= max_width {
                current = candidate;
                continue;
            }
            if !current.is_empty() {
                lines.push(std::mem::take(&mut current));
            }
            if self.width(style, word) <= max_width {
                current = word.to_owned();
            } else {
                for piece in self.break_word(style, word, max_width) {
                    if !current.is_empty() {
                        lines.push(std::mem::take(&mut current));
                    }
                    current = piece;
                }
            }
            if lines.len() > max_lines {
                break;
            }
        }
        if !current.is_empty() {
            lines.push(current);
        }
        if lines.len() > max_lines {
            lines.truncate(max_lines);
            if let Some(last) = lines.pop() {
                let mut runs: Vec<Run> = lines.iter().map(|line| self.shape(style.weight, line)).collect();
                // The ellipsis is always there, after the last word or cutting into it.
                runs.push(self.fit(style, &format!("{last}…"), max_width));
                return runs;
            }
        }
        lines.iter().map(|line| self.shape(style.weight, line)).collect()
    }

    /// A word too long for a line, in pieces that each fit.
    fn break_word(&self, style: Style, word: &str, max_width: f32) -> Vec<String> {
        let mut pieces = Vec::new();
        let mut piece = String::new();
        for c in word.chars() {
            piece.push(c);
            if piece.chars().count() > 1 && self.width(style, &piece) > max_width {
                piece.pop();
                pieces.push(std::mem::take(&mut piece));
                piece.push(c);
            }
        }
        if !piece.is_empty() {
            pieces.push(piece);
        }
        pieces
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Words, numbers and dates in the invoice's language

/// The words printed on an invoice, in one language.
struct Words {
    invoice: &'static str,
    cancellation: &'static str,
    cancels: &'static str,
    reason: &'static str,
    number: &'static str,
    issue_date: &'static str,
    service_period: &'static str,
    reservation: &'static str,
    recipient_vat_id: &'static str,
    amounts_in: &'static str,
    /// Service date, description, quantity, unit price net, VAT rate, net, VAT, gross.
    line_columns: [&'static str; 8],
    vat_rate: &'static str,
    net: &'static str,
    vat: &'static str,
    gross: &'static str,
    total_net: &'static str,
    total_vat: &'static str,
    total_gross: &'static str,
    payments: &'static str,
    /// Date, method, reference, amount.
    payment_columns: [&'static str; 4],
    balance_due: &'static str,
    payment_terms: &'static str,
    note: &'static str,
    vat_id: &'static str,
    tax_number: &'static str,
    page: &'static str,
    of: &'static str,
    continued: &'static str,
}

const ENGLISH: Words = Words {
    invoice: "Invoice",
    cancellation: "Cancellation invoice",
    cancels: "Cancels invoice",
    reason: "Reason",
    number: "Invoice number",
    issue_date: "Invoice date",
    service_period: "Service period",
    reservation: "Reservation",
    recipient_vat_id: "VAT ID",
    amounts_in: "Amounts in",
    line_columns: ["Date", "Description", "Qty", "Unit price net", "VAT %", "Net", "VAT", "Gross"],
    vat_rate: "VAT rate",
    net: "Net",
    vat: "VAT",
    gross: "Gross",
    total_net: "Total net",
    total_vat: "VAT",
    total_gross: "Total gross",
    payments: "Payments received",
    payment_columns: ["Date", "Method", "Reference", "Amount"],
    balance_due: "Balance due",
    payment_terms: "Payment terms",
    note: "Note",
    vat_id: "VAT ID",
    tax_number: "Tax number",
    page: "Page",
    of: "of",
    continued: "continued",
};

const GERMAN: Words = Words {
    invoice: "Rechnung",
    cancellation: "Stornorechnung",
    cancels: "Storno zu Rechnung",
    reason: "Grund",
    number: "Rechnungsnummer",
    issue_date: "Rechnungsdatum",
    service_period: "Leistungszeitraum",
    reservation: "Reservierung",
    recipient_vat_id: "USt-IdNr.",
    amounts_in: "Beträge in",
    line_columns: ["Datum", "Leistung", "Menge", "Einzelpreis netto", "USt. %", "Netto", "USt.", "Brutto"],
    vat_rate: "Steuersatz",
    net: "Netto",
    vat: "USt.",
    gross: "Brutto",
    total_net: "Summe netto",
    total_vat: "Umsatzsteuer",
    total_gross: "Gesamtbetrag brutto",
    payments: "Erhaltene Zahlungen",
    payment_columns: ["Datum", "Zahlungsart", "Referenz", "Betrag"],
    balance_due: "Offener Betrag",
    payment_terms: "Zahlungsbedingungen",
    note: "Hinweis",
    vat_id: "USt-IdNr.",
    tax_number: "Steuernummer",
    page: "Seite",
    of: "von",
    continued: "Fortsetzung",
};

/// Between a rate and its percent sign: an en space. A word space is narrower than the gap text extraction
/// (poppler) reads as letter spacing after a one-digit word, so "7 %" came out as "7%"; half an em is read as the
/// space it is.
const PERCENT_SPACE: char = '\u{2002}';

/// How numbers, dates and methods read in one language.
#[derive(Clone, Copy)]
struct Locale {
    language: InvoiceLanguage,
}

impl Locale {
    fn words(self) -> &'static Words {
        match self.language {
            InvoiceLanguage::En => &ENGLISH,
            InvoiceLanguage::De => &GERMAN,
        }
    }

    /// `31 Dec 2026`, `31.12.2026`.
    fn date(self, date: NaiveDate) -> String {
        match self.language {
            InvoiceLanguage::En => date.format("%-d %b %Y").to_string(),
            InvoiceLanguage::De => date.format("%d.%m.%Y").to_string(),
        }
    }

    /// An amount without its currency, as in a table headed with it: `1,234.50`, `1.234,50`.
    fn number(self, minor: i64, currency: &str) -> String {
        let english = money::format_amount(minor, currency);
        match self.language {
            InvoiceLanguage::En => english,
            InvoiceLanguage::De => english
                .chars()
                .map(|c| {
                    if c == ',' {
                        '.'
                    } else if c == '.' {
                        ','
                    } else {
                        c
                    }
                })
                .collect(),
        }
    }

    /// An amount with its currency: `EUR 1,234.50`, `1.234,50 EUR`.
    fn money(self, minor: i64, currency: &str) -> String {
        let number = self.number(minor, currency);
        match self.language {
            InvoiceLanguage::En => format!("{currency} {number}"),
            InvoiceLanguage::De => format!("{number} {currency}"),
        }
    }

    /// A VAT rate in basis points: 700 is `7 %`, 550 `5.5 %` (`5,5 %`), 0 `0 %` (the space an en space).
    fn rate(self, basis_points: i64) -> String {
        let sign = if basis_points < 0 { "-" } else { "" };
        let whole = basis_points.unsigned_abs() / 100;
        let hundredths = basis_points.unsigned_abs() % 100;
        if hundredths == 0 {
            return format!("{sign}{whole}{PERCENT_SPACE}%");
        }
        let decimals = format!("{hundredths:02}");
        let separator = match self.language {
            InvoiceLanguage::En => '.',
            InvoiceLanguage::De => ',',
        };
        format!("{sign}{whole}{separator}{}{PERCENT_SPACE}%", decimals.trim_end_matches('0'))
    }

    fn method(self, method: PaymentMethod) -> &'static str {
        let (english, german) = match method {
            PaymentMethod::Card => ("Card", "Karte"),
            PaymentMethod::BankTransfer => ("Bank transfer", "Überweisung"),
            PaymentMethod::ChannelPrepaid => ("Prepaid to the channel", "Über Vertriebskanal vorausbezahlt"),
            PaymentMethod::Voucher => ("Voucher", "Gutschein"),
            PaymentMethod::Cash => ("Cash", "Bar"),
            PaymentMethod::Other => ("Other", "Sonstige"),
        };
        match self.language {
            InvoiceLanguage::En => english,
            InvoiceLanguage::De => german,
        }
    }
}

/// The lines of a postal address: street, postal code and city, and the country unless it is `home_country`
/// (mail within a country carries none). A country is printed by its English name in capitals, as international
/// mail asks; a code no table knows is printed as given.
fn address_lines(address: &PostalAddress, home_country: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(street) = address.street.as_deref().filter(|s| !s.trim().is_empty()) {
        lines.push(street.trim().to_owned());
    }
    let place = [address.postal_code.as_deref(), address.city.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if !place.is_empty() {
        lines.push(place);
    }
    if let Some(code) = address.country.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        let at_home = home_country.is_some_and(|home| home.trim().eq_ignore_ascii_case(code));
        if !at_home {
            let name = code
                .to_ascii_uppercase()
                .parse::<iso_currency::Country>()
                .map(|country| country.name().to_uppercase())
                .unwrap_or_else(|_| code.to_owned());
            lines.push(name);
        }
    }
    lines
}

// ---------------------------------------------------------------------------------------------------------------
// Composing pages of marks

/// What is drawn on a page.
#[derive(Debug, Clone)]
enum Mark {
    /// A shaped text, its baseline starting at (`x`, `baseline`).
    Text { x: f32, baseline: f32, style: Style, run: Run },
    /// A filled rectangle: a rule or a band behind a header.
    Rectangle { x: f32, y: f32, width: f32, height: f32, colour: (u8, u8, u8) },
}

/// A table column: where it starts, how wide it is, and which side its cells keep to.
#[derive(Debug, Clone, Copy)]
struct Column {
    x: f32,
    width: f32,
    align: Align,
}

impl Column {
    fn inner_width(self) -> f32 {
        self.width - 2.0 * layout::CELL_PAD_X
    }
}

/// Columns laid side by side from `left`, `None` for the one that takes what the others leave of `width`.
fn columns(left: f32, width: f32, spec: &[(Option<f32>, Align)]) -> Vec<Column> {
    let fixed: f32 = spec.iter().filter_map(|(w, _)| *w).sum();
    let mut x = left;
    spec.iter()
        .map(|(w, align)| {
            let width = w.unwrap_or(width - fixed).max(0.0);
            let column = Column { x, width, align: *align };
            x += width;
            column
        })
        .collect()
}

/// The pages being set, and where the next line goes.
struct Composer<'a> {
    setter: Typesetter<'a>,
    pages: Vec<Vec<Mark>>,
    /// The page marks go on: the last one, but for the footers.
    page: usize,
    /// The top of the next line on the last page.
    y: f32,
    /// Printed at the top of every page after the first: the title and number.
    running_head: String,
}

impl Composer<'_> {
    fn marks(&mut self) -> &mut Vec<Mark> {
        if self.page >= self.pages.len() {
            self.pages.resize_with(self.page + 1, Vec::new);
        }
        &mut self.pages[self.page]
    }

    /// A text whose line box's top is `top`, from `x` (left) or ending at `x` (right).
    fn put(&mut self, x: f32, top: f32, style: Style, run: Run, align: Align) {
        let x = match align {
            Align::Left => x,
            Align::Right => x - run.width(style.size),
        };
        self.marks().push(Mark::Text { x, baseline: top + style.size * layout::BASELINE, style, run });
    }

    /// `text` on one line, cut to `max_width`.
    fn put_text(&mut self, x: f32, top: f32, style: Style, text: &str, max_width: f32, align: Align) {
        let run = self.setter.fit(style, text, max_width);
        self.put(x, top, style, run, align);
    }

    /// An amount kept whole: if it is wider than `max_width`, it is set smaller until it fits.
    fn put_amount(&mut self, right: f32, top: f32, style: Style, text: &str, max_width: f32) {
        let run = self.setter.shape(style.weight, text);
        let natural = run.width(style.size);
        let size = if natural > max_width && natural > 0.0 {
            (style.size * max_width / natural).max(layout::MIN_AMOUNT_SIZE)
        } else {
            style.size
        };
        self.put(right, top, style.with_size(size), run, Align::Right);
    }

    fn rectangle(&mut self, x: f32, y: f32, width: f32, height: f32, colour: (u8, u8, u8)) {
        self.marks().push(Mark::Rectangle { x, y, width, height, colour });
    }

    fn rule(&mut self, x: f32, y: f32, width: f32, thickness: f32) {
        self.rectangle(x, y - thickness / 2.0, width, thickness, layout::LINE);
    }

    fn fits(&self, height: f32) -> bool {
        self.y + height <= layout::BODY_BOTTOM
    }

    /// Starts a new page, headed with the title and number.
    fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.page = self.pages.len() - 1;
        let head = self.running_head.clone();
        self.put_text(layout::LEFT, layout::TOP, SMALL_MUTED, &head, layout::CONTENT_WIDTH, Align::Left);
        self.y = layout::TOP + SMALL_MUTED.line_height() + layout::GAP;
    }

    /// Makes room for `height` on this page, or starts the next one.
    fn keep(&mut self, height: f32) {
        if !self.fits(height) {
            self.new_page();
        }
    }

    /// A table row of wrapped cells with a hairline under it, its tallest cell setting its height. Returns the
    /// row's height.
    fn row(&mut self, columns: &[Column], cells: &[(Style, Vec<Run>)], top: f32, amount_cells: &[bool]) -> f32 {
        let most_lines = cells.iter().map(|(_, lines)| lines.len()).max().unwrap_or(1).max(1);
        let line_height = cells.iter().map(|(style, _)| style.line_height()).fold(0.0, f32::max);
        let height = most_lines as f32 * line_height + 2.0 * layout::CELL_PAD_Y;
        for (index, (column, (style, lines))) in columns.iter().zip(cells).enumerate() {
            let is_amount = amount_cells.get(index).copied().unwrap_or(false);
            for (n, run) in lines.iter().enumerate() {
                let line_top = top + layout::CELL_PAD_Y + n as f32 * line_height;
                match column.align {
                    Align::Left => self.put(column.x + layout::CELL_PAD_X, line_top, *style, run.clone(), Align::Left),
                    Align::Right if is_amount => {
                        let right = column.x + column.width - layout::CELL_PAD_X;
                        self.put_amount(right, line_top, *style, &run.text, column.inner_width())
                    }
                    Align::Right => self.put(
                        column.x + column.width - layout::CELL_PAD_X,
                        line_top,
                        *style,
                        run.clone(),
                        Align::Right,
                    ),
                }
            }
        }
        height
    }
}

/// A table: its columns, its header (wrapped), and the rows set so far; a row that does not fit starts a new
/// page, which repeats the header.
struct Table {
    columns: Vec<Column>,
    header: Vec<(Style, Vec<Run>)>,
    /// Which columns hold amounts (kept whole, set smaller if need be, instead of cut).
    amounts: Vec<bool>,
}

impl Table {
    fn new(setter: &Typesetter<'_>, columns: Vec<Column>, titles: &[&str], amounts: Vec<bool>) -> Table {
        let header = columns
            .iter()
            .zip(titles)
            .map(|(column, title)| (HEADER, setter.wrap(HEADER, title, column.inner_width(), layout::HEADER_MAX_LINES)))
            .collect();
        Table { columns, header, amounts }
    }

    fn left(&self) -> f32 {
        self.columns.first().map_or(layout::LEFT, |c| c.x)
    }

    fn width(&self) -> f32 {
        self.columns.iter().map(|c| c.width).sum()
    }

    fn header_height(&self) -> f32 {
        let lines = self.header.iter().map(|(_, l)| l.len()).max().unwrap_or(1).max(1);
        lines as f32 * HEADER.line_height() + 2.0 * layout::CELL_PAD_Y
    }

    fn put_header(&self, composer: &mut Composer<'_>) {
        let height = self.header_height();
        composer.rectangle(self.left(), composer.y, self.width(), height, layout::BAND);
        let top = composer.y;
        composer.row(&self.columns, &self.header, top, &[]);
        composer.y += height;
    }

    /// Starts the table: its header, with room for a first row under it.
    fn start(&self, composer: &mut Composer<'_>, first_row_height: f32) {
        composer.keep(self.header_height() + first_row_height);
        self.put_header(composer);
    }

    fn row_height(cells: &[(Style, Vec<Run>)]) -> f32 {
        let lines = cells.iter().map(|(_, l)| l.len()).max().unwrap_or(1).max(1);
        let line_height = cells.iter().map(|(s, _)| s.line_height()).fold(0.0, f32::max);
        lines as f32 * line_height + 2.0 * layout::CELL_PAD_Y
    }

    fn put_row(&self, composer: &mut Composer<'_>, cells: &[(Style, Vec<Run>)]) {
        let height = Table::row_height(cells);
        if !composer.fits(height) {
            composer.new_page();
            self.put_header(composer);
        }
        let top = composer.y;
        composer.row(&self.columns, cells, top, &self.amounts);
        composer.y += height;
        composer.rule(self.left(), composer.y, self.width(), layout::HAIRLINE);
    }
}

/// The document set into pages of marks, footers included.
fn compose(doc: &InvoiceDocument, typefaces: &Typefaces) -> Vec<Vec<Mark>> {
    let locale = Locale { language: doc.language };
    let words = locale.words();
    let title = match doc.kind {
        InvoiceKind::Invoice => words.invoice,
        InvoiceKind::Cancellation => words.cancellation,
    };
    let mut composer = Composer {
        setter: Typesetter { typefaces },
        pages: vec![Vec::new()],
        page: 0,
        y: layout::TOP,
        running_head: format!("{} · {title} {} ({})", doc.issuer.hotel_name, doc.number, words.continued),
    };
    put_letterhead(&mut composer, doc, locale);
    put_title(&mut composer, doc, locale, title);
    put_lines(&mut composer, doc, locale);
    put_summary(&mut composer, doc, locale);
    put_payments(&mut composer, doc, locale);
    put_closing(&mut composer, doc, locale);
    put_footers(&mut composer, doc, locale);
    composer.pages
}

/// The hotel and its company at the top, the recipient's address, and the invoice's number, dates and
/// reservation beside it.
fn put_letterhead(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let issuer = &doc.issuer;
    let hotel_style = Style::new(Weight::Bold, layout::HOTEL_NAME_SIZE, Tone::Ink);
    let hotel_width = layout::CONTENT_WIDTH - layout::ISSUER_WIDTH - layout::GAP;
    composer.put_text(layout::LEFT, layout::TOP, hotel_style, &issuer.hotel_name, hotel_width, Align::Left);

    // The issuer's company, right-aligned: legal name, address (the country only when it is not the
    // recipient's).
    let home = doc.recipient.address.country.as_deref();
    let mut top = layout::TOP + 2.0;
    composer.put_text(layout::RIGHT, top, BODY_BOLD, &issuer.legal_name, layout::ISSUER_WIDTH, Align::Right);
    top += BODY_BOLD.line_height();
    for line in address_lines(&issuer.address, home) {
        composer.put_text(layout::RIGHT, top, BODY_MUTED, &line, layout::ISSUER_WIDTH, Align::Right);
        top += BODY_MUTED.line_height();
    }

    // The sender's line over the window of an envelope, and the recipient under it.
    let sender_style = Style::new(Weight::Regular, layout::SENDER_LINE_SIZE, Tone::Muted);
    let sender: Vec<String> = std::iter::once(issuer.legal_name.clone())
        .chain(address_lines(&issuer.address, issuer.address.country.as_deref()))
        .collect();
    let mut top = layout::ADDRESS_TOP;
    composer.put_text(layout::LEFT, top, sender_style, &sender.join(" · "), layout::ADDRESS_WIDTH, Align::Left);
    top += sender_style.line_height() + 1.0;
    composer.rule(layout::LEFT, top, layout::ADDRESS_WIDTH, layout::HAIRLINE);
    top += 5.0;
    let name_style = Style::new(Weight::Bold, layout::RECIPIENT_SIZE, Tone::Ink);
    let address_style = Style::new(Weight::Regular, layout::RECIPIENT_SIZE, Tone::Ink);
    let recipient = &doc.recipient;
    for run in composer.setter.wrap(name_style, &recipient.name, layout::ADDRESS_WIDTH, 2) {
        composer.put(layout::LEFT, top, name_style, run, Align::Left);
        top += name_style.line_height();
    }
    for line in address_lines(&recipient.address, issuer.address.country.as_deref()) {
        composer.put_text(layout::LEFT, top, address_style, &line, layout::ADDRESS_WIDTH, Align::Left);
        top += address_style.line_height();
    }
    if let Some(vat_id) = recipient.vat_id.as_deref().filter(|v| !v.trim().is_empty()) {
        top += 2.0;
        let line = format!("{}: {}", words.recipient_vat_id, vat_id.trim());
        composer.put_text(layout::LEFT, top, BODY, &line, layout::ADDRESS_WIDTH, Align::Left);
        top += BODY.line_height();
    }
    let address_bottom = top;

    // Number, dates and reservation: labels on the left of the block, values right-aligned.
    let period = format!("{} – {}", locale.date(doc.service_period.from), locale.date(doc.service_period.to));
    let facts = [
        (words.number, doc.number.clone(), BODY_BOLD),
        (words.issue_date, locale.date(doc.issue_date), BODY),
        (words.service_period, period, BODY),
        (words.reservation, doc.reservation_reference.clone(), BODY),
    ];
    let label_width = facts.iter().map(|(label, _, _)| composer.setter.width(BODY_MUTED, label)).fold(0.0, f32::max);
    let value_width = layout::RIGHT - layout::INFO_LEFT - label_width - layout::INFO_LABEL_GAP;
    let mut top = layout::ADDRESS_TOP;
    for (label, value, style) in facts {
        composer.put_text(layout::INFO_LEFT, top, BODY_MUTED, label, label_width + 1.0, Align::Left);
        composer.put_text(layout::RIGHT, top, style, &value, value_width, Align::Right);
        top += BODY.line_height() + 2.0;
    }
    composer.y = address_bottom.max(top).max(layout::TITLE_MIN_TOP - layout::GAP * 2.0) + layout::GAP * 2.0;
}

/// "Invoice", or "Cancellation invoice" with the number it cancels and why.
fn put_title(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale, title: &str) {
    let words = locale.words();
    let title_style = Style::new(Weight::Bold, layout::TITLE_SIZE, Tone::Ink);
    let top = composer.y;
    composer.put_text(layout::LEFT, top, title_style, title, layout::CONTENT_WIDTH, Align::Left);
    composer.y += title_style.line_height() + 2.0;
    if doc.kind == InvoiceKind::Cancellation {
        if let Some(cancelled) = doc.cancels_number.as_deref() {
            let top = composer.y;
            let text = format!("{} {cancelled}", words.cancels);
            composer.put_text(layout::LEFT, top, BODY_BOLD, &text, layout::CONTENT_WIDTH, Align::Left);
            composer.y += BODY_BOLD.line_height();
        }
        if let Some(reason) = doc.cancellation_reason.as_deref().filter(|r| !r.trim().is_empty()) {
            let text = format!("{}: {}", words.reason, reason.trim());
            for run in composer.setter.wrap(BODY, &text, layout::CONTENT_WIDTH, 4) {
                let top = composer.y;
                composer.put(layout::LEFT, top, BODY, run, Align::Left);
                composer.y += BODY.line_height();
            }
        }
    }
    composer.y += layout::GAP;
}

/// The table of lines.
fn put_lines(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let currency = doc.currency.as_str();
    let top = composer.y;
    let note = format!("{} {currency}", words.amounts_in);
    composer.put_text(layout::RIGHT, top, SMALL_MUTED, &note, layout::CONTENT_WIDTH, Align::Right);
    composer.y += SMALL_MUTED.line_height() + 2.0;

    use layout::*;
    let columns = columns(
        LEFT,
        CONTENT_WIDTH,
        &[
            (Some(DATE_COLUMN), Align::Left),
            (None, Align::Left),
            (Some(QUANTITY_COLUMN), Align::Right),
            (Some(UNIT_COLUMN), Align::Right),
            (Some(RATE_COLUMN), Align::Right),
            (Some(NET_COLUMN), Align::Right),
            (Some(VAT_COLUMN), Align::Right),
            (Some(GROSS_COLUMN), Align::Right),
        ],
    );
    let description_width = columns[1].inner_width();
    let amounts = vec![false, false, true, true, true, true, true, true];
    let table = Table::new(&composer.setter, columns, &words.line_columns, amounts);
    let setter = &composer.setter;
    let rows: Vec<Vec<(Style, Vec<Run>)>> = doc
        .lines
        .iter()
        .map(|line| {
            let one = |style: Style, text: String| (style, vec![setter.shape(style.weight, &text)]);
            vec![
                one(CELL, locale.date(line.service_date)),
                (CELL, setter.wrap(CELL, &line.description, description_width, DESCRIPTION_MAX_LINES)),
                one(CELL, line.quantity.to_string()),
                one(CELL, locale.number(line.unit_net, currency)),
                one(CELL, locale.rate(line.vat_rate_basis_points)),
                one(CELL, locale.number(line.net, currency)),
                one(CELL, locale.number(line.vat, currency)),
                one(CELL_BOLD, locale.number(line.gross, currency)),
            ]
        })
        .collect();
    table.start(composer, rows.first().map_or(0.0, |r| Table::row_height(r)));
    for row in &rows {
        table.put_row(composer, row);
    }
    composer.y += GAP;
}

/// VAT by rate, then the totals, right-aligned under the lines and kept together.
fn put_summary(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let currency = doc.currency.as_str();
    let left = layout::RIGHT - layout::SUMMARY_WIDTH;
    let amount_column = (layout::SUMMARY_WIDTH - layout::SUMMARY_RATE_COLUMN) / 3.0;
    let spec = [
        (Some(layout::SUMMARY_RATE_COLUMN), Align::Left),
        (Some(amount_column), Align::Right),
        (Some(amount_column), Align::Right),
        (Some(amount_column), Align::Right),
    ];
    let table = Table::new(
        &composer.setter,
        columns(left, layout::SUMMARY_WIDTH, &spec),
        &[words.vat_rate, words.net, words.vat, words.gross],
        vec![false, true, true, true],
    );
    let setter = &composer.setter;
    let rows: Vec<Vec<(Style, Vec<Run>)>> = doc
        .vat_totals
        .iter()
        .map(|total| {
            [
                locale.rate(total.vat_rate_basis_points),
                locale.number(total.net, currency),
                locale.number(total.vat, currency),
                locale.number(total.gross, currency),
            ]
            .into_iter()
            .map(|text| (CELL, vec![setter.shape(CELL.weight, &text)]))
            .collect()
        })
        .collect();
    let totals_height = 3.0 * (BODY.line_height() + 3.0) + layout::SMALL_GAP + 4.0;
    let rows_height: f32 = rows.iter().map(|r| Table::row_height(r)).sum();
    composer.keep(table.header_height() + rows_height + layout::SMALL_GAP + totals_height);
    if !rows.is_empty() {
        table.put_header(composer);
        for row in &rows {
            table.put_row(composer, row);
        }
        composer.y += layout::SMALL_GAP;
    }

    let label_x = left + layout::CELL_PAD_X;
    let value_right = layout::RIGHT - layout::CELL_PAD_X;
    let value_width = layout::SUMMARY_WIDTH / 2.0;
    let totals = [
        (words.total_net, doc.total_net, BODY),
        (words.total_vat, doc.total_vat, BODY),
        (words.total_gross, doc.total_gross, BODY_BOLD),
    ];
    for (label, amount, style) in totals {
        if style == BODY_BOLD {
            composer.y += 1.0;
            composer.rule(left, composer.y, layout::SUMMARY_WIDTH, layout::RULE);
            composer.y += 3.0;
        }
        let top = composer.y;
        composer.put_text(label_x, top, style, label, layout::SUMMARY_WIDTH / 2.0, Align::Left);
        composer.put_amount(value_right, top, style, &locale.money(amount, currency), value_width);
        composer.y += style.line_height() + 3.0;
    }
    composer.y += layout::GAP;
}

/// The payments received, and the balance due.
fn put_payments(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let currency = doc.currency.as_str();
    if !doc.payments.is_empty() {
        use layout::*;
        let spec = [
            (Some(PAYMENT_DATE_COLUMN), Align::Left),
            (Some(PAYMENT_METHOD_COLUMN), Align::Left),
            (None, Align::Left),
            (Some(PAYMENT_AMOUNT_COLUMN), Align::Right),
        ];
        let table = Table::new(
            &composer.setter,
            columns(LEFT, CONTENT_WIDTH, &spec),
            &words.payment_columns,
            vec![false, false, false, true],
        );
        let reference_width = table.columns[2].inner_width();
        let method_width = table.columns[1].inner_width();
        let setter = &composer.setter;
        let rows: Vec<Vec<(Style, Vec<Run>)>> = doc
            .payments
            .iter()
            .map(|payment| {
                vec![
                    (CELL, vec![setter.shape(CELL.weight, &locale.date(payment.paid_on))]),
                    (CELL, setter.wrap(CELL, locale.method(payment.method), method_width, 2)),
                    (CELL, vec![setter.fit(CELL, payment.reference.as_deref().unwrap_or(""), reference_width)]),
                    (CELL, vec![setter.shape(CELL.weight, &locale.money(payment.amount, currency))]),
                ]
            })
            .collect();
        let heading_height = BODY_BOLD.line_height() + 2.0;
        composer.keep(heading_height + table.header_height() + rows.first().map_or(0.0, |r| Table::row_height(r)));
        let top = composer.y;
        composer.put_text(LEFT, top, BODY_BOLD, words.payments, CONTENT_WIDTH, Align::Left);
        composer.y += heading_height;
        table.put_header(composer);
        for row in &rows {
            table.put_row(composer, row);
        }
        composer.y += SMALL_GAP;
    }

    // The balance due, in a band the width of the summary.
    let style = Style::new(Weight::Bold, layout::BODY_SIZE + 1.0, Tone::Ink);
    let height = style.line_height() + 2.0 * layout::CELL_PAD_Y;
    composer.keep(height);
    let left = layout::RIGHT - layout::SUMMARY_WIDTH;
    let top = composer.y;
    composer.rectangle(left, top, layout::SUMMARY_WIDTH, height, layout::BAND);
    let text_top = top + layout::CELL_PAD_Y;
    let half = layout::SUMMARY_WIDTH / 2.0;
    composer.put_text(left + layout::CELL_PAD_X, text_top, style, words.balance_due, half, Align::Left);
    let amount = locale.money(doc.balance_due, currency);
    composer.put_amount(layout::RIGHT - layout::CELL_PAD_X, text_top, style, &amount, half);
    composer.y += height + layout::GAP;
}

/// The payment terms and the note, as paragraphs.
fn put_closing(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let paragraphs = [(words.payment_terms, doc.payment_terms.as_deref()), (words.note, doc.note.as_deref())];
    for (label, text) in paragraphs {
        let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else { continue };
        let lines = composer.setter.wrap(BODY, text, layout::CONTENT_WIDTH, 12);
        composer.keep(BODY_BOLD.line_height() + BODY.line_height() * lines.len().min(3) as f32);
        let top = composer.y;
        composer.put_text(layout::LEFT, top, BODY_BOLD, label, layout::CONTENT_WIDTH, Align::Left);
        composer.y += BODY_BOLD.line_height();
        for run in lines {
            composer.keep(BODY.line_height());
            let top = composer.y;
            composer.put(layout::LEFT, top, BODY, run, Align::Left);
            composer.y += BODY.line_height();
        }
        composer.y += layout::SMALL_GAP;
    }
}

/// On every page: the issuer's legal name and tax identifiers, and "Page i of n".
fn put_footers(composer: &mut Composer<'_>, doc: &InvoiceDocument, locale: Locale) {
    let words = locale.words();
    let issuer = &doc.issuer;
    let first: Vec<String> = [issuer.legal_name.clone(), issuer.hotel_name.clone()]
        .into_iter()
        .chain(address_lines(&issuer.address, None))
        .filter(|part| !part.trim().is_empty())
        .collect();
    let mut second = vec![format!("{}: {}", words.vat_id, issuer.vat_id)];
    if let Some(tax_number) = issuer.tax_number.as_deref().filter(|t| !t.trim().is_empty()) {
        second.push(format!("{}: {}", words.tax_number, tax_number.trim()));
    }
    let (first, second) = (first.join(" · "), second.join(" · "));
    let count = composer.pages.len();
    let page_label_width = layout::CONTENT_WIDTH / 5.0;
    let text_width = layout::CONTENT_WIDTH - page_label_width - layout::GAP;
    for index in 0..count {
        composer.page = index;
        composer.rule(layout::LEFT, layout::FOOTER_RULE, layout::CONTENT_WIDTH, layout::HAIRLINE);
        let top = layout::FOOTER_TEXT_TOP;
        composer.put_text(layout::LEFT, top, FOOTER, &first, text_width, Align::Left);
        composer.put_text(layout::LEFT, top + FOOTER.line_height(), FOOTER, &second, text_width, Align::Left);
        let page = format!("{} {} {} {}", words.page, index + 1, words.of, count);
        composer.put_text(layout::RIGHT, top, FOOTER, &page, page_label_width, Align::Right);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Writing the PDF

fn write_pdf(doc: &InvoiceDocument, typefaces: &Typefaces, pages: &[Vec<Mark>]) -> Result<Vec<u8>, RenderError> {
    // No tag tree is written (tagging is opt-in per call and none is made), so none is promised.
    let settings = SerializeSettings { enable_tagging: false, ..SerializeSettings::default() };
    let mut document = Document::new_with(settings);
    let words = Locale { language: doc.language }.words();
    let title = match doc.kind {
        InvoiceKind::Invoice => words.invoice,
        InvoiceKind::Cancellation => words.cancellation,
    };
    let language: &'static str = doc.language.into();
    // The document id is the invoice's number: a file made again for the same invoice is the same document.
    document.set_metadata(
        Metadata::new()
            .title(format!("{title} {}", doc.number))
            .language(language.to_owned())
            .document_id(doc.number.clone()),
    );
    for marks in pages {
        let size = PageSettings::from_wh(layout::PAGE_WIDTH, layout::PAGE_HEIGHT).ok_or(RenderError::PageSize)?;
        let mut page = document.start_page_with(size);
        let mut surface = page.surface();
        for mark in marks {
            draw(&mut surface, typefaces, mark);
        }
        surface.finish();
        page.finish();
    }
    document.finish().map_err(|error| RenderError::Pdf(format!("{error:?}")))
}

fn fill(surface: &mut Surface<'_>, (red, green, blue): (u8, u8, u8)) {
    surface.set_fill(Some(Fill {
        paint: rgb::Color::new(red, green, blue).into(),
        opacity: NormalizedF32::ONE,
        rule: FillRule::NonZero,
    }));
}

fn draw(surface: &mut Surface<'_>, typefaces: &Typefaces, mark: &Mark) {
    match mark {
        Mark::Text { x, baseline, style, run } => {
            fill(
                surface,
                match style.tone {
                    Tone::Ink => layout::INK,
                    Tone::Muted => layout::MUTED,
                },
            );
            let font = match style.weight {
                Weight::Regular => &typefaces.regular.pdf,
                Weight::Bold => &typefaces.bold.pdf,
            };
            surface.draw_glyphs(Point::from_xy(*x, *baseline), &run.glyphs, font.clone(), &run.text, style.size, false);
        }
        Mark::Rectangle { x, y, width, height, colour } => {
            // A rectangle of no size (a column squeezed to nothing) is skipped, not an error.
            if let Some(rect) = Rect::from_xywh(*x, *y, *width, *height) {
                let mut builder = PathBuilder::new();
                builder.push_rect(rect);
                if let Some(path) = builder.finish() {
                    fill(surface, *colour);
                    surface.draw_path(&path);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;
    use crate::model::invoices::{
        InvoiceIssuer, InvoiceLine, InvoicePayment, InvoiceRecipient, InvoiceVatTotal, RecipientKind, ServicePeriod,
    };

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, d).expect("a December day")
    }

    /// One line of `quantity` at `unit_net` and `rate` basis points, VAT rounded half up.
    fn line(n: usize, description: &str, quantity: i64, unit_net: i64, rate: i64) -> InvoiceLine {
        let net = quantity * unit_net;
        let vat = (net * rate + 5_000) / 10_000;
        InvoiceLine {
            folio_line_id: format!("fl-{n}"),
            service_date: day(1 + (n % 4) as u32),
            description: description.to_owned(),
            quantity,
            unit_net,
            vat_rate_basis_points: rate,
            net,
            vat,
            gross: net + vat,
        }
    }

    /// An invoice of `count` lines: a room, breakfasts for the named guests and a city tax at 0 %, over and
    /// over. The first three lines add up to a net of 1,270.00, VAT of 92.15 and a gross of 1,362.15.
    fn sample(language: InvoiceLanguage, count: usize) -> InvoiceDocument {
        let templates: [(&str, i64, i64, i64); 6] = [
            ("Accommodation, Harbour Double, 2 nights", 2, 61_750, 700),
            ("Breakfast for François Müller and Γιώργος Παπαδόπουλος", 2, 1_500, 1_900),
            ("City tax (Дмитрий Иванов)", 1, 500, 0),
            ("Parking", 1, 1_800, 1_900),
            ("Minibar", 3, 420, 1_900),
            ("Late check-out", 1, 2_500, 700),
        ];
        let lines: Vec<InvoiceLine> = (0..count)
            .map(|n| {
                let (description, quantity, unit_net, rate) = templates[n % templates.len()];
                line(n, description, quantity, unit_net, rate)
            })
            .collect();
        let mut by_rate: BTreeMap<i64, InvoiceVatTotal> = BTreeMap::new();
        for l in &lines {
            let total = by_rate.entry(l.vat_rate_basis_points).or_insert(InvoiceVatTotal {
                vat_rate_basis_points: l.vat_rate_basis_points,
                net: 0,
                vat: 0,
                gross: 0,
            });
            total.net += l.net;
            total.vat += l.vat;
            total.gross += l.gross;
        }
        let total_net = lines.iter().map(|l| l.net).sum();
        let total_vat = lines.iter().map(|l| l.vat).sum();
        let total_gross: i64 = lines.iter().map(|l| l.gross).sum();
        let payments = vec![
            InvoicePayment {
                paid_on: day(1),
                method: PaymentMethod::Card,
                reference: Some("AUTH 448213".into()),
                amount: 50_000,
            },
            InvoicePayment { paid_on: day(3), method: PaymentMethod::BankTransfer, reference: None, amount: 30_000 },
        ];
        let paid = payments.iter().map(|p| p.amount).sum();
        InvoiceDocument {
            number: "RE-2026-000042".into(),
            kind: InvoiceKind::Invoice,
            cancels_number: None,
            cancellation_reason: None,
            language,
            issue_date: day(5),
            service_period: ServicePeriod { from: day(1), to: day(4) },
            currency: "EUR".into(),
            issuer: InvoiceIssuer {
                legal_name: "Harbour Hotels GmbH".into(),
                hotel_name: "Hotel Am Hafen".into(),
                address: PostalAddress {
                    street: Some("Kaistraße 12".into()),
                    postal_code: Some("20457".into()),
                    city: Some("Hamburg".into()),
                    country: Some("DE".into()),
                },
                vat_id: "DE123456789".into(),
                tax_number: Some("27/123/45678".into()),
            },
            recipient: InvoiceRecipient {
                kind: RecipientKind::Company,
                name: "Łukasz Żółć".into(),
                address: PostalAddress {
                    street: Some("ul. Piękna 7".into()),
                    postal_code: Some("00-549".into()),
                    city: Some("Warszawa".into()),
                    country: Some("PL".into()),
                },
                vat_id: Some("PL5260250995".into()),
            },
            reservation_reference: "HAF-7Q2K9".into(),
            lines,
            vat_totals: by_rate.into_values().collect(),
            total_net,
            total_vat,
            total_gross,
            payments,
            paid,
            balance_due: total_gross - paid,
            payment_terms: Some("Payable on receipt without deduction.".into()),
            note: Some("Thank you for staying with us.".into()),
        }
    }

    /// The cancellation of `invoice`: its lines and totals negated, and the payments left to the invoice.
    fn cancellation_of(invoice: &InvoiceDocument) -> InvoiceDocument {
        let mut doc = invoice.clone();
        doc.number = "RE-2026-000043".into();
        doc.kind = InvoiceKind::Cancellation;
        doc.cancels_number = Some(invoice.number.clone());
        doc.cancellation_reason = Some("Rechnungsempfänger falsch angegeben".into());
        for l in &mut doc.lines {
            (l.net, l.vat, l.gross) = (-l.net, -l.vat, -l.gross);
        }
        for t in &mut doc.vat_totals {
            (t.net, t.vat, t.gross) = (-t.net, -t.vat, -t.gross);
        }
        (doc.total_net, doc.total_vat, doc.total_gross) = (-doc.total_net, -doc.total_vat, -doc.total_gross);
        doc.payments.clear();
        doc.paid = 0;
        doc.balance_due = doc.total_gross;
        doc
    }

    /// A tool the tests run: failing, never skipping, when the machine lacks it.
    fn tool(name: &str) -> PathBuf {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file()).unwrap_or_else(
            || panic!("`{name}` is not installed: run scripts/services.sh (it installs qpdf and poppler-utils)"),
        )
    }

    /// A PDF written to a file of its own for the tools, removed afterwards.
    struct PdfFile(PathBuf);

    impl PdfFile {
        fn new(label: &str, pdf: &[u8]) -> PdfFile {
            let path = std::env::temp_dir().join(format!("frontdesk-invoice-{}-{label}.pdf", std::process::id()));
            std::fs::write(&path, pdf).expect("write the PDF");
            PdfFile(path)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for PdfFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn qpdf_check(pdf: &PdfFile) {
        let out = Command::new(tool("qpdf")).arg("--check").arg(pdf.path()).output().expect("run qpdf");
        assert!(
            out.status.success(),
            "qpdf --check failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn page_count(pdf: &PdfFile) -> usize {
        let out = Command::new(tool("qpdf")).arg("--show-npages").arg(pdf.path()).output().expect("run qpdf");
        assert!(out.status.success(), "qpdf --show-npages failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("a page count")
    }

    fn text_of(pdf: &PdfFile) -> String {
        let out = Command::new(tool("pdftotext"))
            .args(["-enc", "UTF-8"])
            .arg(pdf.path())
            .arg("-")
            .output()
            .expect("run pdftotext");
        assert!(out.status.success(), "pdftotext failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("UTF-8 text")
    }

    fn assert_contains(text: &str, expected: &[&str]) {
        let missing: Vec<&&str> = expected.iter().filter(|e| !text.contains(**e)).collect();
        assert!(missing.is_empty(), "missing from the text: {missing:?}\n--- text ---\n{text}");
    }

    #[test]
    fn the_same_document_makes_the_same_bytes() {
        let doc = sample(InvoiceLanguage::En, 30);
        let first = render(&doc).expect("render");
        let second = render(&doc).expect("render");
        assert!(first.starts_with(b"%PDF-"));
        assert!(first == second, "two renderings of one document differ");
    }

    #[test]
    fn an_english_invoice_is_a_valid_pdf_whose_text_can_be_read() {
        let doc = sample(InvoiceLanguage::En, 3);
        let pdf = PdfFile::new("en", &render(&doc).expect("render"));
        qpdf_check(&pdf);
        assert_eq!(page_count(&pdf), 1);
        let text = text_of(&pdf);
        assert_contains(
            &text,
            &[
                "Invoice",
                "RE-2026-000042",
                "VAT ID: DE123456789",
                "Tax number: 27/123/45678",
                "EUR 1,270.00",
                "EUR 92.15",
                "EUR 1,362.15",
                "Łukasz Żółć",
                "François Müller",
                "Γιώργος Παπαδόπουλος",
                "Дмитрий Иванов",
                "5 Dec 2026",
                "0 %",
                "Bank transfer",
                "Balance due",
                "EUR 562.15",
                "Page 1 of 1",
                "Payable on receipt without deduction.",
            ],
        );
    }

    #[test]
    fn a_long_invoice_flows_onto_more_pages_with_the_header_repeated() {
        let doc = sample(InvoiceLanguage::En, 120);
        let pdf = PdfFile::new("long", &render(&doc).expect("render"));
        qpdf_check(&pdf);
        let pages = page_count(&pdf);
        assert!(pages >= 3, "120 lines on {pages} pages");
        let text = text_of(&pdf);
        assert_eq!(text.matches("Page ").count(), pages, "a footer on every page");
        assert_contains(&text, &["Page 1 of", &format!("Page {pages} of {pages}")]);
        // The table goes on over every page but perhaps the last, which may hold the totals alone.
        assert!(text.matches("Description").count() >= pages - 1, "the table's header on each page:\n{text}");
    }

    #[test]
    fn a_german_cancellation_names_the_invoice_it_cancels() {
        let doc = cancellation_of(&sample(InvoiceLanguage::De, 3));
        let pdf = PdfFile::new("storno", &render(&doc).expect("render"));
        qpdf_check(&pdf);
        let text = text_of(&pdf);
        assert_contains(
            &text,
            &[
                "Stornorechnung",
                "Storno zu Rechnung RE-2026-000042",
                "Grund: Rechnungsempfänger falsch angegeben",
                "RE-2026-000043",
                "USt-IdNr.: DE123456789",
                "Steuernummer: 27/123/45678",
                "-1.270,00 EUR",
                "-92,15 EUR",
                "-1.362,15 EUR",
                "Offener Betrag",
                "05.12.2026",
                "Seite 1 von 1",
            ],
        );
    }

    #[test]
    fn a_german_invoice_names_the_payment_methods_in_german() {
        let pdf = PdfFile::new("de", &render(&sample(InvoiceLanguage::De, 3)).expect("render"));
        qpdf_check(&pdf);
        let text = text_of(&pdf);
        assert_contains(
            &text,
            &["Rechnung", "Karte", "Überweisung", "1.362,15 EUR", "562,15 EUR", "Leistungszeitraum"],
        );
    }

    #[test]
    fn amounts_print_with_their_currencys_decimals() {
        for (currency, expected) in [("JPY", ["JPY 1,234,567", "JPY 86,420"]), ("BHD", ["BHD 1,234.567", "BHD 86.420"])]
        {
            let mut doc = sample(InvoiceLanguage::En, 1);
            doc.currency = currency.into();
            doc.lines = vec![line(0, "Suite", 1, 1_234_567, 700)];
            doc.vat_totals =
                vec![InvoiceVatTotal { vat_rate_basis_points: 700, net: 1_234_567, vat: 86_420, gross: 1_320_987 }];
            (doc.total_net, doc.total_vat, doc.total_gross) = (1_234_567, 86_420, 1_320_987);
            let pdf = PdfFile::new(currency, &render(&doc).expect("render"));
            qpdf_check(&pdf);
            assert_contains(&text_of(&pdf), &expected);
        }
        let german = Locale { language: InvoiceLanguage::De };
        assert_eq!(german.money(1_234_567, "BHD"), "1.234,567 BHD");
        assert_eq!(german.money(-1_234_567, "JPY"), "-1.234.567 JPY");
    }

    #[test]
    fn rates_read_as_percentages() {
        let (en, de) = (Locale { language: InvoiceLanguage::En }, Locale { language: InvoiceLanguage::De });
        assert_eq!(en.rate(0), "0\u{2002}%");
        assert_eq!(en.rate(700), "7\u{2002}%");
        assert_eq!(en.rate(550), "5.5\u{2002}%");
        assert_eq!(de.rate(550), "5,5\u{2002}%");
        assert_eq!(de.rate(1_925), "19,25\u{2002}%");
        assert_eq!(en.date(day(31)), "31 Dec 2026");
        assert_eq!(de.date(day(31)), "31.12.2026");
    }

    #[test]
    fn a_long_description_wraps_and_is_cut_with_an_ellipsis() {
        let setter = Typesetter { typefaces: typefaces().expect("typefaces") };
        let long = "Conference package with coffee breaks, lunch buffet, projector and flip chart ".repeat(6);
        let lines = setter.wrap(CELL, &long, 150.0, 3);
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.width(CELL.size) <= 150.0), "a line overflows");
        assert!(lines[2].text.ends_with('…'), "the cut line ends with an ellipsis: {:?}", lines[2].text);
        let word = "x".repeat(400);
        let broken = setter.wrap(CELL, &word, 150.0, 3);
        assert!(broken.iter().all(|l| l.width(CELL.size) <= 150.0), "a broken word overflows");
        assert_eq!(setter.wrap(CELL, "Parking", 150.0, 3).len(), 1);
        let huge = "y".repeat(200_000);
        let started = std::time::Instant::now();
        let cut = setter.wrap(CELL, &huge, 150.0, 3);
        assert!(cut.len() == 3 && cut[2].text.ends_with('…'), "a huge word is cut after three lines");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "a huge description is set only as far as shown"
        );
        assert_eq!(setter.shape(Weight::Regular, "a\nb").text, "a b", "a line break in a name is a space");
    }

    /// `documents` makes files from records: it reads `model` and `domain::money`, nothing else of the crate.
    #[test]
    fn documents_import_only_the_records_and_money() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/documents");
        for entry in std::fs::read_dir(&dir).expect("read src/documents") {
            let path = entry.expect("an entry").path();
            let source = std::fs::read_to_string(&path).expect("read a source file");
            let needle = ["crate", "::"].concat();
            for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (at, _) in line.match_indices(&needle) {
                    let rest = &line[at + needle.len()..];
                    assert!(
                        rest.starts_with("model") || rest.starts_with("domain::money"),
                        "{} names more than the records and money: {}",
                        path.display(),
                        line.trim()
                    );
                }
            }
        }
    }

    /// Writes sample invoices to look at (`cargo test -p frontdesk --lib write_sample_invoices -- --ignored`):
    /// English, German, a German cancellation and a long one, into `$CARGO_TARGET_DIR/invoice-samples` or the
    /// temporary directory.
    #[test]
    #[ignore]
    fn write_sample_invoices() {
        let dir =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(std::env::temp_dir, PathBuf::from).join("invoice-samples");
        std::fs::create_dir_all(&dir).expect("make the folder");
        let german = sample(InvoiceLanguage::De, 5);
        for (name, doc) in [
            ("en", sample(InvoiceLanguage::En, 5)),
            ("de", german.clone()),
            ("storno", cancellation_of(&german)),
            ("long", sample(InvoiceLanguage::En, 120)),
        ] {
            let path = dir.join(format!("{name}.pdf"));
            std::fs::write(&path, render(&doc).expect("render")).expect("write");
            eprintln!("{}", path.display());
        }
    }
}
