-- Up Migration

-- Households (constituents.md §1): an Individual belongs to at most one household, a donor of
-- role Household of the same institution. The key leads with institution_id, so a household of
-- another institution cannot be named. NO ACTION: a household is not deleted from under its
-- members (the delete answers 409 resource_in_use before it gets here); a member leaves by
-- setting household_id to null. The index serves GET /donors?household_id=, member_ids (by id)
-- and the check this key makes when a donor is deleted.
ALTER TABLE donors ADD COLUMN household_id bigint,
  ADD CONSTRAINT donors_household_fkey FOREIGN KEY (institution_id, household_id)
    REFERENCES donors (institution_id, id);
CREATE INDEX donors_institution_household_idx ON donors (institution_id, household_id, id)
  WHERE household_id IS NOT NULL;

-- Down Migration

DROP INDEX donors_institution_household_idx;
ALTER TABLE donors DROP COLUMN household_id;
