-- Native types on PostgreSQL (issue 29, docs/storage.md): ids become `uuid`, calendar dates `date`, instants
-- `timestamptz` and flags `boolean`, converted in place. Until now every column was TEXT or BIGINT because one body
-- of SQL ran through sqlx's `Any` driver, which knows only the types both engines share; the store now reaches each
-- engine with its own driver and binds each value as the type its placeholder has (`store/conn.rs`), so the columns
-- can say what they hold. On a million reservations the list statement runs about twice as fast on these types, and
-- the reservations' main index is less than half the size.
--
-- Every stored id is a UUID drawn by the service (`store::new_id`), every date `YYYY-MM-DD`, every instant the
-- fixed-width RFC 3339 UTC form of `store::format_ts`, every flag 0 or 1, so each conversion below is a cast of what
-- is there; a value that is not (a row written by hand) stops the migration, which then changes nothing.
--
-- SQLite keeps its types: TEXT and INTEGER are what it compares natively.

-- Triggers whose definitions name a converted column (in WHEN or UPDATE OF) must go while the column changes; they
-- are made again below, comparing flags as booleans.
DROP TRIGGER reservation_rooms_added ON reservation_rooms;
DROP TRIGGER reservation_rooms_changed ON reservation_rooms;
DROP TRIGGER reservation_rooms_removed ON reservation_rooms;
DROP TRIGGER reservations_recounted ON reservations;
DROP TRIGGER rooms_changed ON rooms;

-- A foreign key holds only between columns of one type: every foreign key is dropped, and made again as it was
-- once both sides are converted.
CREATE TEMPORARY TABLE native_types_foreign_keys AS
    SELECT conrelid::regclass AS table_name, conname AS name, pg_get_constraintdef(oid) AS definition
    FROM pg_constraint
    WHERE contype = 'f' AND connamespace = current_schema()::regnamespace;

DO $$
DECLARE
    fk RECORD;
BEGIN
    FOR fk IN SELECT * FROM native_types_foreign_keys LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.table_name, fk.name);
    END LOOP;
END
$$;

ALTER TABLE access_tokens
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN expires_at TYPE timestamptz USING expires_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN last_used_at TYPE timestamptz USING last_used_at::timestamptz,
    ALTER COLUMN operator_id TYPE uuid USING operator_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN revoked_at TYPE timestamptz USING revoked_at::timestamptz;

ALTER TABLE api_keys
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN last_used_at TYPE timestamptz USING last_used_at::timestamptz,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid;

ALTER TABLE attempt_counts
    ALTER COLUMN expires_at TYPE timestamptz USING expires_at::timestamptz,
    ALTER COLUMN last_at TYPE timestamptz USING last_at::timestamptz;

ALTER TABLE availability_changes
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid;

ALTER TABLE check_outs
    ALTER COLUMN booked_check_out_date TYPE date USING booked_check_out_date::date,
    ALTER COLUMN booked_end_time TYPE timestamptz USING booked_end_time::timestamptz,
    ALTER COLUMN checked_out_at TYPE timestamptz USING checked_out_at::timestamptz,
    ALTER COLUMN reservation_id TYPE uuid USING reservation_id::uuid;

ALTER TABLE daily_rates
    ALTER COLUMN closed_to_arrival TYPE boolean USING closed_to_arrival <> 0,
    ALTER COLUMN closed_to_departure TYPE boolean USING closed_to_departure <> 0,
    ALTER COLUMN date TYPE date USING date::date,
    ALTER COLUMN rate_plan_id TYPE uuid USING rate_plan_id::uuid,
    ALTER COLUMN stop_sell TYPE boolean USING stop_sell <> 0,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE folio_charges
    ALTER COLUMN date TYPE date USING date::date,
    ALTER COLUMN folio_id TYPE uuid USING folio_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid;

ALTER TABLE folios
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN reservation_id TYPE uuid USING reservation_id::uuid;

ALTER TABLE guest_messages
    ALTER COLUMN claimed_until TYPE timestamptz USING claimed_until::timestamptz,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN due_at TYPE timestamptz USING due_at::timestamptz,
    ALTER COLUMN first_tried_at TYPE timestamptz USING first_tried_at::timestamptz,
    ALTER COLUMN for_check_in TYPE date USING for_check_in::date,
    ALTER COLUMN guest_id TYPE uuid USING guest_id::uuid,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN reservation_id TYPE uuid USING reservation_id::uuid,
    ALTER COLUMN sent_at TYPE timestamptz USING sent_at::timestamptz,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE guests
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE hotel_message_settings
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE hotels
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN public_booking TYPE boolean USING public_booking <> 0,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE idempotency_keys
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN result_id TYPE uuid USING result_id::uuid;

ALTER TABLE message_templates
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE oauth_clients
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN used_at TYPE timestamptz USING used_at::timestamptz;

ALTER TABLE oauth_grants
    ALTER COLUMN client_id TYPE uuid USING client_id::uuid,
    ALTER COLUMN code_expires_at TYPE timestamptz USING code_expires_at::timestamptz,
    ALTER COLUMN code_used_at TYPE timestamptz USING code_used_at::timestamptz,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN operator_id TYPE uuid USING operator_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN ticket_expires_at TYPE timestamptz USING ticket_expires_at::timestamptz,
    ALTER COLUMN ticket_used_at TYPE timestamptz USING ticket_used_at::timestamptz;

ALTER TABLE oauth_tokens
    ALTER COLUMN client_id TYPE uuid USING client_id::uuid,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN expires_at TYPE timestamptz USING expires_at::timestamptz,
    ALTER COLUMN family_id TYPE uuid USING family_id::uuid,
    ALTER COLUMN granted_at TYPE timestamptz USING granted_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN last_used_at TYPE timestamptz USING last_used_at::timestamptz,
    ALTER COLUMN operator_id TYPE uuid USING operator_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN revoked_at TYPE timestamptz USING revoked_at::timestamptz,
    ALTER COLUMN used_at TYPE timestamptz USING used_at::timestamptz;

ALTER TABLE operator_invitations
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN expires_at TYPE timestamptz USING expires_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN operator_id TYPE uuid USING operator_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid;

ALTER TABLE operators
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE organizations
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid;

ALTER TABLE outbox_events
    ALTER COLUMN claimed_until TYPE timestamptz USING claimed_until::timestamptz,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN dispatched_at TYPE timestamptz USING dispatched_at::timestamptz,
    ALTER COLUMN handed_out DROP DEFAULT,
    ALTER COLUMN handed_out TYPE boolean USING handed_out <> 0,
    ALTER COLUMN handed_out SET DEFAULT FALSE,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid;

ALTER TABLE rate_plans
    ALTER COLUMN active TYPE boolean USING active <> 0,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN room_type_id TYPE uuid USING room_type_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE reservation_count_changes
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid;

ALTER TABLE reservation_counts
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid;

ALTER TABLE reservation_rooms
    ALTER COLUMN check_in_date TYPE date USING check_in_date::date,
    ALTER COLUMN check_out_date TYPE date USING check_out_date::date,
    ALTER COLUMN holds_inventory TYPE boolean USING holds_inventory <> 0,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN rate_plan_id TYPE uuid USING rate_plan_id::uuid,
    ALTER COLUMN reservation_id TYPE uuid USING reservation_id::uuid,
    ALTER COLUMN room_id TYPE uuid USING room_id::uuid,
    ALTER COLUMN room_type_id TYPE uuid USING room_type_id::uuid;

ALTER TABLE reservations
    ALTER COLUMN check_in_date TYPE date USING check_in_date::date,
    ALTER COLUMN check_out_date TYPE date USING check_out_date::date,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN end_time TYPE timestamptz USING end_time::timestamptz,
    ALTER COLUMN guest_id TYPE uuid USING guest_id::uuid,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN start_time TYPE timestamptz USING start_time::timestamptz,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE room_status_changes
    ALTER COLUMN changed_at TYPE timestamptz USING changed_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN room_id TYPE uuid USING room_id::uuid;

ALTER TABLE room_types
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE rooms
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN housekeeping_changed_at TYPE timestamptz USING housekeeping_changed_at::timestamptz,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN room_type_id TYPE uuid USING room_type_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE service_secrets
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz;

ALTER TABLE webhook_deliveries
    ALTER COLUMN attempted_at TYPE timestamptz USING attempted_at::timestamptz,
    ALTER COLUMN event_id TYPE uuid USING event_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN subscription_id TYPE uuid USING subscription_id::uuid,
    ALTER COLUMN success TYPE boolean USING success <> 0;

ALTER TABLE webhook_queue
    ALTER COLUMN claimed_until TYPE timestamptz USING claimed_until::timestamptz,
    ALTER COLUMN event_id TYPE uuid USING event_id::uuid,
    ALTER COLUMN subscription_id TYPE uuid USING subscription_id::uuid;

ALTER TABLE webhook_subscriptions
    ALTER COLUMN active TYPE boolean USING active <> 0,
    ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
    ALTER COLUMN hotel_id TYPE uuid USING hotel_id::uuid,
    ALTER COLUMN id TYPE uuid USING id::uuid,
    ALTER COLUMN organization_id TYPE uuid USING organization_id::uuid,
    ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;

ALTER TABLE write_probes
    ALTER COLUMN written_at TYPE timestamptz USING written_at::timestamptz;


DO $$
DECLARE
    fk RECORD;
BEGIN
    FOR fk IN SELECT * FROM native_types_foreign_keys LOOP
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.table_name, fk.name, fk.definition);
    END LOOP;
END
$$;
DROP TABLE native_types_foreign_keys;

-- The availability note takes the hotel's id as it now is.
DROP FUNCTION note_availability_change(TEXT);
CREATE FUNCTION note_availability_change(hotel UUID) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    noted CONSTANT TEXT := 'frontdesk.availability_' || md5(hotel::text);
BEGIN
    IF hotel IS NOT NULL AND current_setting(noted, true) IS DISTINCT FROM '1' THEN
        PERFORM set_config(noted, '1', true);
        INSERT INTO availability_changes (hotel_id) VALUES (hotel);
    END IF;
END
$$;

CREATE TRIGGER reservation_rooms_added AFTER INSERT ON reservation_rooms FOR EACH ROW
    WHEN (NEW.holds_inventory)
    EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER reservation_rooms_changed AFTER UPDATE ON reservation_rooms FOR EACH ROW
    WHEN ((OLD.holds_inventory OR NEW.holds_inventory)
        AND (OLD.holds_inventory IS DISTINCT FROM NEW.holds_inventory
            OR OLD.check_in_date IS DISTINCT FROM NEW.check_in_date
            OR OLD.check_out_date IS DISTINCT FROM NEW.check_out_date
            OR OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
            OR OLD.rate_plan_id IS DISTINCT FROM NEW.rate_plan_id))
    EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER reservation_rooms_removed AFTER DELETE ON reservation_rooms FOR EACH ROW
    WHEN (OLD.holds_inventory)
    EXECUTE FUNCTION hotel_row_changed();
CREATE TRIGGER reservations_recounted AFTER UPDATE OF organization_id, hotel_id, status ON reservations
    FOR EACH ROW
    WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.hotel_id IS DISTINCT FROM NEW.hotel_id
          OR OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION reservation_counted();
CREATE TRIGGER rooms_changed AFTER UPDATE ON rooms FOR EACH ROW
    WHEN (OLD.room_type_id IS DISTINCT FROM NEW.room_type_id
        OR (OLD.housekeeping_status = 'OUT_OF_ORDER') IS DISTINCT FROM (NEW.housekeeping_status = 'OUT_OF_ORDER'))
    EXECUTE FUNCTION hotel_row_changed();

-- The tables were rewritten: fresh statistics for the planner.
ANALYZE;
