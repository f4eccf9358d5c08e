-- Up Migration

-- Some events are not made by a request: the worker disables a webhook endpoint that answered
-- 410 Gone or failed for days (integration.md §2). Such an event has no request and no API key.
ALTER TABLE events ALTER COLUMN request_id DROP NOT NULL, ALTER COLUMN api_key_id DROP NOT NULL;

-- Down Migration

UPDATE events SET request_id = '' WHERE request_id IS NULL;
UPDATE events SET api_key_id = '' WHERE api_key_id IS NULL;
ALTER TABLE events ALTER COLUMN request_id SET NOT NULL, ALTER COLUMN api_key_id SET NOT NULL;
