-- Up Migration

-- Contact points beyond the primary ones (constituents.md §3): each list is 0 to 10 entries,
-- judged by the donor command (types, statuses, seasonal windows, no repeats) and stored as it
-- answers them, so a read presents them without reshaping.
ALTER TABLE donors ADD COLUMN emails jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN phones jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN addresses jsonb NOT NULL DEFAULT '[]',
  ADD CONSTRAINT donors_contact_points_check CHECK (
    jsonb_typeof(emails) = 'array' AND jsonb_array_length(emails) <= 10
    AND jsonb_typeof(phones) = 'array' AND jsonb_array_length(phones) <= 10
    AND jsonb_typeof(addresses) = 'array' AND jsonb_array_length(addresses) <= 10);

-- Eligibility (GET /donors/{id}/eligibility) reads the latest consent of one channel for the
-- whole channel and for one purpose: DISTINCT ON (purpose) in this index's order, so each is the
-- first entry of its range however long the donor's ledger is.
CREATE INDEX consents_latest_idx
  ON consents (institution_id, donor_id, channel, purpose, captured_at DESC, id DESC);

-- Down Migration

DROP INDEX consents_latest_idx;
ALTER TABLE donors DROP COLUMN addresses, DROP COLUMN phones, DROP COLUMN emails;
