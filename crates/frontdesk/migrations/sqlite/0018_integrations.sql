-- Integrations in the dashboard (issue 30).

-- Operator access tokens are of two kinds: `session` (issued by signing in, for the dashboard's cookie or
-- POST /api/auth/login; they end after a while unused) and `token` (named by an operator in the dashboard, or made
-- by `admin create-token`, for scripts and back-office tools; they end only when they expire or are revoked).
-- Existing rows keep working: a token with an idle limit was issued by signing in, one without by the command line.
-- `user_agent` is the browser's own description of itself when a session signed in (shown to tell sessions apart).
ALTER TABLE access_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'session';
ALTER TABLE access_tokens ADD COLUMN name TEXT;
ALTER TABLE access_tokens ADD COLUMN user_agent TEXT;
UPDATE access_tokens SET kind = 'token', name = 'Command line' WHERE idle_timeout_secs IS NULL;

-- The assistant connector's tokens: when the operator allowed the connection the token descends from (kept through
-- every refresh, so the dashboard can say since when an assistant is connected), and the last use of an access
-- token at /mcp (recorded to the minute). Existing tokens count as allowed when they were issued.
ALTER TABLE oauth_tokens ADD COLUMN granted_at TEXT;
ALTER TABLE oauth_tokens ADD COLUMN last_used_at TEXT;
UPDATE oauth_tokens SET granted_at = created_at;
CREATE INDEX oauth_tokens_organization ON oauth_tokens (organization_id, client_id);
