-- Up Migration

CREATE TABLE institutions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL,
  currency char(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a key is kept; the key itself is shown once by the operator CLI.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  secret_sha256 bytea NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  revoked_at timestamptz(3)
);
CREATE INDEX api_keys_institution_idx ON api_keys (institution_id);

CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  email text NOT NULL,
  first_name text NOT NULL,
  last_name text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'gift_officer', 'scholarship_manager', 'viewer')),
  status text NOT NULL CHECK (status IN ('active', 'deactivated')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  -- Composite key so that references from other tables can be pinned to one institution.
  CONSTRAINT users_institution_id_key UNIQUE (institution_id, id)
);
CREATE UNIQUE INDEX users_institution_email_key ON users (institution_id, lower(email));

CREATE TABLE funds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  name text NOT NULL,
  code text NOT NULL,
  description text,
  restriction text NOT NULL
    CHECK (restriction IN ('unrestricted', 'temporarily_restricted', 'permanently_restricted')),
  endowed boolean NOT NULL,
  award_limit numeric(14, 2) CHECK (award_limit >= 0),
  status text NOT NULL CHECK (status IN ('active', 'closed')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT funds_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT funds_institution_code_key UNIQUE (institution_id, code)
);

CREATE TABLE donors (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  role text NOT NULL
    CHECK (role IN ('Individual', 'Household', 'Organization', 'Foundation', 'Corporation')),
  first_name text,
  last_name text,
  organization_name text,
  email text,
  phone text,
  address jsonb,
  assigned_user_id bigint,
  status text NOT NULL CHECK (status IN ('active', 'inactive', 'deceased')),
  gives_anonymously boolean NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT donors_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT donors_assigned_user_fkey FOREIGN KEY (institution_id, assigned_user_id)
    REFERENCES users (institution_id, id)
);
CREATE UNIQUE INDEX donors_institution_email_key ON donors (institution_id, lower(email))
  WHERE email IS NOT NULL;
CREATE INDEX donors_institution_assigned_user_idx ON donors (institution_id, assigned_user_id)
  WHERE assigned_user_id IS NOT NULL;

CREATE TABLE gifts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  subject text NOT NULL,
  gift_date date NOT NULL,
  type text NOT NULL
    CHECK (type IN ('cash', 'check', 'credit_card', 'bank_transfer', 'stock', 'in_kind', 'pledge', 'other')),
  check_number text CHECK (check_number IS NULL OR type = 'check'),
  fund_id bigint,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT gifts_institution_id_key UNIQUE (institution_id, id),
  CONSTRAINT gifts_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id),
  CONSTRAINT gifts_fund_fkey FOREIGN KEY (institution_id, fund_id)
    REFERENCES funds (institution_id, id)
);
CREATE INDEX gifts_institution_donor_idx ON gifts (institution_id, donor_id, id);
CREATE INDEX gifts_institution_fund_idx ON gifts (institution_id, fund_id, id)
  WHERE fund_id IS NOT NULL;

-- The outcome of every committed write, stored in the write's own transaction. A row keyed by
-- a client's Idempotency-Key replays that write for 24 hours; a row keyed by the queue job id
-- makes a job that is delivered twice commit once.
CREATE TABLE write_receipts (
  institution_id bigint NOT NULL REFERENCES institutions (id),
  source text NOT NULL CHECK (source IN ('client', 'job')),
  key text NOT NULL,
  fingerprint text NOT NULL,
  status_code integer,
  response_body json,
  location text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  PRIMARY KEY (institution_id, source, key)
);
CREATE INDEX write_receipts_expires_at_idx ON write_receipts (expires_at);

-- Down Migration

DROP TABLE write_receipts;
DROP TABLE gifts;
DROP TABLE donors;
DROP TABLE funds;
DROP TABLE users;
DROP TABLE api_keys;
DROP TABLE institutions;
