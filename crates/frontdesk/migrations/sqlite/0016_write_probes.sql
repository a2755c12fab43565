-- One row that /readyz rewrites while writes have been failing for want of storage (disk full): when that write
-- commits, the database takes writes again (src/store/write_health.rs).
CREATE TABLE write_probes (
    id         BIGINT PRIMARY KEY,
    written_at TEXT NOT NULL
);
