-- Up Migration

-- GET /reports/retention compares each unit's counted giving in two fiscal years. From
-- giving_months, that read every month of every unit's history (the key leads with the unit)
-- and grouped two years' months per unit: at 200,000 donors and five years, some 800,000 index
-- entries per level for each answer. giving_years keeps each unit's total per fiscal year, the
-- years leading its key, so an answer reads the two years' rows alone, already one per unit, in
-- unit order: some 130,000 rows there.
--
-- A fiscal year depends on the institution's fiscal_year_start_month, which may change at any
-- time and must change every answer at once (fundraising.md §5). So the rows are bucketed by the
-- start month recorded in institutions.giving_years_start_month when they were built; retention
-- reads them only while it equals fiscal_year_start_month, and otherwise sums giving_months, which
-- answer for any start month. A change of the setting leaves the rows as they are (the PATCH
-- stays instant); the worker's maintenance builds them again for the new month
-- (giving_years_rebuild), and until then retention takes the months' slower way.
--
-- Kept from giving_months' own changes by the statement triggers below, so every writer of the
-- months (a gift's triggers, a household change, a rebuild) keeps the years without knowing it.
-- A row holds the unit's counted total and gift count in the year; a row whose count falls to 0
-- is deleted, as the months' are.
-- A new institution's start month is 1 (the default), and it has no months yet: its years are
-- built for 1 from the start.
ALTER TABLE institutions ADD COLUMN giving_years_start_month smallint NOT NULL DEFAULT 1
  CHECK (giving_years_start_month BETWEEN 1 AND 12);

CREATE TABLE giving_years (
  institution_id bigint NOT NULL,
  level text NOT NULL CHECK (level IN ('donor', 'household')),
  fiscal_year integer NOT NULL,
  unit_id bigint NOT NULL,
  total numeric(16, 2) NOT NULL,
  gift_count integer NOT NULL,
  CONSTRAINT giving_years_pkey PRIMARY KEY (institution_id, level, fiscal_year, unit_id)
    INCLUDE (total)
);

-- The fiscal year (its end year) of a month, for a start month: as fiscalYearOf in
-- common/reports/fiscalYear.ts.
CREATE FUNCTION fiscal_year_of_month(month date, start_month integer) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT extract(year FROM month + make_interval(months => (13 - start_month) % 12))::integer
$$;

-- Writers of the years hold each institution they touch shared (an advisory lock, in memory,
-- until they commit); a rebuild holds it exclusively. A rebuild so waits for every write in
-- flight to commit and reads what they wrote, and a write that comes after reads the start month
-- the rebuild recorded: no row is ever added under a start month other than the recorded one.
CREATE FUNCTION giving_years_hold(institutions bigint[], exclusive boolean) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  IF exclusive THEN
    PERFORM pg_advisory_xact_lock(1735160000, (i % 2147483648)::integer)
    FROM (SELECT DISTINCT i FROM unnest(institutions) AS i ORDER BY i) AS held;
  ELSE
    PERFORM pg_advisory_xact_lock_shared(1735160000, (i % 2147483648)::integer)
    FROM (SELECT DISTINCT i FROM unnest(institutions) AS i ORDER BY i) AS held;
  END IF;
END
$$;

-- A change of some months of units: what giving_years_apply adds to their years.
CREATE TYPE giving_month_change AS (
  institution_id bigint,
  level text,
  unit_id bigint,
  month date,
  total numeric,
  gift_count integer
);

-- Adds the changes to each unit's years under the recorded start month, in key order of the
-- months (unit, then year: the order the months' own writes take their locks in), and deletes
-- the years their changes emptied.
CREATE FUNCTION giving_years_apply(changes giving_month_change[]) RETURNS void
  LANGUAGE plpgsql AS $$
DECLARE
  institutions bigint[];
  levels text[];
  years integer[];
  units bigint[];
BEGIN
  IF cardinality(changes) = 0 THEN
    RETURN;
  END IF;
  PERFORM giving_years_hold(ARRAY(SELECT c.institution_id FROM unnest(changes) AS c), false);
  WITH applied AS (
    INSERT INTO giving_years AS y (institution_id, level, fiscal_year, unit_id, total, gift_count)
    SELECT c.institution_id, c.level, fiscal_year_of_month(c.month, i.giving_years_start_month),
           c.unit_id, sum(c.total), sum(c.gift_count)
    FROM unnest(changes) AS c
    JOIN institutions i ON i.id = c.institution_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(c.total) <> 0 OR sum(c.gift_count) <> 0
    ORDER BY 1, 2, 4, 3
    ON CONFLICT (institution_id, level, fiscal_year, unit_id) DO UPDATE
      SET total = y.total + excluded.total, gift_count = y.gift_count + excluded.gift_count
    RETURNING y.institution_id, y.level, y.fiscal_year, y.unit_id, y.gift_count)
  SELECT array_agg(institution_id), array_agg(level), array_agg(fiscal_year), array_agg(unit_id)
  INTO institutions, levels, years, units
  FROM applied WHERE gift_count = 0;
  IF institutions IS NOT NULL THEN
    DELETE FROM giving_years y
    USING unnest(institutions, levels, years, units) AS e(institution_id, level, fiscal_year, unit_id)
    WHERE y.institution_id = e.institution_id AND y.level = e.level
      AND y.fiscal_year = e.fiscal_year AND y.unit_id = e.unit_id AND y.gift_count = 0;
  END IF;
END
$$;

-- One function for the three triggers: transition tables come one event per trigger. An update
-- of a month takes its old figures away and adds its new ones (giving_years_apply sums them per
-- year: no join of the two transition tables, which have no index).
CREATE FUNCTION giving_years_follow_months() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes giving_month_change[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    changes := ARRAY(
      SELECT ROW(m.institution_id, m.level, m.unit_id, m.month, m.total,
                 m.gift_count)::giving_month_change
      FROM added_months m);
  ELSIF TG_OP = 'DELETE' THEN
    changes := ARRAY(
      SELECT ROW(m.institution_id, m.level, m.unit_id, m.month, -m.total,
                 -m.gift_count)::giving_month_change
      FROM removed_months m);
  ELSE
    changes := ARRAY(
      SELECT ROW(m.institution_id, m.level, m.unit_id, m.month, m.total,
                 m.gift_count)::giving_month_change
      FROM added_months m
      UNION ALL
      SELECT ROW(m.institution_id, m.level, m.unit_id, m.month, -m.total,
                 -m.gift_count)::giving_month_change
      FROM removed_months m);
  END IF;
  PERFORM giving_years_apply(changes);
  RETURN NULL;
END
$$;

CREATE TRIGGER giving_years_after_insert AFTER INSERT ON giving_months
  REFERENCING NEW TABLE AS added_months
  FOR EACH STATEMENT EXECUTE FUNCTION giving_years_follow_months();
CREATE TRIGGER giving_years_after_update AFTER UPDATE ON giving_months
  REFERENCING OLD TABLE AS removed_months NEW TABLE AS added_months
  FOR EACH STATEMENT EXECUTE FUNCTION giving_years_follow_months();
CREATE TRIGGER giving_years_after_delete AFTER DELETE ON giving_months
  REFERENCING OLD TABLE AS removed_months
  FOR EACH STATEMENT EXECUTE FUNCTION giving_years_follow_months();

-- An institution's years made anew from its months, under its start month as it is now, which
-- is recorded: what the worker's maintenance runs for an institution whose recorded month is not
-- its start month. The write holds the institution exclusively (giving_years_hold) first; the
-- start month is read after, so a change committed meanwhile is either seen here or left for the
-- next rebuild (the recorded month then differs again).
CREATE FUNCTION giving_years_rebuild(institution bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  start_month integer;
BEGIN
  PERFORM giving_years_hold(ARRAY[institution], true);
  SELECT fiscal_year_start_month INTO start_month FROM institutions WHERE id = institution;
  DELETE FROM giving_years WHERE institution_id = institution;
  INSERT INTO giving_years (institution_id, level, fiscal_year, unit_id, total, gift_count)
  SELECT institution_id, level, fiscal_year_of_month(month, start_month), unit_id, sum(total),
         sum(gift_count)
  FROM giving_months WHERE institution_id = institution
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4;
  UPDATE institutions SET giving_years_start_month = start_month WHERE id = institution;
END
$$;

-- The years of the months already kept.
UPDATE institutions SET giving_years_start_month = fiscal_year_start_month;
INSERT INTO giving_years (institution_id, level, fiscal_year, unit_id, total, gift_count)
SELECT m.institution_id, m.level, fiscal_year_of_month(m.month, i.fiscal_year_start_month),
       m.unit_id, sum(m.total), sum(m.gift_count)
FROM giving_months m JOIN institutions i ON i.id = m.institution_id
GROUP BY 1, 2, 3, 4
ORDER BY 1, 2, 3, 4;

-- Down Migration

DROP TRIGGER giving_years_after_delete ON giving_months;
DROP TRIGGER giving_years_after_update ON giving_months;
DROP TRIGGER giving_years_after_insert ON giving_months;
DROP FUNCTION giving_years_rebuild(bigint);
DROP FUNCTION giving_years_follow_months();
DROP FUNCTION giving_years_apply(giving_month_change[]);
DROP TYPE giving_month_change;
DROP FUNCTION giving_years_hold(bigint[], boolean);
DROP FUNCTION fiscal_year_of_month(date, integer);
DROP TABLE giving_years;
ALTER TABLE institutions DROP COLUMN giving_years_start_month;
