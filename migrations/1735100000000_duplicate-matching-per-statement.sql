-- Up Migration

-- The duplicate rule of 1735030000000 unchanged, at less cost per write (issue 31: a donor
-- create with the matching ran at 0.62x one without). Every function keeps its name, signature
-- and result, and the keys and pairs already written are the ones these functions give, so no
-- row is rewritten. What changes is how often things are computed, and what a write locks:
--
--   * match_text skips Unicode normalisation and the accent regex for ASCII text, where both are
--     the identity (no ASCII character has a decomposition, none is a combining mark);
--   * a donor's name is computed once per donor, not once per key basis (the inlined name
--     expression used to be evaluated in each branch's filter and again in its output);
--   * a create, the common write, takes its keys from the statement's transition table instead
--     of looking each new donor up again;
--   * a write of few keys locks each key rather than its bucket of 256 (lock_match_keys, which
--     see): concurrent creates of unrelated donors no longer wait for each other's commits.

-- For ASCII text (a UTF-8 database, which normalize() requires: one byte per character
-- exactly when every character is ASCII) NFKD and dropping U+0300..U+036F change nothing.
CREATE OR REPLACE FUNCTION match_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(btrim(regexp_replace(lower(CASE WHEN octet_length(value) = length(value)
    THEN value ELSE regexp_replace(normalize(value, NFKD), '[\u0300-\u036f]', '', 'g') END),
    '\s+', ' ', 'g')), '')
$$;

-- The name is computed in a subquery of its own (OFFSET 0 keeps the planner from copying its
-- expression into every branch that uses it); a phone or postal code is a key only with a name,
-- so without one they are not even looked at.
CREATE OR REPLACE FUNCTION donor_match_keys_of(d donors) RETURNS TABLE (basis text, value text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT basis, value FROM (
    SELECT 'email' AS basis, nullif(lower(btrim(address)), '') AS value
    FROM (SELECT e ->> 'address' FROM jsonb_array_elements(d.emails) AS e
      UNION ALL SELECT d.email) AS emails (address)
    UNION ALL
    SELECT keys.basis, name.name || keys.suffix
    FROM (SELECT match_name(d) AS name OFFSET 0) AS name
    CROSS JOIN LATERAL (
      SELECT 'name' AS basis, '' AS suffix
      UNION ALL
      SELECT 'phone', '|' || nullif(regexp_replace(number, '\D', '', 'g'), '')
      FROM (SELECT e ->> 'number' FROM jsonb_array_elements(d.phones) AS e
        UNION ALL SELECT d.phone) AS phones (number)
      UNION ALL
      SELECT 'postal_code', '|' || nullif(lower(regexp_replace(code, '[^[:alnum:]]', '', 'g')), '')
      FROM (SELECT e ->> 'postal_code' FROM jsonb_array_elements(d.addresses) AS e
        UNION ALL SELECT d.address ->> 'postal_code') AS codes (code)) AS keys
    WHERE name.name IS NOT NULL
  ) AS keys
  WHERE value IS NOT NULL
$$;

-- Two transactions writing donors that share a key, had or new, must see each other's keys
-- before they look for pairs, so each locks its keys before its pair search (whose statement
-- then sees what an earlier holder committed). Until now every writer locked the keys' buckets
-- (a key's hash modulo 256) exclusively: with API creates committing one donor per transaction,
-- a dozen transactions in flight held some 50 of the 256 buckets until their commits, so about
-- every other create waited for strangers (in bench:duplicates the worker's sessions were
-- waiting on an advisory lock in 301 of 1,734 samples). Now a write of few keys (a create, an
-- update, a batch of creates) locks each key itself, and its buckets only in shared mode; a
-- write of many keys (an import's chunk) still locks their buckets exclusively, so that it holds
-- at most 256 locks. Any two writers of one key conflict: on the key, or on its bucket (shared
-- against exclusive, or exclusive against exclusive). All bucket locks come before any key lock,
-- each kind in ascending order, so one acquisition never waits in a cycle with another.
-- `hashes`: hashtext(institution_id::text || basis || value) of each key (abs(h % 256) is the
-- bucket of 1735030000, which never overflows where abs(h) % 256 would).
CREATE FUNCTION lock_match_keys(hashes integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  keys integer[] := ARRAY(SELECT DISTINCT h FROM unnest(hashes) AS h ORDER BY 1);
BEGIN
  IF cardinality(keys) <= 64 THEN
    PERFORM pg_advisory_xact_lock_shared(1735030000, bucket)
    FROM (SELECT DISTINCT abs(h % 256) AS bucket FROM unnest(keys) AS h ORDER BY 1) AS ordered;
    PERFORM pg_advisory_xact_lock(1735100000, h)
    FROM (SELECT h FROM unnest(keys) AS h ORDER BY 1) AS ordered;
  ELSE
    PERFORM pg_advisory_xact_lock(1735030000, bucket)
    FROM (SELECT DISTINCT abs(h % 256) AS bucket FROM unnest(keys) AS h ORDER BY 1) AS ordered;
  END IF;
END
$$;

-- As in 1735030000000, locking through lock_match_keys.
CREATE OR REPLACE FUNCTION refresh_donor_duplicates(
  institution_ids bigint[], donor_ids bigint[], created boolean)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  hashes integer[];
BEGIN
  IF NOT created THEN
    WITH gone AS (
      DELETE FROM donor_match_keys AS k
      USING unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
      WHERE k.institution_id = a.institution_id AND k.donor_id = a.donor_id
      RETURNING k.institution_id, k.basis, k.value)
    SELECT array_agg(hashtext(institution_id::text || basis || value)) INTO hashes FROM gone;
  END IF;

  WITH added AS (
    INSERT INTO donor_match_keys (institution_id, donor_id, role_class, basis, value)
    SELECT d.institution_id, d.id, match_role_class(d.role), key.basis, key.value
    FROM donors AS d
    JOIN unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
      ON d.institution_id = a.institution_id AND d.id = a.donor_id
    CROSS JOIN LATERAL donor_match_keys_of(d) AS key
    WHERE d.status NOT IN ('merged', 'erased')
    RETURNING institution_id, basis, value)
  SELECT coalesce(hashes, '{}')
    || coalesce(array_agg(hashtext(institution_id::text || basis || value)), '{}')
  INTO hashes FROM added;

  PERFORM lock_match_keys(hashes);

  -- The pairs as the keys now make them; the given donors' other pairs go (a dismissed one only
  -- with its donor), and the ones found are added or brought up to date.
  WITH found AS (
    SELECT institution_id, low AS donor_id, high AS other_donor_id,
      CASE WHEN 'email' = ANY (bases) THEN 100
        WHEN bases && ARRAY['phone', 'postal_code'] THEN 80 ELSE 50 END AS score,
      bases AS matched_on
    FROM (
      SELECT k.institution_id, least(k.donor_id, o.donor_id) AS low,
        greatest(k.donor_id, o.donor_id) AS high,
        array_agg(DISTINCT k.basis ORDER BY k.basis) AS bases
      FROM donor_match_keys AS k
      JOIN unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
        ON k.institution_id = a.institution_id AND k.donor_id = a.donor_id
      JOIN donor_match_keys AS o
        ON o.institution_id = k.institution_id AND o.role_class = k.role_class
        AND o.basis = k.basis AND o.value = k.value AND o.donor_id <> k.donor_id
      GROUP BY 1, 2, 3) AS matches),
  gone AS (
    DELETE FROM duplicate_pairs AS p
    USING unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
    WHERE NOT created AND p.institution_id = a.institution_id
      AND (p.donor_id = a.donor_id OR p.other_donor_id = a.donor_id)
      AND (p.dismissed_at IS NULL OR NOT EXISTS (
        SELECT FROM donors AS d WHERE d.institution_id = a.institution_id AND d.id = a.donor_id))
      AND NOT EXISTS (
        SELECT FROM found AS f
        WHERE f.institution_id = p.institution_id AND f.donor_id = p.donor_id
          AND f.other_donor_id = p.other_donor_id))
  INSERT INTO duplicate_pairs AS p (institution_id, donor_id, other_donor_id, score, matched_on)
  SELECT institution_id, donor_id, other_donor_id, score, matched_on FROM found
  ORDER BY institution_id, donor_id, other_donor_id
  ON CONFLICT (institution_id, donor_id, other_donor_id) DO UPDATE
    SET score = excluded.score, matched_on = excluded.matched_on, updated_at = now()
    WHERE p.dismissed_at IS NULL
      AND (p.score, p.matched_on) IS DISTINCT FROM (excluded.score, excluded.matched_on);
END
$$;

CREATE OR REPLACE FUNCTION donors_refresh_duplicates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  institution_ids bigint[];
  donor_ids bigint[];
  hashes integer[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- New donors have no keys nor pairs yet: their keys come straight from the transition
    -- table.
    WITH added AS (
      INSERT INTO donor_match_keys (institution_id, donor_id, role_class, basis, value)
      SELECT d.institution_id, d.id, match_role_class(d.role), key.basis, key.value
      FROM new_donors AS d
      CROSS JOIN LATERAL donor_match_keys_of(d) AS key
      WHERE d.status NOT IN ('merged', 'erased')
      RETURNING institution_id, basis, value)
    SELECT array_agg(hashtext(institution_id::text || basis || value)) INTO hashes FROM added;
    IF hashes IS NULL THEN
      RETURN NULL;
    END IF;
    PERFORM lock_match_keys(hashes);

    -- As refresh_donor_duplicates finds them, for donors that had no pair to update or drop.
    INSERT INTO duplicate_pairs AS p (institution_id, donor_id, other_donor_id, score, matched_on)
    SELECT institution_id, low, high,
      CASE WHEN 'email' = ANY (bases) THEN 100
        WHEN bases && ARRAY['phone', 'postal_code'] THEN 80 ELSE 50 END,
      bases
    FROM (
      SELECT k.institution_id, least(k.donor_id, o.donor_id) AS low,
        greatest(k.donor_id, o.donor_id) AS high,
        array_agg(DISTINCT k.basis ORDER BY k.basis) AS bases
      FROM new_donors AS n
      JOIN donor_match_keys AS k ON k.institution_id = n.institution_id AND k.donor_id = n.id
      JOIN donor_match_keys AS o
        ON o.institution_id = k.institution_id AND o.role_class = k.role_class
        AND o.basis = k.basis AND o.value = k.value AND o.donor_id <> k.donor_id
      GROUP BY 1, 2, 3) AS matches
    ORDER BY 1, 2, 3
    ON CONFLICT (institution_id, donor_id, other_donor_id) DO UPDATE
      SET score = excluded.score, matched_on = excluded.matched_on, updated_at = now()
      WHERE p.dismissed_at IS NULL
        AND (p.score, p.matched_on) IS DISTINCT FROM (excluded.score, excluded.matched_on);
    RETURN NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(institution_id), array_agg(id) INTO institution_ids, donor_ids
    FROM old_donors;
  ELSE
    -- Only the donors whose keys may have changed: an update of giving figures or tags costs
    -- one comparison per row.
    SELECT array_agg(n.institution_id), array_agg(n.id) INTO institution_ids, donor_ids
    FROM new_donors AS n JOIN old_donors AS o ON o.institution_id = n.institution_id AND o.id = n.id
    WHERE (n.role, n.first_name, n.last_name, n.organization_name, n.email, n.phone, n.address,
        n.emails, n.phones, n.addresses, n.status)
      IS DISTINCT FROM (o.role, o.first_name, o.last_name, o.organization_name, o.email, o.phone,
        o.address, o.emails, o.phones, o.addresses, o.status);
  END IF;
  IF donor_ids IS NOT NULL THEN
    PERFORM refresh_donor_duplicates(institution_ids, donor_ids, false);
  END IF;
  RETURN NULL;
END
$$;

-- Down Migration

CREATE OR REPLACE FUNCTION donors_refresh_duplicates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  institution_ids bigint[];
  donor_ids bigint[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(institution_id), array_agg(id) INTO institution_ids, donor_ids
    FROM new_donors;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(institution_id), array_agg(id) INTO institution_ids, donor_ids
    FROM old_donors;
  ELSE
    -- Only the donors whose keys may have changed: an update of giving figures or tags costs
    -- one comparison per row.
    SELECT array_agg(n.institution_id), array_agg(n.id) INTO institution_ids, donor_ids
    FROM new_donors AS n JOIN old_donors AS o ON o.institution_id = n.institution_id AND o.id = n.id
    WHERE (n.role, n.first_name, n.last_name, n.organization_name, n.email, n.phone, n.address,
        n.emails, n.phones, n.addresses, n.status)
      IS DISTINCT FROM (o.role, o.first_name, o.last_name, o.organization_name, o.email, o.phone,
        o.address, o.emails, o.phones, o.addresses, o.status);
  END IF;
  IF donor_ids IS NOT NULL THEN
    PERFORM refresh_donor_duplicates(institution_ids, donor_ids, TG_OP = 'INSERT');
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION refresh_donor_duplicates(
  institution_ids bigint[], donor_ids bigint[], created boolean)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  buckets integer[];
BEGIN
  IF NOT created THEN
    WITH gone AS (
      DELETE FROM donor_match_keys AS k
      USING unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
      WHERE k.institution_id = a.institution_id AND k.donor_id = a.donor_id
      RETURNING k.institution_id, k.basis, k.value)
    SELECT array_agg(abs(hashtext(institution_id::text || basis || value)) % 256) INTO buckets
    FROM gone;
  END IF;

  WITH added AS (
    INSERT INTO donor_match_keys (institution_id, donor_id, role_class, basis, value)
    SELECT d.institution_id, d.id, match_role_class(d.role), key.basis, key.value
    FROM donors AS d
    JOIN unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
      ON d.institution_id = a.institution_id AND d.id = a.donor_id
    CROSS JOIN LATERAL donor_match_keys_of(d) AS key
    WHERE d.status NOT IN ('merged', 'erased')
    RETURNING institution_id, basis, value)
  SELECT coalesce(buckets, '{}')
    || coalesce(array_agg(abs(hashtext(institution_id::text || basis || value)) % 256), '{}')
  INTO buckets FROM added;

  -- Two transactions writing donors that share a key, had or new, must see each other's keys
  -- before they look for pairs: each takes a lock per key, in one order, and the later one's
  -- next statement sees what the earlier one committed. Keys fall into 256 buckets, so an
  -- import's chunk holds at most 256 locks.
  PERFORM pg_advisory_xact_lock(1735030000, bucket)
  FROM (SELECT DISTINCT unnest(buckets) AS bucket ORDER BY 1) AS ordered;

  -- The pairs as the keys now make them; the given donors' other pairs go (a dismissed one only
  -- with its donor), and the ones found are added or brought up to date.
  WITH found AS (
    SELECT institution_id, low AS donor_id, high AS other_donor_id,
      CASE WHEN 'email' = ANY (bases) THEN 100
        WHEN bases && ARRAY['phone', 'postal_code'] THEN 80 ELSE 50 END AS score,
      bases AS matched_on
    FROM (
      SELECT k.institution_id, least(k.donor_id, o.donor_id) AS low,
        greatest(k.donor_id, o.donor_id) AS high,
        array_agg(DISTINCT k.basis ORDER BY k.basis) AS bases
      FROM donor_match_keys AS k
      JOIN unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
        ON k.institution_id = a.institution_id AND k.donor_id = a.donor_id
      JOIN donor_match_keys AS o
        ON o.institution_id = k.institution_id AND o.role_class = k.role_class
        AND o.basis = k.basis AND o.value = k.value AND o.donor_id <> k.donor_id
      GROUP BY 1, 2, 3) AS matches),
  gone AS (
    DELETE FROM duplicate_pairs AS p
    USING unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
    WHERE NOT created AND p.institution_id = a.institution_id
      AND (p.donor_id = a.donor_id OR p.other_donor_id = a.donor_id)
      AND (p.dismissed_at IS NULL OR NOT EXISTS (
        SELECT FROM donors AS d WHERE d.institution_id = a.institution_id AND d.id = a.donor_id))
      AND NOT EXISTS (
        SELECT FROM found AS f
        WHERE f.institution_id = p.institution_id AND f.donor_id = p.donor_id
          AND f.other_donor_id = p.other_donor_id))
  INSERT INTO duplicate_pairs AS p (institution_id, donor_id, other_donor_id, score, matched_on)
  SELECT institution_id, donor_id, other_donor_id, score, matched_on FROM found
  ORDER BY institution_id, donor_id, other_donor_id
  ON CONFLICT (institution_id, donor_id, other_donor_id) DO UPDATE
    SET score = excluded.score, matched_on = excluded.matched_on, updated_at = now()
    WHERE p.dismissed_at IS NULL
      AND (p.score, p.matched_on) IS DISTINCT FROM (excluded.score, excluded.matched_on);
END
$$;

DROP FUNCTION lock_match_keys(integer[]);

CREATE OR REPLACE FUNCTION donor_match_keys_of(d donors) RETURNS TABLE (basis text, value text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT basis, value FROM (
    SELECT 'email' AS basis, nullif(lower(btrim(address)), '') AS value
    FROM unnest(ARRAY(SELECT e ->> 'address' FROM jsonb_array_elements(d.emails) AS e)
      || d.email) AS address
    UNION ALL
    SELECT 'name', match_name(d)
    UNION ALL
    SELECT 'phone', match_name(d) || '|' || nullif(regexp_replace(number, '\D', '', 'g'), '')
    FROM unnest(ARRAY(SELECT e ->> 'number' FROM jsonb_array_elements(d.phones) AS e)
      || d.phone) AS number
    UNION ALL
    SELECT 'postal_code',
      match_name(d) || '|' || nullif(lower(regexp_replace(code, '[^[:alnum:]]', '', 'g')), '')
    FROM unnest(ARRAY(SELECT e ->> 'postal_code' FROM jsonb_array_elements(d.addresses) AS e)
      || (d.address ->> 'postal_code')) AS code
  ) AS keys
  WHERE value IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION match_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(btrim(regexp_replace(lower(regexp_replace(
    normalize(value, NFKD), '[\u0300-\u036f]', '', 'g')), '\s+', ' ', 'g')), '')
$$;
