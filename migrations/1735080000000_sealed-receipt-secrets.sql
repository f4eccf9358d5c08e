-- Up Migration

-- Secrets at rest (trust.md §4). The answer of a webhook endpoint's create or rotation, and of an
-- API key's create or roll, tells a secret, and its receipt must answer it again on a replay:
-- the receipt keeps those fields here, sealed with SECRETS_KEY (common/secrets.ts), and
-- `response_body` holds null in their place.
ALTER TABLE write_receipts ADD COLUMN sealed_fields text;

-- A migration has no key to seal with. The receipts that tell a secret in clear are marked
-- 'clear' here, once, so that the worker finds them by the index below without reading every
-- receipt, and seals them when it starts (resealStoredSecrets), as it does webhook_endpoints'
-- secrets still in clear; until then readers take both forms.
UPDATE write_receipts SET sealed_fields = 'clear'
WHERE expires_at > now() AND status_code IN (200, 201)
  AND ((response_body->>'object' = 'webhook_endpoint' AND response_body->>'secret' IS NOT NULL)
    OR (response_body->>'object' = 'api_key' AND response_body->>'key' IS NOT NULL));

-- The few receipts that hold a secret: what a worker reseals at start after a key rotation.
CREATE INDEX write_receipts_sealed_idx ON write_receipts (institution_id)
  WHERE sealed_fields IS NOT NULL;

-- Down Migration

DROP INDEX write_receipts_sealed_idx;
ALTER TABLE write_receipts DROP COLUMN sealed_fields;
