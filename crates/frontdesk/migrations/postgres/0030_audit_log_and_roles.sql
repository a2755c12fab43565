-- The audit log (docs/audit-log.md), and operators' roles (at the end; docs/roles.md).
--
-- The audit log: one entry per record a committed change wrote, written in the same transaction by the one door
-- for writes (`domain::change`). It names records, hotels and actors without foreign keys: an entry is kept for its
-- retention whatever becomes of what it names.
--
-- Append-only: an entry is never changed, and is deleted only once its `keep_until` has passed (the pruning job).
-- The trigger below refuses anything else, whoever connects.
CREATE TABLE audit_log (
    id              UUID PRIMARY KEY,
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
CREATE INDEX audit_log_by_record ON audit_log (organization_id, record_id, id);
CREATE INDEX audit_log_by_actor ON audit_log (organization_id, actor_id, id);
CREATE INDEX audit_log_by_hotel ON audit_log (organization_id, hotel_id, id);
CREATE INDEX audit_log_by_organization ON audit_log (organization_id, id);
CREATE INDEX audit_log_keep_until ON audit_log (keep_until);

CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'the audit log is append-only: an entry cannot be changed';
    END IF;
    IF OLD.keep_until > now() THEN
        RAISE EXCEPTION 'the audit log is append-only: an entry cannot be deleted before its retention ends';
    END IF;
    RETURN OLD;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

-- Roles (docs/roles.md): each operator has one role in their organization, and may be limited to some of its
-- hotels (`hotel_ids`, a JSON array of ids; NULL: every hotel). Operators made before roles are owners: they could
-- do everything, and keep that.
ALTER TABLE operators ADD COLUMN role TEXT NOT NULL DEFAULT 'OWNER';
ALTER TABLE operators ADD COLUMN hotel_ids TEXT;
