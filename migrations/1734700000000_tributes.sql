-- Up Migration

-- Tributes (fundraising.md §4). `tribute` holds what the client wrote (type, honoree_name,
-- notify, message); the honoree donor has its own column so that a foreign key keeps it a donor
-- of the gift's institution, and deleting that donor leaves the tribute with its name only.
-- The acknowledgement is the service's state: null exactly when there is no tribute, and
-- `tribute_sent_on` set exactly when it is `sent`.
ALTER TABLE gifts ADD COLUMN tribute jsonb,
  ADD COLUMN tribute_honoree_donor_id bigint,
  ADD COLUMN tribute_acknowledgement text,
  ADD COLUMN tribute_sent_on date,
  ADD CONSTRAINT gifts_tribute_honoree_fkey FOREIGN KEY (institution_id, tribute_honoree_donor_id)
    REFERENCES donors (institution_id, id) ON DELETE SET NULL (tribute_honoree_donor_id),
  ADD CONSTRAINT gifts_tribute_acknowledgement_check CHECK (
    tribute_acknowledgement IN ('pending', 'sent', 'not_required')
    AND (tribute IS NULL) = (tribute_acknowledgement IS NULL)
    AND (tribute_sent_on IS NOT NULL) = (tribute_acknowledgement IS NOT DISTINCT FROM 'sent')
    AND (tribute IS NOT NULL OR tribute_honoree_donor_id IS NULL));

-- Few gifts carry a tribute: the filter reads only theirs, newest first within one state.
CREATE INDEX gifts_institution_tribute_acknowledgement_idx
  ON gifts (institution_id, tribute_acknowledgement, id) WHERE tribute_acknowledgement IS NOT NULL;
-- For the foreign key's SET NULL when a donor is deleted.
CREATE INDEX gifts_institution_tribute_honoree_idx ON gifts (institution_id, tribute_honoree_donor_id)
  WHERE tribute_honoree_donor_id IS NOT NULL;

-- Down Migration

DROP INDEX gifts_institution_tribute_honoree_idx;
DROP INDEX gifts_institution_tribute_acknowledgement_idx;
ALTER TABLE gifts DROP COLUMN tribute_sent_on, DROP COLUMN tribute_acknowledgement,
  DROP COLUMN tribute_honoree_donor_id, DROP COLUMN tribute;
