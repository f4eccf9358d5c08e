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

-- API processes keep the institution they confirmed a key for (its currency is the default of
-- a new gift, pledge or recurring gift) for up to API_KEY_CACHE_SECONDS. A change of currency
-- is announced for each of the institution's keys on the channel a revocation uses
-- (1733800000000_api-key-revocation-notify.sql), so they forget those keys and read the
-- institution again: a gift created after the change defaults to the new currency.
CREATE FUNCTION announce_institution_currency_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_revoked', id) FROM api_keys WHERE institution_id = NEW.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER institutions_announce_currency_change
  AFTER UPDATE OF currency ON institutions
  FOR EACH ROW WHEN (OLD.currency IS DISTINCT FROM NEW.currency)
  EXECUTE FUNCTION announce_institution_currency_change();

-- Down Migration

DROP TRIGGER institutions_announce_currency_change ON institutions;
DROP FUNCTION announce_institution_currency_change();
ALTER TABLE institutions DROP COLUMN consent_mode, DROP COLUMN fiscal_year_start_month;
