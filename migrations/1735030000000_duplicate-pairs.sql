-- Up Migration

-- Duplicate detection (constituents.md §5), kept current by the writes themselves: triggers on
-- donors maintain each donor's match keys and the candidate pairs in the write's own
-- transaction, so that no path that writes donors (the API's create, update and delete, the
-- one-statement create and its group commit, an import's batched inserts, a merge setting a
-- status) can forget it. The rule lives here and nowhere else:
--
--   two donors of one role class (Individual; Household; Organization, Foundation and
--   Corporation) are a candidate pair when they share
--     an email (primary or listed)                                  -> 100
--     a name and a phone (primary or listed) or a postal code       ->  80
--     a name only                                                   ->  50
--   and neither is `merged` or `erased`. A dismissed pair keeps its row and never returns.
--
-- A name is first and last name for an Individual or a Household, `organization_name` for an
-- organization role. Text is compared normalised (match_text): accents removed (Unicode NFKD,
-- combining marks dropped), lower case, spaces around and repeated inside ignored. Emails are
-- compared in lower case; phones by their digits; postal codes by their letters and digits.

CREATE FUNCTION match_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(btrim(regexp_replace(lower(regexp_replace(
    normalize(value, NFKD), '[\u0300-\u036f]', '', 'g')), '\s+', ' ', 'g')), '')
$$;

CREATE FUNCTION match_role_class(role text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE role WHEN 'Individual' THEN 'individual' WHEN 'Household' THEN 'household'
    ELSE 'organization' END
$$;

-- A donor's name as the rule compares it; null when it has none.
CREATE FUNCTION match_name(d donors) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN d.role IN ('Individual', 'Household')
    THEN coalesce(match_text(d.first_name), '') || '|' || match_text(d.last_name)
    ELSE match_text(d.organization_name) END
$$;

-- Every key of one donor: (basis, value). A phone or postal code is a key only with the name,
-- so that two strangers sharing a switchboard or a street are not candidates.
CREATE FUNCTION donor_match_keys_of(d donors) RETURNS TABLE (basis text, value text)
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

CREATE TABLE donor_match_keys (
  institution_id bigint NOT NULL,
  donor_id bigint NOT NULL,
  role_class text NOT NULL,
  basis text NOT NULL,
  value text NOT NULL,
  CONSTRAINT donor_match_keys_pkey PRIMARY KEY (institution_id, donor_id, basis, value)
);
CREATE INDEX donor_match_keys_value_idx
  ON donor_match_keys (institution_id, role_class, basis, value);

-- One row per pair, the lower donor id first, so its id stays while the pair holds. A pair that
-- stops matching is deleted (it may return later as a new pair); a dismissed one is kept, so
-- that it never returns, until one of its donors is deleted.
CREATE TABLE duplicate_pairs (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  other_donor_id bigint NOT NULL,
  score numeric(3, 0) NOT NULL,
  matched_on text[] NOT NULL,
  dismissed_at timestamptz(3),
  dismiss_reason text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT duplicate_pairs_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT duplicate_pairs_donors_key UNIQUE (institution_id, donor_id, other_donor_id),
  CONSTRAINT duplicate_pairs_order_check CHECK (donor_id < other_donor_id)
);
-- GET /duplicates: highest score first, then newest.
CREATE INDEX duplicate_pairs_score_idx ON duplicate_pairs (institution_id, score, id)
  WHERE dismissed_at IS NULL;
-- A donor's pairs, from either side (the unique key serves the lower one).
CREATE INDEX duplicate_pairs_other_donor_idx ON duplicate_pairs (institution_id, other_donor_id);

-- Recomputes the keys and pairs of the given donors from their rows as they now are (a donor
-- no longer there has none). `created`: the donors are new, so they have no keys nor pairs yet
-- (a create is the common write: it skips the two deletes).
CREATE FUNCTION refresh_donor_duplicates(
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

CREATE FUNCTION donors_refresh_duplicates() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER donors_duplicates_insert AFTER INSERT ON donors
  REFERENCING NEW TABLE AS new_donors
  FOR EACH STATEMENT EXECUTE FUNCTION donors_refresh_duplicates();
CREATE TRIGGER donors_duplicates_update AFTER UPDATE ON donors
  REFERENCING OLD TABLE AS old_donors NEW TABLE AS new_donors
  FOR EACH STATEMENT EXECUTE FUNCTION donors_refresh_duplicates();
CREATE TRIGGER donors_duplicates_delete AFTER DELETE ON donors
  REFERENCING OLD TABLE AS old_donors
  FOR EACH STATEMENT EXECUTE FUNCTION donors_refresh_duplicates();

-- The donor rows of an import that, as they were written, had candidates (docs/imports.md):
-- GET /imports/{id}/duplicates lists them with the candidates they have now.
CREATE TABLE import_row_duplicates (
  institution_id bigint NOT NULL,
  import_id bigint NOT NULL,
  row_number integer NOT NULL,
  donor_id bigint NOT NULL,
  CONSTRAINT import_row_duplicates_pkey PRIMARY KEY (institution_id, import_id, row_number),
  CONSTRAINT import_row_duplicates_import_fkey FOREIGN KEY (institution_id, import_id)
    REFERENCES imports (institution_id, id) ON DELETE CASCADE
);

-- Donors written before this migration.
SELECT refresh_donor_duplicates(array_agg(institution_id), array_agg(id), true) FROM donors
HAVING count(*) > 0;

-- Down Migration

DROP TABLE import_row_duplicates;
DROP TRIGGER donors_duplicates_delete ON donors;
DROP TRIGGER donors_duplicates_update ON donors;
DROP TRIGGER donors_duplicates_insert ON donors;
DROP FUNCTION donors_refresh_duplicates();
DROP FUNCTION refresh_donor_duplicates(bigint[], bigint[], boolean);
DROP TABLE duplicate_pairs;
DROP TABLE donor_match_keys;
DROP FUNCTION donor_match_keys_of(donors);
DROP FUNCTION match_name(donors);
DROP FUNCTION match_role_class(text);
DROP FUNCTION match_text(text);
