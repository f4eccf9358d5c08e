-- Up Migration

-- Events (integration.md §1): the transactional outbox. Every committed write inserts exactly one
-- row in its own transaction (or its own statement, for a single-statement create), so an event
-- exists exactly when its write does.
--
-- `seq` orders an institution's events for cursor lists (a total order on one integer key); `id`
-- is the public id, opaque and unguessable, so that an event id tells nothing of how many events
-- there are. `data` is the record as the write answered it, kept as the text it was answered
-- with (json, not jsonb: key order as GET returns it, and nothing to parse on the write path).
-- No foreign keys: every write inserts an event, and a foreign key's check locks the row it
-- names (the institution's, shared by all its writes) on each insert. The institution and the
-- API key are the ones the write itself was authenticated and confirmed for.

CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY,
  id text NOT NULL DEFAULT 'evt_' || replace(gen_random_uuid()::text, '-', ''),
  institution_id bigint NOT NULL,
  type text NOT NULL,
  object_type text NOT NULL,
  object_id bigint NOT NULL,
  data json NOT NULL,
  previous_attributes json,
  request_id text NOT NULL,
  api_key_id text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT events_pkey PRIMARY KEY (institution_id, seq),
  CONSTRAINT events_id_key UNIQUE (institution_id, id)
);
-- A record's history (object_type + object_id), newest first.
CREATE INDEX events_institution_object_idx ON events (institution_id, object_type, object_id, seq);
-- Retention prunes by age across institutions. Rows arrive in created_at order, so a BRIN index
-- finds the old ones for next to nothing on each insert.
CREATE INDEX events_created_at_brin ON events USING brin (created_at);

-- Down Migration

DROP TABLE events;
