-- Up Migration

-- Keys that can do only what they must (trust.md §1, §2). A key's `permissions` maps
-- permission groups to none/read/write, `*` for every group not named: keys made before this
-- keep full access, and so does the operator's first key of an institution (the default).
-- `name` names a key for its owner; `expires_at` ends it (a rolled key's grace period);
-- `last_used_at` is kept to the minute; `rolled_from_id` names the key a roll replaced. `seq`
-- orders an institution's keys for GET /api-keys (the cursor engine pages by an integer key)
-- and is the number events carry in `object_id` for a key, whose public id is text.
ALTER TABLE api_keys
  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN name text NOT NULL DEFAULT 'Operator key'
    CONSTRAINT api_keys_name_check CHECK (char_length(name) BETWEEN 1 AND 100),
  ADD COLUMN permissions jsonb NOT NULL DEFAULT '{"*": "write"}'
    CONSTRAINT api_keys_permissions_check CHECK (jsonb_typeof(permissions) = 'object'),
  ADD COLUMN expires_at timestamptz(3),
  ADD COLUMN last_used_at timestamptz(3),
  ADD COLUMN rolled_from_id text REFERENCES api_keys (id);
CREATE UNIQUE INDEX api_keys_institution_seq_idx ON api_keys (institution_id, seq);

-- Only what can end a key is announced to the API processes (1733800000000): `last_used_at`,
-- written at most once a minute per key, would otherwise make every process forget every key
-- that is in use, once a minute.
DROP TRIGGER api_keys_announce_change ON api_keys;
CREATE TRIGGER api_keys_announce_change
  AFTER UPDATE OF revoked_at, expires_at, permissions, institution_id, secret_sha256 OR DELETE
  ON api_keys
  FOR EACH ROW EXECUTE FUNCTION announce_api_key_change();

-- Who did what (trust.md §3): one row per write (committed, refused, dry run or replayed), per
-- 401 or 403, per key action and per read of one donor or student or an export. The route is
-- its template and nothing of a body or a query value is kept. Kept AUDIT_RETENTION_DAYS.
CREATE TABLE audit_events (
  institution_id bigint NOT NULL REFERENCES institutions (id),
  id bigint GENERATED ALWAYS AS IDENTITY,
  occurred_at timestamptz(3) NOT NULL,
  api_key_id text,
  request_id text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  status smallint NOT NULL,
  object_type text,
  object_id text,
  dry_run boolean NOT NULL DEFAULT false,
  replayed boolean NOT NULL DEFAULT false,
  ip inet,
  PRIMARY KEY (institution_id, id)
);
CREATE INDEX audit_events_list_idx ON audit_events (institution_id, id DESC);
CREATE INDEX audit_events_key_idx ON audit_events (institution_id, api_key_id, id DESC);
CREATE INDEX audit_events_object_idx
  ON audit_events (institution_id, object_type, object_id, id DESC)
  WHERE object_id IS NOT NULL;
CREATE INDEX audit_events_occurred_idx ON audit_events (occurred_at);

-- Down Migration

DROP TABLE audit_events;
DROP TRIGGER api_keys_announce_change ON api_keys;
CREATE TRIGGER api_keys_announce_change
  AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION announce_api_key_change();
DROP INDEX api_keys_institution_seq_idx;
ALTER TABLE api_keys
  DROP COLUMN rolled_from_id,
  DROP COLUMN last_used_at,
  DROP COLUMN expires_at,
  DROP COLUMN permissions,
  DROP COLUMN name,
  DROP COLUMN seq;
