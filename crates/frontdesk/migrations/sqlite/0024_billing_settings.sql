-- A hotel's tax and billing settings (docs/money.md): whether prices are entered with VAT, the VAT rate of each
-- category of charge, the city tax rule and the extras the desk charges from a list. One row per hotel, the
-- settings as one JSON document: they are read whole and written whole, never searched by SQL, and their shape
-- grows (the invoice issuer's details come next) without a migration each time. A hotel without a row has the
-- defaults `domain::finance::billing` states.
CREATE TABLE hotel_billing_settings (
    hotel_id   TEXT PRIMARY KEY REFERENCES hotels (id) ON DELETE CASCADE,
    settings   TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
