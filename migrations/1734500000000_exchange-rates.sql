-- Up Migration

-- Exchange rates (fundraising.md §2): how many units of the institution's base currency one
-- unit of `currency` was worth from `effective_on`. A gift, pledge or recurring gift in another
-- currency takes the latest rate in effect on its date and keeps it: changing or deleting a rate
-- never changes a posted record, which stores its own rate and base amount.
CREATE TABLE exchange_rates (
  id bigint GENERATED ALWAYS AS IDENTITY,
  institution_id bigint NOT NULL REFERENCES institutions (id),
  currency text NOT NULL,
  rate numeric(18, 6) NOT NULL CONSTRAINT exchange_rates_rate_check CHECK (rate > 0),
  effective_on date NOT NULL,
  source text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT exchange_rates_pkey PRIMARY KEY (institution_id, id),
  -- One rate per currency and day; also the index of the lookup by date (latest on or before).
  CONSTRAINT exchange_rates_currency_effective_on_key
    UNIQUE (institution_id, currency, effective_on)
);

-- Down Migration

DROP TABLE exchange_rates;
