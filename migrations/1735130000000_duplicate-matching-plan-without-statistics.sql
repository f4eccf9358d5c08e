-- Up Migration

-- Duplicate matching's pair search, written to have one plan whatever the statistics (issue 29:
-- a donor create with 3 emails, 2 phones and 2 addresses ran at 0.41x a plain one once matching
-- was on; 0.90x before). The keys, pairs and scores are those of 1735100000000: only the index a
-- key's matches are read through, and the form of the two statements that read them, change.
--
-- A trigger's statements are planned once per session and kept until the table's statistics
-- change. A session that first wrote a donor while donor_match_keys was small and had never been
-- analysed (a new database; any database without autovacuum) planned the pair search with no
-- way to tell the primary key (institution_id, donor_id, basis, value) from the value index
-- (institution_id, role_class, basis, value): both cost the same on a table of a few pages, and
-- the primary key came first. Bound on institution_id alone, it reads every key of the
-- institution for each key of the new donor, and the session kept that plan as the table grew:
-- in bench:constituents the worker's sessions spent 4 to 7 ms of Postgres CPU a create with
-- lists (7 keys) against 1.4 with the matching off. A session whose first write was a chunk of
-- many donors planned a merge join over the whole table instead, and kept that for its single
-- creates too.
--
-- So a key's matches are read through an index whose first column is the expression
-- institution_id + 0, compared as that expression: the primary key, whose first column is the
-- plain institution_id, cannot serve that lookup except by reading all of itself, which no
-- estimate makes cheap. And both lookups (a donor's keys, then each key's matches) are LATERAL
-- subqueries kept apart by OFFSET 0, so they are index lookups per row, never a hash or merge
-- join over the table, however many donors the statement that planned them wrote. On a large
-- table, build the index by hand first with CREATE INDEX CONCURRENTLY under this name; the
-- migration then only drops the old one.
CREATE INDEX IF NOT EXISTS donor_match_keys_match_idx
  ON donor_match_keys ((institution_id + 0), role_class, basis, value);
DROP INDEX donor_match_keys_value_idx;

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
      FROM unnest(institution_ids, donor_ids) AS a (institution_id, donor_id)
      CROSS JOIN LATERAL (
        SELECT k.* FROM donor_match_keys AS k
        WHERE k.institution_id = a.institution_id AND k.donor_id = a.donor_id OFFSET 0) AS k
      CROSS JOIN LATERAL (
        SELECT o.donor_id FROM donor_match_keys AS o
        WHERE o.institution_id + 0 = k.institution_id AND o.role_class = k.role_class
          AND o.basis = k.basis AND o.value = k.value AND o.donor_id <> k.donor_id
        OFFSET 0) AS o
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
      CROSS JOIN LATERAL (
        SELECT k.* FROM donor_match_keys AS k
        WHERE k.institution_id = n.institution_id AND k.donor_id = n.id OFFSET 0) AS k
      CROSS JOIN LATERAL (
        SELECT o.donor_id FROM donor_match_keys AS o
        WHERE o.institution_id + 0 = k.institution_id AND o.role_class = k.role_class
          AND o.basis = k.basis AND o.value = k.value AND o.donor_id <> k.donor_id
        OFFSET 0) AS o
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

CREATE INDEX donor_match_keys_value_idx
  ON donor_match_keys (institution_id, role_class, basis, value);

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

DROP INDEX donor_match_keys_match_idx;
