-- Up Migration

-- The consent ledger (constituents.md §4): what a donor allowed or refused, per channel and
-- purpose, as captured. Append-only: rows are never updated. A consent goes with its donor (a
-- donor delete is refused while the donor has gifts; erasure is its own write).
CREATE TABLE consents (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  channel text NOT NULL,
  purpose text,
  response text NOT NULL,
  source text NOT NULL,
  statement text,
  captured_at timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT consents_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT consents_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id) ON DELETE CASCADE,
  CONSTRAINT consents_statement_check CHECK (response <> 'opt_in' OR statement IS NOT NULL)
);
-- A donor's consents, newest first (GET /donors/{id}/consents), and the cascade of its delete.
CREATE INDEX consents_donor_idx ON consents (institution_id, donor_id, id);

-- Down Migration

DROP TABLE consents;
