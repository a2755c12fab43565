-- Tenancy, identities and hotels. Portable column types only: TEXT and BIGINT (see src/store/mod.rs).
CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE operators (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email            TEXT NOT NULL,
    email_normalized TEXT NOT NULL UNIQUE,
    name             TEXT NOT NULL,
    password_hash    TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX operators_organization ON operators (organization_id);

CREATE TABLE access_tokens (
    id              TEXT PRIMARY KEY,
    operator_id     TEXT NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    token_hash      TEXT NOT NULL UNIQUE,
    created_at      TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    revoked_at      TEXT
);
CREATE INDEX access_tokens_operator ON access_tokens (operator_id);

CREATE TABLE hotels (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    timezone        TEXT NOT NULL,
    currency        TEXT NOT NULL,
    check_in_time   TEXT NOT NULL,
    check_out_time  TEXT NOT NULL,
    address_line1   TEXT,
    address_line2   TEXT,
    city            TEXT,
    postal_code     TEXT,
    region          TEXT,
    country         TEXT,
    public_booking  BIGINT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX hotels_organization ON hotels (organization_id, id);

CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT REFERENCES hotels (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    scopes          TEXT NOT NULL,
    secret_hash     TEXT NOT NULL UNIQUE,
    created_at      TEXT NOT NULL,
    last_used_at    TEXT
);
CREATE INDEX api_keys_organization ON api_keys (organization_id, id);

-- The webhook outbox: written in the same transaction as the change that caused the event.
CREATE TABLE outbox_events (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT,
    kind            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    dispatched_at   TEXT
);
CREATE INDEX outbox_events_pending ON outbox_events (dispatched_at, id);
