-- Exact list totals without counting: see postgres/0020_reservation_counts.sql and docs/storage.md, "The list's
-- total". SQLite has one writer at a time, so appending changes is not needed to keep writers from waiting; it is
-- kept so that both engines read and fold the same tables with the same statements.
CREATE TABLE reservation_counts (
    organization_id TEXT NOT NULL,
    hotel_id        TEXT NOT NULL,
    status          TEXT NOT NULL,
    n               INTEGER NOT NULL,
    PRIMARY KEY (organization_id, hotel_id, status)
);

CREATE TABLE reservation_count_changes (
    organization_id TEXT NOT NULL,
    hotel_id        TEXT NOT NULL,
    status          TEXT NOT NULL,
    delta           INTEGER NOT NULL
);
CREATE INDEX reservation_count_changes_key ON reservation_count_changes (organization_id, hotel_id, status);

CREATE TRIGGER reservations_counted_insert AFTER INSERT ON reservations
BEGIN
    INSERT INTO reservation_count_changes VALUES (NEW.organization_id, NEW.hotel_id, NEW.status, 1);
END;

CREATE TRIGGER reservations_counted_delete AFTER DELETE ON reservations
BEGIN
    INSERT INTO reservation_count_changes VALUES (OLD.organization_id, OLD.hotel_id, OLD.status, -1);
END;

CREATE TRIGGER reservations_recounted AFTER UPDATE OF organization_id, hotel_id, status ON reservations
    WHEN OLD.organization_id IS NOT NEW.organization_id OR OLD.hotel_id IS NOT NEW.hotel_id
         OR OLD.status IS NOT NEW.status
BEGIN
    INSERT INTO reservation_count_changes VALUES (OLD.organization_id, OLD.hotel_id, OLD.status, -1);
    INSERT INTO reservation_count_changes VALUES (NEW.organization_id, NEW.hotel_id, NEW.status, 1);
END;

INSERT INTO reservation_counts (organization_id, hotel_id, status, n)
    SELECT organization_id, hotel_id, status, COUNT(*) FROM reservations GROUP BY organization_id, hotel_id, status;
