-- Up Migration

-- The money record (giving.md §1–4). A gift's designations (its split across funds) and its soft
-- credits are stored on the gift as jsonb arrays, in the order the client gave them, so that a
-- gift is read in one row. Their ids are also kept as generated arrays with GIN indexes, which
-- serve GET /gifts?fund_id= and ?soft_credit_donor_id=, fund totals and donor giving.
--
-- A designation is {"fund_id", "amount", "amount_refunded"}; a soft credit is {"donor_id",
-- "amount", "reason"}. Amounts are jsonb numbers (arbitrary precision numeric, so exact).
--
-- The id arrays are written by the service with the arrays they come from (one function,
-- storeGift), not generated: a generated column calling a function that unnests jsonb tripled
-- the cost of a plain gift insert.

ALTER TABLE gifts
  ADD COLUMN designations jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(designations) = 'array'),
  ADD COLUMN soft_credits jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(soft_credits) = 'array'),
  ADD COLUMN matches_gift_id bigint,
  ADD COLUMN benefit_amount numeric(14, 2) NOT NULL DEFAULT 0,
  ADD COLUMN status text NOT NULL DEFAULT 'posted' CHECK (status IN ('posted', 'voided')),
  ADD COLUMN amount_refunded numeric(14, 2) NOT NULL DEFAULT 0,
  ADD COLUMN void_reason text,
  ADD COLUMN voided_at timestamptz(3),
  ADD CONSTRAINT gifts_benefit_amount_check CHECK (benefit_amount >= 0 AND benefit_amount <= amount),
  ADD CONSTRAINT gifts_amount_refunded_check
    CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
  ADD CONSTRAINT gifts_matches_gift_fkey FOREIGN KEY (institution_id, matches_gift_id)
    REFERENCES gifts (institution_id, id),
  ADD CONSTRAINT gifts_not_own_match CHECK (matches_gift_id IS DISTINCT FROM id);

ALTER TABLE gifts
  ADD COLUMN fund_ids bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN soft_credit_donor_ids bigint[] NOT NULL DEFAULT '{}';

-- Every gift designated to a fund becomes one designation of its whole amount.
UPDATE gifts
SET designations = jsonb_build_array(jsonb_build_object(
      'fund_id', fund_id, 'amount', amount, 'amount_refunded', 0)),
    fund_ids = ARRAY[fund_id]
WHERE fund_id IS NOT NULL;

ALTER TABLE gifts DROP COLUMN fund_id;

-- Partial: most gifts have no soft credit, and an empty array's GIN entry costs every insert.
-- Queries name the condition (`fund_ids <> '{}' AND fund_ids @> ARRAY[…]`) to use them.
CREATE INDEX gifts_fund_ids_idx ON gifts USING gin (fund_ids) WHERE fund_ids <> '{}';
CREATE INDEX gifts_soft_credit_donor_ids_idx ON gifts USING gin (soft_credit_donor_ids)
  WHERE soft_credit_donor_ids <> '{}';
CREATE INDEX gifts_institution_matches_idx ON gifts (institution_id, matches_gift_id)
  WHERE matches_gift_id IS NOT NULL;

-- Money given back. Append-only: a refund is never changed or deleted. `designations` says what
-- each fund gave back ([] for an undesignated gift), in the shape of the gift's designations.
CREATE TABLE gift_refunds (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  gift_id bigint NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  refund_date date NOT NULL,
  reason text,
  designations jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT gift_refunds_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT gift_refunds_gift_fkey FOREIGN KEY (institution_id, gift_id)
    REFERENCES gifts (institution_id, id)
);
CREATE INDEX gift_refunds_institution_gift_idx ON gift_refunds (institution_id, gift_id, id);

-- Tax receipts. `number` is per institution, 1, 2, 3, … with no gap: it is taken from the
-- institution's row in receipt_numbers inside the issuing transaction (the row lock orders
-- concurrent issues; a rollback gives the number back), never from a sequence.
CREATE TABLE receipt_numbers (
  institution_id bigint PRIMARY KEY REFERENCES institutions (id),
  last_number bigint NOT NULL CHECK (last_number >= 0)
);

CREATE TABLE receipts (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  number bigint NOT NULL CHECK (number > 0),
  gift_id bigint NOT NULL,
  donor_id bigint NOT NULL,
  issued_on date NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  benefit_amount numeric(14, 2) NOT NULL CHECK (benefit_amount >= 0),
  deductible_amount numeric(14, 2) NOT NULL CHECK (deductible_amount >= 0),
  currency char(3) NOT NULL,
  status text NOT NULL DEFAULT 'issued' CHECK (status IN ('issued', 'void')),
  donor_name text NOT NULL,
  donor_address jsonb,
  void_reason text,
  voided_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT receipts_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT receipts_institution_number_key UNIQUE (institution_id, number),
  -- Refunds after the gift may leave less than the benefit the donor received: nothing of the
  -- rest is then deductible, and the benefit is still stated as received.
  CONSTRAINT receipts_amounts_check
    CHECK (deductible_amount = greatest(amount - benefit_amount, 0)),
  CONSTRAINT receipts_gift_fkey FOREIGN KEY (institution_id, gift_id)
    REFERENCES gifts (institution_id, id),
  CONSTRAINT receipts_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id)
);
-- One issued receipt per gift at a time; a voided one keeps its number and frees the gift.
CREATE UNIQUE INDEX receipts_one_issued_per_gift ON receipts (institution_id, gift_id)
  WHERE status = 'issued';
CREATE INDEX receipts_institution_donor_idx ON receipts (institution_id, donor_id, id);
CREATE INDEX receipts_institution_gift_idx ON receipts (institution_id, gift_id, id);

-- Down Migration

DROP TABLE receipts;
DROP TABLE receipt_numbers;
DROP TABLE gift_refunds;
DROP INDEX gifts_institution_matches_idx;
ALTER TABLE gifts ADD COLUMN fund_id bigint;
UPDATE gifts SET fund_id = (designations -> 0 ->> 'fund_id')::bigint
WHERE jsonb_array_length(designations) = 1;
ALTER TABLE gifts
  DROP COLUMN soft_credit_donor_ids,
  DROP COLUMN fund_ids,
  DROP CONSTRAINT gifts_not_own_match,
  DROP CONSTRAINT gifts_matches_gift_fkey,
  DROP COLUMN voided_at,
  DROP COLUMN void_reason,
  DROP COLUMN amount_refunded,
  DROP COLUMN status,
  DROP COLUMN benefit_amount,
  DROP COLUMN matches_gift_id,
  DROP COLUMN soft_credits,
  DROP COLUMN designations,
  ADD CONSTRAINT gifts_fund_fkey FOREIGN KEY (institution_id, fund_id)
    REFERENCES funds (institution_id, id);
CREATE INDEX gifts_institution_fund_idx ON gifts (institution_id, fund_id, id)
  WHERE fund_id IS NOT NULL;
