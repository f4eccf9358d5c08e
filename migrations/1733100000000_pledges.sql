-- Up Migration

-- Pledges (giving.md §5): a promise to give, paid over time by gifts that name it (`pledge_id`).
--
-- `designations` is the pledge's split across funds, [{"fund_id", "amount"}], as on a gift;
-- `schedule` is as the client sent it ({"frequency", "installments", "first_due_on"});
-- `installments` is the schedule expanded once, [{"number", "due_on", "amount"}]. What is paid
-- of each installment is not stored: payments fill the earliest installments first, so it
-- follows from `amount_paid` alone.
--
-- `amount_paid`, `amount_written_off`, `status`, `next_due_on` and `fund_outstanding` are kept
-- by the service (settlePledge) from the pledge's payments whenever one of them changes, under
-- the pledge's row lock: they are what every list, filter, report and total reads, so none of
-- them has to add up payments. `next_due_on` is the due date of the earliest installment not
-- paid in full while the pledge is open (else null): it serves `due_before` and receivables.
-- `fund_outstanding` is the balance split across the designations, [{"fund_id", "amount"}],
-- which fund totals sum.

CREATE TABLE pledges (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  donor_id bigint NOT NULL,
  amount numeric(14, 2) NOT NULL CHECK (amount > 0),
  pledge_date date NOT NULL,
  designations jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(designations) = 'array'),
  fund_ids bigint[] NOT NULL DEFAULT '{}',
  schedule jsonb NOT NULL CHECK (jsonb_typeof(schedule) = 'object'),
  installments jsonb NOT NULL CHECK (jsonb_typeof(installments) = 'array'),
  note text,
  status text NOT NULL DEFAULT 'open'
    CHECK (status IN ('open', 'fulfilled', 'written_off', 'cancelled')),
  amount_paid numeric(14, 2) NOT NULL DEFAULT 0,
  amount_written_off numeric(14, 2) NOT NULL DEFAULT 0,
  next_due_on date,
  fund_outstanding jsonb NOT NULL DEFAULT '[]',
  close_reason text,
  closed_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT pledges_pkey PRIMARY KEY (institution_id, id),
  CONSTRAINT pledges_donor_fkey FOREIGN KEY (institution_id, donor_id)
    REFERENCES donors (institution_id, id),
  -- The last line of defence against an overpayment: the payment rules check it first.
  CONSTRAINT pledges_amounts_check CHECK (
    amount_paid >= 0 AND amount_written_off >= 0 AND amount_paid + amount_written_off <= amount)
);
CREATE INDEX pledges_institution_donor_idx ON pledges (institution_id, donor_id, id);
CREATE INDEX pledges_fund_ids_idx ON pledges USING gin (fund_ids) WHERE fund_ids <> '{}';
-- Receivables and `status=open` lists walk open pledges newest first.
CREATE INDEX pledges_open_idx ON pledges (institution_id, id) WHERE status = 'open';
CREATE INDEX pledges_next_due_idx ON pledges (institution_id, next_due_on)
  WHERE next_due_on IS NOT NULL;

-- A payment is a gift that names its pledge.
ALTER TABLE gifts
  ADD COLUMN pledge_id bigint,
  ADD CONSTRAINT gifts_pledge_fkey FOREIGN KEY (institution_id, pledge_id)
    REFERENCES pledges (institution_id, id);
CREATE INDEX gifts_institution_pledge_idx ON gifts (institution_id, pledge_id)
  WHERE pledge_id IS NOT NULL;

-- Down Migration

DROP INDEX gifts_institution_pledge_idx;
ALTER TABLE gifts DROP CONSTRAINT gifts_pledge_fkey, DROP COLUMN pledge_id;
DROP TABLE pledges;
