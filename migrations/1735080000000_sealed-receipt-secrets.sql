-- Up Migration

-- Secrets at rest (trust.md §4). The answer of a webhook endpoint's create or rotation, and of an
-- API key's create or roll, tells a secret, and its receipt must answer it again on a replay:
-- the receipt keeps those fields here, sealed with SECRETS_KEY (common/secrets.ts), and
-- `response_body` holds null in their place. A migration has no key to seal with, so values
-- stored in clear before this (receipts and webhook_endpoints.secret, previous_secret) are
-- sealed by the worker when it starts (resealStoredSecrets); until then both forms are read.
ALTER TABLE write_receipts ADD COLUMN sealed_fields text;

-- Down Migration

ALTER TABLE write_receipts DROP COLUMN sealed_fields;
