-- A hotel's availability version: bumped, in the same transaction, by every change a public availability search
-- depends on, so that a process can keep a copy of the hotel's rates and inventory in memory and know when it is
-- out of date (see src/domain/availability/copies.rs). Triggers, not application code, so that no write path,
-- present or future, can forget it. Changes that do not alter a search (a room's cleaning status, a reservation's
-- notes, a requested stay that holds no room) leave it alone.
ALTER TABLE hotels ADD COLUMN availability_version BIGINT NOT NULL DEFAULT 0;

-- How the bump is made, and why this way:
-- * The hotel row is updated once per transaction, at commit, by a deferred trigger. Once: a 500-night rate push
--   must not update it 500 times. At commit: the hotel row is then the last lock a transaction takes, so it can
--   never close a cycle with the room type, room, rate plan and daily-rate locks that writes take on the way (no
--   new deadlocks), and it is held only for the commit.
-- * Deferred triggers can only be row triggers, so the changes are first noted, once per hotel and transaction (a
--   transaction-local setting remembers it), as a row of `availability_changes`; its deferred trigger bumps the
--   hotel at commit and removes the note. Daily rates are noted by statement triggers (one call per statement,
--   however many nights it writes); the other tables change a row at a time.
CREATE UNLOGGED TABLE availability_changes (
    hotel_id       TEXT NOT NULL,
    transaction_id BIGINT NOT NULL DEFAULT txid_current()
);

CREATE FUNCTION note_availability_change(hotel TEXT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    noted CONSTANT TEXT := 'frontdesk.availability_' || md5(hotel);
BEGIN
    IF hotel IS NOT NULL AND current_setting(noted, true) IS DISTINCT FROM '1' THEN
        PERFORM set_config(noted, '1', true);
        INSERT INTO availability_changes (hotel_id) VALUES (hotel);
    END IF;
END
$$;

CREATE FUNCTION apply_availability_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
    DELETE FROM availability_changes WHERE transaction_id = NEW.transaction_id AND hotel_id = NEW.hotel_id;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER availability_changed AFTER INSERT ON availability_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION apply_availability_change();

CREATE FUNCTION daily_rates_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM note_availability_change(p.hotel_id)
    FROM rate_plans p WHERE p.id IN (SELECT DISTINCT rate_plan_id FROM changed_rates);
    RETURN NULL;
END
$$;

CREATE TRIGGER daily_rates_inserted AFTER INSERT ON daily_rates
    REFERENCING NEW TABLE AS changed_rates FOR EACH STATEMENT EXECUTE FUNCTION daily_rates_changed();
CREATE TRIGGER daily_rates_updated AFTER UPDATE ON daily_rates
    REFERENCING NEW TABLE AS changed_rates FOR EACH STATEMENT EXECUTE FUNCTION daily_rates_changed();
CREATE TRIGGER daily_rates_deleted AFTER DELETE ON daily_rates
    REFERENCING OLD TABLE AS changed_rates FOR EACH STATEMENT EXECUTE FUNCTION daily_rates_changed();

CREATE FUNCTION hotel_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM note_availability_change(OLD.hotel_id);
    ELSE
        PERFORM note_availability_change(NEW.hotel_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER rate_plans_changed AFTER INSERT OR UPDATE OR DELETE ON rate_plans
    FOR EACH ROW EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER room_types_changed AFTER INSERT OR UPDATE OR DELETE ON room_types
    FOR EACH ROW EXECUTE FUNCTION hotel_row_changed();

-- Rooms count when they are added or removed, move to another type, or go out of order or back.
CREATE TRIGGER rooms_added_or_removed AFTER INSERT OR DELETE ON rooms
    FOR EACH ROW EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER rooms_changed AFTER UPDATE ON rooms FOR EACH ROW
    WHEN (OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
        OR (OLD.housekeeping_status = 'OUT_OF_ORDER') IS DISTINCT FROM (NEW.housekeeping_status = 'OUT_OF_ORDER'))
    EXECUTE FUNCTION hotel_row_changed();

-- Reservation rooms count when they hold inventory, or stop or start holding it, or move.
CREATE TRIGGER reservation_rooms_added AFTER INSERT ON reservation_rooms FOR EACH ROW
    WHEN (NEW.holds_inventory = 1)
    EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER reservation_rooms_changed AFTER UPDATE ON reservation_rooms FOR EACH ROW
    WHEN ((OLD.holds_inventory = 1 OR NEW.holds_inventory = 1)
        AND (OLD.holds_inventory IS DISTINCT FROM NEW.holds_inventory
            OR OLD.check_in_date IS DISTINCT FROM NEW.check_in_date
            OR OLD.check_out_date IS DISTINCT FROM NEW.check_out_date
            OR OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
            OR OLD.rate_plan_id IS DISTINCT FROM NEW.rate_plan_id))
    EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER reservation_rooms_removed AFTER DELETE ON reservation_rooms FOR EACH ROW
    WHEN (OLD.holds_inventory = 1)
    EXECUTE FUNCTION hotel_row_changed();
