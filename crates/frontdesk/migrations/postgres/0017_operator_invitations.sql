-- Operators invited from the dashboard (issue 30). The invited operator exists from the invitation on (the e-mail is
-- theirs) with a random password that nobody knows, until they open the link and choose their own. A link works
-- once and for seven days; only the SHA-256 of its token is stored. Choosing a password through it, or being given
-- one by another operator, deletes the operator's invitations; removing the operator deletes them too.
CREATE TABLE operator_invitations (
    id              TEXT PRIMARY KEY,
    operator_id     TEXT NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    token_hash      TEXT NOT NULL UNIQUE,
    invited_by      TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    expires_at      TEXT NOT NULL
);
CREATE INDEX operator_invitations_operator ON operator_invitations (operator_id);
CREATE INDEX operator_invitations_organization ON operator_invitations (organization_id);
