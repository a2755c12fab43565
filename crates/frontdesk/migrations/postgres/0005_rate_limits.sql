-- A per-key rate limit (requests per minute); NULL: the service default.
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute BIGINT;
