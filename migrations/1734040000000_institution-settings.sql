-- Up Migration

-- An institution's settings, changed with PATCH /institution (fundraising.md §1). The fiscal
-- year starts on the first of this month and is named by the calendar year in which it ends;
-- the consent mode says whether contact needs an opt-in (constituents.md §4).
ALTER TABLE institutions
  ADD COLUMN fiscal_year_start_month smallint NOT NULL DEFAULT 1
    CONSTRAINT institutions_fiscal_year_start_month_check
    CHECK (fiscal_year_start_month BETWEEN 1 AND 12),
  ADD COLUMN consent_mode text NOT NULL DEFAULT 'opt_out'
    CONSTRAINT institutions_consent_mode_check CHECK (consent_mode IN ('opt_out', 'opt_in'));

-- Down Migration

ALTER TABLE institutions DROP COLUMN consent_mode, DROP COLUMN fiscal_year_start_month;
