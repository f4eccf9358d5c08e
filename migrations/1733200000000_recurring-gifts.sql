-- Up Migration

-- Recurring gifts (giving.md §6): a donor's standing instruction (monthly giving). The money moves
-- elsewhere; each payment is recorded here as a gift naming its recurring gift. What a recurring
-- gift has received and when the next payment is due are never stored: they are read from its
-- payments by recurring_gift_figures, so that no write of a gift (create, PATCH, refund, void,
-- delete) has to keep a copy up to date.

CREATE TABLE recurring_gifts (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  frequency text NOT NULL CHECK (frequency IN ('weekly', 'monthly', 'quarterly', 'annually')),
  start_on date NOT NULL,
  -- [{"fund_id", "amount"}], as a gift's designations are (without what was refunded).
  designations jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(designations) = 'array'),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'cancelled')),
  -- The day of the last paused → active change: payments the schedule expected while paused are
  -- not expected any more, so the schedule starts again at its first date on or after this day.
  resumed_on date,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT recurring_gifts_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT recurring_gifts_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id)
);
CREATE INDEX recurring_gifts_institution_donor_idx ON recurring_gifts (institution_id, donor_id, id);
CREATE INDEX recurring_gifts_institution_status_idx
  ON recurring_gifts (institution_id, status, id);

ALTER TABLE gifts
  ADD COLUMN recurring_gift_id bigint,
  ADD CONSTRAINT gifts_recurring_gift_fkey FOREIGN KEY (institution_id, recurring_gift_id)
    REFERENCES recurring_gifts (institution_id, id);
-- Every row of a recurring gift list reads its payments' figures through this index.
CREATE INDEX gifts_institution_recurring_gift_idx ON gifts (institution_id, recurring_gift_id)
  WHERE recurring_gift_id IS NOT NULL;

-- One period of a schedule.
CREATE FUNCTION recurring_gift_period(frequency text) RETURNS interval
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE frequency
    WHEN 'weekly' THEN interval '7 days'
    WHEN 'monthly' THEN interval '1 month'
    WHEN 'quarterly' THEN interval '3 months'
    WHEN 'annually' THEN interval '1 year'
  END
$$;

-- The first date of the schedule (start_on, then one period after another) after `after`;
-- start_on when `after` is null or before it. Date n is start_on + n periods, always counted from
-- start_on, so a month end stays a month end: Jan 31 → Feb 28 (29) → Mar 31 (PostgreSQL's month
-- arithmetic clamps to the month's last day).
CREATE FUNCTION recurring_gift_next_on(start_on date, frequency text, after date) RETURNS date
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  period interval := recurring_gift_period(frequency);
  months integer := extract(year FROM period)::integer * 12 + extract(month FROM period)::integer;
  whole integer;
  candidate date;
BEGIN
  IF after IS NULL OR after < start_on THEN
    RETURN start_on;
  END IF;
  -- Whole periods from start_on to `after`: that date is on or before `after`, or in its month
  -- (clamping), and the date after it lies beyond `after`; so one of the two is the answer.
  IF months = 0 THEN
    whole := (after - start_on) / extract(day FROM period)::integer;
  ELSE
    whole := ((extract(year FROM after) - extract(year FROM start_on)) * 12
              + extract(month FROM after) - extract(month FROM start_on))::integer / months;
  END IF;
  FOR n IN whole .. whole + 1 LOOP
    candidate := (start_on + n * period)::date;
    IF candidate > after THEN
      RETURN candidate;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;

-- What a recurring gift has received and expects, from its payments (gifts naming it; a voided
-- one is no payment): `gift_count`, `last_gift_date`, `total_given` (net of refunds, as text for
-- exactness); `next_expected_on`, the first date of the schedule after the last payment and on
-- or after the day it resumed (null once cancelled); `lapses_after`, the date of the schedule
-- after that one: an active recurring gift is lapsed once today is after it (its expected payment
-- is more than one period late). A paused or cancelled one never lapses (null).
CREATE FUNCTION recurring_gift_figures(
  institution bigint, recurring_gift bigint, start_on date, frequency text, status text,
  resumed_on date
) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'gift_count', paid.gift_count,
    'last_gift_date', paid.last_gift_date::text,
    'total_given', paid.total_given::text,
    'next_expected_on', expected.next_on::text,
    'lapses_after', CASE WHEN status = 'active'
      THEN recurring_gift_next_on(start_on, frequency, expected.next_on)::text END)
  FROM (SELECT count(*)::integer AS gift_count, max(gift_date) AS last_gift_date,
               coalesce(sum(amount - amount_refunded), 0) AS total_given
        FROM gifts
        WHERE institution_id = institution AND recurring_gift_id = recurring_gift
          AND status = 'posted') AS paid,
       LATERAL (SELECT CASE WHEN status <> 'cancelled' THEN recurring_gift_next_on(
                  start_on, frequency, greatest(paid.last_gift_date, resumed_on - 1)) END
                AS next_on) AS expected
$$;

-- Down Migration

DROP FUNCTION recurring_gift_figures(bigint, bigint, date, text, text, date);
DROP FUNCTION recurring_gift_next_on(date, text, date);
DROP FUNCTION recurring_gift_period(text);
DROP INDEX gifts_institution_recurring_gift_idx;
ALTER TABLE gifts DROP CONSTRAINT gifts_recurring_gift_fkey, DROP COLUMN recurring_gift_id;
DROP TABLE recurring_gifts;
