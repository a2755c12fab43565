-- The assistant connector's OAuth 2.1 authorization server (see src/domain/oauth.rs). Every secret (sign-in
-- tickets, authorization codes, access and refresh tokens) is stored only as its SHA-256 digest.

-- Clients registered dynamically (RFC 7591). Public clients only: no client secret.
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    -- JSON array of the exact redirect URIs.
    redirect_uris TEXT NOT NULL,
    created_at    TEXT NOT NULL
);

-- One authorization in progress or done: created when the operator signs in (ticket), given a code on consent,
-- the code spent at the token endpoint. Its id is the family of every token issued from it.
CREATE TABLE oauth_grants (
    id              TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    operator_id     TEXT NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    redirect_uri    TEXT NOT NULL,
    code_challenge  TEXT NOT NULL,
    state           TEXT,
    scope           TEXT NOT NULL,
    resource        TEXT NOT NULL,
    ticket_hash     TEXT NOT NULL UNIQUE,
    ticket_expires_at TEXT NOT NULL,
    ticket_used_at  TEXT,
    code_hash       TEXT UNIQUE,
    code_expires_at TEXT,
    code_used_at    TEXT,
    created_at      TEXT NOT NULL
);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
-- Old authorizations are purged by age.
CREATE INDEX oauth_grants_created ON oauth_grants (created_at);

-- Access and refresh tokens. A refresh token is spent when used (rotation); presenting a spent one revokes its
-- whole family.
CREATE TABLE oauth_tokens (
    id              TEXT PRIMARY KEY,
    token_hash      TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    family_id       TEXT NOT NULL,
    client_id       TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    operator_id     TEXT NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    scope           TEXT NOT NULL,
    resource        TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    used_at         TEXT,
    revoked_at      TEXT
);
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
