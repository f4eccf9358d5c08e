-- Up Migration

-- The fiscal-year reports (fundraising.md §5) read what each donor, and each household, gave per
-- calendar month: any fiscal year, whatever month it starts in, is the sum of twelve of these
-- rows, so a change of fiscal_year_start_month needs no rebuild, and a report reads a few rows
-- per donor instead of every gift.
--
-- A gift counts (giving_net) while it is posted and its base amount net of refunds is above 0:
-- voided and fully refunded gifts count nothing, a partial refund counts net. Pledges are
-- another table: a commitment never counts, its payments are gifts and do.
--
-- Two levels: `donor` (unit_id is the gift's donor) and `household` (unit_id is the donor's
-- household, or the donor itself when it has none). A row holds the unit's counted gifts of one
-- month: their net base amounts and how many. A row whose count falls to 0 is deleted by the
-- write that empties it, so every row has gifts.
--
-- Kept by the triggers below, in the transaction of the write, whatever the write: a gift's
-- create (alone, grouped, imported), update, refund, void or delete, and a donor joining or
-- leaving a household. A trigger is the one place that sees every change of a gift, so no write
-- path can forget it. Each statement applies its changes in one INSERT, in key order, so two
-- statements take their row locks in the same order and never wait on each other in a circle.
CREATE TABLE giving_months (
  institution_id bigint NOT NULL,
  level text NOT NULL CHECK (level IN ('donor', 'household')),
  unit_id bigint NOT NULL,
  month date NOT NULL,
  total numeric(16, 2) NOT NULL,
  gift_count integer NOT NULL,
  -- The figures ride in the key's index, so that a report reads the index alone (retention
  -- reads two fiscal years of every unit of the institution).
  CONSTRAINT giving_months_pkey PRIMARY KEY (institution_id, level, unit_id, month)
    INCLUDE (total, gift_count)
);

-- What a gift counts: its base amount net of refunds while posted and above 0, else NULL.
CREATE FUNCTION giving_net(status text, base_amount numeric, base_amount_refunded numeric)
  RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN status = 'posted' AND base_amount > base_amount_refunded
              THEN base_amount - base_amount_refunded END
$$;

CREATE TYPE giving_change AS (
  institution_id bigint,
  donor_id bigint,
  month date,
  total numeric,
  gift_count integer
);

-- Applies changes (one per counted gift added or taken away) to both levels, in key order; then
-- deletes the rows a removal emptied.
CREATE FUNCTION giving_months_apply(changes giving_change[]) RETURNS void
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

-- One function for the three triggers: transition tables come one event per trigger.
CREATE FUNCTION giving_months_follow_gifts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes giving_change[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    changes := ARRAY(
      SELECT ROW(g.institution_id, g.donor_id, date_trunc('month', g.gift_date)::date,
                 giving_net(g.status, g.base_amount, g.base_amount_refunded), 1)::giving_change
      FROM added_gifts g
      WHERE giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL);
  ELSIF TG_OP = 'DELETE' THEN
    changes := ARRAY(
      SELECT ROW(g.institution_id, g.donor_id, date_trunc('month', g.gift_date)::date,
                 -giving_net(g.status, g.base_amount, g.base_amount_refunded), -1)::giving_change
      FROM removed_gifts g
      WHERE giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL);
  ELSE
    -- An update that changes nothing counted (a note, a receipt, an acknowledgement) cancels
    -- out to no change at all.
    changes := ARRAY(
      SELECT ROW(c.institution_id, c.donor_id, c.month, c.total, c.gift_count)::giving_change
      FROM (SELECT g.id, g.institution_id, g.donor_id, date_trunc('month', g.gift_date)::date AS month,
                   -giving_net(g.status, g.base_amount, g.base_amount_refunded) AS total,
                   -1 AS gift_count
            FROM removed_gifts g
            WHERE giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL
            UNION ALL
            SELECT g.id, g.institution_id, g.donor_id, date_trunc('month', g.gift_date)::date,
                   giving_net(g.status, g.base_amount, g.base_amount_refunded), 1
            FROM added_gifts g
            WHERE giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL) c
      WHERE NOT EXISTS (
        SELECT 1 FROM removed_gifts o JOIN added_gifts n ON n.id = o.id
        WHERE o.id = c.id AND n.donor_id = o.donor_id
          AND date_trunc('month', n.gift_date) = date_trunc('month', o.gift_date)
          AND giving_net(n.status, n.base_amount, n.base_amount_refunded)
              IS NOT DISTINCT FROM giving_net(o.status, o.base_amount, o.base_amount_refunded)));
  END IF;
  PERFORM giving_months_apply(changes);
  RETURN NULL;
END
$$;

CREATE TRIGGER giving_months_after_insert AFTER INSERT ON gifts
  REFERENCING NEW TABLE AS added_gifts
  FOR EACH STATEMENT EXECUTE FUNCTION giving_months_follow_gifts();
CREATE TRIGGER giving_months_after_update AFTER UPDATE ON gifts
  REFERENCING OLD TABLE AS removed_gifts NEW TABLE AS added_gifts
  FOR EACH STATEMENT EXECUTE FUNCTION giving_months_follow_gifts();
CREATE TRIGGER giving_months_after_delete AFTER DELETE ON gifts
  REFERENCING OLD TABLE AS removed_gifts
  FOR EACH STATEMENT EXECUTE FUNCTION giving_months_follow_gifts();

-- A donor joining, leaving or changing household takes its months from one household unit to
-- the other (its donor-level rows are its whole counted history).
CREATE FUNCTION giving_months_follow_household() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER giving_months_after_household_change AFTER UPDATE OF household_id ON donors
  FOR EACH ROW WHEN (OLD.household_id IS DISTINCT FROM NEW.household_id)
  EXECUTE FUNCTION giving_months_follow_household();

-- An institution's rows made anew from its gifts: what the triggers keep, recomputed. The
-- migration fills the table with it; an operator (or a benchmark that wrote gifts with the
-- triggers off) may run it for one institution.
CREATE FUNCTION giving_months_rebuild(institution bigint) RETURNS void LANGUAGE sql AS $$
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

-- The months of the gifts already recorded.
SELECT giving_months_rebuild(id) FROM institutions;

-- Down Migration

DROP TRIGGER giving_months_after_household_change ON donors;
DROP FUNCTION giving_months_rebuild(bigint);
DROP FUNCTION giving_months_follow_household();
DROP TRIGGER giving_months_after_delete ON gifts;
DROP TRIGGER giving_months_after_update ON gifts;
DROP TRIGGER giving_months_after_insert ON gifts;
DROP FUNCTION giving_months_follow_gifts();
DROP FUNCTION giving_months_apply(giving_change[]);
DROP TYPE giving_change;
DROP FUNCTION giving_net(text, numeric, numeric);
DROP TABLE giving_months;
