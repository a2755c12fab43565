-- The audit log (docs/audit-log.md), and operators' roles (at the end; docs/roles.md).
--
-- The audit log: one entry per record a committed change wrote, written in the same transaction by the one door
-- for writes (`domain::change`). It names records, hotels and actors without foreign keys: an entry is kept for its
-- retention whatever becomes of what it names.
--
-- Append-only: an entry is never changed, and is deleted only once its `keep_until` has passed (the pruning job).
-- The triggers below refuse anything else, whoever connects.
CREATE TABLE audit_log (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    hotel_id        TEXT,
    change_id       TEXT NOT NULL,
    at              TEXT NOT NULL,
    keep_until      TEXT NOT NULL,
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

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be changed');
END;

CREATE TRIGGER audit_log_no_early_delete BEFORE DELETE ON audit_log
WHEN old.keep_until > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be deleted before its retention ends');
END;

-- Roles (docs/roles.md): each operator has one role in their organization, and may be limited to some of its
-- hotels (`hotel_ids`, a JSON array of ids; NULL: every hotel). Operators made before roles are owners: they could
-- do everything, and keep that.
ALTER TABLE operators ADD COLUMN role TEXT NOT NULL DEFAULT 'OWNER';
ALTER TABLE operators ADD COLUMN hotel_ids TEXT;
