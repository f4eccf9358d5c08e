-- Up Migration

-- Year-end giving statements (fundraising.md §6). `number` is `<year>-<n>`: n counts each
-- institution's statements of one year 1, 2, 3, … with no gap. It is taken from the
-- institution's row of that year in giving_statement_numbers inside the issuing transaction, as
-- receipts take theirs (the row lock orders concurrent issues; a rollback gives the number back).
CREATE TABLE giving_statement_numbers (
  institution_id bigint NOT NULL REFERENCES institutions (id),
  year integer NOT NULL,
  last_number bigint NOT NULL CHECK (last_number >= 0),
  CONSTRAINT giving_statement_numbers_pkey PRIMARY KEY (institution_id, year)
);

-- A run issues a statement to every donor over `min_total`, donor after donor in id order. Each
-- batch commits its statements together with `last_donor_id` and `donors_done`, so a worker
-- killed mid-batch leaves the run where its last commit put it: the next delivery goes on from
-- there, and no donor is issued twice or skipped.
CREATE TABLE giving_statement_runs (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  year integer NOT NULL,
  period text NOT NULL CHECK (period IN ('calendar', 'fiscal')),
  period_start date NOT NULL,
  period_end date NOT NULL,
  min_total numeric(14, 2) NOT NULL CHECK (min_total >= 0),
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  donors_total integer NOT NULL DEFAULT 0,
  donors_done integer NOT NULL DEFAULT 0,
  last_donor_id bigint NOT NULL DEFAULT 0,
  completed_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT giving_statement_runs_pkey PRIMARY KEY (institution_id, id)
);
CREATE INDEX giving_statement_runs_unfinished_idx ON giving_statement_runs (status, id)
  WHERE status IN ('queued', 'running');

CREATE TABLE giving_statements (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  year integer NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  donor_id bigint NOT NULL,
  period text NOT NULL CHECK (period IN ('calendar', 'fiscal')),
  period_start date NOT NULL,
  period_end date NOT NULL,
  status text NOT NULL DEFAULT 'issued' CHECK (status IN ('issued', 'superseded')),
  superseded_by_id bigint,
  run_id bigint,
  donor_name text NOT NULL,
  donor_address jsonb,
  -- The base currency the statement was issued in: base_total is in it.
  currency char(3) NOT NULL,
  lines jsonb NOT NULL,
  totals jsonb NOT NULL,
  base_total numeric(16, 2) NOT NULL,
  issued_on date NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT giving_statements_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT giving_statements_number_key UNIQUE (institution_id, year, seq),
  CONSTRAINT giving_statements_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id),
  -- Deferred: a re-issue marks the current statement superseded by the new one's id before it
  -- inserts the new one (the one-issued index would refuse the other order).
  CONSTRAINT giving_statements_superseded_by_fkey FOREIGN KEY (institution_id, superseded_by_id)
    REFERENCES giving_statements (institution_id, id) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT giving_statements_run_fkey FOREIGN KEY (institution_id, run_id)
    REFERENCES giving_statement_runs (institution_id, id),
  CONSTRAINT giving_statements_superseded_check
    CHECK ((status = 'superseded') = (superseded_by_id IS NOT NULL))
);
-- One current statement per donor and period: a second supersedes the first in its transaction.
CREATE UNIQUE INDEX giving_statements_one_issued_key
  ON giving_statements (institution_id, donor_id, period, year) WHERE status = 'issued';
CREATE INDEX giving_statements_donor_idx ON giving_statements (institution_id, donor_id, id);
CREATE INDEX giving_statements_run_idx ON giving_statements (institution_id, run_id, id)
  WHERE run_id IS NOT NULL;

-- Down Migration

DROP TABLE giving_statements;
DROP TABLE giving_statement_runs;
DROP TABLE giving_statement_numbers;
