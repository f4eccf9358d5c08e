-- Up Migration

-- One row per relationship between two donors (constituents.md §2), read from both sides: the
-- related donor sees the type's reciprocal. A relationship goes with either of its donors.
CREATE TABLE relationships (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  related_donor_id bigint NOT NULL,
  type text NOT NULL,
  starts_on date,
  ends_on date,
  note text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT relationships_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT relationships_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id) ON DELETE CASCADE,
  CONSTRAINT relationships_related_donor_fkey FOREIGN KEY (institution_id, related_donor_id)
    REFERENCES donors (institution_id, id) ON DELETE CASCADE,
  CONSTRAINT relationships_two_donors_check CHECK (donor_id <> related_donor_id),
  CONSTRAINT relationships_dates_check CHECK (ends_on >= starts_on)
);
-- A donor's relationships, from either side, newest first (GET /donors/{id}/relationships),
-- and the cascade of a donor's delete.
CREATE INDEX relationships_donor_idx ON relationships (institution_id, donor_id, id);
CREATE INDEX relationships_related_donor_idx
  ON relationships (institution_id, related_donor_id, id);

-- Down Migration

DROP TABLE relationships;
