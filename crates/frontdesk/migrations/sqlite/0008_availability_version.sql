-- A hotel's availability version: bumped, in the same transaction, by every change a public availability search
-- depends on, so that a process can keep a copy of the hotel's rates and inventory in memory and know when it is
-- out of date (see src/domain/availability/copies.rs). Triggers, not application code, so that no write path,
-- present or future, can forget it. Changes that do not alter a search (a room's cleaning status, a reservation's
-- notes, a requested stay that holds no room) leave it alone.
ALTER TABLE hotels ADD COLUMN availability_version BIGINT NOT NULL DEFAULT 0;

CREATE TRIGGER daily_rates_inserted AFTER INSERT ON daily_rates BEGIN
    UPDATE hotels SET availability_version = availability_version + 1
    WHERE id = (SELECT hotel_id FROM rate_plans WHERE id = NEW.rate_plan_id);
END;
CREATE TRIGGER daily_rates_updated AFTER UPDATE ON daily_rates BEGIN
    UPDATE hotels SET availability_version = availability_version + 1
    WHERE id = (SELECT hotel_id FROM rate_plans WHERE id = NEW.rate_plan_id);
END;
CREATE TRIGGER daily_rates_deleted AFTER DELETE ON daily_rates BEGIN
    UPDATE hotels SET availability_version = availability_version + 1
    WHERE id = (SELECT hotel_id FROM rate_plans WHERE id = OLD.rate_plan_id);
END;

CREATE TRIGGER rate_plans_inserted AFTER INSERT ON rate_plans BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER rate_plans_updated AFTER UPDATE ON rate_plans BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER rate_plans_deleted AFTER DELETE ON rate_plans BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = OLD.hotel_id;
END;

CREATE TRIGGER room_types_inserted AFTER INSERT ON room_types BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER room_types_updated AFTER UPDATE ON room_types BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER room_types_deleted AFTER DELETE ON room_types BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = OLD.hotel_id;
END;

-- Rooms count when they are added or removed, move to another type, or go out of order or back.
CREATE TRIGGER rooms_inserted AFTER INSERT ON rooms BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER rooms_updated AFTER UPDATE ON rooms
WHEN OLD.room_type_id IS NOT NEW.room_type_id
    OR (OLD.housekeeping_status = 'OUT_OF_ORDER') IS NOT (NEW.housekeeping_status = 'OUT_OF_ORDER')
BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER rooms_deleted AFTER DELETE ON rooms BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = OLD.hotel_id;
END;

-- Reservation rooms count when they hold inventory, or stop or start holding it, or move.
CREATE TRIGGER reservation_rooms_inserted AFTER INSERT ON reservation_rooms WHEN NEW.holds_inventory = 1 BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER reservation_rooms_updated AFTER UPDATE ON reservation_rooms
WHEN (OLD.holds_inventory = 1 OR NEW.holds_inventory = 1)
    AND (OLD.holds_inventory IS NOT NEW.holds_inventory
        OR OLD.check_in_date IS NOT NEW.check_in_date
        OR OLD.check_out_date IS NOT NEW.check_out_date
        OR OLD.room_type_id IS NOT NEW.room_type_id
        OR OLD.rate_plan_id IS NOT NEW.rate_plan_id)
BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = NEW.hotel_id;
END;
CREATE TRIGGER reservation_rooms_deleted AFTER DELETE ON reservation_rooms WHEN OLD.holds_inventory = 1 BEGIN
    UPDATE hotels SET availability_version = availability_version + 1 WHERE id = OLD.hotel_id;
END;
