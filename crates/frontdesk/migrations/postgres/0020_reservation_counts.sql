-- Exact list totals without counting (docs/storage.md, "The list's total"): how many reservations each
-- (organization, hotel, status) has, so that `GET /api/reservations` answers its `total` from a few rows instead of
-- counting a hotel's reservations on every page.
--
-- Writers append +1/-1 changes (`reservation_count_changes`) instead of updating the counter row: an update would
-- make every booking of a hotel wait for the previous one's commit, and a status move touches two counters, which
-- two moves in opposite directions could lock in opposite orders (a deadlock). Appending locks nothing another
-- writer wants. The service folds the changes into `reservation_counts` in the background
-- (`store::reservation_counts::fold`); a read adds the counter and the changes not folded yet.
CREATE TABLE reservation_counts (
    organization_id TEXT NOT NULL,
    hotel_id        TEXT NOT NULL,
    status          TEXT NOT NULL,
    n               BIGINT NOT NULL,
    PRIMARY KEY (organization_id, hotel_id, status)
);

CREATE TABLE reservation_count_changes (
    organization_id TEXT NOT NULL,
    hotel_id        TEXT NOT NULL,
    status          TEXT NOT NULL,
    delta           BIGINT NOT NULL
);
CREATE INDEX reservation_count_changes_key ON reservation_count_changes (organization_id, hotel_id, status);

-- Triggers, as the availability version's (0008), so that no write path, present or future, can forget the count,
-- and so that deletes cascaded from an organization count too.
CREATE FUNCTION reservation_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO reservation_count_changes VALUES (OLD.organization_id, OLD.hotel_id, OLD.status, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO reservation_count_changes VALUES (NEW.organization_id, NEW.hotel_id, NEW.status, 1);
    END IF;
    RETURN NULL;
END
$$;

-- The triggers first: creating them locks out writers until this migration commits, so the count below misses
-- no reservation written meanwhile.
CREATE TRIGGER reservations_counted AFTER INSERT OR DELETE ON reservations
    FOR EACH ROW EXECUTE FUNCTION reservation_counted();
CREATE TRIGGER reservations_recounted AFTER UPDATE OF organization_id, hotel_id, status ON reservations
    FOR EACH ROW
    WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.hotel_id IS DISTINCT FROM NEW.hotel_id
          OR OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION reservation_counted();

INSERT INTO reservation_counts (organization_id, hotel_id, status, n)
    SELECT organization_id, hotel_id, status, COUNT(*) FROM reservations GROUP BY organization_id, hotel_id, status;
