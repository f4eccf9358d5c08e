-- Up Migration

-- A donor's id in the system its records come from (integration.md §3): optional, unique per
-- institution, so an import can find the donor again by it.
ALTER TABLE donors ADD COLUMN external_id text;
CREATE UNIQUE INDEX donors_institution_external_id_key ON donors (institution_id, external_id)
  WHERE external_id IS NOT NULL;

-- An uploaded file, stored as it was streamed in: its rows, as sent, in chunks of a few hundred
-- (import_chunks), never in the API's memory or in Redis. A file belongs to at most one import
-- (`import_id`, set by the create that claims it); a file no import claimed (the upload of a
-- replayed or refused create, or of an API that died mid-stream) is deleted.
CREATE TABLE import_files (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  format text NOT NULL CHECK (format IN ('csv', 'json')),
  -- The CSV header as sent (the columns of errors.csv); for JSON the keys met, in order.
  columns jsonb NOT NULL,
  rows_total integer NOT NULL,
  -- The sum of the rows' `amount` (gifts), for the control total.
  amount_total numeric(16, 2),
  bytes bigint NOT NULL,
  sha256 text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT import_files_pkey PRIMARY KEY (institution_id, id)
);

CREATE TABLE imports (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  file_id bigint NOT NULL,
  resource text NOT NULL CHECK (resource IN ('donors', 'gifts')),
  mode text NOT NULL CHECK (mode IN ('skip_invalid', 'all_or_nothing')),
  on_match text NOT NULL CHECK (on_match IN ('skip', 'update', 'error')),
  dry_run boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'validating', 'validated', 'importing',
                                         'completed', 'failed', 'cancelled')),
  chunks_total integer NOT NULL,
  rows_total integer NOT NULL,
  rows_processed integer NOT NULL DEFAULT 0,
  rows_succeeded integer NOT NULL DEFAULT 0,
  rows_failed integer NOT NULL DEFAULT 0,
  rows_skipped integer NOT NULL DEFAULT 0,
  amount_total numeric(16, 2),
  expected_rows integer,
  expected_amount numeric(16, 2),
  failure_code text,
  failure_message text,
  -- Who asked: the records an import writes carry it in their events.
  request_id text NOT NULL,
  api_key_id text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  completed_at timestamptz(3),
  CONSTRAINT imports_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT imports_file_key UNIQUE (institution_id, file_id),
  CONSTRAINT imports_file_fkey FOREIGN KEY (institution_id, file_id)
    REFERENCES import_files (institution_id, id)
);
-- The workers' sweep finds the imports still running.
CREATE INDEX imports_running_idx ON imports (status, id)
  WHERE status IN ('queued', 'validating', 'importing');

-- A chunk of a file's rows, and how far its import got: `validated_at` and `imported_at` commit in
-- the same transaction as the chunk's row errors and records, so a chunk is judged and written
-- exactly once, whatever dies mid-way.
CREATE TABLE import_chunks (
  institution_id bigint NOT NULL,
  file_id bigint NOT NULL,
  chunk integer NOT NULL,
  -- The file row number of the chunk's first row (the header is row 1).
  first_row integer NOT NULL,
  -- json, not jsonb: a row keeps its keys in the order sent, as a request body does.
  rows json NOT NULL,
  validated_at timestamptz(3),
  imported_at timestamptz(3),
  CONSTRAINT import_chunks_pkey PRIMARY KEY (institution_id, file_id, chunk),
  CONSTRAINT import_chunks_file_fkey FOREIGN KEY (institution_id, file_id)
    REFERENCES import_files (institution_id, id) ON DELETE CASCADE
);

-- Each failed row once, with every problem found in it.
CREATE TABLE import_row_errors (
  institution_id bigint NOT NULL,
  import_id bigint NOT NULL,
  row_number integer NOT NULL,
  errors jsonb NOT NULL,
  CONSTRAINT import_row_errors_pkey PRIMARY KEY (institution_id, import_id, row_number),
  CONSTRAINT import_row_errors_import_fkey FOREIGN KEY (institution_id, import_id)
    REFERENCES imports (institution_id, id) ON DELETE CASCADE
);

-- Down Migration

DROP TABLE import_row_errors;
DROP TABLE import_chunks;
DROP TABLE imports;
DROP TABLE import_files;
DROP INDEX donors_institution_external_id_key;
ALTER TABLE donors DROP COLUMN external_id;
