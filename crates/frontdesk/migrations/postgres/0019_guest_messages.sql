-- Guest messages (issue 31): the e-mails a hotel sends its guests, kept as rows so that a message is enqueued in
-- the same transaction as the change that causes it and survives restarts (a reminder is a row with a due time).
--
-- `status`: pending (waiting for `due_at`), sent, failed (permanently, or still refused after 24 hours),
-- cancelled (a reminder for a stay that no longer needs one), not_sent (no mail server configured when it was due).
-- `claimed_until`: a dispatcher's lease while it sends; a lease that ran out (its process died) is taken over.
CREATE TABLE guest_messages (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    hotel_id        TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    guest_id        TEXT REFERENCES guests (id) ON DELETE CASCADE,
    reservation_id  TEXT,
    -- A reminder's arrival date (YYYY-MM-DD): a stay gets one reminder per arrival date.
    for_check_in    TEXT,
    kind            TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    language        TEXT NOT NULL,
    status          TEXT NOT NULL,
    due_at          TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    claimed_until   TEXT,
    first_tried_at  TEXT,
    last_error      TEXT,
    subject         TEXT,
    sent_at         TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX guest_messages_due ON guest_messages (status, due_at);
CREATE INDEX guest_messages_guest ON guest_messages (guest_id, created_at);
CREATE INDEX guest_messages_reservation ON guest_messages (reservation_id, kind);

-- What a hotel's messages say besides the stay: how to reach the hotel, and when the reminder goes out.
CREATE TABLE hotel_message_settings (
    hotel_id             TEXT PRIMARY KEY REFERENCES hotels (id) ON DELETE CASCADE,
    contact_email        TEXT,
    contact_phone        TEXT,
    reminder_days_before BIGINT NOT NULL,
    reminder_hour        BIGINT NOT NULL,
    updated_at           TEXT NOT NULL
);

-- A hotel's own wording of a message, per kind and language; without one the shipped default is used.
CREATE TABLE message_templates (
    hotel_id   TEXT NOT NULL REFERENCES hotels (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    language   TEXT NOT NULL,
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (hotel_id, kind, language)
);
