-- Guests, reservations with their rooms, folios and charges.
CREATE TABLE guests (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id         TEXT REFERENCES hotels (id),
    first_name       TEXT NOT NULL,
    last_name        TEXT NOT NULL,
    email            TEXT,
    email_normalized TEXT,
    phone            TEXT,
    country          TEXT,
    language         TEXT,
    notes            TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX guests_organization ON guests (organization_id, id);
CREATE INDEX guests_email ON guests (organization_id, email_normalized);
CREATE INDEX guests_hotel ON guests (organization_id, hotel_id, id);

CREATE TABLE reservations (
    id                TEXT PRIMARY KEY,
    organization_id   TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id          TEXT NOT NULL REFERENCES hotels (id),
    guest_id          TEXT REFERENCES guests (id),
    status            TEXT NOT NULL,
    check_in_date     TEXT NOT NULL,
    check_out_date    TEXT NOT NULL,
    nights            BIGINT NOT NULL,
    start_time        TEXT NOT NULL,
    end_time          TEXT NOT NULL,
    adults            BIGINT NOT NULL,
    children          BIGINT NOT NULL,
    infants           BIGINT NOT NULL,
    total_price       BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    source            TEXT NOT NULL,
    channel_reference TEXT,
    notes             TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
-- The stay-window list: a hotel's reservations in (check-in date, id) order, the order the list answers, so a page
-- stops after its last row; the check-out date is in the index so the
-- window filter is decided without visiting the table.
CREATE INDEX reservations_hotel_stay ON reservations (organization_id, hotel_id, check_in_date, id, check_out_date);
-- The longest stay of a hotel bounds how far before a window a stay overlapping it can start.
CREATE INDEX reservations_hotel_nights ON reservations (hotel_id, nights);
CREATE INDEX reservations_organization_nights ON reservations (organization_id, nights);
CREATE INDEX reservations_organization ON reservations (organization_id, check_in_date);
CREATE INDEX reservations_guest ON reservations (guest_id);

CREATE TABLE reservation_rooms (
    id              TEXT PRIMARY KEY,
    reservation_id  TEXT NOT NULL REFERENCES reservations (id) ON DELETE CASCADE,
    hotel_id        TEXT NOT NULL REFERENCES hotels (id),
    room_type_id    TEXT NOT NULL REFERENCES room_types (id),
    rate_plan_id    TEXT REFERENCES rate_plans (id),
    room_id         TEXT REFERENCES rooms (id),
    status          TEXT NOT NULL,
    adults          BIGINT NOT NULL,
    children        BIGINT NOT NULL,
    infants         BIGINT NOT NULL,
    price           BIGINT NOT NULL,
    check_in_date   TEXT NOT NULL,
    check_out_date  TEXT NOT NULL,
    -- 1 while the room takes inventory: room CONFIRMED and reservation CONFIRMED or CHECKED_IN.
    holds_inventory BIGINT NOT NULL,
    position        BIGINT NOT NULL
);
CREATE INDEX reservation_rooms_reservation ON reservation_rooms (reservation_id, position);
CREATE INDEX reservation_rooms_inventory ON reservation_rooms (room_type_id, holds_inventory, check_in_date, check_out_date);
CREATE INDEX reservation_rooms_room ON reservation_rooms (room_id, holds_inventory, check_in_date);
CREATE INDEX reservation_rooms_rate_plan ON reservation_rooms (rate_plan_id);

CREATE TABLE folios (
    id             TEXT PRIMARY KEY,
    reservation_id TEXT NOT NULL UNIQUE REFERENCES reservations (id) ON DELETE CASCADE,
    currency       TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE TABLE folio_charges (
    id          TEXT PRIMARY KEY,
    folio_id    TEXT NOT NULL REFERENCES folios (id) ON DELETE CASCADE,
    date        TEXT NOT NULL,
    description TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    currency    TEXT NOT NULL,
    position    BIGINT NOT NULL
);
CREATE INDEX folio_charges_folio ON folio_charges (folio_id, position);
