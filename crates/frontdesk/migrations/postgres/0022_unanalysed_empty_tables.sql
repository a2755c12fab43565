-- Migration 0021 ends with ANALYZE, so that an upgraded database plans with statistics of its converted tables. On
-- a database with no records yet (a new install) that ANALYZE recorded every table as analysed and empty
-- (pg_class.reltuples = 0), and PostgreSQL plans such a table as if it would stay empty: a plan made while a table
-- is small, and kept (prepared statements, foreign-key triggers), reads it whole. Measured: deleting one outbox event
-- ran the cascade of webhook_queue_event_id_fkey as a sequential scan of webhook_queue, 62 pages per event, instead
-- of a look-up in webhook_queue_event (docs/storage.md, "What is left", item 2). A table never analysed
-- (reltuples = -1) is planned as at least ten pages, which picks its indexes, until autovacuum analyses it with rows
-- in it.
--
-- TRUNCATE returns a table to never analysed. This truncates the tables that ANALYZE recorded as empty and that are
-- still empty, each locked before it is looked at, so that no row written meanwhile by a running service goes with
-- them. A table that another table's foreign key names can only be truncated together with that table, so one
-- whose referencing tables are not all being truncated keeps its statistics. Tables with rows keep theirs.
DO $$
DECLARE
    analysed_empty text[];
    empty text[] := ARRAY[]::text[];
    name text;
    has_rows boolean;
    dropped boolean;
BEGIN
    SELECT array_agg(c.relname::text ORDER BY c.relname) INTO analysed_empty
    FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.reltuples = 0
        AND c.relname <> '_sqlx_migrations';
    IF analysed_empty IS NULL THEN
        RETURN;
    END IF;
    FOREACH name IN ARRAY analysed_empty LOOP
        EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', name);
    END LOOP;
    FOREACH name IN ARRAY analysed_empty LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I)', name) INTO has_rows;
        IF NOT has_rows THEN
            empty := empty || name;
        END IF;
    END LOOP;
    LOOP
        dropped := false;
        FOREACH name IN ARRAY empty LOOP
            IF EXISTS (
                SELECT 1 FROM pg_constraint k JOIN pg_class referencing ON referencing.oid = k.conrelid
                WHERE k.contype = 'f' AND k.confrelid = format('%I', name)::regclass
                    AND NOT (referencing.relname::text = ANY (empty))
            ) THEN
                empty := array_remove(empty, name);
                dropped := true;
            END IF;
        END LOOP;
        EXIT WHEN NOT dropped;
    END LOOP;
    IF cardinality(empty) > 0 THEN
        EXECUTE 'TRUNCATE ' || (SELECT string_agg(format('%I', t), ', ') FROM unnest(empty) AS t);
    END IF;
END
$$;
