-- A hotel's availability version: bumped, in the same transaction, by every change a public availability search
-- depends on, so that a process can keep a copy of the hotel's rates and inventory in memory and know when it is
-- out of date (see src/domain/availability/copies.rs). Triggers, not application code, so that no write path,
-- present or future, can forget it. Changes that do not alter a search (a room's cleaning status, a reservation's
-- notes, a requested stay that holds no room) leave it alone.
--
-- The triggers are deferred to commit: the hotel row is then the last lock a transaction takes, so it can never
-- complete a cycle with the room type, room and rate plan locks that writes take first (no new deadlocks), and it
-- is held only for the commit.
ALTER TABLE hotels ADD COLUMN availability_version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION bump_availability_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD;
    ELSE
        changed := NEW;
    END IF;
    IF TG_TABLE_NAME = 'daily_rates' THEN
        UPDATE hotels SET availability_version = availability_version + 1
        WHERE id = (SELECT hotel_id FROM rate_plans WHERE id = changed.rate_plan_id);
    ELSE
        UPDATE hotels SET availability_version = availability_version + 1 WHERE id = changed.hotel_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER daily_rates_changed AFTER INSERT OR UPDATE OR DELETE ON daily_rates
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_availability_version();
CREATE CONSTRAINT TRIGGER rate_plans_changed AFTER INSERT OR UPDATE OR DELETE ON rate_plans
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_availability_version();
CREATE CONSTRAINT TRIGGER room_types_changed AFTER INSERT OR UPDATE OR DELETE ON room_types
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_availability_version();

-- Rooms count when they are added or removed, move to another type, or go out of order or back.
CREATE CONSTRAINT TRIGGER rooms_added_or_removed AFTER INSERT OR DELETE ON rooms
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_availability_version();
CREATE CONSTRAINT TRIGGER rooms_changed AFTER UPDATE ON rooms
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
        OR (OLD.housekeeping_status = 'OUT_OF_ORDER') IS DISTINCT FROM (NEW.housekeeping_status = 'OUT_OF_ORDER'))
    EXECUTE FUNCTION bump_availability_version();

-- Reservation rooms count when they hold inventory, or stop or start holding it, or move.
CREATE CONSTRAINT TRIGGER reservation_rooms_added AFTER INSERT ON reservation_rooms
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.holds_inventory = 1)
    EXECUTE FUNCTION bump_availability_version();
CREATE CONSTRAINT TRIGGER reservation_rooms_changed AFTER UPDATE ON reservation_rooms
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN ((OLD.holds_inventory = 1 OR NEW.holds_inventory = 1)
        AND (OLD.holds_inventory IS DISTINCT FROM NEW.holds_inventory
            OR OLD.check_in_date IS DISTINCT FROM NEW.check_in_date
            OR OLD.check_out_date IS DISTINCT FROM NEW.check_out_date
            OR OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
            OR OLD.rate_plan_id IS DISTINCT FROM NEW.rate_plan_id))
    EXECUTE FUNCTION bump_availability_version();
CREATE CONSTRAINT TRIGGER reservation_rooms_removed AFTER DELETE ON reservation_rooms
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.holds_inventory = 1)
    EXECUTE FUNCTION bump_availability_version();
