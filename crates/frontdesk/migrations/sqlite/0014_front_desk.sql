-- The front desk's rules (docs/front-desk.md).
--
-- A short reference for every reservation, unique in its organization: what a guest reads out on the phone and the
-- desk types into its search. Rows written before this migration get theirs from the service when it starts
-- (store::maintenance::backfill), as SQL alone cannot draw unique random codes; until then the column is NULL, which
-- the unique index allows.
ALTER TABLE reservations ADD COLUMN reference TEXT;
CREATE UNIQUE INDEX reservations_reference ON reservations (organization_id, reference);

-- A guest's phone number as its digits in reverse order, so that a search for the end of a number ("912 345 678"
-- finds "+351 912 345 678") is a prefix range of an index. Filled like the references for older rows.
ALTER TABLE guests ADD COLUMN phone_digits_reversed TEXT;
CREATE INDEX guests_phone ON guests (organization_id, phone_digits_reversed);

-- A stay's check-out: when it happened (a check-out can be undone the same day) and, for an early departure, the
-- departure date and instant that were booked, so that an undo restores them. Removed with its reservation.
CREATE TABLE check_outs (
    reservation_id        TEXT PRIMARY KEY REFERENCES reservations (id) ON DELETE CASCADE,
    checked_out_at        TEXT NOT NULL,
    booked_check_out_date TEXT,
    booked_end_time       TEXT
);

-- Who last changed a room's housekeeping status and when (shown on the housekeeping page), and every change kept.
ALTER TABLE rooms ADD COLUMN housekeeping_changed_at TEXT;
ALTER TABLE rooms ADD COLUMN housekeeping_changed_by TEXT;
CREATE TABLE room_status_changes (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    room_id         TEXT NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
    status          TEXT NOT NULL,
    changed_at      TEXT NOT NULL,
    changed_by      TEXT NOT NULL
);
CREATE INDEX room_status_changes_room ON room_status_changes (room_id, changed_at);
