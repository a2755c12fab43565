-- Identifiers, codes, calendar dates and instants of reservations compare as bytes (collation "C"), as SQLite compares
-- all text. They are ASCII values whose byte order is their meaning (dates and instants are stored fixed-width), so:
-- * both engines order them identically whatever the database's default collation (under en_US, for one, hyphens
--   in ids are ignored at first and a list sorted by id would differ from SQLite's);
-- * every comparison in the stay-window indexes is a memcmp instead of a locale-aware strcoll: a reservation list
--   page with its total costs PostgreSQL a third less CPU at a million reservations (docs/conventions.md,
--   "Text order").
-- Names, notes and other text people write keep the database's collation. The column type stays TEXT, so the table
-- is not rewritten; its indexes are rebuilt.
ALTER TABLE reservations
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN organization_id TYPE TEXT COLLATE "C",
    ALTER COLUMN hotel_id TYPE TEXT COLLATE "C",
    ALTER COLUMN guest_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C",
    ALTER COLUMN check_in_date TYPE TEXT COLLATE "C",
    ALTER COLUMN check_out_date TYPE TEXT COLLATE "C",
    ALTER COLUMN start_time TYPE TEXT COLLATE "C",
    ALTER COLUMN end_time TYPE TEXT COLLATE "C",
    ALTER COLUMN currency TYPE TEXT COLLATE "C",
    ALTER COLUMN source TYPE TEXT COLLATE "C",
    ALTER COLUMN created_at TYPE TEXT COLLATE "C",
    ALTER COLUMN updated_at TYPE TEXT COLLATE "C";

-- The trigger that notes availability changes reads four of these columns: it is recreated as 0008 made it.
DROP TRIGGER reservation_rooms_changed ON reservation_rooms;
ALTER TABLE reservation_rooms
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN reservation_id TYPE TEXT COLLATE "C",
    ALTER COLUMN hotel_id TYPE TEXT COLLATE "C",
    ALTER COLUMN room_type_id TYPE TEXT COLLATE "C",
    ALTER COLUMN rate_plan_id TYPE TEXT COLLATE "C",
    ALTER COLUMN room_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C",
    ALTER COLUMN check_in_date TYPE TEXT COLLATE "C",
    ALTER COLUMN check_out_date TYPE TEXT COLLATE "C";
CREATE TRIGGER reservation_rooms_changed AFTER UPDATE ON reservation_rooms FOR EACH ROW
    WHEN ((OLD.holds_inventory = 1 OR NEW.holds_inventory = 1)
        AND (OLD.holds_inventory IS DISTINCT FROM NEW.holds_inventory
            OR OLD.check_in_date IS DISTINCT FROM NEW.check_in_date
            OR OLD.check_out_date IS DISTINCT FROM NEW.check_out_date
            OR OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
            OR OLD.rate_plan_id IS DISTINCT FROM NEW.rate_plan_id))
    EXECUTE FUNCTION hotel_row_changed();

ALTER TABLE folios
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN reservation_id TYPE TEXT COLLATE "C",
    ALTER COLUMN currency TYPE TEXT COLLATE "C",
    ALTER COLUMN created_at TYPE TEXT COLLATE "C";

ALTER TABLE folio_charges
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN folio_id TYPE TEXT COLLATE "C",
    ALTER COLUMN date TYPE TEXT COLLATE "C",
    ALTER COLUMN currency TYPE TEXT COLLATE "C";
