-- Up Migration

-- A receipt is written once, complete, as the last statement of its write's transaction: there
-- is no pending receipt (one claimed before its response was known), so its response is never
-- missing. No committed row can lack one; any that did would never have been replayed.
DELETE FROM write_receipts WHERE status_code IS NULL OR response_body IS NULL;
ALTER TABLE write_receipts
  ALTER COLUMN status_code SET NOT NULL,
  ALTER COLUMN response_body SET NOT NULL;

-- Down Migration

ALTER TABLE write_receipts
  ALTER COLUMN status_code DROP NOT NULL,
  ALTER COLUMN response_body DROP NOT NULL;
