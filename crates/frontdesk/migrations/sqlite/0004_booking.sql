-- Public booking: service-wide secrets (the offer signing key, shared by every process on this database) and the
-- idempotency keys of booking requests.
CREATE TABLE service_secrets (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE idempotency_keys (
    hotel_id       TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    key            TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    reservation_id TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (hotel_id, key)
);

CREATE INDEX reservation_rooms_plan_inventory ON reservation_rooms (rate_plan_id, holds_inventory, check_in_date);
