-- Step-up (docs/roles.md): when the operator of a session last gave their password. Signing in is the first time
-- (the session's created_at stands for it while this is empty); dangerous dashboard actions ask again after
-- --step-up-minutes.
ALTER TABLE access_tokens ADD COLUMN password_given_at TEXT;
