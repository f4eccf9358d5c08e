-- Up Migration

-- Every change to an API key (a revocation, by the CLI or by hand) is announced on the channel
-- api_key_revoked, with the key's id, when its transaction commits. API processes listen
-- (common/auth/revocationListener.ts) and forget the key at once, which lets them answer reads
-- on keys they confirmed a moment ago without asking Postgres on every request.
CREATE FUNCTION announce_api_key_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_key_revoked', OLD.id);
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_announce_change
  AFTER UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION announce_api_key_change();

-- Down Migration

DROP TRIGGER api_keys_announce_change ON api_keys;
DROP FUNCTION announce_api_key_change();
