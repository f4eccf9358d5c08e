-- Up Migration

-- Every amount in the base currency (fundraising.md §2). A gift, pledge or recurring gift keeps
-- its own `currency` and `amount` and stores the `exchange_rate` it was posted at (base units for
-- one unit of its currency; 1 in the base currency) and its `base_amount` (amount × rate,
-- rounded half-even to cents). The parts of a gift (designations, soft credits) and its refunds
-- carry their own base amounts, apportioned so that they sum exactly to the whole. Every total
-- sums base amounts; no total converts at read time.
--
-- Rows already in the institution's currency are converted at rate 1. A row in another currency
-- is left unconverted (exchange_rate and base_amount NULL) and is reported below: this migration
-- does not guess a rate. An unconverted gift counts in no total until it is given its rate with
-- PATCH /gifts/{id} {"exchange_rate": …} (see README, "Gifts recorded before currencies").

ALTER TABLE gifts
  ADD COLUMN exchange_rate numeric(18, 6) CONSTRAINT gifts_exchange_rate_check CHECK (exchange_rate > 0),
  ADD COLUMN base_amount numeric(14, 2),
  ADD COLUMN base_amount_refunded numeric(14, 2) NOT NULL DEFAULT 0,
  ADD CONSTRAINT gifts_base_amount_check CHECK ((exchange_rate IS NULL) = (base_amount IS NULL)
    AND base_amount_refunded >= 0 AND base_amount_refunded <= coalesce(base_amount, 0));

-- A designation gains {"base_amount", "base_amount_refunded"}, a soft credit {"base_amount"}.
UPDATE gifts g
SET exchange_rate = 1, base_amount = g.amount, base_amount_refunded = g.amount_refunded,
    designations = coalesce((
      SELECT jsonb_agg(part || jsonb_build_object('base_amount', part -> 'amount',
                                                  'base_amount_refunded', part -> 'amount_refunded')
                       ORDER BY ordinality)
      FROM jsonb_array_elements(g.designations) WITH ORDINALITY AS t(part, ordinality)), '[]'),
    soft_credits = coalesce((
      SELECT jsonb_agg(credit || jsonb_build_object('base_amount', credit -> 'amount')
                       ORDER BY ordinality)
      FROM jsonb_array_elements(g.soft_credits) WITH ORDINALITY AS t(credit, ordinality)), '[]')
FROM institutions i
WHERE i.id = g.institution_id AND g.currency = i.currency;

ALTER TABLE gift_refunds ADD COLUMN base_amount numeric(14, 2);
UPDATE gift_refunds r
SET base_amount = r.amount,
    designations = coalesce((
      SELECT jsonb_agg(part || jsonb_build_object('base_amount', part -> 'amount')
                       ORDER BY ordinality)
      FROM jsonb_array_elements(r.designations) WITH ORDINALITY AS t(part, ordinality)), '[]')
FROM gifts g
WHERE g.institution_id = r.institution_id AND g.id = r.gift_id AND g.exchange_rate = 1;

-- A pledge gains the currency its payments must be in. `base_amount_paid` sums its payments'
-- base amounts (net of refunds); `base_balance` is what is still owed at the pledge's rate;
-- `fund_outstanding` holds base amounts. settlePledge keeps them with `amount_paid`.
ALTER TABLE pledges
  ADD COLUMN currency text,
  ADD COLUMN exchange_rate numeric(18, 6) CONSTRAINT pledges_exchange_rate_check CHECK (exchange_rate > 0),
  ADD COLUMN base_amount numeric(14, 2),
  ADD COLUMN base_amount_paid numeric(14, 2) NOT NULL DEFAULT 0,
  ADD COLUMN base_balance numeric(14, 2) NOT NULL DEFAULT 0;
UPDATE pledges p SET currency = i.currency, exchange_rate = 1, base_amount = p.amount,
  base_balance = CASE WHEN p.status = 'open' THEN p.amount - p.amount_paid - p.amount_written_off
                      ELSE 0 END,
  base_amount_paid = (SELECT coalesce(sum(g.base_amount - g.base_amount_refunded), 0) FROM gifts g
                      WHERE g.institution_id = p.institution_id AND g.pledge_id = p.id
                        AND g.status = 'posted' AND g.base_amount IS NOT NULL)
FROM institutions i WHERE i.id = p.institution_id;
ALTER TABLE pledges
  ALTER COLUMN currency SET NOT NULL,
  ALTER COLUMN exchange_rate SET NOT NULL,
  ALTER COLUMN base_amount SET NOT NULL;

ALTER TABLE recurring_gifts
  ADD COLUMN exchange_rate numeric(18, 6) CONSTRAINT recurring_gifts_exchange_rate_check CHECK (exchange_rate > 0),
  ADD COLUMN base_amount numeric(14, 2),
  ADD CONSTRAINT recurring_gifts_base_amount_check CHECK ((exchange_rate IS NULL) = (base_amount IS NULL));
UPDATE recurring_gifts r SET exchange_rate = 1, base_amount = r.amount
FROM institutions i WHERE i.id = r.institution_id AND r.currency = i.currency;

-- A recurring gift's `total_given` is in the base currency, as every total is.
CREATE OR REPLACE FUNCTION recurring_gift_figures(
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
               coalesce(sum(base_amount - base_amount_refunded), 0) AS total_given
        FROM gifts
        WHERE institution_id = institution AND recurring_gift_id = recurring_gift
          AND status = 'posted') AS paid,
       LATERAL (SELECT CASE WHEN status <> 'cancelled' THEN recurring_gift_next_on(
                  start_on, frequency, greatest(paid.last_gift_date, resumed_on - 1)) END
                AS next_on) AS expected
$$;

-- What was left unconverted, for the operator (node-pg-migrate prints notices).
DO $$
DECLARE
  unconverted record;
BEGIN
  FOR unconverted IN
    SELECT 'gifts' AS records, institution_id, currency, count(*) AS n FROM gifts
    WHERE exchange_rate IS NULL GROUP BY institution_id, currency
    UNION ALL
    SELECT 'recurring gifts', institution_id, currency, count(*) FROM recurring_gifts
    WHERE exchange_rate IS NULL GROUP BY institution_id, currency
  LOOP
    RAISE NOTICE 'institution %: % % in % have no exchange rate and count in no total until given one',
      unconverted.institution_id, unconverted.n, unconverted.records, unconverted.currency;
  END LOOP;
END;
$$;

-- Down Migration

CREATE OR REPLACE FUNCTION recurring_gift_figures(
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
ALTER TABLE recurring_gifts DROP CONSTRAINT recurring_gifts_base_amount_check,
  DROP COLUMN base_amount, DROP COLUMN exchange_rate;
ALTER TABLE pledges DROP COLUMN base_balance, DROP COLUMN base_amount_paid,
  DROP COLUMN base_amount, DROP COLUMN exchange_rate, DROP COLUMN currency;
ALTER TABLE gift_refunds DROP COLUMN base_amount;
ALTER TABLE gifts DROP CONSTRAINT gifts_base_amount_check, DROP COLUMN base_amount_refunded,
  DROP COLUMN base_amount, DROP COLUMN exchange_rate;
