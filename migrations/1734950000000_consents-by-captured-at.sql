-- Up Migration

-- A donor's consents are listed newest captured_at first, ties newest id first
-- (GET /donors/{id}/consents): a page is one range of this index, (captured_at, id) compared
-- with the cursor's position. Its prefix serves the cascade of a donor's delete too, the other
-- use of the index on (institution_id, donor_id, id), which is no longer needed.
CREATE INDEX consents_donor_captured_idx
  ON consents (institution_id, donor_id, captured_at DESC, id DESC);
DROP INDEX consents_donor_idx;

-- Down Migration

CREATE INDEX consents_donor_idx ON consents (institution_id, donor_id, id);
DROP INDEX consents_donor_captured_idx;
