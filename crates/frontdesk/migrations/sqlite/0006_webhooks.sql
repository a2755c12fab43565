-- Webhook subscriptions, their delivery log, and a lease on outbox events so that several processes can share the
-- outbox and a crashed process's claims are taken over.
CREATE TABLE webhook_subscriptions (
    id                   TEXT PRIMARY KEY,
    organization_id      TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id             TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    url                  TEXT NOT NULL,
    -- Space-separated event kinds; empty: every kind.
    events               TEXT NOT NULL,
    active               BIGINT NOT NULL,
    -- The signing secret, sealed (XChaCha20-Poly1305) with the service's webhook secret key: it must be
    -- recoverable to sign, so it cannot be a one-way digest like API key secrets.
    secret_sealed        TEXT NOT NULL,
    consecutive_failures BIGINT NOT NULL,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE INDEX webhook_subscriptions_organization ON webhook_subscriptions (organization_id, id);

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    event           TEXT NOT NULL,
    attempted_at    TEXT NOT NULL,
    success         BIGINT NOT NULL,
    status_code     BIGINT,
    error           TEXT,
    duration_ms     BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, id);

-- An event is claimed by a dispatcher until this instant; after it (the process died mid-delivery) another
-- dispatcher takes it over. Delivered events are deleted.
ALTER TABLE outbox_events ADD COLUMN claimed_until TEXT;
CREATE INDEX outbox_events_claim ON outbox_events (claimed_until, id);
