-- Room types, rooms, rate plans and the per-day ARI record (price, inventory, restrictions).
CREATE TABLE room_types (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT NOT NULL REFERENCES hotels (id),
    name            TEXT NOT NULL,
    description     TEXT,
    max_occupancy   BIGINT NOT NULL,
    max_adults      BIGINT NOT NULL,
    max_children    BIGINT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX room_types_hotel ON room_types (organization_id, hotel_id, id);

CREATE TABLE rooms (
    id                  TEXT PRIMARY KEY,
    organization_id     TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id            TEXT NOT NULL REFERENCES hotels (id),
    room_type_id        TEXT NOT NULL REFERENCES room_types (id),
    name                TEXT NOT NULL,
    floor               BIGINT,
    housekeeping_status TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (hotel_id, name)
);
CREATE INDEX rooms_hotel ON rooms (organization_id, hotel_id, id);
CREATE INDEX rooms_room_type ON rooms (room_type_id);

CREATE TABLE rate_plans (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT NOT NULL REFERENCES hotels (id),
    room_type_id    TEXT REFERENCES room_types (id),
    name            TEXT NOT NULL,
    code            TEXT,
    currency        TEXT NOT NULL,
    active          BIGINT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (hotel_id, code)
);
CREATE INDEX rate_plans_hotel ON rate_plans (organization_id, hotel_id, id);
CREATE INDEX rate_plans_room_type ON rate_plans (room_type_id);

-- One row per (rate plan, night). The primary key serves every read: one plan over a date range.
CREATE TABLE daily_rates (
    rate_plan_id        TEXT NOT NULL REFERENCES rate_plans (id) ON DELETE CASCADE,
    date                TEXT NOT NULL,
    price               BIGINT NOT NULL,
    availability        BIGINT,
    stop_sell           BIGINT NOT NULL,
    closed_to_arrival   BIGINT NOT NULL,
    closed_to_departure BIGINT NOT NULL,
    min_stay            BIGINT,
    max_stay            BIGINT,
    updated_at          TEXT NOT NULL,
    PRIMARY KEY (rate_plan_id, date)
);
