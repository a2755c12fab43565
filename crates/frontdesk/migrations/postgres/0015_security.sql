-- Security (issue 26).

-- Idempotency keys live in namespaces: a key given to the booking page's form never answers an API call, and an
-- API caller's `Idempotency-Key` never opens a booking-page request. `scope` is what the namespace keys within
-- (a hotel for both booking namespaces); `result_id` is what the first request made. Keys of the booking page
-- (they began with `bp_`) move to its namespace, every other key to the API's `book-reservation`.
CREATE TABLE idempotency_keys_new (
    namespace       TEXT NOT NULL,
    scope           TEXT NOT NULL,
    key             TEXT NOT NULL,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    request_hash    TEXT NOT NULL,
    result_id       TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (namespace, scope, key)
);
INSERT INTO idempotency_keys_new (namespace, scope, key, organization_id, request_hash, result_id, created_at)
SELECT CASE WHEN substr(k.key, 1, 3) = 'bp_' THEN 'booking-page' ELSE 'book-reservation' END,
       k.hotel_id, k.key, h.organization_id, k.request_hash, k.reservation_id, k.created_at
FROM idempotency_keys k JOIN hotels h ON h.id = k.hotel_id;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_organization ON idempotency_keys (organization_id);

-- Counts of attempts shared by every process on this database: failed sign-ins (per account and address, per
-- address, per account) and public booking requests (per hotel and address, per hotel and e-mail). `bucket` is the
-- SHA-256 of what is counted, so no typed e-mail or address is stored. A count is stale from `expires_at` on: it
-- counts as zero, and the next count written deletes it.
CREATE TABLE attempt_counts (
    bucket       TEXT PRIMARY KEY,
    count        BIGINT NOT NULL,
    last_at      TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);
CREATE INDEX attempt_counts_expiry ON attempt_counts (expires_at);

-- Sessions end after a while unused: the last use (recorded to the minute) and, for tokens issued by signing in,
-- how long they may go unused (NULL: no idle limit, e.g. `admin create-token` for scripts).
ALTER TABLE access_tokens ADD COLUMN last_used_at TEXT;
ALTER TABLE access_tokens ADD COLUMN idle_timeout_secs BIGINT;

-- When an operator first signed in through a registered connector client: clients never used are removed a day
-- after they registered.
ALTER TABLE oauth_clients ADD COLUMN used_at TEXT;
CREATE INDEX oauth_clients_unused ON oauth_clients (used_at, created_at);
