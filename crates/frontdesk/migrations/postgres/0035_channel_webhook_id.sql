-- The id of the booking webhook registered in the channel manager for a connection (docs/channels.md), so that
-- registering it again updates that webhook instead of adding a second one that calls us twice. NULL: none made.
ALTER TABLE channel_connections ADD COLUMN webhook_id TEXT;
