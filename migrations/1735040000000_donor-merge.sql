-- Up Migration

-- Merging two donors (constituents.md §5): the source stays as a tombstone, `status` `merged`,
-- naming its survivor in `merged_into_id` (always a live donor: a merge repoints the tombstones
-- of its source too). Its email and external_id are cleared, so the survivor may take them and
-- uniqueness holds, and kept in `merged_email` and `merged_external_id`, by which lookups
-- (GET /donors?external_id=, import matching) still find the survivor.
ALTER TABLE donors DROP CONSTRAINT donors_status_check;
ALTER TABLE donors
  ADD CONSTRAINT donors_status_check
    CHECK (status IN ('active', 'inactive', 'deceased', 'merged')),
  ADD COLUMN merged_into_id bigint,
  ADD COLUMN merged_email text,
  ADD COLUMN merged_external_id text,
  ADD CONSTRAINT donors_merged_into_fkey FOREIGN KEY (institution_id, merged_into_id)
    REFERENCES donors (institution_id, id),
  ADD CONSTRAINT donors_merged_check CHECK ((status = 'merged') = (merged_into_id IS NOT NULL));
CREATE INDEX donors_merged_into_idx ON donors (institution_id, merged_into_id)
  WHERE merged_into_id IS NOT NULL;
CREATE INDEX donors_merged_external_id_idx ON donors (institution_id, merged_external_id)
  WHERE merged_external_id IS NOT NULL;
CREATE INDEX donors_merged_email_idx ON donors (institution_id, lower(merged_email))
  WHERE merged_email IS NOT NULL;

-- Down Migration

DROP INDEX donors_merged_email_idx;
DROP INDEX donors_merged_external_id_idx;
DROP INDEX donors_merged_into_idx;
ALTER TABLE donors DROP CONSTRAINT donors_merged_check,
  DROP CONSTRAINT donors_merged_into_fkey,
  DROP COLUMN merged_external_id, DROP COLUMN merged_email, DROP COLUMN merged_into_id,
  DROP CONSTRAINT donors_status_check;
ALTER TABLE donors ADD CONSTRAINT donors_status_check
  CHECK (status IN ('active', 'inactive', 'deceased'));
