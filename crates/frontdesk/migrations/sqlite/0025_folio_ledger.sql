-- The folio becomes a ledger (docs/money.md): lines of four kinds (CHARGE, ALLOWANCE, PAYMENT, REFUND), each with
-- its service date, quantity, category, VAT rate and its gross, net and VAT amounts (positive; the kind gives the
-- sign in the balance), who made it and when, and when it was posted. Room nights and city tax are made by the
-- reservation's writes (`source` ROOM_NIGHT, CITY_TAX) and follow its changes until posted; a posted line never
-- changes. The room charges of `folio_charges` become lines of their own: unposted room nights at a VAT rate of 0
-- (none was set), made by the migration.
CREATE TABLE folio_lines (
    id               TEXT PRIMARY KEY,
    folio_id         TEXT NOT NULL REFERENCES folios (id) ON DELETE CASCADE,
    position         BIGINT NOT NULL,
    kind             TEXT NOT NULL,
    source           TEXT NOT NULL,
    service_date     TEXT NOT NULL,
    description      TEXT NOT NULL,
    quantity         BIGINT NOT NULL,
    category         TEXT,
    vat_rate_bp      BIGINT NOT NULL,
    gross            BIGINT NOT NULL,
    net              BIGINT NOT NULL,
    vat              BIGINT NOT NULL,
    currency         TEXT NOT NULL,
    corrects_line_id TEXT,
    method           TEXT,
    reference        TEXT,
    paid_at          TEXT,
    reason           TEXT,
    made_by          TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    posted_at        TEXT
);
CREATE INDEX folio_lines_folio ON folio_lines (folio_id, position);

INSERT INTO folio_lines (id, folio_id, position, kind, source, service_date, description, quantity, category,
                         vat_rate_bp, gross, net, vat, currency, made_by, created_at)
SELECT c.id, c.folio_id, c.position, 'CHARGE', 'ROOM_NIGHT', c.date, c.description, 1, 'ACCOMMODATION',
       0, c.amount, c.amount, 0, c.currency, 'job:migration', f.created_at
FROM folio_charges c JOIN folios f ON f.id = c.folio_id;

DROP TABLE folio_charges;

-- A check-out that left a balance open, with the reason given.
ALTER TABLE folios ADD COLUMN on_account_reason TEXT;
