-- Invoices (docs/invoices.md). A guest gains a postal address, so that the guest can be an invoice's recipient.
ALTER TABLE guests ADD COLUMN street TEXT;
ALTER TABLE guests ADD COLUMN postal_code TEXT;
ALTER TABLE guests ADD COLUMN city TEXT;

-- An issued invoice: its document as issued (`document`, JSON, never changed), and beside it what the lists,
-- the export and the rules read without opening the document. It names its folio and reservation without a foreign
-- key: an invoice is kept for ten years whatever becomes of the stay. Numbers are unique per hotel (the issuer).
CREATE TABLE invoices (
    id                      TEXT PRIMARY KEY,
    organization_id         TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id                TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    folio_id                TEXT NOT NULL,
    reservation_id          TEXT NOT NULL,
    number                  TEXT NOT NULL,
    kind                    TEXT NOT NULL,
    issue_date              TEXT NOT NULL,
    currency                TEXT NOT NULL,
    total_gross             BIGINT NOT NULL,
    paid                    BIGINT NOT NULL,
    recipient_name          TEXT NOT NULL,
    cancels_invoice_id      TEXT,
    cancelled_by_invoice_id TEXT,
    document                TEXT NOT NULL,
    issued_by               TEXT NOT NULL,
    created_at              TEXT NOT NULL
);
CREATE UNIQUE INDEX invoices_number ON invoices (hotel_id, number);
CREATE INDEX invoices_by_date ON invoices (organization_id, issue_date, id);
CREATE INDEX invoices_folio ON invoices (folio_id);

-- The last number taken from each of a hotel's series (a pattern with its year filled in: `RE-2026-{n:06}`).
-- The number is taken by incrementing this row in the transaction that issues the invoice, so a rolled-back issue
-- gives its number back and two issues of one hotel wait for each other: gap-free and unique.
CREATE TABLE invoice_counters (
    hotel_id    TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    series      TEXT NOT NULL,
    last_number BIGINT NOT NULL,
    PRIMARY KEY (hotel_id, series)
);

-- The invoice a folio line is on; `NULL`: not invoiced (or on an invoice since cancelled).
ALTER TABLE folio_lines ADD COLUMN invoice_id TEXT;

-- An e-mail that carries an invoice (kind `invoice_issued`): the invoice, attached as PDF when it is sent.
ALTER TABLE guest_messages ADD COLUMN invoice_id TEXT;
