-- Up Migration

-- Erasing a donor (constituents.md §6): the row stays, so that its gifts keep their donor and its
-- money stays in every total, but its names become "Erased", its contact points, external_id and
-- free text go, and `status` becomes `erased`. Like a merged tombstone, an erased donor takes no
-- more writes, nothing new may name it, lists leave it out, and matching skips it (the duplicate
-- triggers already leave out `erased`).
ALTER TABLE donors DROP CONSTRAINT donors_status_check;
ALTER TABLE donors
  ADD CONSTRAINT donors_status_check
    CHECK (status IN ('active', 'inactive', 'deceased', 'merged', 'erased'));

-- The retention sweep of import files (IMPORT_FILE_RETENTION_DAYS) finds old files by age.
CREATE INDEX import_files_created_idx ON import_files (created_at);

-- Down Migration

DROP INDEX import_files_created_idx;
ALTER TABLE donors DROP CONSTRAINT donors_status_check;
ALTER TABLE donors ADD CONSTRAINT donors_status_check
  CHECK (status IN ('active', 'inactive', 'deceased', 'merged'));
