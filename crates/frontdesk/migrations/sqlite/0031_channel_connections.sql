-- Channel connections (docs/channels.md): a hotel connected to a channel manager (Channex), which Frontdesk keeps
-- in step with its availability, rates and restrictions.

-- One connection per hotel and channel. The channel's API key is sealed (XChaCha20-Poly1305) with the service's
-- sealing key, as webhook signing secrets are: it must be read back to call the channel, and it is never shown.
-- `state`: `active` (changes are sent) or `stopped` (the channel refused the key: nothing is sent, changes wait).
-- `paused_until`: after an error answer nothing is sent before then. `claimed_until`: a dispatcher is sending for
-- the connection until then (another process waits; after it, the claim is taken over).
CREATE TABLE channel_connections (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    channel         TEXT NOT NULL,
    base_url        TEXT NOT NULL,
    property_id     TEXT NOT NULL,
    api_key_sealed  TEXT NOT NULL,
    -- The secret the channel's webhook sends in a header (the digest only; NULL: no webhook is accepted).
    webhook_secret_digest TEXT,
    state           TEXT NOT NULL,
    state_reason    TEXT,
    paused_until    TEXT,
    claimed_until   TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE UNIQUE INDEX channel_connections_hotel ON channel_connections (hotel_id, channel);
CREATE INDEX channel_connections_organization ON channel_connections (organization_id, id);

-- Our room type ↔ the channel's room type.
CREATE TABLE channel_room_types (
    connection_id TEXT NOT NULL REFERENCES channel_connections (id) ON DELETE CASCADE,
    room_type_id  TEXT NOT NULL REFERENCES room_types (id) ON DELETE CASCADE,
    remote_id     TEXT NOT NULL,
    PRIMARY KEY (connection_id, room_type_id)
);

-- Our rate plan on one room type ↔ the channel's rate plan (a plan of every room type maps once per room type).
CREATE TABLE channel_rate_plans (
    connection_id TEXT NOT NULL REFERENCES channel_connections (id) ON DELETE CASCADE,
    rate_plan_id  TEXT NOT NULL REFERENCES rate_plans (id) ON DELETE CASCADE,
    room_type_id  TEXT NOT NULL REFERENCES room_types (id) ON DELETE CASCADE,
    remote_id     TEXT NOT NULL,
    PRIMARY KEY (connection_id, rate_plan_id, room_type_id)
);

-- What channels must be told again: a hotel's availability or rates changed over [date_from, date_to] (inclusive),
-- of one room type or rate plan (`subject_id`), or of all of them (NULL).
-- Written in the transaction of the write that changed it (domain/change.rs), deleted by the dispatcher only once
-- the channel accepted what it sent for it.
CREATE TABLE channel_changes (
    id         TEXT PRIMARY KEY,
    hotel_id   TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    subject_id TEXT,
    date_from  TEXT NOT NULL,
    date_to    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX channel_changes_hotel ON channel_changes (hotel_id, kind, id);

-- Each request sent to a channel and its answer, for the connection page and the rate limits (requests of a kind
-- in the last minute). `status`: the HTTP status, NULL when no answer came.
CREATE TABLE channel_requests (
    id            TEXT PRIMARY KEY,
    connection_id TEXT NOT NULL REFERENCES channel_connections (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    sent_at       TEXT NOT NULL,
    status        BIGINT,
    outcome       TEXT NOT NULL,
    task_id       TEXT,
    detail        TEXT NOT NULL,
    warnings      TEXT NOT NULL,
    value_count   BIGINT NOT NULL
);
CREATE INDEX channel_requests_connection ON channel_requests (connection_id, kind, sent_at);

-- Booking revisions taken from the channel, each applied once (keyed by the channel's revision id, in the
-- transaction that writes the reservation), and the reservation its booking became. `outcome`: `applied`, or
-- `needs_attention` (not applied: `detail` says why; tried again at the next poll). `acked_at`: when the channel was
-- told the revision is in (only after the commit).
CREATE TABLE channel_revisions (
    connection_id  TEXT NOT NULL REFERENCES channel_connections (id) ON DELETE CASCADE,
    revision_id    TEXT NOT NULL,
    booking_id     TEXT NOT NULL,
    status         TEXT NOT NULL,
    reservation_id TEXT,
    outcome        TEXT NOT NULL,
    detail         TEXT NOT NULL,
    recorded_at    TEXT NOT NULL,
    acked_at       TEXT,
    PRIMARY KEY (connection_id, revision_id)
);
CREATE INDEX channel_revisions_booking ON channel_revisions (connection_id, booking_id);
