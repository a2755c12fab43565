-- The audit log's newest entries (docs/audit-log.md, "Where an entry is written"). On SQLite a change writes its
-- entries into this table without a key or an index, and a job files them into `audit_log` in batches
-- (`store::audit_log::file_recent`). PostgreSQL's writers do not share one lock: here a change writes into
-- `audit_log` directly, and this table stays empty. It exists on both engines so that the log reads the same
-- everywhere (the view below) and the schemas stay alike (tests/it/schema.rs).
--
-- Append-only, like the log: an entry is never changed, and leaves this table only once it is in `audit_log`.
CREATE TABLE audit_log_recent (
    id              UUID NOT NULL,
    organization_id UUID NOT NULL,
    hotel_id        UUID,
    change_id       UUID NOT NULL,
    at              TIMESTAMPTZ NOT NULL,
    keep_until      TIMESTAMPTZ NOT NULL,
    actor_kind      TEXT NOT NULL,
    actor_id        TEXT,
    actor_name      TEXT,
    actor_role      TEXT,
    actor_address   TEXT,
    record_kind     TEXT NOT NULL,
    record_id       TEXT NOT NULL,
    action          TEXT NOT NULL,
    fields          TEXT NOT NULL,
    summary         TEXT
);

CREATE FUNCTION audit_log_recent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'the audit log is append-only: an entry cannot be changed';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM audit_log WHERE audit_log.id = OLD.id) THEN
        RAISE EXCEPTION 'the audit log is append-only: an entry leaves the newest entries only once it is filed';
    END IF;
    RETURN OLD;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_log_recent_append_only BEFORE UPDATE OR DELETE ON audit_log_recent
FOR EACH ROW EXECUTE FUNCTION audit_log_recent_append_only();

-- Every entry, filed or not: what the log's reads read.
CREATE VIEW audit_entries AS
SELECT id, organization_id, hotel_id, change_id, at, keep_until, actor_kind, actor_id, actor_name, actor_role,
       actor_address, record_kind, record_id, action, fields, summary
FROM audit_log
UNION ALL
SELECT id, organization_id, hotel_id, change_id, at, keep_until, actor_kind, actor_id, actor_name, actor_role,
       actor_address, record_kind, record_id, action, fields, summary
FROM audit_log_recent;
