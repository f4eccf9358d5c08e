-- Up Migration

-- A delivery's retry asked for through the API is a write (interface.md: dry run,
-- Idempotency-Key, the queue and the worker, one event). The worker's transaction counts the
-- request in `retries_requested`; the webhook side queues one send per request it has not yet
-- queued (`retries_queued`), so a retry committed by the write survives a worker that dies
-- before the send is queued, and a replayed request queues nothing more.
ALTER TABLE webhook_deliveries
  ADD COLUMN retries_requested integer NOT NULL DEFAULT 0,
  ADD COLUMN retries_queued integer NOT NULL DEFAULT 0;
CREATE INDEX webhook_deliveries_retry_idx ON webhook_deliveries (institution_id, id)
  WHERE retries_queued < retries_requested;

-- Down Migration

DROP INDEX webhook_deliveries_retry_idx;
ALTER TABLE webhook_deliveries DROP COLUMN retries_requested, DROP COLUMN retries_queued;
