-- Channel bookings taken whatever, and what goes with them (docs/channels.md).

-- A reservation that needs a person's attention (docs/channels.md, "Bookings that are taken whatever"): a channel's
-- booking is sold already, so it is taken even for a night with no room free (overbooked) or for a room type or rate
-- plan not mapped (unmapped), and flagged here until someone at the desk marks it handled (who did is in the audit log).
CREATE TABLE reservation_attention (
    reservation_id  UUID PRIMARY KEY REFERENCES reservations (id) ON DELETE CASCADE,
    organization_id UUID NOT NULL,
    hotel_id        UUID NOT NULL,
    reasons         TEXT NOT NULL,
    detail          TEXT NOT NULL,
    raised_at       TIMESTAMPTZ NOT NULL,
    handled_at      TIMESTAMPTZ
);
CREATE INDEX reservation_attention_open ON reservation_attention (hotel_id, raised_at) WHERE handled_at IS NULL;

-- Whether the guest e-mails go out for channel bookings too (off: the channel sends its own).
ALTER TABLE hotel_message_settings ADD COLUMN channel_bookings BOOLEAN NOT NULL DEFAULT false;

-- A channel connection's nightly full sync (docs/channels.md): the hotel's local hour it runs at (NULL: never), and
-- the hotel's date it last ran on, so that it runs at most once a day whichever process sees the hour first.
ALTER TABLE channel_connections ADD COLUMN nightly_sync_hour BIGINT;
ALTER TABLE channel_connections ADD COLUMN nightly_synced_on DATE;
