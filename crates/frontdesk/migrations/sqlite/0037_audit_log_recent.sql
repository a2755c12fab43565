-- The audit log's newest entries (docs/audit-log.md, "Where an entry is written"). On SQLite a change writes its
-- entries here, into a table without a key or an index: one page appended inside the one writer's lock, where the
-- log itself writes seven B-trees (docs/audit-log-measurements.md). A job files them into `audit_log` in batches
-- (`store::audit_log::file_recent`), where a batch writes each page once. PostgreSQL's writers do not share one
-- lock: there a change writes into `audit_log` directly, and this table stays empty.
--
-- Append-only, like the log: an entry is never changed, and leaves this table only once it is in `audit_log`.
CREATE TABLE audit_log_recent (
    id              TEXT NOT NULL,
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

CREATE TRIGGER audit_log_recent_no_update BEFORE UPDATE ON audit_log_recent
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: an entry cannot be changed');
END;

CREATE TRIGGER audit_log_recent_only_filed_leave BEFORE DELETE ON audit_log_recent
WHEN NOT EXISTS (SELECT 1 FROM audit_log WHERE audit_log.id = old.id)
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: an entry leaves the newest entries only once it is filed');
END;

-- Every entry, filed or not: what the log's reads read.
CREATE VIEW audit_entries AS
SELECT id, organization_id, hotel_id, change_id, at, keep_until, actor_kind, actor_id, actor_name, actor_role,
       actor_address, record_kind, record_id, action, fields, summary
FROM audit_log
UNION ALL
SELECT id, organization_id, hotel_id, change_id, at, keep_until, actor_kind, actor_id, actor_name, actor_role,
       actor_address, record_kind, record_id, action, fields, summary
FROM audit_log_recent;
