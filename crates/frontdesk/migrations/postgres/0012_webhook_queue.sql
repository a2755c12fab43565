-- What each subscription still has to be sent: one row per (subscription, event), written when a dispatcher hands an
-- outbox event to the subscriptions that want it (in the transaction that marks the event handed out). A
-- subscription's lane claims its own rows, only as many as it has room for, with a lease (`claimed_until`); a claim
-- that runs out (its process died) is taken over. Sent rows are deleted, and an event goes when its last row does.
-- Keeping the backlog here rather than in a dispatcher's memory bounds what a process holds for a receiver that hangs.
CREATE TABLE webhook_queue (
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
    claimed_until   TEXT,
    PRIMARY KEY (subscription_id, event_id)
);
CREATE INDEX webhook_queue_event ON webhook_queue (event_id);

-- 1 once the event has been handed to its subscriptions (its rows are in webhook_queue). `claimed_until` of
-- outbox_events is no longer used: claims are per subscription, in webhook_queue.
ALTER TABLE outbox_events ADD COLUMN handed_out BIGINT NOT NULL DEFAULT 0;
CREATE INDEX outbox_events_new ON outbox_events (handed_out, id);
