-- Up Migration

-- The duplicate rule of 1735030000000 unchanged, at less cost per write (issue 31: a donor
-- create with the matching ran at 0.62x one without). Every function keeps its name, signature
-- and result, and the keys and pairs already written are the ones these functions give, so no
-- row is rewritten. What changes is how often things are computed:
--
--   * match_text skips Unicode normalisation and the accent regex for ASCII text, where both are
--     the identity (no ASCII character has a decomposition, none is a combining mark);
--   * a donor's name is computed once per donor, not once per key basis (the inlined name
--     expression used to be evaluated in each branch's filter and again in its output);
--   * a create, the common write, takes its keys from the statement's transition table in one
--     statement that also takes the key locks, instead of looking each new donor up again.

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

CREATE OR REPLACE FUNCTION donors_refresh_duplicates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  institution_ids bigint[];
  donor_ids bigint[];
  locked integer;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- New donors have no keys nor pairs yet: their keys come straight from the transition
    -- table, and the same statement takes the locks of refresh_donor_duplicates (which see).
    WITH added AS (
      INSERT INTO donor_match_keys (institution_id, donor_id, role_class, basis, value)
      SELECT d.institution_id, d.id, match_role_class(d.role), key.basis, key.value
      FROM new_donors AS d
      CROSS JOIN LATERAL donor_match_keys_of(d) AS key
      WHERE d.status NOT IN ('merged', 'erased')
      RETURNING institution_id, basis, value)
    SELECT count(pg_advisory_xact_lock(1735030000, bucket)) INTO locked
    FROM (SELECT DISTINCT abs(hashtext(institution_id::text || basis || value)) % 256 AS bucket
      FROM added ORDER BY 1) AS ordered;
    IF locked = 0 THEN
      RETURN NULL;
    END IF;

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
