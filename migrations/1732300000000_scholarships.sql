-- Up Migration

-- draft -> open -> closed -> archived, closed -> open, draft -> archived (the machine lives in
-- common/resources/awardCycles/schema.ts; the table only keeps the values honest).
CREATE TABLE award_cycles (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  name text NOT NULL,
  starts_on date NOT NULL,
  ends_on date NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'open', 'closed', 'archived')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT award_cycles_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT award_cycles_dates_check CHECK (ends_on >= starts_on)
);
-- Names are unique per institution regardless of letter case ("Fall 2026" and "fall 2026").
CREATE UNIQUE INDEX award_cycles_institution_name_key ON award_cycles (institution_id, lower(name));
CREATE INDEX award_cycles_institution_status_idx ON award_cycles (institution_id, status, id);

CREATE TABLE students (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  student_number text NOT NULL,
  first_name text NOT NULL,
  last_name text NOT NULL,
  email text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT students_institution_id_key UNIQUE (institution_id, id)
);
-- Student numbers are unique per institution regardless of letter case ("s-1001" is "S-1001").
CREATE UNIQUE INDEX students_institution_number_key
  ON students (institution_id, lower(student_number));

CREATE TABLE scholarships (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  fund_id bigint NOT NULL,
  name text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT scholarships_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT scholarships_fund_fkey FOREIGN KEY (institution_id, fund_id)
    REFERENCES funds (institution_id, id)
);
-- Serves the fund's committed-amount sum: awards -> scholarships of the fund.
CREATE INDEX scholarships_institution_fund_idx ON scholarships (institution_id, fund_id, id);

CREATE TABLE awards (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  award_cycle_id bigint NOT NULL,
  scholarship_id bigint NOT NULL,
  student_id bigint NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('offered', 'accepted', 'declined', 'cancelled', 'disbursed')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT awards_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT awards_award_cycle_fkey FOREIGN KEY (institution_id, award_cycle_id)
    REFERENCES award_cycles (institution_id, id),
  CONSTRAINT awards_scholarship_fkey FOREIGN KEY (institution_id, scholarship_id)
    REFERENCES scholarships (institution_id, id),
  CONSTRAINT awards_student_fkey FOREIGN KEY (institution_id, student_id)
    REFERENCES students (institution_id, id)
);
-- One live award (not declined or cancelled) per cycle, scholarship and student; the command
-- checks first, this index decides between two concurrent creates.
CREATE UNIQUE INDEX awards_live_key
  ON awards (institution_id, award_cycle_id, scholarship_id, student_id)
  WHERE status IN ('offered', 'accepted', 'disbursed');
CREATE INDEX awards_institution_cycle_idx ON awards (institution_id, award_cycle_id, id);
CREATE INDEX awards_institution_scholarship_idx ON awards (institution_id, scholarship_id, id);
CREATE INDEX awards_institution_student_idx ON awards (institution_id, student_id, id);

-- Down Migration

DROP TABLE awards;
DROP TABLE scholarships;
DROP TABLE students;
DROP TABLE award_cycles;
