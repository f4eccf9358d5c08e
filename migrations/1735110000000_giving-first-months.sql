-- Up Migration

-- GET /reports/retention counts as new the units whose first counted gift ever falls in the
-- fiscal year. Read from giving_months, that was a look-up per unit that arrived in the year
-- (whether it had a month before the year before): at 200,000 donors, 36,000 probes and a third
-- of the report's time. Each unit's first counted month, kept here by the same triggers, makes it
-- one range count, and stays right whatever month the fiscal year starts in (a month is a month).
CREATE TABLE giving_first_months (
  institution_id bigint NOT NULL,
  level text NOT NULL CHECK (level IN ('donor', 'household')),
  unit_id bigint NOT NULL,
  month date NOT NULL,
  CONSTRAINT giving_first_months_pkey PRIMARY KEY (institution_id, level, unit_id)
);
-- Retention counts the units whose first month falls in a fiscal year. On `institution_id + 0`
-- (which retention names so): a unit's lookup by its key (institution_id, level, unit_id) cannot
-- use this index, so a trigger's plan made while the table was empty, when both indexes cost the
-- same, still takes the key (it read every first month of the institution per unit otherwise).
CREATE INDEX giving_first_months_month_idx
  ON giving_first_months ((institution_id + 0), level, month);

-- A unit's first month only falls when a write adds a month row, and only rises when one
-- empties the row it named. Writers that only add hold their units shared (an advisory lock,
-- in memory: no row is locked or written for a unit whose first month is no later than what it
-- adds, almost every gift) and lower a first month with least(), which commutes, so they need no
-- order among themselves. A write that empties rows holds its units exclusively and only then,
-- in a statement of its own, reads what remains: every add in flight has committed and is seen,
-- and every later add reads what this write leaves. The units are held after the month rows, as
-- every writer holds them, in one order (giving_first_months_hold), so no two writers wait in a
-- circle.

-- Holds units' first months: exclusively for a write that may raise one, else shared. A unit is
-- held by its bucket (its key's hash modulo 256, advisory lock 1735110000 and the bucket), so
-- that a write of a million units (an import, a rebuild) holds at most 256 locks; in the
-- buckets' order. A removal waits only for the adds in flight in its buckets, an add only for a
-- removal in flight in its own.
CREATE FUNCTION giving_first_months_hold(
  institutions bigint[], levels text[], units bigint[], exclusive boolean) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  buckets integer[] := ARRAY(
    SELECT DISTINCT abs(hashtext(t.institution_id || ':' || t.level || ':' || t.unit_id) % 256)
    FROM unnest(institutions, levels, units) AS t(institution_id, level, unit_id)
    ORDER BY 1);
BEGIN
  IF exclusive THEN
    PERFORM pg_advisory_xact_lock(1735110000, b) FROM unnest(buckets) WITH ORDINALITY AS o(b, n)
    ORDER BY n;
  ELSE
    PERFORM pg_advisory_xact_lock_shared(1735110000, b)
    FROM unnest(buckets) WITH ORDINALITY AS o(b, n) ORDER BY n;
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION giving_months_apply(changes giving_change[]) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  institutions bigint[];
  levels text[];
  units bigint[];
  months date[];
  counts integer[];
BEGIN
  IF cardinality(changes) = 0 THEN
    RETURN;
  END IF;
  WITH applied AS (
    INSERT INTO giving_months AS m (institution_id, level, unit_id, month, total, gift_count)
    SELECT c.institution_id, u.level, u.unit_id, c.month, sum(c.total), sum(c.gift_count)
    FROM unnest(changes) AS c
    -- A donor's household is read under FOR SHARE: a household change of the donor (which takes
    -- its rows from one household to the other) waits for this write, or this write for it and
    -- then reads the new household, so no change lands in a household the donor has left.
    JOIN (SELECT l.institution_id, l.id, l.household_id FROM donors l
          WHERE (l.institution_id, l.id) IN (SELECT institution_id, donor_id FROM unnest(changes))
          ORDER BY l.institution_id, l.id
          FOR SHARE) AS d ON d.institution_id = c.institution_id AND d.id = c.donor_id
    CROSS JOIN LATERAL (VALUES ('donor', c.donor_id),
                               ('household', coalesce(d.household_id, c.donor_id))) AS u(level, unit_id)
    GROUP BY c.institution_id, u.level, u.unit_id, c.month
    HAVING sum(c.total) <> 0 OR sum(c.gift_count) <> 0
    ORDER BY c.institution_id, u.level, u.unit_id, c.month
    ON CONFLICT (institution_id, level, unit_id, month) DO UPDATE
      SET total = m.total + excluded.total, gift_count = m.gift_count + excluded.gift_count
    RETURNING m.institution_id, m.level, m.unit_id, m.month, m.gift_count)
  SELECT array_agg(institution_id), array_agg(level), array_agg(unit_id), array_agg(month),
         array_agg(gift_count)
  INTO institutions, levels, units, months, counts
  FROM applied;
  IF institutions IS NULL THEN
    RETURN;
  END IF;
  -- Rows a removal emptied: every unit of the write held exclusively, else shared.
  PERFORM giving_first_months_hold(institutions, levels, units, 0 = ANY (counts));
  INSERT INTO giving_first_months AS f (institution_id, level, unit_id, month)
  SELECT t.institution_id, t.level, t.unit_id, min(t.month)
  FROM unnest(institutions, levels, units, months, counts)
    AS t(institution_id, level, unit_id, month, gift_count)
  -- One lookup of the key per unit and month, whatever the table's size when the plan was made.
  WHERE t.gift_count > 0
    AND t.month < coalesce((SELECT e.month FROM giving_first_months e
                            WHERE e.institution_id = t.institution_id AND e.level = t.level
                              AND e.unit_id = t.unit_id), 'infinity')
  GROUP BY t.institution_id, t.level, t.unit_id
  ORDER BY t.institution_id, t.level, t.unit_id
  ON CONFLICT (institution_id, level, unit_id) DO UPDATE SET month = excluded.month
    WHERE excluded.month < f.month;
  IF 0 = ANY (counts) THEN
    DELETE FROM giving_months m
    USING unnest(institutions, levels, units, months, counts)
      AS t(institution_id, level, unit_id, month, gift_count)
    WHERE t.gift_count = 0 AND m.institution_id = t.institution_id AND m.level = t.level
      AND m.unit_id = t.unit_id AND m.month = t.month AND m.gift_count = 0;
    PERFORM giving_first_months_refresh(institutions, levels, units, counts);
  END IF;
END
$$;

-- The first months of the units whose rows were emptied (gift_count 0 among `counts`), read
-- anew from giving_months; a unit left with no row has none.
CREATE FUNCTION giving_first_months_refresh(
  institutions bigint[], levels text[], units bigint[], counts integer[]) RETURNS void
  LANGUAGE sql AS $$
  WITH emptied AS (
    SELECT DISTINCT t.institution_id, t.level, t.unit_id
    FROM unnest(institutions, levels, units, counts) AS t(institution_id, level, unit_id, gift_count)
    WHERE t.gift_count = 0),
  found AS (
    SELECT e.institution_id, e.level, e.unit_id,
           (SELECT min(m.month) FROM giving_months m
            WHERE m.institution_id = e.institution_id AND m.level = e.level
              AND m.unit_id = e.unit_id) AS month
    FROM emptied e),
  gone AS (
    DELETE FROM giving_first_months f USING found
    WHERE f.institution_id = found.institution_id AND f.level = found.level
      AND f.unit_id = found.unit_id AND found.month IS NULL)
  UPDATE giving_first_months f SET month = found.month FROM found
  WHERE f.institution_id = found.institution_id AND f.level = found.level
    AND f.unit_id = found.unit_id AND f.month <> found.month;
$$;

-- A donor joining, leaving or changing household takes its months from one household unit to
-- the other (its donor-level rows are its whole counted history): the unit it joins may start
-- earlier, the unit it leaves later.
CREATE OR REPLACE FUNCTION giving_months_follow_household() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  left_unit bigint := coalesce(OLD.household_id, OLD.id);
  joined_unit bigint := coalesce(NEW.household_id, NEW.id);
BEGIN
  INSERT INTO giving_months AS m (institution_id, level, unit_id, month, total, gift_count)
  SELECT own.institution_id, 'household', moved.unit_id, own.month,
         moved.sign * own.total, moved.sign * own.gift_count
  FROM giving_months own
  CROSS JOIN LATERAL (VALUES (left_unit, -1), (joined_unit, 1)) AS moved(unit_id, sign)
  WHERE own.institution_id = NEW.institution_id AND own.level = 'donor' AND own.unit_id = NEW.id
  ORDER BY moved.unit_id, own.month
  ON CONFLICT (institution_id, level, unit_id, month) DO UPDATE
    SET total = m.total + excluded.total, gift_count = m.gift_count + excluded.gift_count;
  DELETE FROM giving_months
  WHERE institution_id = NEW.institution_id AND level = 'household'
    AND unit_id = left_unit AND gift_count = 0;
  PERFORM giving_first_months_hold(ARRAY[NEW.institution_id, NEW.institution_id],
                                   ARRAY['household', 'household'],
                                   ARRAY[left_unit, joined_unit], true);
  INSERT INTO giving_first_months AS f (institution_id, level, unit_id, month)
  SELECT NEW.institution_id, 'household', joined_unit, min(own.month)
  FROM giving_months own
  WHERE own.institution_id = NEW.institution_id AND own.level = 'donor' AND own.unit_id = NEW.id
  HAVING min(own.month) IS NOT NULL
  ON CONFLICT (institution_id, level, unit_id) DO UPDATE SET month = excluded.month
    WHERE excluded.month < f.month;
  PERFORM giving_first_months_refresh(ARRAY[NEW.institution_id], ARRAY['household'],
                                      ARRAY[left_unit], ARRAY[0]);
  RETURN NULL;
END
$$;

-- An institution's rows made anew from its gifts: what the triggers keep, recomputed, first
-- months included.
CREATE OR REPLACE FUNCTION giving_months_rebuild(institution bigint) RETURNS void LANGUAGE sql AS $$
  DELETE FROM giving_months WHERE institution_id = institution;
  INSERT INTO giving_months (institution_id, level, unit_id, month, total, gift_count)
  SELECT g.institution_id, u.level, u.unit_id, date_trunc('month', g.gift_date)::date,
         sum(giving_net(g.status, g.base_amount, g.base_amount_refunded)), count(*)
  FROM gifts g
  JOIN donors d ON d.institution_id = g.institution_id AND d.id = g.donor_id
  CROSS JOIN LATERAL (VALUES ('donor', g.donor_id),
                             ('household', coalesce(d.household_id, g.donor_id))) AS u(level, unit_id)
  WHERE g.institution_id = institution
    AND giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL
  GROUP BY 1, 2, 3, 4;
  DELETE FROM giving_first_months WHERE institution_id = institution;
  INSERT INTO giving_first_months (institution_id, level, unit_id, month)
  SELECT institution_id, level, unit_id, min(month) FROM giving_months
  WHERE institution_id = institution
  GROUP BY 1, 2, 3;
$$;

-- The first months of the rows already kept.
INSERT INTO giving_first_months (institution_id, level, unit_id, month)
SELECT institution_id, level, unit_id, min(month) FROM giving_months GROUP BY 1, 2, 3;

-- Down Migration

CREATE OR REPLACE FUNCTION giving_months_rebuild(institution bigint) RETURNS void LANGUAGE sql AS $$
  DELETE FROM giving_months WHERE institution_id = institution;
  INSERT INTO giving_months (institution_id, level, unit_id, month, total, gift_count)
  SELECT g.institution_id, u.level, u.unit_id, date_trunc('month', g.gift_date)::date,
         sum(giving_net(g.status, g.base_amount, g.base_amount_refunded)), count(*)
  FROM gifts g
  JOIN donors d ON d.institution_id = g.institution_id AND d.id = g.donor_id
  CROSS JOIN LATERAL (VALUES ('donor', g.donor_id),
                             ('household', coalesce(d.household_id, g.donor_id))) AS u(level, unit_id)
  WHERE g.institution_id = institution
    AND giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL
  GROUP BY 1, 2, 3, 4;
$$;

CREATE OR REPLACE FUNCTION giving_months_follow_household() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO giving_months AS m (institution_id, level, unit_id, month, total, gift_count)
  SELECT own.institution_id, 'household', moved.unit_id, own.month,
         moved.sign * own.total, moved.sign * own.gift_count
  FROM giving_months own
  CROSS JOIN LATERAL (VALUES (coalesce(OLD.household_id, OLD.id), -1),
                             (coalesce(NEW.household_id, NEW.id), 1)) AS moved(unit_id, sign)
  WHERE own.institution_id = NEW.institution_id AND own.level = 'donor' AND own.unit_id = NEW.id
  ORDER BY moved.unit_id, own.month
  ON CONFLICT (institution_id, level, unit_id, month) DO UPDATE
    SET total = m.total + excluded.total, gift_count = m.gift_count + excluded.gift_count;
  DELETE FROM giving_months
  WHERE institution_id = NEW.institution_id AND level = 'household'
    AND unit_id = coalesce(OLD.household_id, OLD.id) AND gift_count = 0;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION giving_months_apply(changes giving_change[]) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(changes) = 0 THEN
    RETURN;
  END IF;
  INSERT INTO giving_months AS m (institution_id, level, unit_id, month, total, gift_count)
  SELECT c.institution_id, u.level, u.unit_id, c.month, sum(c.total), sum(c.gift_count)
  FROM unnest(changes) AS c
  -- A donor's household is read under FOR SHARE: a household change of the donor (which takes
  -- its rows from one household to the other) waits for this write, or this write for it and
  -- then reads the new household, so no change lands in a household the donor has left.
  JOIN (SELECT l.institution_id, l.id, l.household_id FROM donors l
        WHERE (l.institution_id, l.id) IN (SELECT institution_id, donor_id FROM unnest(changes))
        ORDER BY l.institution_id, l.id
        FOR SHARE) AS d ON d.institution_id = c.institution_id AND d.id = c.donor_id
  CROSS JOIN LATERAL (VALUES ('donor', c.donor_id),
                             ('household', coalesce(d.household_id, c.donor_id))) AS u(level, unit_id)
  GROUP BY c.institution_id, u.level, u.unit_id, c.month
  HAVING sum(c.total) <> 0 OR sum(c.gift_count) <> 0
  ORDER BY c.institution_id, u.level, u.unit_id, c.month
  ON CONFLICT (institution_id, level, unit_id, month) DO UPDATE
    SET total = m.total + excluded.total, gift_count = m.gift_count + excluded.gift_count;
  IF EXISTS (SELECT 1 FROM unnest(changes) AS c WHERE c.gift_count < 0) THEN
    DELETE FROM giving_months m
    USING (SELECT DISTINCT c.institution_id, u.level, u.unit_id, c.month
           FROM unnest(changes) AS c
           JOIN donors d ON d.institution_id = c.institution_id AND d.id = c.donor_id
           CROSS JOIN LATERAL (VALUES ('donor', c.donor_id),
                                      ('household', coalesce(d.household_id, c.donor_id)))
                                AS u(level, unit_id)
           WHERE c.gift_count < 0) AS emptied
    WHERE m.institution_id = emptied.institution_id AND m.level = emptied.level
      AND m.unit_id = emptied.unit_id AND m.month = emptied.month AND m.gift_count = 0;
  END IF;
END
$$;

DROP FUNCTION giving_first_months_refresh(bigint[], text[], bigint[], integer[]);
DROP FUNCTION giving_first_months_hold(bigint[], text[], bigint[], boolean);
DROP TABLE giving_first_months;
